//! The core of a workspace: its root, configuration and presets (`workspace`), the supervised
//! language servers (`registry`), open documents and their diagnostics (`documents`), edits and
//! their journal (`edits`), the event log (`events`) and the state database (`state`).

// The layers below, by the names every module here uses for them.
use lspgate_base::{error, procfs, text, watch};
use lspgate_lsp as lsp;

pub mod documents;
pub mod edits;
pub mod events;
pub mod registry;
pub mod state;
pub mod workspace;
