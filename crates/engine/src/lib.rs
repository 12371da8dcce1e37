//! The operations layer: one engine (`ops`) whose features serve every tool, gate and hook, and
//! the check tasks' presets and reports (`gates`).

// Unit tests read their own temporary files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

// The layers below, by the names every module here uses for them.
use lspgate_analysis::lexer;
use lspgate_base::{raw, text, watch};
use lspgate_core::{documents, edits, events, registry, workspace};
use lspgate_lsp as lsp;

pub mod error;
pub mod gates;
pub mod ops;
