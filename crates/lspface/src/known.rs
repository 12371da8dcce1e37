//! What each server announced the last time it ran, kept in lspgate's data folder
//! (`capabilities/`): a client that cannot take registrations later is told in `initialize`
//! what the servers of the root's languages serve without their being started (a Python-only
//! client does not pay for TypeScript's server). Keyed by server name and command line; a
//! server not seen yet with that command is started to learn it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A server's announcement as the face offers it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Known {
    pub command: String,
    /// Its capabilities, as the face offers them (`requests::offered`).
    pub capabilities: Value,
    /// Its `workspace/executeCommand` commands.
    pub commands: Vec<String>,
    /// Its position encoding's LSP name.
    pub encoding: String,
}

fn file(name: &str) -> PathBuf {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '+'
            }
        })
        .collect();
    crate::workspace::data_dir()
        .join("capabilities")
        .join(format!("{safe}.json"))
}

/// What `name` announced when it last ran `command`.
// Not a read inside a root for an answer: what a server announced, kept in lspgate's own data folder.
#[allow(clippy::disallowed_methods)]
pub(crate) fn recall(name: &str, command: &str) -> Option<Known> {
    let text = std::fs::read(file(name)).ok()?;
    let known: Known = serde_json::from_slice(&text).ok()?;
    (known.command == command).then_some(known)
}

/// Keeps what `name` announced (written only when it changed).
pub(crate) fn remember(name: &str, known: &Known) {
    let path = file(name);
    if recall(name, &known.command).is_some_and(|k| {
        k.capabilities == known.capabilities
            && k.commands == known.commands
            && k.encoding == known.encoding
    }) {
        return;
    }
    let Ok(body) = serde_json::to_vec(known) else {
        return;
    };
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| {
            // Whole or not at all: another client may be reading it.
            let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
            std::fs::write(&tmp, body)?;
            std::fs::rename(&tmp, &path)
        });
    if let Err(e) = written {
        tracing::debug!("keeping {name}'s capabilities in {}: {e}", path.display());
    }
}
