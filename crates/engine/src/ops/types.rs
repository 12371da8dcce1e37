//! The pieces of parameters and results that several tools share, in the shapes of
//! docs/protocol.md §1–3 (numbers, positions, locations, diagnostics, edits' results, the servers'
//! list, check issues), with their JSON Schemas; each tool's own types are declared in its file
//! under `ops/tools/` and named here too (`per_tool`), so every front end finds them all here.

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};

pub use crate::lsp::wire::Severity;

/// A whole number that may also arrive as a numeric string ("12").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Num(pub i64);

impl<'de> Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Num, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            I(i64),
            F(f64),
            S(String),
        }
        match Raw::deserialize(d)? {
            Raw::I(i) => Ok(Num(i)),
            Raw::F(f) if f.fract() == 0.0 && f.abs() < 1e15 => Ok(Num(f as i64)),
            Raw::F(f) => Err(serde::de::Error::custom(format!(
                "{f} is not a whole number"
            ))),
            Raw::S(s) => s
                .trim()
                .parse()
                .map(Num)
                .map_err(|_| serde::de::Error::custom(format!("\"{s}\" is not a whole number"))),
        }
    }
}

impl JsonSchema for Num {
    fn schema_name() -> Cow<'static, str> {
        "Num".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        // Numeric strings are accepted too (the instructions say so once), but integers are
        // what a caller should send.
        schemars::json_schema!({ "type": "integer" })
    }
}

// Doc comments on parameters become the descriptions the model reads in every tool list, so
// they are written only where the name does not say it; the conventions shared by all tools
// (positions, `symbol`/`occurrence`, `source`, `terse`, `raw`, paging) are said once, in
// `tools::INSTRUCTIONS`. Plain comments here are for readers of the code.

/// A position in a file: `line` plus `column`, or `symbol` (+ `occurrence`) on that line.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct PositionParams {
    // Root-relative path, absolute path inside the root, or file:// URI.
    pub file: String,
    // 1-based.
    pub line: Num,
    // 1-based, in Unicode code points; or `symbol`.
    #[serde(default)]
    pub column: Option<Num>,
    // A name on that line (whole-word match), instead of `column`.
    #[serde(default)]
    pub symbol: Option<String>,
    // Which match of `symbol` on the line, 1-based (default 1).
    #[serde(default)]
    pub occurrence: Option<Num>,
    // This text instead of the file on disk (an unsaved buffer); never written.
    #[serde(default)]
    pub source: Option<String>,
    #[serde(default)]
    pub terse: Option<bool>,
}

// ---- results ----

/// A place in the workspace with its trimmed source line.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct Loc {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    pub text: String,
    /// Why `text` is empty, when lspgate would not read the file: `outside_root` (outside the
    /// workspace root, e.g. a system header or a library stub; lspgate reads no file there, so
    /// `line` and `column` are the server's position plus one, columns in its encoding).
    /// Absent on every other location.
    // A plain string in the schema (every tool list carries it five times).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub text_omitted: Option<TextOmitted>,
}

/// Why a location has no `text`.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TextOmitted {
    /// The file is outside the workspace root: lspgate reads nothing there.
    OutsideRoot,
}

impl TextOmitted {
    /// How the text renderings say it.
    pub fn says(self) -> &'static str {
        match self {
            TextOmitted::OutsideRoot => "(not read: outside the workspace root)",
        }
    }
}

// Where an outline or a symbol search came from (`document_symbols`, `workspace_symbols`).
#[derive(Debug, Clone, Copy, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SymbolSource {
    Server,
    Fallback,
}

/// A diagnostic (protocol §3 `Diag`).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct Diag {
    pub severity: Severity,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub message: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileDiagnostics {
    pub file: String,
    pub diagnostics: Vec<Diag>,
}

// The answer of `servers` and `restart_server`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServersResult {
    pub servers: Vec<crate::registry::ServerStatus>,
    /// How lspgate learns of files changed on disk, e.g. `inotify: 251 folders watched`
    /// (absent until the first server starts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watcher: Option<String>,
}

// ---- editing ----

// One change in an `edit` (and in `what_if`): replace a unique `old_text`, or whole lines.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum EditSpec {
    // Replace the one occurrence of `old_text` (it must occur exactly once).
    Replace {
        old_text: String,
        new_text: String,
    },
    // Replace lines `start_line..=end_line` (1-based) with `new_text`.
    Lines {
        start_line: Num,
        end_line: Num,
        new_text: String,
    },
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FileStat {
    pub file: String,
    pub added: usize,
    pub removed: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub created: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub deleted: bool,
}

/// A diagnostic with its file.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq)]
pub struct FileDiag {
    pub file: String,
    #[serde(flatten)]
    pub diag: Diag,
}

// The answer of every tool that changes files (`edit`, `rename`, `format`, `undo`; `code_actions`
// and `execute_command` carry it when they apply one).
#[derive(Debug, Clone, Serialize, JsonSchema, Default)]
pub struct EditResult {
    /// Whether files were written.
    pub applied: bool,
    /// Whether the change changes anything at all.
    pub changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edit_id: Option<i64>,
    pub files: Vec<FileStat>,
    /// Unified diff of the change.
    pub diff: String,
    /// Diagnostics the change introduced (after applying).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "compact::some_file_diags"
    )]
    #[schemars(with = "Option<Vec<compact::FileDiagnosticsShape>>")]
    pub introduced: Option<Vec<FileDiag>>,
    /// Diagnostics the change resolved (after applying).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "compact::some_file_diags"
    )]
    #[schemars(with = "Option<Vec<compact::FileDiagnosticsShape>>")]
    pub resolved: Option<Vec<FileDiag>>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

// An issue of `check` or `run_task`: a diagnostic with its file and its origin.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CheckIssue {
    pub file: String,
    #[serde(flatten)]
    pub diag: Diag,
    /// "lsp" or the task's name.
    pub origin: String,
}

pub mod compact;
mod per_tool;
pub use per_tool::*;
