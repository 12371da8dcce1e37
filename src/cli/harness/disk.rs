//! The harness files on disk for `setup`: read as UTF-8 text, written atomically (a temporary
//! file in the same folder, then a rename, keeping the file's permissions), removed, and their
//! changes shown as unified diffs.
//!
//! A project's files (`Project`) are reached from the root one component at a time following no
//! symbolic link (`edits::fs`): a link anywhere on the way, the file itself included, is refused
//! with its name, wherever it leads (a cloned repository could aim `.claude` or `.mcp.json` at
//! the user's own configuration). The user's files under the home folder are the user's own:
//! a link there is followed to its target, as before.

use std::ffi::OsStr;
use std::fs;
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use rustix::fs::FileType;

use crate::edits::fs::{self as confined, Dir};

/// Where a harness file is: under a project root (reached following no link) or the user's.
pub(super) enum Place<'a> {
    /// The root (canonical) and the file's path under it.
    Project(&'a Path, &'a Path),
    /// The user's file, under the home folder.
    User(PathBuf),
}

impl Place<'_> {
    /// The file's text, `None` when there is no file.
    pub(super) fn read(&self) -> Result<Option<String>, String> {
        match self {
            Place::User(path) => read(path),
            Place::Project(root, rel) => {
                let Some((dir, name)) = reach(root, rel)? else {
                    return Ok(None);
                };
                match dir.read(name) {
                    Ok(Some(bytes)) => text(bytes).map(Some),
                    Ok(None) => Ok(None),
                    Err(e) if confined::is_symlink_error(&e) => Err(link(root, rel)),
                    Err(e) => Err(format!("cannot read it: {e}")),
                }
            }
        }
    }

    /// Replaces (or creates, with its folders) the file with `text`, atomically.
    pub(super) fn write(&self, text: &str) -> io::Result<()> {
        match self {
            Place::User(path) => write(path, text),
            Place::Project(root, rel) => {
                let (parent, name) = split(rel)?;
                confined::walk_creating(root, parent)?.replace(name, text.as_bytes())
            }
        }
    }

    /// Removes the file, then its folder when that is left empty and is not the base.
    pub(super) fn delete(&self, base: &Path) -> io::Result<()> {
        match self {
            Place::User(path) => delete(path, base),
            Place::Project(root, rel) => {
                let (parent, name) = split(rel)?;
                let Some(dir) = confined::walk(root, parent)? else {
                    return Ok(());
                };
                dir.remove(name)?;
                if let (Some(grand), Some(folder)) = (parent.parent(), parent.file_name())
                    && let Some(up) = confined::walk(root, grand)?
                {
                    // Only an empty folder goes; any other outcome leaves it.
                    let _ = up.remove_dir(folder);
                }
                Ok(())
            }
        }
    }
}

/// `rel`'s folder and name.
fn split(rel: &Path) -> io::Result<(&Path, &OsStr)> {
    match (rel.parent(), rel.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(io::Error::other("no folder to write in")),
    }
}

/// `rel`'s open folder and name under `root`, every folder of it reached following no link;
/// `None` when a folder of it is missing. A symbolic link on the way, the file itself
/// included, or something other than a regular file there, is refused.
fn reach<'r>(root: &Path, rel: &'r Path) -> Result<Option<(Dir, &'r OsStr)>, String> {
    let (parent, name) = split(rel).map_err(|e| e.to_string())?;
    let mut dir = Dir::open(root).map_err(|e| format!("cannot open {}: {e}", root.display()))?;
    let mut at = PathBuf::new();
    let mut names: Vec<&OsStr> = Vec::new();
    for c in parent.components() {
        match c {
            Component::Normal(n) => names.push(n),
            _ => return Err(format!("`{}` is not a plain relative path", rel.display())),
        }
    }
    names.push(name);
    let last = names.len() - 1;
    for (i, n) in names.into_iter().enumerate() {
        at.push(n);
        let kind = match dir.stat(n) {
            Ok(Some(st)) => FileType::from_raw_mode(st.st_mode),
            Ok(None) => return Ok(None),
            Err(e) => return Err(format!("cannot look at {}: {e}", at.display())),
        };
        if kind == FileType::Symlink {
            return Err(link(root, &at));
        }
        if i == last {
            if kind != FileType::RegularFile {
                return Err("not a regular file".into());
            }
            return Ok(Some((dir, name)));
        }
        if kind != FileType::Directory {
            return Err(format!("{} is not a folder", at.display()));
        }
        dir = match dir.child(n) {
            Ok(Some(d)) => d,
            Ok(None) => return Ok(None),
            Err(e) if confined::is_symlink_error(&e) => return Err(link(root, &at)),
            Err(e) => return Err(format!("cannot open {}: {e}", at.display())),
        };
    }
    Ok(None)
}

/// The refusal of the symbolic link at `rel` under `root`, naming where it leads.
fn link(root: &Path, rel: &Path) -> String {
    let to = fs::read_link(root.join(rel))
        .map(|t| format!(" (to {})", t.display()))
        .unwrap_or_default();
    format!(
        "{} is a symbolic link{to}: setup writes a project's files only inside the project and through no link (a repository could aim one at your own configuration): replace the link with the real file or folder, or use --user for your own configuration",
        rel.display()
    )
}

fn text(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes)
        .map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// The text of the user's file at `path` (through a link), `None` when there is no file.
// Not a read inside a root for an answer: a harness's configuration file of the user's, which `setup` edits (links refused before).
#[allow(clippy::disallowed_methods)]
fn read(path: &Path) -> Result<Option<String>, String> {
    match fs::read(path) {
        Ok(bytes) => text(bytes).map(Some),
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

/// Replaces (or creates, with its folder) the user's `path` with `text`, atomically.
fn write(path: &Path, text: &str) -> io::Result<()> {
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

/// Removes the user's `path`, then its folder when that is left empty and is not `base`.
fn delete(path: &Path, base: &Path) -> io::Result<()> {
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
pub(super) fn diff(shown: &str, before: Option<&str>, after: Option<&str>) -> String {
    let d = similar::TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""));
    let old = before.map_or("/dev/null".to_string(), |_| format!("a/{shown}"));
    let new = after.map_or("/dev/null".to_string(), |_| format!("b/{shown}"));
    d.unified_diff()
        .context_radius(3)
        .header(&old, &new)
        .to_string()
}
