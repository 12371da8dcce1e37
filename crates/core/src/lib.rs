//! The core of a workspace: its root, configuration and presets (`workspace`), the supervised
//! language servers (`registry`), open documents and their diagnostics (`documents`), edits and
//! their journal (`edits`), the event log (`events`) and the state database (`state`).

// Unit tests read their own temporary files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

// The layers below, by the names every module here uses for them.
use lspgate_base::{procfs, text, watch};
use lspgate_lsp as lsp;

pub mod documents;
pub mod edits;
pub mod error;
pub mod events;
pub mod registry;
pub mod state;
pub mod workspace;
