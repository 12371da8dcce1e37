//! The journal's seal: every entry lspgate records carries an HMAC-SHA256 of what it would write
//! (root, id, tool, summary, each file's path and content digests) under a key of the user's
//! (`journal.key` in lspgate's data folder, 0600), so an entry lspgate did not record for this
//! user and root — a `state.db` shipped in a repository, copied from elsewhere, or edited behind
//! lspgate's back — is never recovered or undone.

use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::CoreError;

/// The key's length in bytes.
const KEY_LEN: usize = 32;
/// SHA-256's block size, HMAC's padding length.
const BLOCK: usize = 64;

/// The per-user key entries are sealed with.
#[derive(Clone)]
pub(super) struct Key([u8; KEY_LEN]);

impl std::fmt::Debug for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Key(…)")
    }
}

/// One file of an entry as it is sealed: its stored path and its contents' digests.
pub(super) struct Sealed<'a> {
    pub path: &'a [u8],
    pub before: Option<&'a str>,
    pub after: Option<&'a str>,
}

impl Key {
    /// The user's key in `dir` (lspgate's data folder), made on first use: 32 random bytes,
    /// written to a temporary file and linked into place, so two processes making it at once
    /// agree on one. A key that is not lspgate's (wrong size, a symlink, readable by others) is
    /// refused.
    pub(super) fn load(dir: &Path) -> Result<Key, CoreError> {
        let path = dir.join("journal.key");
        let fail = |action: &str, e: std::io::Error| {
            CoreError::internal(format!(
                "the edit journal's key {}: cannot {action}: {e}",
                path.display()
            ))
        };
        // Its folder is this user's and no one else's to write (made so when missing).
        crate::workspace::dirs::private_dir(dir, dir).map_err(|e| {
            CoreError::internal(format!("the edit journal's key {}: {e}", path.display()))
        })?;
        if let Some(key) = Key::read(&path).map_err(|e| fail("read it", e))? {
            return Ok(key);
        }
        let mut bytes = [0u8; KEY_LEN];
        getrandom::fill(&mut bytes)
            .map_err(|e| fail("make it", std::io::Error::other(e.to_string())))?;
        // A name of this attempt's own: two threads (two roots opening their journals at once
        // in the daemon) or processes making the key never write into each other's file.
        let tmp: PathBuf = dir.join(format!(
            "journal.key.{}.{:016x}.tmp",
            std::process::id(),
            getrandom::u64().unwrap_or_default()
        ));
        let mut file = crate::workspace::dirs::private_file(
            &tmp,
            std::fs::OpenOptions::new().write(true).create_new(true),
        )
        .map_err(|e| fail("write it", e))?;
        let written = file.write_all(&bytes).and_then(|()| file.sync_all());
        drop(file);
        let linked = written.and_then(|()| std::fs::hard_link(&tmp, &path));
        let _ = std::fs::remove_file(&tmp);
        match linked {
            Ok(()) => Ok(Key(bytes)),
            // Another process made it first: theirs is the key.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => Key::read(&path)
                .map_err(|e| fail("read it", e))?
                .ok_or_else(|| fail("read it", ErrorKind::NotFound.into())),
            Err(e) => Err(fail("write it", e)),
        }
    }

    fn read(path: &Path) -> std::io::Result<Option<Key>> {
        use std::os::unix::fs::MetadataExt;
        let mut file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let meta = file.metadata()?;
        let uid = rustix::process::getuid().as_raw();
        if !meta.is_file() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
            return Err(std::io::Error::other(
                "not a private file of this user (it must be a regular file, mode 0600)",
            ));
        }
        let mut bytes = Vec::with_capacity(KEY_LEN);
        Read::by_ref(&mut file)
            .take(KEY_LEN as u64 + 1)
            .read_to_end(&mut bytes)?;
        let bytes: [u8; KEY_LEN] = bytes
            .try_into()
            .map_err(|_| std::io::Error::other(format!("not {KEY_LEN} bytes long")))?;
        Ok(Some(Key(bytes)))
    }

    /// The seal of an entry of `root`: hex HMAC-SHA256 over every field, each length-prefixed.
    pub(super) fn seal(
        &self,
        root: &Path,
        id: i64,
        tool: &str,
        summary: &str,
        files: &[Sealed],
    ) -> String {
        let mut msg = Vec::new();
        let mut field = |bytes: &[u8]| {
            msg.extend_from_slice(&(bytes.len() as u64).to_be_bytes());
            msg.extend_from_slice(bytes);
        };
        field(root.as_os_str().as_encoded_bytes());
        field(&id.to_be_bytes());
        field(tool.as_bytes());
        field(summary.as_bytes());
        for f in files {
            field(f.path);
            field(f.before.unwrap_or("-").as_bytes());
            field(f.after.unwrap_or("-").as_bytes());
        }
        crate::text::hex(&self.hmac(&msg))
    }

    /// Whether `seal` is this key's seal of the entry (compared without early exit).
    pub(super) fn verify(
        &self,
        seal: Option<&str>,
        root: &Path,
        id: i64,
        tool: &str,
        summary: &str,
        files: &[Sealed],
    ) -> bool {
        let Some(seal) = seal else { return false };
        let want = self.seal(root, id, tool, summary, files);
        crate::text::same_bytes(want.as_bytes(), seal.as_bytes())
    }

    /// HMAC-SHA256 (RFC 2104) of `msg` under this key.
    fn hmac(&self, msg: &[u8]) -> [u8; 32] {
        let mut padded = [0u8; BLOCK];
        padded[..KEY_LEN].copy_from_slice(&self.0);
        let pad = |byte: u8| padded.map(|b| b ^ byte);
        let inner = Sha256::new()
            .chain_update(pad(0x36))
            .chain_update(msg)
            .finalize();
        Sha256::new()
            .chain_update(pad(0x5c))
            .chain_update(inner)
            .finalize()
            .into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seal_is_hmac_sha256_and_binds_every_field() {
        // Computed independently: Python's hmac.new(b"\x0b" * 32, b"Hi There", sha256).
        let key = Key([0x0b; KEY_LEN]);
        assert_eq!(
            crate::text::hex(&key.hmac(b"Hi There")),
            "198a607eb44bfbc69903a0f1cf2bbdc5ba0aa3f3d9ae3c1c7a3b1696a0b68cf7"
        );
        let root = Path::new("/w");
        let files = [Sealed {
            path: b"/w/a.txt",
            before: Some("x"),
            after: None,
        }];
        let seal = key.seal(root, 1, "edit", "s", &files);
        assert!(key.verify(Some(&seal), root, 1, "edit", "s", &files));
        assert!(!key.verify(Some(&seal), root, 2, "edit", "s", &files));
        assert!(!key.verify(Some(&seal), Path::new("/v"), 1, "edit", "s", &files));
        assert!(!key.verify(None, root, 1, "edit", "s", &files));
        assert!(!Key([1; KEY_LEN]).verify(Some(&seal), root, 1, "edit", "s", &files));
    }

    #[test]
    fn the_key_is_made_once_private_and_a_shared_one_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let a = Key::load(&home).unwrap();
        let b = Key::load(&home).unwrap();
        assert_eq!(a.0, b.0);
        let meta = std::fs::metadata(home.join("journal.key")).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        std::fs::set_permissions(
            home.join("journal.key"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        assert!(Key::load(&home).is_err());
    }

    #[test]
    fn threads_making_the_key_at_once_agree_on_one() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let keys: Vec<[u8; KEY_LEN]> = std::thread::scope(|s| {
            let made: Vec<_> = (0..8)
                .map(|_| s.spawn(|| Key::load(&home).unwrap().0))
                .collect();
            made.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let on_disk = Key::load(&home).unwrap().0;
        assert!(
            keys.iter().all(|k| *k == on_disk),
            "a thread kept a key of its own"
        );
        let left: Vec<_> = std::fs::read_dir(&home)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, ["journal.key"], "temporary files left behind");
    }
}
