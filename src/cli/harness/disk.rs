//! The harness files on disk for `setup`: read as UTF-8 text, written atomically (a temporary
//! file in the same folder, then a rename, keeping the file's permissions and writing through a
//! symbolic link to its target), removed, and their changes shown as unified diffs.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The file's text, `None` when there is no file.
pub fn read(path: &Path) -> Result<Option<String>, String> {
    match fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if fs::symlink_metadata(path).is_ok() {
                return Err("a symbolic link to nothing".into());
            }
            Ok(None)
        }
        Err(e) => Err(format!("cannot read it: {e}")),
    }
}

/// Where writing `path` lands: the file a symbolic link leads to, else `path`.
fn target(path: &Path) -> io::Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path),
        _ => Ok(path.to_path_buf()),
    }
}

/// Replaces (or creates, with its folder) `path` with `text`, atomically.
pub fn write(path: &Path, text: &str) -> io::Result<()> {
    let path = target(path)?;
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(io::Error::other("no folder to write in"));
    };
    fs::create_dir_all(dir)?;
    let permissions = fs::metadata(&path).ok().map(|m| m.permissions());
    let name = name.to_string_lossy();
    let mut attempt = 0;
    let (tmp, mut file) = loop {
        let tmp = dir.join(format!(".{name}.lspgate-{}-{attempt}", std::process::id()));
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(e),
        }
    };
    let written = (|| {
        file.write_all(text.as_bytes())?;
        if let Some(p) = permissions {
            file.set_permissions(p)?;
        }
        file.sync_all()?;
        drop(file);
        fs::rename(&tmp, &path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written?;
    // The rename is durable once the folder is.
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Removes `path`, then its folder when that is left empty and is not `base`.
pub fn delete(path: &Path, base: &Path) -> io::Result<()> {
    let path = target(path)?;
    fs::remove_file(&path)?;
    if let Some(dir) = path.parent()
        && dir != base
    {
        // Only an empty folder goes; any other outcome leaves it.
        let _ = fs::remove_dir(dir);
    }
    Ok(())
}

/// The unified diff from `before` to `after` (`None`: no file), files named `shown`.
pub fn diff(shown: &str, before: Option<&str>, after: Option<&str>) -> String {
    let d = similar::TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""));
    let old = before.map_or("/dev/null".to_string(), |_| format!("a/{shown}"));
    let new = after.map_or("/dev/null".to_string(), |_| format!("b/{shown}"));
    d.unified_diff()
        .context_radius(3)
        .header(&old, &new)
        .to_string()
}
