//! A file's version: what the kernel says of it (device, inode, size, and its status-change
//! time to the nanosecond), the one notion of "this file changed" for open documents'
//! freshness, the polling watcher, the event log (which stores it as text) and `check`'s use
//! of a workspace pass. The ctime is what makes it sound: every write, rename, truncation or
//! change of the mtime moves it, and no program can set it back (so the mtime adds nothing).
//! Two versions equal means no change the kernel can tell, except a same-size rewrite within
//! one tick of the filesystem's clock: `settled` says when that can no longer happen.

use std::fmt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A file's version (compare with `==`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileVersion {
    dev: u64,
    ino: u64,
    size: u64,
    /// Status-change time: seconds, nanoseconds.
    ctime: (i64, i64),
}

/// How long after a file's last status change its version alone is trusted to tell a change
/// (well above any filesystem's timestamp tick).
pub const SETTLE: Duration = Duration::from_secs(2);

/// The event log's text for a file that is not there.
pub(super) const GONE: &str = "gone";

impl FileVersion {
    /// The version `meta` describes.
    pub fn of(meta: &std::fs::Metadata) -> FileVersion {
        FileVersion {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The version of `path` itself (a symlink's own, not followed), `None` when it is gone.
    pub fn of_entry(path: &Path) -> Option<FileVersion> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|m| FileVersion::of(&m))
    }

    /// The event log's text of `path`'s version now: `to_string`, or `GONE`.
    pub fn logged(path: &Path) -> String {
        FileVersion::of_entry(path).map_or_else(|| GONE.to_string(), |v| v.to_string())
    }

    /// When the file last changed (its ctime); `None` when that is not a time.
    pub fn changed_at(&self) -> Option<SystemTime> {
        let secs = u64::try_from(self.ctime.0).ok()?;
        let nanos = u32::try_from(self.ctime.1).ok()?;
        SystemTime::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
    }

    /// Whether the file changed at or after `t` (a time that cannot be read counts as a
    /// change).
    pub fn changed_since(&self, t: SystemTime) -> bool {
        self.changed_at().is_none_or(|c| c >= t)
    }

    /// Whether, seen unchanged at `checked`, this version vouches for the content from then on:
    /// its last change was `SETTLE` before, so a later write could not share its clock tick.
    pub fn settled(&self, checked: SystemTime) -> bool {
        self.changed_at().is_some_and(|c| c + SETTLE < checked)
    }
}

/// The one stored form (the event log's `file_versions`): `DEV:INO:SIZE:CTIME.NANOS`, as
/// lspgate has always written it, so rows an older lspgate wrote compare equal.
impl fmt::Display for FileVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}:{}.{:09}",
            self.dev, self.ino, self.size, self.ctime.0, self.ctime.1
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `text` to `path`, then puts its mtime back to what it was.
    fn rewrite_keeping_mtime(path: &Path, text: &str) {
        let mtime = std::fs::metadata(path).unwrap().modified().unwrap();
        std::fs::write(path, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(mtime)
            .unwrap();
    }

    #[test]
    fn every_write_and_removal_is_a_new_version() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, "1").unwrap();
        let first = FileVersion::logged(&a);
        assert_eq!(FileVersion::logged(&a), first, "unchanged, the same");
        // A rewrite of the same size with the mtime put back is a new version.
        let v1 = FileVersion::of_entry(&a).unwrap();
        rewrite_keeping_mtime(&a, "2");
        assert_ne!(FileVersion::of_entry(&a).unwrap(), v1);
        let second = FileVersion::logged(&a);
        assert_ne!(second, first);
        std::fs::remove_file(&a).unwrap();
        assert_eq!(FileVersion::logged(&a), GONE);
        std::fs::write(&a, "2").unwrap();
        assert!(![first, second, GONE.to_string()].contains(&FileVersion::logged(&a)));
    }

    /// The stored form is the one older lspgates wrote (their rows still compare equal).
    #[test]
    fn the_stored_form_is_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, "1").unwrap();
        let m = std::fs::symlink_metadata(&a).unwrap();
        let old = format!(
            "{}:{}:{}:{}.{:09}",
            m.dev(),
            m.ino(),
            m.size(),
            m.ctime(),
            m.ctime_nsec()
        );
        assert_eq!(FileVersion::logged(&a), old);
    }

    #[test]
    fn a_version_settles_and_tells_what_changed_since() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, "1").unwrap();
        let v = FileVersion::of_entry(&a).unwrap();
        let at = v.changed_at().unwrap();
        let now = SystemTime::now();
        assert!(!v.settled(now), "just written");
        assert!(v.settled(now + SETTLE + Duration::from_secs(1)));
        assert!(v.changed_since(at));
        assert!(!v.changed_since(at + Duration::from_nanos(1)));
        let unreadable = FileVersion {
            ctime: (-1, 0),
            ..v
        };
        assert!(unreadable.changed_since(now) && !unreadable.settled(now));
    }
}
