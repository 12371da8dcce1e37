//! File operations that cannot leave the folder they start from: folders are opened one
//! component at a time from the workspace root without following symlinks (and created the same
//! way when missing), and every file operation is relative to such an open folder (`openat`,
//! `renameat2`, `unlinkat`), so a symlink swapped in after a path was confined is refused, never
//! followed. Temporary files are created exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`) under
//! unpredictable names in the target's own folder.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path};

use serde_json::json;

use crate::error::{CoreError, Kind};
use crate::workspace::Root;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RenameFlags, Stat};

/// The error a walk or an open returns when it meets a symlink where it follows none.
#[derive(Debug)]
struct SymlinkMet;

impl std::fmt::Display for SymlinkMet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a symbolic link is in the way (lspgate follows none when writing)")
    }
}

impl std::error::Error for SymlinkMet {}

fn symlink_met() -> io::Error {
    io::Error::other(SymlinkMet)
}

/// Whether `e` says a symlink was met where none is followed.
pub fn is_symlink_error(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::ELOOP) || e.get_ref().is_some_and(|i| i.is::<SymlinkMet>())
}

fn cstr(name: &OsStr) -> io::Result<CString> {
    CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(ErrorKind::InvalidInput, "a path with a NUL byte"))
}

/// How a new file is opened: for writing, created, never an existing one.
const CREATE_NEW: OFlags = OFlags::WRONLY.union(OFlags::CREATE).union(OFlags::EXCL);

/// An open folder; every operation is relative to it and follows no symlink at the last
/// component.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
}

impl Dir {
    /// Opens the folder at `path` (absolute, expected canonical: a symlink at its last component
    /// is refused).
    pub fn open(path: &Path) -> io::Result<Dir> {
        let c = cstr(path.as_os_str())?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::open(c.as_c_str(), flags, Mode::empty())?;
        Ok(Dir { fd })
    }

    /// What `name` is here, without following it: `None` if it does not exist.
    pub fn stat(&self, name: &OsStr) -> io::Result<Option<Stat>> {
        let c = cstr(name)?;
        match rustix::fs::statat(&self.fd, c.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(st)),
            Err(e) if e == rustix::io::Errno::NOENT => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// Whether `name` here is a symbolic link.
    pub fn is_symlink(&self, name: &OsStr) -> bool {
        matches!(self.stat(name), Ok(Some(st)) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink)
    }

    /// Opens `name` here with `flags` (and `mode`, when it creates), never through a symlink.
    fn open_at(&self, name: &OsStr, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        let c = cstr(name)?;
        let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&self.fd, c.as_c_str(), flags, mode).map_err(io::Error::from) {
            Ok(fd) => Ok(fd),
            Err(e) if e.kind() == ErrorKind::NotADirectory && self.is_symlink(name) => {
                Err(symlink_met())
            }
            Err(e) if is_symlink_error(&e) => Err(symlink_met()),
            Err(e) => Err(e),
        }
    }

    /// The sub-folder `name`, never through a symlink; `None` if it does not exist.
    pub fn child(&self, name: &OsStr) -> io::Result<Option<Dir>> {
        match self.open_at(name, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()) {
            Ok(fd) => Ok(Some(Dir { fd })),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The sub-folder `name`, created first if missing with `mode` (less the umask; then opened
    /// without following a symlink, so one put there meanwhile is refused).
    pub fn child_or_create(&self, name: &OsStr, mode: libc::mode_t) -> io::Result<Dir> {
        if let Some(d) = self.child(name)? {
            return Ok(d);
        }
        let c = cstr(name)?;
        let r = rustix::fs::mkdirat(&self.fd, c.as_c_str(), Mode::from_raw_mode(mode));
        if let Err(e) = r
            && e != rustix::io::Errno::EXIST
        {
            return Err(e.into());
        }
        self.child(name)?
            .ok_or_else(|| io::Error::from(ErrorKind::NotFound))
    }

    /// The content of the regular file `name`; `None` if it does not exist. A symlink is an
    /// error (`is_symlink_error`), and so is anything but a regular file (a FIFO is never
    /// waited on).
    pub fn read(&self, name: &OsStr) -> io::Result<Option<Vec<u8>>> {
        let fd = match self.open_at(name, OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty()) {
            Ok(fd) => fd,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let mut f = File::from(fd);
        if !f.metadata()?.is_file() {
            return Err(io::Error::new(
                ErrorKind::InvalidInput,
                "not a regular file",
            ));
        }
        let mut out = Vec::new();
        f.read_to_end(&mut out)?;
        Ok(Some(out))
    }

    /// A new, empty temporary file beside `target` (`.TARGET.lspgate-RANDOM.tmp`), created
    /// exclusively: never an existing file, never through a symlink.
    pub fn create_temp(&self, target: &OsStr) -> io::Result<(OsString, File)> {
        let mut last = io::Error::from(ErrorKind::AlreadyExists);
        for _ in 0..16 {
            let name = temp_name(target);
            match self.open_at(&name, CREATE_NEW, Mode::from_raw_mode(0o666)) {
                Ok(fd) => return Ok((name, File::from(fd))),
                Err(e) if e.kind() == ErrorKind::AlreadyExists || is_symlink_error(&e) => last = e,
                Err(e) => return Err(e),
            }
        }
        Err(last)
    }

    /// Opens (creating) a file of lspgate's own here, never through a symlink.
    pub fn open_own(&self, name: &OsStr, mode: libc::mode_t) -> io::Result<File> {
        self.open_at(
            name,
            OFlags::RDWR | OFlags::CREATE,
            Mode::from_raw_mode(mode),
        )
        .map(File::from)
    }

    /// Creates `name` with `content` and `mode` (less the umask) unless it exists (whatever it
    /// is: a symlink there is left alone, not followed). Returns whether it was created.
    pub fn create_new(&self, name: &OsStr, content: &[u8], mode: libc::mode_t) -> io::Result<bool> {
        use std::io::Write;
        match self.open_at(name, CREATE_NEW, Mode::from_raw_mode(mode)) {
            Ok(fd) => {
                let mut f = File::from(fd);
                f.write_all(content)?;
                Ok(true)
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists || is_symlink_error(&e) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `renameat2` within this folder, with `flags` (`RENAME_EXCHANGE`, `RENAME_NOREPLACE`).
    pub fn rename(&self, from: &OsStr, to: &OsStr, flags: libc::c_uint) -> io::Result<()> {
        let (a, b) = (cstr(from)?, cstr(to)?);
        let flags = RenameFlags::from_bits_retain(flags);
        rustix::fs::renameat_with(&self.fd, a.as_c_str(), &self.fd, b.as_c_str(), flags)
            .map_err(io::Error::from)
    }

    /// Replaces (or creates) the file `name` with `content`, atomically: a temporary file beside
    /// it (`create_temp`), given the mode of the file it replaces, synced, then renamed over the
    /// name (a symlink there is replaced, never followed).
    pub fn replace(&self, name: &OsStr, content: &[u8]) -> io::Result<()> {
        use std::io::Write;
        use std::os::unix::fs::PermissionsExt;
        let (tmp, mut f) = self.create_temp(name)?;
        let mode = match self.stat(name) {
            Ok(Some(st)) if FileType::from_raw_mode(st.st_mode) == FileType::RegularFile => {
                Some(st.st_mode & 0o7777)
            }
            _ => None,
        };
        let written = (|| {
            f.write_all(content)?;
            if let Some(m) = mode {
                f.set_permissions(std::fs::Permissions::from_mode(m))?;
            }
            f.sync_all()?;
            self.rename(&tmp, name, 0)
        })();
        if let Err(e) = written {
            let _ = self.remove(&tmp);
            return Err(e);
        }
        // The rename is durable once the folder is.
        let _ = self.sync();
        Ok(())
    }

    /// Removes the file (or symlink, not followed) `name`.
    pub fn remove(&self, name: &OsStr) -> io::Result<()> {
        let c = cstr(name)?;
        rustix::fs::unlinkat(&self.fd, c.as_c_str(), AtFlags::empty()).map_err(io::Error::from)
    }

    /// Removes the empty folder `name` (a symlink there is not followed: an error).
    pub fn remove_dir(&self, name: &OsStr) -> io::Result<()> {
        let c = cstr(name)?;
        rustix::fs::unlinkat(&self.fd, c.as_c_str(), AtFlags::REMOVEDIR).map_err(io::Error::from)
    }

    /// Flushes the folder's entries (a rename in it) to disk.
    pub fn sync(&self) -> io::Result<()> {
        rustix::fs::fsync(&self.fd).map_err(io::Error::from)
    }

    /// The names in this folder.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let here = format!("/proc/self/fd/{}", self.fd.as_raw_fd());
        std::fs::read_dir(here)?
            .map(|e| e.map(|e| e.file_name()))
            .collect()
    }
}

/// Opens the folder `rel` (relative, plain components only) under the folder `base`, walking
/// one component at a time without following any symlink. `None` if some folder of it is
/// missing.
pub fn walk(base: &Path, rel: &Path) -> io::Result<Option<Dir>> {
    let mut dir = Dir::open(base)?;
    for name in plain(rel)? {
        match dir.child(name)? {
            Some(d) => dir = d,
            None => return Ok(None),
        }
    }
    Ok(Some(dir))
}

/// `walk`, creating the folders that are missing, one at a time, each opened without following
/// a symlink before the next is made in it.
pub fn walk_creating(base: &Path, rel: &Path) -> io::Result<Dir> {
    let mut dir = Dir::open(base)?;
    for name in plain(rel)? {
        dir = dir.child_or_create(name, 0o777)?;
    }
    Ok(dir)
}

fn plain(rel: &Path) -> io::Result<Vec<&OsStr>> {
    rel.components()
        .map(|c| match c {
            Component::Normal(n) => Ok(n),
            _ => Err(io::Error::new(
                ErrorKind::InvalidInput,
                format!("`{}` is not a plain relative path", rel.display()),
            )),
        })
        .collect()
}

/// `.TARGET.lspgate-RANDOM.tmp`.
pub fn temp_name(target: &OsStr) -> OsString {
    let mut name = b".".to_vec();
    name.extend_from_slice(target.as_bytes());
    name.extend_from_slice(format!(".lspgate-{:016x}.tmp", random()).as_bytes());
    OsString::from_vec(name)
}

/// Whether `name` is one of `target`'s temporary files.
pub fn is_temp_of(name: &OsStr, target: &OsStr) -> bool {
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(target.as_bytes());
    prefix.extend_from_slice(b".lspgate-");
    let n = name.as_bytes();
    n.starts_with(&prefix) && n.ends_with(b".tmp")
}

/// Whether `name` is a temporary file of lspgate's (`.TARGET.lspgate-RANDOM.tmp`).
pub fn is_temp(name: &OsStr) -> bool {
    let n = name.as_bytes();
    let Some(stem) = n.strip_suffix(b".tmp") else {
        return false;
    };
    let Some(random) = stem.len().checked_sub(16).map(|at| &stem[at..]) else {
        return false;
    };
    n.starts_with(b".")
        && stem[..stem.len() - 16].ends_with(b".lspgate-")
        && random.iter().all(u8::is_ascii_hexdigit)
}

/// 64 unpredictable bits from the kernel (a clock-and-counter mix only if it has none to give).
fn random() -> u64 {
    if let Ok(n) = getrandom::u64() {
        return n;
    }
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    t ^ (u64::from(std::process::id()) << 32)
        ^ COUNTER
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The bytes of the file at `path`, read only when it is inside the root: confined
/// (`Root::confine`: `..` resolved, symlinks followed) and then reached from the root one folder
/// at a time without following any symlink (`walk`), so a path that leads out, or that
/// changed to lead out after it was confined, is never read. Every file lspgate reads to build
/// an answer is read here. `Ok(None)`: no such file; `outside_root` when it leads out.
pub fn read_in_root(root: &Root, path: &Path) -> Result<Option<Vec<u8>>, CoreError> {
    let shown = root.relative(path);
    let real = root.confine(path)?;
    let moved = |e: &std::io::Error| {
        CoreError::new(
            Kind::OutsideRoot,
            format!("{shown} changed to lead through a symbolic link ({e}); not read"),
        )
        .with_data(json!({"file": shown, "root": root.path()}))
    };
    let rel = real.strip_prefix(root.path()).map_err(|_| {
        CoreError::new(
            Kind::OutsideRoot,
            format!("{shown} is outside the workspace root"),
        )
    })?;
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Err(CoreError::invalid(format!(
            "{shown} is a folder, not a file"
        )));
    };
    let dir = match walk(root.path(), parent) {
        Ok(Some(dir)) => dir,
        Ok(None) => return Ok(None),
        Err(e) if is_symlink_error(&e) => return Err(moved(&e)),
        Err(e) => return Err(CoreError::io("read", &shown, &e)),
    };
    match dir.read(name) {
        Ok(bytes) => Ok(bytes),
        Err(e) if is_symlink_error(&e) => Err(moved(&e)),
        Err(e) => Err(CoreError::io("read", &shown, &e)),
    }
}

/// A file's text as `read_in_root` reads it (invalid UTF-8 replaced): `None` when it is
/// missing, `outside_root` when it leads out, another error when it cannot be read.
pub fn text_in_root(root: &Root, path: &Path) -> Result<Option<String>, CoreError> {
    Ok(
        read_in_root(root, path)?.map(|b| match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn os(s: &str) -> &OsStr {
        OsStr::new(s)
    }

    #[test]
    fn walks_refuse_symlinked_folders_and_create_nothing_through_them() {
        let dir = tempfile::tempdir().unwrap();
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        symlink(&outside, root.join("out")).unwrap();
        assert!(walk(&root, Path::new("real")).unwrap().is_some());
        assert!(walk(&root, Path::new("real/missing")).unwrap().is_none());
        let e = walk(&root, Path::new("out")).unwrap_err();
        assert!(is_symlink_error(&e), "{e}");
        let e = walk_creating(&root, Path::new("out/a/b")).unwrap_err();
        assert!(is_symlink_error(&e), "{e}");
        assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
        let d = walk_creating(&root, Path::new("real/a/b")).unwrap();
        assert!(d.create_new(os("f"), b"x", 0o666).unwrap());
        assert_eq!(std::fs::read(root.join("real/a/b/f")).unwrap(), b"x");
        assert!(walk(&root, Path::new("../outside")).is_err());
        assert!(walk(&root, Path::new("/etc")).is_err());
    }

    #[test]
    fn reads_follow_no_symlink_and_wait_on_no_fifo() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("secret"), "s").unwrap();
        symlink(dir.path().join("secret"), dir.path().join("link")).unwrap();
        let d = Dir::open(dir.path()).unwrap();
        assert_eq!(d.read(os("secret")).unwrap().unwrap(), b"s");
        assert_eq!(d.read(os("missing")).unwrap(), None);
        assert!(is_symlink_error(&d.read(os("link")).unwrap_err()));
        let fifo = dir.path().join("fifo");
        let mode = Mode::from_raw_mode(0o600);
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, FileType::Fifo, mode, 0).unwrap();
        assert_eq!(
            d.read(os("fifo")).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    }

    #[test]
    fn temporary_files_are_exclusive_and_unpredictable() {
        let dir = tempfile::tempdir().unwrap();
        let d = Dir::open(dir.path()).unwrap();
        let (a, _) = d.create_temp(os("f.py")).unwrap();
        let (b, _) = d.create_temp(os("f.py")).unwrap();
        assert_ne!(a, b);
        assert!(is_temp_of(&a, os("f.py")) && !is_temp_of(&a, os("g.py")));
        assert_eq!(a.len(), ".f.py.lspgate-".len() + 16 + ".tmp".len());
        assert!(is_temp(&a));
        assert!(!is_temp(OsStr::new("f.py")));
        assert!(!is_temp(OsStr::new(".f.py.lspgate-xyz.tmp")));
        // A symlink planted at the temporary name is never followed: a name taken is skipped.
        std::fs::write(dir.path().join("victim"), "v").unwrap();
        symlink(dir.path().join("victim"), dir.path().join("planted")).unwrap();
        assert!(!d.create_new(os("planted"), b"x", 0o666).unwrap());
        assert_eq!(std::fs::read(dir.path().join("victim")).unwrap(), b"v");
        let mut names = d.names().unwrap();
        names.sort();
        assert_eq!(names.len(), 4, "{names:?}");
    }
}
