//! lspgate: the agent's headless editor. Real language servers, served over MCP, a CLI, an LSP
//! face and harness hooks.
//!
//! This crate is the top of the workspace: the command line (`cli`) over the layer crates,
//! lowest first `lspgate-base` (errors, text, procfs, watching), `lspgate-analysis` (the lexer),
//! `lspgate-lsp` (the client; the only one with LSP types), `lspgate-core` (workspace, servers,
//! documents, edits, events, state), `lspgate-engine` (the operations), and the front ends
//! `lspgate-mcp`, `lspgate-lspface` and `lspgate-daemon`. Each layer is re-exported here under
//! its module name, so the tests, benches and fuzz targets address one crate.

// Unit tests read their own temporary files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub use lspgate_analysis::lexer;
pub use lspgate_base::{procfs, raw, text, watch};
pub use lspgate_core::{documents, edits, events, registry, state, workspace};
pub use lspgate_daemon as daemon;
pub use lspgate_engine::{error, gates, ops};
pub use lspgate_lsp as lsp;
pub use lspgate_lspface as lspface;
pub use lspgate_mcp as mcp;

pub mod cli;
