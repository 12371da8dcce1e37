//! The operations layer: one engine (`ops`) whose features serve every tool, gate and hook, and
//! the check tasks' presets and reports (`gates`).

// The layers below, by the names every module here uses for them.
use lspgate_analysis::lexer;
use lspgate_base::{error, raw, text, watch};
use lspgate_core::{documents, edits, events, registry, workspace};
use lspgate_lsp as lsp;

pub mod gates;
pub mod ops;
