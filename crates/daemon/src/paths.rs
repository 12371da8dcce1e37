//! Where the daemon lives: its folder in the user's runtime folder (`$XDG_RUNTIME_DIR/lspgate`,
//! else `lspgate` under the user's cache), made 0700 and checked to be the user's own; the
//! socket, the lock that keeps one daemon per version (0600), and the log under the data folder
//! (made 0700 and checked, the log 0600: `workspace::dirs`).

use std::path::{Path, PathBuf};

use crate::workspace::dirs;

pub use crate::workspace::dirs::runtime_dir;

/// The daemon's socket.
pub fn socket(dir: &Path) -> PathBuf {
    dir.join("daemon.sock")
}

/// Takes the lock at `path` (made if missing) without waiting: the file holding it (the lock
/// goes with it), or `None` when another process holds it.
pub fn try_lock(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    let f = dirs::private_file(
        path,
        std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true),
    )?;
    // Released when the file is closed (with the process, at the latest).
    let taken = rustix::fs::flock(&f, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok();
    Ok(taken.then_some(f))
}

/// Whether no daemon holds the lock at `path` (none runs, or the one that ran is gone).
pub fn lock_is_free(path: &Path) -> bool {
    !matches!(try_lock(path), Ok(None))
}

/// The lock a daemon of `version` holds while it runs (one per version: a new version's daemon
/// starts while an old one drains).
pub fn lock(dir: &Path, version: &str) -> PathBuf {
    dir.join(format!("daemon-{version}.lock"))
}

/// Where a daemon a session started writes its log.
pub fn log_file() -> PathBuf {
    crate::workspace::data_dir().join("daemon.log")
}

/// The log, opened to append (0600), its folder made where missing and checked (`dirs::data`).
pub fn open_log() -> Result<std::fs::File, String> {
    let log = dirs::data(Path::new(""))?.join("daemon.log");
    dirs::private_file(&log, std::fs::OpenOptions::new().create(true).append(true))
        .map_err(|e| format!("{}: {e}", log.display()))
}
