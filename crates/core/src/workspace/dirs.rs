//! lspgate's private folders and files on the machine, whatever the umask: the runtime folder
//! (`$XDG_RUNTIME_DIR/lspgate`, else the user's own `/run/user/UID/lspgate`, else `lspgate`
//! under the user's cache: the daemon's socket and
//! lock, the HTTP listeners' token files), the data folder (`workspace::data_dir`: state, the
//! journal's key, trust records, installed servers, the daemon's log) and the state folders.
//! Every folder lspgate makes is made 0700 and every file 0600 (`private_dir`, `private_file`);
//! a folder of these that another user owns or may write to is refused with what to do, so no
//! one else can swap the journal's key, a trust record or a token.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// lspgate's runtime folder, made (0700) when missing. Err when it exists but is not the user's own
/// or others may enter it.
pub fn runtime_dir() -> Result<PathBuf, String> {
    let uid = rustix::process::getuid().as_raw();
    let session = Path::new("/run/user").join(uid.to_string());
    let base = match std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty()) {
        Some(d) => PathBuf::from(d),
        // A process started with a stripped environment (Codex runs its MCP servers with a
        // few variables only) finds the same daemon as the user's other processes.
        None if users_runtime(&session, uid) => session,
        None => match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
            Some(d) => PathBuf::from(d),
            None => std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(".cache"))
                .ok_or("neither XDG_RUNTIME_DIR nor HOME is set")?,
        },
    };
    let dir = base.join("lspgate");
    make(&dir)?;
    check_runtime(&dir)?;
    Ok(dir)
}

/// Whether `dir` is the user's runtime folder as a login session makes it: a real folder of
/// theirs that no one else may enter (what `XDG_RUNTIME_DIR` names when it is set).
fn users_runtime(dir: &Path, uid: u32) -> bool {
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o077 == 0)
}

/// Refuses a runtime folder that is not a real folder of this user's, or that others may enter.
fn check_runtime(dir: &Path) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let uid = rustix::process::getuid().as_raw();
    if !meta.is_dir() || meta.uid() != uid {
        return Err(format!(
            "{} is not a folder of this user's; lspgate will not put its daemon there",
            dir.display()
        ));
    }
    if meta.mode() & 0o077 != 0 {
        return Err(format!(
            "{} may be entered by other users (mode {:o}); make it 0700 (`chmod 700 {}`)",
            dir.display(),
            meta.mode() & 0o777,
            dir.display()
        ));
    }
    Ok(())
}

/// `sub` in lspgate's data folder, made where missing (`private_dir`), it and every folder
/// from the data folder down to it checked.
pub fn data(sub: &Path) -> Result<PathBuf, String> {
    let top = super::data_dir();
    let dir = if sub.as_os_str().is_empty() {
        top.clone()
    } else {
        top.join(sub)
    };
    private_dir(&top, &dir)?;
    Ok(dir)
}

/// Makes the folder `dir` where missing, every folder it makes 0700 whatever the umask, and
/// checks `dir` and each folder above it up to `top` (an ancestor of it, or itself): a folder
/// this user owns and no one else may write to, else an error naming it and what to do.
pub fn private_dir(top: &Path, dir: &Path) -> Result<(), String> {
    make(dir)?;
    let mut at = dir;
    loop {
        check(at)?;
        match at.parent() {
            Some(up) if at != top && up.starts_with(top) => at = up,
            _ => return Ok(()),
        }
    }
}

/// Makes the folders of `dir` that are missing, each 0700 whatever the umask.
fn make(dir: &Path) -> Result<(), String> {
    let mut missing = Vec::new();
    let mut at = dir;
    while matches!(std::fs::symlink_metadata(at), Err(e) if e.kind() == ErrorKind::NotFound) {
        missing.push(at);
        match at.parent() {
            Some(up) if !up.as_os_str().is_empty() => at = up,
            _ => break,
        }
    }
    for d in missing.into_iter().rev() {
        let cannot = |e: std::io::Error| format!("cannot create {}: {e}", d.display());
        match std::fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o700))
                .map_err(cannot)?,
            // Made meanwhile by another process: checked as any other.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(cannot(e)),
        }
    }
    Ok(())
}

/// Refuses a folder of lspgate's (data or state) that is not a folder this user owns, or that
/// others may write to.
pub fn check(dir: &Path) -> Result<(), String> {
    let shown = dir.display();
    let meta = std::fs::metadata(dir).map_err(|e| format!("{shown}: {e}"))?;
    if !meta.is_dir() {
        return Err(format!(
            "{shown} is not a folder; lspgate keeps its state only in a folder of yours (move it away)"
        ));
    }
    let uid = rustix::process::getuid().as_raw();
    if meta.uid() != uid {
        return Err(format!(
            "{shown} belongs to another user (uid {}, you are {uid}), who could change lspgate's state there; lspgate keeps it only in a folder of yours: remove it (lspgate makes it again), or make it yours (`chown {uid} {shown}` as root) and `chmod 700 {shown}`",
            meta.uid()
        ));
    }
    if meta.mode() & 0o022 != 0 {
        return Err(format!(
            "{shown} may be written by other users (mode {:o}), who could change lspgate's state there; make it yours alone: `chmod 700 {shown}`",
            meta.mode() & 0o777
        ));
    }
    Ok(())
}

/// Opens the file at `path`, in a private folder of lspgate's, as `options` say (creating it, or
/// appending), never through a symlink; it is made 0600 whatever the umask (a file an older
/// lspgate made wider included). Refused when it is not a regular file of this user's.
pub fn private_file(path: &Path, options: &mut OpenOptions) -> std::io::Result<File> {
    let file = options
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() || meta.uid() != rustix::process::getuid().as_raw() {
        return Err(std::io::Error::other(
            "not a regular file of this user's (move it away)",
        ));
    }
    if meta.mode() & 0o777 != 0o600 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_users_runtime_folder_is_theirs_and_closed_to_others() {
        let uid = rustix::process::getuid().as_raw();
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("1000");
        assert!(!users_runtime(&run, uid), "missing");
        std::fs::create_dir(&run).unwrap();
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(!users_runtime(&run, uid), "others may enter");
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(users_runtime(&run, uid));
        assert!(!users_runtime(&run, uid + 1), "another user's");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&run, &link).unwrap();
        assert!(!users_runtime(&link, uid), "a link");
    }
}
