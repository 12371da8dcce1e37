//! Where the daemon lives: its folder in the user's runtime folder (`$XDG_RUNTIME_DIR/lspgate`,
//! else `lspgate` under the user's cache), made 0700 and checked to be the user's own; the
//! socket, the lock that keeps one daemon per version, and the log under the data folder.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::workspace::presets::data_dir;

/// The daemon's folder, made (0700) when missing. Err when it exists but is not the user's own
/// or others may enter it.
pub fn runtime_dir() -> Result<PathBuf, String> {
    let base = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        None => match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache"))
                .ok_or("neither XDG_RUNTIME_DIR nor HOME is set")?,
        },
    };
    let dir = base.join("lspgate");
    if !dir.exists() {
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    check_private(&dir)?;
    Ok(dir)
}

/// Refuses a folder that is not a real folder of this user's, or that others may enter.
fn check_private(dir: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    if !meta.is_dir() || meta.uid() != uid {
        return Err(format!(
            "{} is not a folder of this user's; lspgate will not put its daemon there",
            dir.display()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{} may be entered by other users (mode {:o}); make it 0700",
            dir.display(),
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

/// The daemon's socket.
pub fn socket(dir: &Path) -> PathBuf {
    dir.join("daemon.sock")
}

/// Takes the lock at `path` (made if missing) without waiting: the file holding it (the lock
/// goes with it), or `None` when another process holds it.
pub fn try_lock(path: &Path) -> std::io::Result<Option<std::fs::File>> {
    let f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor we own; released when the file is closed.
    let taken = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
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
    data_dir().join("daemon.log")
}
