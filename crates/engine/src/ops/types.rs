//! Parameters and results of the tools, in the shapes of docs/protocol.md §1–3, with their JSON
//! Schemas and their text renderings (default and terse). Shared by every front end.

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

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DefinitionParams {
    #[serde(flatten)]
    pub at: PositionParams,
    // definition (default), declaration, type_definition or implementation.
    #[serde(default)]
    pub kind: Option<GotoKindParam>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GotoKindParam {
    Definition,
    Declaration,
    TypeDefinition,
    Implementation,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ReferencesParams {
    #[serde(flatten)]
    pub at: PositionParams,
    #[serde(default)]
    #[schemars(extend("default" = true))]
    pub include_declaration: Option<bool>,
    #[serde(default)]
    #[schemars(extend("default" = 200))]
    pub limit: Option<Num>,
    // `next_cursor` of a previous call, to get the rest.
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DocumentSymbolsParams {
    pub file: String,
    #[serde(default)]
    pub source: Option<String>,
    /// Levels to show (1: top level only).
    #[serde(default)]
    pub depth: Option<Num>,
    /// Include variables local to functions.
    #[serde(default)]
    pub locals: Option<bool>,
    // A page is `limit` symbols in line order, counted at every level (see `shape::page`).
    #[serde(default)]
    #[schemars(extend("default" = 300))]
    pub limit: Option<Num>,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DiagnosticsParams {
    // One file; without it, every file of the workspace with problems (what `check` finds).
    #[serde(default)]
    pub file: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
    // Diagnostics per page (files in path order, each file's in line order).
    #[serde(default)]
    #[schemars(extend("default" = 200))]
    pub limit: Option<Num>,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct WorkspaceSymbolsParams {
    pub query: String,
    // class, function, method, variable, …
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    #[schemars(extend("default" = 100))]
    pub limit: Option<Num>,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CompletionsParams {
    #[serde(flatten)]
    pub at: PositionParams,
    #[serde(default)]
    #[schemars(extend("default" = 20))]
    pub limit: Option<Num>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CallHierarchyParams {
    #[serde(flatten)]
    pub at: PositionParams,
    // incoming (who calls this) or outgoing (what this calls).
    pub direction: Direction,
    #[serde(default)]
    #[schemars(extend("default" = 100))]
    pub limit: Option<Num>,
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Incoming,
    Outgoing,
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

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Range {
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HoverResult {
    pub contents: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    /// With `hints`: the line with its inlay hints inlined (absent when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LocationsResult {
    #[serde(rename = "files", serialize_with = "compact::locations")]
    #[schemars(with = "Vec<compact::FilePositionsShape>")]
    pub locations: Vec<Loc>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReferencesResult {
    #[serde(rename = "files", serialize_with = "compact::locations")]
    #[schemars(with = "Vec<compact::FilePositionsShape>")]
    pub locations: Vec<Loc>,
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// An outline's symbol; written as `{name, kind, at: [line, column, end_line], detail?,
/// children?}`.
#[derive(Debug, Clone)]
pub struct Symbol {
    pub name: String,
    pub kind: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub detail: Option<String>,
    pub children: Vec<Symbol>,
}

#[derive(Debug, Clone, Copy, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SymbolSource {
    Server,
    Fallback,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DocumentSymbolsResult {
    pub symbols: Vec<Symbol>,
    /// Symbols in the whole outline, at every level.
    pub total: usize,
    pub source: SymbolSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A symbol found in the workspace; written as `{name, kind, container?, file, at: [line,
/// column]}`.
#[derive(Debug, Clone)]
pub struct WorkspaceSymbol {
    pub name: String,
    pub kind: String,
    pub container: Option<String>,
    pub loc: Loc,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkspaceSymbolsResult {
    pub symbols: Vec<WorkspaceSymbol>,
    pub total: usize,
    pub source: SymbolSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Signature {
    pub label: String,
    pub parameters: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_parameter: Option<u32>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SignatureHelpResult {
    pub signatures: Vec<Signature>,
}

/// Written as `["label", "kind", "detail"?]` (`compact`).
#[derive(Debug, Clone)]
pub struct CompletionItem {
    pub label: String,
    pub kind: String,
    pub detail: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CompletionsResult {
    pub items: Vec<CompletionItem>,
    pub total: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A caller or callee; written as `{name, kind, file, at: [line, column], call_sites: [{file,
/// at}]}`.
#[derive(Debug, Clone)]
pub struct Call {
    pub name: String,
    pub kind: String,
    pub loc: Loc,
    pub call_sites: Vec<Loc>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CallHierarchyResult {
    pub calls: Vec<Call>,
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
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

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DiagnosticsResult {
    #[serde(serialize_with = "compact::file_diagnostics")]
    #[schemars(with = "Vec<compact::FileDiagnosticsShape>")]
    pub files: Vec<FileDiagnostics>,
    /// Diagnostics in all files.
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What else the answer should know, said once a session (a server of the workspace's
    /// lspgate.toml waiting for `lspgate trust` while a built-in answers).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct ServersParams {
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RestartServerParams {
    // The server's name, as `servers` lists it (e.g. builtin/pyright).
    pub name: String,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServersResult {
    pub servers: Vec<crate::registry::ServerStatus>,
    /// How lspgate learns of files changed on disk, e.g. `inotify: 251 folders watched`
    /// (absent until the first server starts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub watcher: Option<String>,
}

// ---- editing ----

// One change in an `edit`: replace a unique `old_text`, or whole lines.
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

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct EditParams {
    pub file: String,
    // Applied in order.
    pub edits: Vec<EditSpec>,
    /// SHA-256 hex the file must still have.
    #[serde(default)]
    pub expected_digest: Option<String>,
    // Write it (default: preview the diff only).
    #[serde(default)]
    pub apply: Option<bool>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RenameParams {
    #[serde(flatten)]
    pub at: PositionParams,
    pub new_name: String,
    // Write it (default: preview the diff only).
    #[serde(default)]
    pub apply: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CodeActionsParams {
    pub file: String,
    // First line of the range (1-based).
    pub line: Num,
    // Last line of the range (default: `line`).
    #[serde(default)]
    pub end_line: Option<Num>,
    /// quickfix, refactor, source.organizeImports, ...
    #[serde(default)]
    pub kind: Option<String>,
    // The `index` or exact `title` of the action to apply.
    #[serde(default)]
    #[schemars(schema_with = "index_or_title")]
    pub apply: Option<serde_json::Value>,
    /// With `apply`: show its diff, write nothing.
    #[serde(default)]
    pub preview: Option<bool>,
    #[serde(default)]
    pub terse: Option<bool>,
}

/// `{"type": ["integer", "string"]}`: an action's index or its title.
fn index_or_title(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": ["integer", "string"] })
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct FormatParams {
    pub file: String,
    // Write it (default: preview the diff only).
    #[serde(default)]
    pub apply: Option<bool>,
    // Indent width (default 4).
    #[serde(default)]
    pub tab_size: Option<Num>,
    // Spaces rather than tabs (default true).
    #[serde(default)]
    pub insert_spaces: Option<bool>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UndoParams {
    // The `edit_id` an edit returned.
    pub edit_id: Num,
    #[serde(default)]
    pub terse: Option<bool>,
}

// Where `what_if` hovers after the edits (positions in the edited text).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Probe {
    pub line: Num,
    #[serde(default)]
    pub column: Option<Num>,
    #[serde(default)]
    pub symbol: Option<String>,
    #[serde(default)]
    pub occurrence: Option<Num>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct WhatIfParams {
    pub file: String,
    // Changes as `edit` takes them; the disk never sees them.
    pub edits: Vec<EditSpec>,
    #[serde(default)]
    pub probe: Option<Probe>,
    #[serde(default)]
    pub terse: Option<bool>,
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

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ActionInfo {
    /// 1-based, stable for the same file content and range.
    pub index: usize,
    pub title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub preferred: bool,
    /// Messages of the diagnostics it fixes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CodeActionsResult {
    pub actions: Vec<ActionInfo>,
    /// With `apply`: what applying the chosen action did.
    // Declared as an object: it is exactly `edit`'s result, which `edit`'s schema describes;
    // repeating that schema in every tool that may apply an edit doubled theirs.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub applied: Option<EditResult>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WhatIfResult {
    #[serde(serialize_with = "compact::file_diags")]
    #[schemars(with = "Vec<compact::FileDiagnosticsShape>")]
    pub introduced: Vec<FileDiag>,
    #[serde(serialize_with = "compact::file_diags")]
    #[schemars(with = "Vec<compact::FileDiagnosticsShape>")]
    pub resolved: Vec<FileDiag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hover_at_probe: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

mod annotate;
pub use annotate::*;
pub mod compact;
mod gates;
pub use gates::*;
