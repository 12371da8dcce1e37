//! lspgate: the agent's headless editor. Real language servers, served over MCP and a CLI.
//!
//! Layers, top to bottom: `cli` and `mcp` (front ends) → `ops` (one function per tool) →
//! `documents` (open files, freshness, overlays, diagnostics) and `workspace` (root, languages,
//! servers) → `lsp` (client and transport; the only place that knows LSP types). `text` holds the
//! pure position logic every layer shares.

pub mod cli;
pub mod daemon;
pub mod documents;
pub mod edits;
pub mod error;
pub mod events;
pub mod gates;
pub mod lexer;
pub mod lsp;
pub mod lspface;
pub mod mcp;
pub mod ops;
pub mod procfs;
pub mod raw;
pub mod registry;
pub mod state;
pub mod text;
pub mod watch;
pub mod workspace;
