//! The workspace root and path confinement: the one function (`Root::confine`) that decides
//! whether a path, whoever names it (agent, language server, edit journal, git), is inside the
//! root once symlinks and `..` are followed.
//!
//! `Root::new` is the one place a root is made: it refuses `/`, home folders (or a folder holding
//! them) and system folders (`refusal`; a session adds its client's `HOME`), for every door (a
//! command, a session, the LSP face's client root, a hook's event). `Root::confine` resolves `..`
//! lexically, canonicalizes the nearest existing ancestor, follows dangling symlinks, and answers
//! the path inside the root or `outside_root`; `Root::resolve` parses an agent's `file` (relative,
//! absolute, `file://`) and confines it.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use crate::error::{CoreError, Kind};

/// Symlinks followed while confining one path, at most (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// The canonical workspace root. Every path lspgate reads or writes is confined through it.
#[derive(Debug, Clone)]
pub struct Root {
    path: PathBuf,
}

impl Root {
    /// The workspace root at `dir`, canonical; refused (`invalid_params`) when it is no
    /// project's folder (`refusal`): every door that takes a root (`--root`, a session, the
    /// LSP face's client, a hook's event) comes through here.
    pub fn new(dir: &Path) -> Result<Root, CoreError> {
        Root::new_for(dir, None)
    }

    /// `new`, with the home folder of the client that asks (its `HOME`) refused too.
    pub fn new_for(dir: &Path, client_home: Option<&Path>) -> Result<Root, CoreError> {
        let path = dir.canonicalize().map_err(|e| {
            CoreError::new(
                Kind::FileNotFound,
                format!("workspace root {}: {e}", dir.display()),
            )
        })?;
        if !path.is_dir() {
            return Err(CoreError::invalid(format!(
                "workspace root {} is not a directory",
                path.display()
            )));
        }
        if let Some(why) = refusal(&path, client_home) {
            return Err(CoreError::invalid(format!(
                "workspace root {} is refused: {why}; lspgate would watch and index all of \
                 it. Open a project's folder instead (--root DIR)",
                path.display()
            ))
            .with_data(serde_json::json!({"root": path, "refused": why})));
        }
        Ok(Root { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Confines `path` (absolute, or relative to the root) to the root: its nearest existing
    /// ancestor is canonicalized (so every symlink on the way is followed, and `..` resolved
    /// lexically first), a dangling symlink is followed to where it points, and the result must
    /// lie inside the root; otherwise `outside_root`. Returns the canonical path (what exists of
    /// it resolved, the missing rest appended), which may not exist.
    ///
    /// This is the only place that decides confinement. Writers call it again at the moment of
    /// writing and then walk to the file without following symlinks (`edits::fs`), so a path
    /// that changed in between cannot lead out.
    pub fn confine(&self, path: &Path) -> Result<PathBuf, CoreError> {
        let joined = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.path.join(path)
        };
        let real = canonical(&normalize(&joined), MAX_LINKS).map_err(|e| match e {
            Canon::Loop => self.outside_symlinks(path),
            Canon::Io(e) => CoreError::io("read", &path.display().to_string(), &e),
        })?;
        if real.starts_with(&self.path) {
            Ok(real)
        } else {
            Err(self.outside(&path.display().to_string()))
        }
    }

    /// Resolves an agent's `file` (root-relative, absolute, or `file://` URI) to a canonical path
    /// inside the root. Symlinks and `..` that lead out are `outside_root`; a missing file is
    /// `file_not_found`.
    pub fn resolve(&self, file: &str) -> Result<PathBuf, CoreError> {
        if file.trim().is_empty() {
            return Err(CoreError::invalid("`file` is empty"));
        }
        let given = if file.starts_with("file:") {
            url::Url::parse(file)
                .ok()
                .and_then(|u| u.to_file_path().ok())
                .ok_or_else(|| CoreError::invalid(format!("`{file}` is not a valid file URI")))?
        } else {
            PathBuf::from(file)
        };
        let real = self.confine(&given).map_err(|e| match e.kind {
            Kind::OutsideRoot => self.outside(file),
            _ => e,
        })?;
        match std::fs::symlink_metadata(&real) {
            Ok(_) => Ok(real),
            Err(e) if e.kind() == ErrorKind::NotFound => Err(CoreError::new(
                Kind::FileNotFound,
                format!("no file `{file}` in the workspace"),
            )
            .with_data(serde_json::json!({"file": file}))),
            Err(e) => Err(CoreError::io("read", file, &e)),
        }
    }

    fn outside(&self, file: &str) -> CoreError {
        CoreError::new(
            Kind::OutsideRoot,
            format!(
                "`{file}` is outside the workspace root {}",
                self.path.display()
            ),
        )
        .with_data(serde_json::json!({"file": file, "root": self.path}))
    }

    fn outside_symlinks(&self, path: &Path) -> CoreError {
        CoreError::new(
            Kind::OutsideRoot,
            format!(
                "`{}` goes through more than {MAX_LINKS} symbolic links; lspgate cannot tell where it leads",
                path.display()
            ),
        )
        .with_data(serde_json::json!({"file": path, "root": self.path}))
    }

    /// The root-relative form of a path for output (with `/`); absolute if outside the root.
    pub fn relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.path) {
            Ok(rel) => rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/"),
            Err(_) => path.to_string_lossy().into_owned(),
        }
    }
}

/// System folders that are never a root themselves (their subfolders may be: `/opt/app`,
/// `/var/www/site`, `/tmp/x`).
const SYSTEM_FOLDERS: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/dev/shm",
    "/etc",
    "/home",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/lost+found",
    "/media",
    "/mnt",
    "/nix",
    "/nix/store",
    "/opt",
    "/root",
    "/run",
    "/run/media",
    "/run/user",
    "/sbin",
    "/snap",
    "/srv",
    "/tmp",
    "/usr",
    "/usr/bin",
    "/usr/include",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libexec",
    "/usr/local",
    "/usr/sbin",
    "/usr/share",
    "/usr/src",
    "/var",
    "/var/cache",
    "/var/lib",
    "/var/log",
    "/var/spool",
    "/var/tmp",
    "/Applications",
    "/Library",
    "/System",
    "/Users",
    "/Volumes",
    "/private",
    "/private/etc",
    "/private/tmp",
    "/private/var",
];

/// Trees that hold no project anywhere: the kernel's pseudo file systems.
const SYSTEM_TREES: &[&str] = &["/proc", "/sys"];

/// Why `path` (canonical) is no workspace root, if it is not: the file system's root, a home
/// folder (the process's `HOME`, the user's in the password database, `client_home`) or a
/// folder that holds one, a system folder (`SYSTEM_FOLDERS`), or anything under
/// `SYSTEM_TREES`.
pub(super) fn refusal(path: &Path, client_home: Option<&Path>) -> Option<String> {
    if path.parent().is_none() {
        return Some("it is the file system's root".into());
    }
    if let Some(tree) = SYSTEM_TREES.iter().find(|t| path.starts_with(t)) {
        return Some(format!("it is in {tree}, a system tree"));
    }
    let homes = [
        std::env::var_os("HOME").map(PathBuf::from),
        passwd_home(),
        client_home.map(Path::to_path_buf),
    ];
    for home in homes.into_iter().flatten().filter(|h| h.is_absolute()) {
        let home = home.canonicalize().unwrap_or(home);
        if home == path {
            return Some("it is the home folder".into());
        }
        if home.starts_with(path) {
            return Some(format!("it holds the home folder {}", home.display()));
        }
    }
    if SYSTEM_FOLDERS.iter().any(|f| path == Path::new(f)) {
        return Some("it is a system folder".into());
    }
    None
}

/// This user's home folder as the password database (`/etc/passwd`) says.
// Not a read inside a root for an answer: /etc/passwd, no workspace's file.
#[allow(clippy::disallowed_methods)]
fn passwd_home() -> Option<PathBuf> {
    let uid = rustix::process::getuid().as_raw().to_string();
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 7 && f[2] == uid).then(|| PathBuf::from(f[5]))
    })
}

enum Canon {
    Loop,
    Io(std::io::Error),
}

/// The canonical form of an absolute, normalized path that may not exist: the nearest existing
/// ancestor canonicalized, the missing components appended. A missing component that is a
/// dangling symlink is followed to its target (itself confined the same way by the caller).
fn canonical(lexical: &Path, links: usize) -> Result<PathBuf, Canon> {
    let mut existing = lexical.to_path_buf();
    let mut missing: Vec<OsString> = Vec::new();
    loop {
        match existing.canonicalize() {
            Ok(mut real) => {
                real.extend(missing.iter().rev());
                return Ok(real);
            }
            Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => {}
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(Canon::Loop),
            Err(e) => return Err(Canon::Io(e)),
        }
        // Missing: a dangling symlink leads wherever it points.
        if let Ok(meta) = std::fs::symlink_metadata(&existing)
            && meta.file_type().is_symlink()
        {
            if links == 0 {
                return Err(Canon::Loop);
            }
            let target = std::fs::read_link(&existing).map_err(Canon::Io)?;
            let parent = existing.parent().unwrap_or(Path::new("/"));
            let mut followed = normalize(&parent.join(target));
            followed.extend(missing.iter().rev());
            return canonical(&normalize(&followed), links - 1);
        }
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            // Nothing of it exists, not even `/`.
            return Err(Canon::Io(std::io::Error::from(ErrorKind::NotFound)));
        };
        missing.push(name.to_os_string());
        existing = parent.to_path_buf();
    }
}

/// Removes `.` and resolves `..` lexically (the canonical check follows).
pub(crate) fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A root `ws` beside an `outside` folder holding `secret.txt`.
    fn setup() -> (tempfile::TempDir, Root, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root_dir = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(root_dir.join("src")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root_dir.join("src/a b.py"), "x = 1\n").unwrap();
        std::fs::write(outside.join("secret.txt"), "s").unwrap();
        let root = Root::new(&root_dir).unwrap();
        let outside = outside.canonicalize().unwrap();
        (dir, root, outside)
    }

    #[test]
    fn paths_are_confined_to_the_root() {
        let (_dir, root, outside) = setup();
        let a = root.resolve("src/a b.py").unwrap();
        assert_eq!(root.relative(&a), "src/a b.py");
        let uri = url::Url::from_file_path(&a).unwrap().to_string();
        assert!(uri.contains("a%20b.py"));
        assert_eq!(root.resolve(&uri).unwrap(), a);
        assert_eq!(root.resolve(a.to_str().unwrap()).unwrap(), a);
        for out in [
            "../outside/secret.txt",
            "src/../../outside/secret.txt",
            "/etc/passwd",
            "../nope.py",
        ] {
            assert_eq!(
                root.resolve(out).unwrap_err().kind,
                Kind::OutsideRoot,
                "{out}"
            );
        }
        let secret = url::Url::from_file_path(outside.join("secret.txt")).unwrap();
        assert_eq!(
            root.resolve(secret.as_str()).unwrap_err().kind,
            Kind::OutsideRoot
        );
        assert_eq!(
            root.resolve("src/nope.py").unwrap_err().kind,
            Kind::FileNotFound
        );
        symlink(outside.join("secret.txt"), root.path().join("link")).unwrap();
        assert_eq!(root.resolve("link").unwrap_err().kind, Kind::OutsideRoot);
    }

    #[test]
    fn missing_paths_are_confined_by_their_nearest_existing_ancestor() {
        let (_dir, root, outside) = setup();
        symlink(&outside, root.path().join("out")).unwrap();
        symlink(root.path().join("src"), root.path().join("in")).unwrap();
        // Under a symlinked folder that leads out, however deep the missing part.
        for p in ["out/new.txt", "out/a/b/c/new.txt", "out/../out/x"] {
            let e = root.confine(Path::new(p)).unwrap_err();
            assert_eq!(e.kind, Kind::OutsideRoot, "{p}");
        }
        // Under one that stays inside: the canonical path, missing parts appended.
        assert_eq!(
            root.confine(Path::new("in/new/x.py")).unwrap(),
            root.path().join("src/new/x.py")
        );
        assert_eq!(
            root.confine(&root.path().join("src/./q/../a b.py"))
                .unwrap(),
            root.path().join("src/a b.py")
        );
        assert_eq!(root.confine(Path::new("")).unwrap(), root.path());
    }

    #[test]
    fn no_root_is_the_machine_the_home_folder_or_a_system_folder() {
        for p in [
            "/",
            "/usr",
            "/etc",
            "/var",
            "/tmp",
            "/home",
            "/usr/lib",
            "/proc",
            "/proc/1",
            "/sys/kernel",
            "/dev",
            "/dev/shm",
            "/run",
            "/run/user",
        ] {
            assert!(refusal(Path::new(p), None).is_some(), "{p}");
        }
        for p in [
            "/opt/app",
            "/var/www/site",
            "/tmp/x",
            "/usr/local/src/p",
            "/work",
            "/run/media/me/usb/project",
            "/dev/shm/scratch",
        ] {
            assert_eq!(refusal(Path::new(p), None), None, "{p}");
        }
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        let inside = home.join("project");
        std::fs::create_dir(&inside).unwrap();
        let why = refusal(&home, Some(&home)).unwrap();
        assert_eq!(why, "it is the home folder");
        assert!(refusal(home.parent().unwrap(), Some(&home)).is_some());
        assert_eq!(refusal(&inside, Some(&home)), None);
        let e = Root::new_for(&inside.join(".."), Some(&home)).unwrap_err();
        assert_eq!(e.kind, Kind::InvalidParams);
        assert!(
            e.message.contains("is refused: it is the home folder"),
            "{}",
            e.message
        );
        assert_eq!(
            Root::new(Path::new("/")).unwrap_err().kind,
            Kind::InvalidParams
        );
        assert!(Root::new_for(&inside, Some(&home)).is_ok());
    }

    #[test]
    fn dangling_symlinks_are_followed_to_where_they_point() {
        let (_dir, root, outside) = setup();
        symlink(
            outside.join("missing.txt"),
            root.path().join("dangling-out"),
        )
        .unwrap();
        symlink("src/later.py", root.path().join("dangling-in")).unwrap();
        symlink("loop-b", root.path().join("loop-a")).unwrap();
        symlink("loop-a", root.path().join("loop-b")).unwrap();
        let e = root.confine(Path::new("dangling-out")).unwrap_err();
        assert_eq!(e.kind, Kind::OutsideRoot);
        assert_eq!(
            root.resolve("dangling-out").unwrap_err().kind,
            Kind::OutsideRoot
        );
        assert_eq!(
            root.confine(Path::new("dangling-in")).unwrap(),
            root.path().join("src/later.py")
        );
        assert_eq!(
            root.resolve("dangling-in").unwrap_err().kind,
            Kind::FileNotFound
        );
        assert_eq!(
            root.confine(Path::new("loop-a/x")).unwrap_err().kind,
            Kind::OutsideRoot
        );
    }
}
