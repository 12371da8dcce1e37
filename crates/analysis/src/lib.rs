//! Source analysis that needs no language server: the one lexer for Python, TypeScript/JavaScript
//! and Go that fingerprints, import scanning, surfaces and hints read code through.

// Unit tests read their own temporary files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

pub mod lexer;
