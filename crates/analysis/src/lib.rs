//! Source analysis that needs no language server, all of it reading code through the one lexer
//! for Python, TypeScript/JavaScript and Go (`lexer`): a file's imports (`imports`), the
//! top-level definitions whose change reaches importers (`surface`), the re-check fingerprints
//! of declarations (`declarations`), and the call sites derived hints are placed at (`calls`);
//! `scanner_fixtures` tests them all on annotated fixtures.

pub mod calls;
pub mod declarations;
pub mod imports;
pub mod lexer;
#[cfg(test)]
mod scanner_fixtures;
pub mod surface;
