//! lspgate's private folder on the machine: the user's runtime folder (`$XDG_RUNTIME_DIR/lspgate`,
//! else `lspgate` under the user's cache), made 0700 and checked to be the user's own. The
//! daemon's socket and lock and the HTTP listeners' token files live there.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// lspgate's runtime folder, made (0700) when missing. Err when it exists but is not the user's own
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
    let uid = rustix::process::getuid().as_raw();
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
