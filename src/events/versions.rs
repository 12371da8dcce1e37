//! A file's version, for logging each change of it once however many watchers see it: in the
//! daemon, sessions on one root whose environment differs get workspaces of their own, each
//! with a registry and a watcher, and two lspgate processes on one root (standalone sessions,
//! an old daemon draining beside a new one) each watch it too. The event log's writer keeps the
//! last version logged per file in the state database and logs a delivered file only when its
//! version differs (`store::saw_version`). A version is what the kernel says of the file
//! (device, inode, size, ctime to the nanosecond; `gone` once it is not there): every write,
//! rename or removal changes it, and no program can set a ctime back.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// `path`'s version now.
pub(super) fn of(path: &Path) -> String {
    match std::fs::symlink_metadata(path) {
        Ok(m) => format!(
            "{}:{}:{}:{}.{:09}",
            m.dev(),
            m.ino(),
            m.size(),
            m.ctime(),
            m.ctime_nsec()
        ),
        Err(_) => "gone".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_and_removal_is_a_new_version() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, "1").unwrap();
        let first = of(&a);
        assert_eq!(of(&a), first, "unchanged, the same");
        // A rewrite of the same size with the mtime put back is a new version.
        let mtime = std::fs::metadata(&a).unwrap().modified().unwrap();
        std::fs::write(&a, "2").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&a)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
        let second = of(&a);
        assert_ne!(second, first);
        std::fs::remove_file(&a).unwrap();
        assert_eq!(of(&a), "gone");
        std::fs::write(&a, "2").unwrap();
        assert!(![first, second, "gone".to_string()].contains(&of(&a)));
    }
}
