//! Trust in a workspace's own `lspgate.toml` (protocol §5), like `direnv allow`: the commands it
//! defines (server commands, their args and env, tcp addresses, tasks) run only once
//! `lspgate trust` has recorded the file's SHA-256 in the user's data folder; a new or changed
//! file is untrusted, and asking for what it defines answers `untrusted_config`. A file named
//! with `--config` is trusted by that act and never looked up here.
//!
//! A record is one file per config path, `trust/<sha256 of the path>` under
//! `workspace::data_dir()`, holding `<sha256 of the content> <path>`. Trust covers the file's
//! text only: a program it names (`command = "./tools/server"`) runs with whatever that
//! program holds when it starts.
//!
//! The same trust covers what the repository itself may run (`workspace`): presets whose servers
//! execute the repository's code (rust-analyzer's build scripts and proc macros, nimsuggest's
//! NimScript) start with those features off, or not at all, and task presets refuse extra
//! arguments, until the workspace is trusted. A workspace is trusted when its lspgate.toml is
//! (that file's record), or, with no lspgate.toml, when `lspgate trust` recorded the root
//! itself (a record keyed by the root's path, content empty). A new lspgate.toml in a trusted
//! root makes it untrusted until that file is trusted: what was reviewed changed.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::json;
use sha2::{Digest, Sha256};

use crate::error::{CoreError, Kind};

/// A workspace config whose commands may not run, or a workspace that is not trusted (then
/// `config` is the root itself: it has no lspgate.toml): what was loaded, and how to trust it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Untrusted {
    /// The config file (`<root>/lspgate.toml`), or the root when it has none.
    pub config: PathBuf,
    /// The workspace root, for the command that trusts it.
    pub root: PathBuf,
    /// SHA-256 of the content lspgate loaded: only a record of exactly this content lets its
    /// commands run.
    pub digest: String,
    /// Trusted once with other content (else never trusted).
    pub changed: bool,
}

impl Untrusted {
    /// The command a person runs to trust the file (after reading it).
    pub fn command(&self) -> String {
        format!(
            "lspgate trust --root {}",
            sh_quote(&self.root.to_string_lossy())
        )
    }

    /// Whether the content lspgate loaded has been trusted since (`lspgate trust` in another
    /// terminal lets a running session use it without a restart).
    pub fn granted(&self) -> bool {
        recorded(&self.config).as_deref() == Some(self.digest.as_str())
    }

    /// Whether this is about a lspgate.toml (else the root, which has none).
    pub fn of_file(&self) -> bool {
        self.config != self.root
    }

    fn why(&self) -> &'static str {
        match (self.of_file(), self.changed) {
            (true, true) => "its lspgate.toml changed since it was trusted",
            (true, false) => "its lspgate.toml was never trusted",
            (false, _) => "it was never trusted",
        }
    }

    /// `untrusted_config` for `what` (`server \`builtin/nimlangserver\``, `run_task \`make\`
    /// with extra args`), which would run the repository's own code or commands as `runs` says,
    /// on this workspace that is not trusted.
    pub fn refuse(&self, what: &str, runs: &str) -> CoreError {
        CoreError::new(
            Kind::UntrustedConfig,
            format!(
                "{what} is refused: {runs}, and the workspace {} is not trusted ({}); review the repository, then run `{}`",
                self.root.display(),
                self.why(),
                self.command()
            ),
        )
        .with_data(json!({
            "root": self.root,
            "config": self.of_file().then_some(&self.config),
            "reason": if self.changed { "changed" } else { "new" },
            "trust": self.command(),
        }))
    }

    /// `untrusted_config` for `what` (`server \`local/x\``, `task \`build\``) defined in the file.
    pub fn error(&self, what: &str) -> CoreError {
        let why = if self.changed {
            "it changed since it was trusted"
        } else {
            "it was never trusted"
        };
        CoreError::new(
            Kind::UntrustedConfig,
            format!(
                "{what} is defined in {}, which is not trusted ({why}), so lspgate does not run its commands; review the file, then run `{}`",
                self.config.display(),
                self.command()
            ),
        )
        .with_data(json!({
            "config": self.config,
            "reason": if self.changed { "changed" } else { "new" },
            "trust": self.command(),
        }))
    }
}

/// Hex SHA-256 of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where trust records live.
pub fn dir() -> PathBuf {
    super::data_dir().join("trust")
}

fn record_path(config: &Path) -> PathBuf {
    dir().join(digest(config.as_os_str().as_encoded_bytes()))
}

/// The digest recorded for `config`, if any.
// Not a read inside a root for an answer: the trust record in lspgate's own data folder.
#[allow(clippy::disallowed_methods)]
pub fn recorded(config: &Path) -> Option<String> {
    let text = std::fs::read_to_string(record_path(config)).ok()?;
    let (digest, path) = text.trim_end_matches('\n').split_once(' ')?;
    (Path::new(path) == config).then(|| digest.to_string())
}

/// `None` when the content `bytes` of `config` is trusted, else what is untrusted.
pub fn check(config: &Path, root: &Path, bytes: &[u8]) -> Option<Untrusted> {
    let digest = digest(bytes);
    let on_record = recorded(config);
    if on_record.as_deref() == Some(digest.as_str()) {
        return None;
    }
    Some(Untrusted {
        config: config.to_path_buf(),
        root: root.to_path_buf(),
        digest,
        changed: on_record.is_some(),
    })
}

/// Whether the workspace at `root` is trusted (`None`), else what is not: its lspgate.toml
/// when it has one (that file's content must be on record), else the root itself. The one
/// question config, presets and tasks ask; an `Untrusted` answers it again, live, with
/// `granted`.
// Not a read inside a root for an answer: the workspace's lspgate.toml, checked to be a file, read to digest it for trust.
#[allow(clippy::disallowed_methods)]
pub fn workspace(root: &Path) -> Option<Untrusted> {
    let config = root.join("lspgate.toml");
    if config.is_file() {
        return match std::fs::read(&config) {
            Ok(bytes) => check(&config, root, &bytes),
            // Unreadable: nothing on record can match it.
            Err(_) => Some(Untrusted {
                config: config.clone(),
                root: root.to_path_buf(),
                digest: String::new(),
                changed: recorded(&config).is_some(),
            }),
        };
    }
    check(root, root, b"")
}

/// Records the workspace at `root`, which has no lspgate.toml, as trusted; returns the
/// record's path.
pub fn grant_root(root: &Path) -> std::io::Result<PathBuf> {
    grant(root, b"")
}

/// Records `bytes` as the trusted content of `config`; returns the record's path. The record
/// is written to a temporary file and renamed into place (folder 0700, file 0600; the folder
/// and the data folder refused when another user owns or may write to them: `dirs`).
pub fn grant(config: &Path, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let dir = super::dirs::data(Path::new("trust")).map_err(std::io::Error::other)?;
    let path = record_path(config);
    let tmp = dir.join(format!(
        ".{}.{}",
        std::process::id(),
        digest(bytes).get(..16).unwrap_or("tmp")
    ));
    let _ = std::fs::remove_file(&tmp);
    let mut f = super::dirs::private_file(
        &tmp,
        std::fs::OpenOptions::new().write(true).create_new(true),
    )?;
    let written = writeln!(f, "{} {}", digest(bytes), config.display())
        .and_then(|()| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, &path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| path)
}

/// Forgets the record of `config`; returns whether there was one.
pub fn revoke(config: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(record_path(config)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// `s` quoted for a POSIX shell when it needs it.
fn sh_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,@%=".contains(c));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trust_command_is_quoted_for_a_shell() {
        assert_eq!(sh_quote("/work/app"), "/work/app");
        assert_eq!(sh_quote("/my dir/it's"), r"'/my dir/it'\''s'");
        assert_eq!(sh_quote(""), "''");
    }

    #[test]
    fn digests_are_hex_sha256() {
        assert_eq!(
            digest(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
