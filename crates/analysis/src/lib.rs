//! Source analysis that needs no language server: the one lexer for Python, TypeScript/JavaScript
//! and Go that fingerprints, import scanning, surfaces and hints read code through.

pub mod lexer;
