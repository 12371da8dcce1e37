//! Which version of each file the log already reported a change of, so that a change is
//! logged once however many watchers see it: in the daemon, sessions on one root whose
//! environment differs (PATH, timeouts, an explicit server) get workspaces of their own, each
//! with a registry and a watcher, all writing one log. A file's version is what the kernel
//! says of it (device, inode, size, ctime to the nanosecond; none once it is gone): every write,
//! rename or removal changes it, and no program can set a ctime back.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file as it is now, or `None` when it is not there.
type Version = Option<(u64, u64, u64, i64, i64)>;

/// Files remembered at most; past it the ledger starts over (at worst a change is logged twice).
const MAX_FILES: usize = 50_000;

#[derive(Default)]
pub(super) struct Ledger {
    reported: Mutex<HashMap<PathBuf, Version>>,
}

fn version(path: &Path) -> Version {
    let m = std::fs::symlink_metadata(path).ok()?;
    Some((m.dev(), m.ino(), m.size(), m.ctime(), m.ctime_nsec()))
}

impl Ledger {
    /// The files of `files` whose version now was not reported yet, now noted as reported.
    pub(super) fn unreported(&self, files: Vec<PathBuf>) -> Vec<PathBuf> {
        let Ok(mut reported) = self.reported.lock() else {
            return files;
        };
        if reported.len() > MAX_FILES {
            reported.clear();
        }
        files
            .into_iter()
            .filter(|f| {
                let now = version(f);
                reported.insert(f.clone(), now) != Some(now)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_version_of_a_file_is_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "1").unwrap();
        std::fs::write(&b, "1").unwrap();
        let ledger = Ledger::default();
        // The names of the files of `files` not reported yet.
        let fresh = |files: &[&PathBuf]| -> Vec<String> {
            let files = files.iter().map(|f| f.to_path_buf()).collect();
            ledger
                .unreported(files)
                .iter()
                .filter_map(|f| f.file_name()?.to_str().map(String::from))
                .collect()
        };
        assert_eq!(fresh(&[&a]), ["a"]);
        // A second watcher delivering the same write: already reported.
        assert!(fresh(&[&a]).is_empty());
        assert_eq!(fresh(&[&a, &b]), ["b"]);
        // A rewrite of the same size with the same mtime is a new version.
        let mtime = std::fs::metadata(&a).unwrap().modified().unwrap();
        std::fs::write(&a, "2").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&a)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        assert_eq!(fresh(&[&a]), ["a"]);
        // Gone is a version too, reported once; back again is another.
        std::fs::remove_file(&a).unwrap();
        assert_eq!(fresh(&[&a]), ["a"]);
        assert!(fresh(&[&a]).is_empty());
        std::fs::write(&a, "3").unwrap();
        assert_eq!(fresh(&[&a]), ["a"]);
    }
}
