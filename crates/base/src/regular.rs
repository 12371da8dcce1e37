//! Opening a file that must be a regular one: without blocking (a FIFO's open would wait for a
//! writer, forever, on the runtime's one thread), optionally without following a link in its
//! last component, and refused unless it is a regular file. For the reads outside the confined
//! ones (`edits::fs::read_in_root`): a shebang, a compiler's flags file, a config's digest.

use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `path` opened for reading when it is a regular file; `follow`: through a link in its last
/// component too.
pub fn open(path: &Path, follow: bool) -> io::Result<File> {
    let mut flags = libc::O_NONBLOCK;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// The bytes of `path` when it is a regular file (`open`).
pub fn read(path: &Path, follow: bool) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    open(path, follow)?.read_to_end(&mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_is_read_and_a_fifo_never_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        assert_eq!(read(&file, false).unwrap(), b"x");
        let fifo = dir.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        // Returns at once: no writer is waited for.
        assert!(read(&fifo, true).is_err());
        assert!(read(dir.path(), true).is_err());
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert!(read(&link, false).is_err());
        assert_eq!(read(&link, true).unwrap(), b"x");
    }
}
