//! Parameters and results of the gate tools (`check`: CheckReport v1 and its unchecked
//! entries; `run_task`, `explain_failure`, `shrink`) and of `execute_command`.

use super::*;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct CheckParams {
    /// Files, folders or globs.
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    // Only files git reports as modified, added or untracked.
    #[serde(default)]
    pub changed: Option<bool>,
    // The least severity that fails the check.
    #[serde(default)]
    #[schemars(extend("default" = "error"))]
    pub severity: Option<Severity>,
    // Configured tasks to run too (their diagnostics merge in).
    #[serde(default)]
    pub tasks: Option<Vec<String>>,
    // Issues per page (`summary` counts them all).
    #[serde(default)]
    #[schemars(extend("default" = 200))]
    pub limit: Option<Num>,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CheckIssue {
    pub file: String,
    #[serde(flatten)]
    pub diag: Diag,
    /// "lsp" or the task's name.
    pub origin: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, Default)]
pub struct CheckSummary {
    /// How many files were checked (every server of the file answered, fresh).
    pub files: usize,
    pub errors: usize,
    pub warnings: usize,
    /// How many files in scope were not checked (see `unchecked`).
    pub unchecked: usize,
    /// Files whose earlier fresh answers were taken because nothing they depend on changed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub reused: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What a check could not do, aggregated per server (or task) and cause.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct Unchecked {
    /// The file, when the entry is about one file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The language of the files (several: comma-separated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// no_server, untrusted_config, server_failed, server_error, timeout, not_fresh,
    /// not_supported, file_not_found, invalid_params, internal, task_not_run, task_timed_out,
    /// task_failed, no_files or too_many_files.
    pub cause: String,
    /// For people: who, how many files, why, and how to fix it when known.
    pub reason: String,
    /// How many files this entry is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<usize>,
    /// A few of them (at most 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

/// CheckReport v1 (protocol §3). `ok` only when every file in scope was checked, every task ran
/// and passed, and nothing was found at the asked severity. (It also deserializes: `lspgate
/// check` reads its exit code and SARIF back from the structured result.)
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct CheckReport {
    pub version: u32,
    pub ok: bool,
    pub summary: CheckSummary,
    /// The issues of this page, grouped per file (`compact`).
    #[serde(
        rename = "files",
        serialize_with = "compact::issues",
        deserialize_with = "compact::read_issues"
    )]
    #[schemars(with = "Vec<compact::FileDiagnosticsShape>")]
    pub issues: Vec<CheckIssue>,
    /// Issues found in all; `issues` is one page of them.
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// What was checked less thoroughly than it could be, and why (JavaScript no project
    /// type-checks: syntax only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// True when anything is `unchecked`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Files, servers and tasks that could not be checked (then `ok` is false and
    /// `lspgate check` exits 2).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unchecked: Vec<Unchecked>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct RunTaskParams {
    // A task from lspgate.toml ([[task]]) or a preset (cargo, tsc, cc, nim, pytest, make).
    pub name: String,
    // Appended to its command.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Seconds.
    #[serde(default)]
    #[schemars(extend("default" = 600))]
    pub timeout: Option<f64>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunTaskResult {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    #[serde(serialize_with = "compact::issues")]
    #[schemars(with = "Vec<compact::FileDiagnosticsShape>")]
    pub diagnostics: Vec<CheckIssue>,
    pub command: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ExplainParams {
    pub file: String,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Culprit {
    pub file: String,
    /// The line of the error.
    pub line: u32,
    /// The enclosing symbol, when a server named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Source lines around the error (±3), numbered.
    pub lines: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExplainResult {
    pub ok: bool,
    /// At most five lines: the first error, what it is about, where.
    pub verdict: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub culprit: Option<Culprit>,
    #[serde(serialize_with = "compact::diag_groups")]
    #[schemars(with = "Vec<compact::DiagGroupShape>")]
    pub diagnostics: Vec<Diag>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ShrinkParams {
    pub file: String,
    // Most oracle calls (default 200).
    #[serde(default)]
    pub max_steps: Option<Num>,
    // Time bound (default 90).
    #[serde(default)]
    pub max_seconds: Option<Num>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ShrinkResult {
    pub original_lines: usize,
    pub minimal_lines: usize,
    pub minimal_source: String,
    pub kept_error: Diag,
    pub steps: usize,
    /// The bound hit before the search finished: the best found so far.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ExecuteCommandParams {
    // The server's name, as `servers` lists it.
    pub server: String,
    // One of the commands `servers` lists for it.
    pub command: String,
    #[serde(default)]
    pub arguments: Option<Vec<serde_json::Value>>,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExecuteCommandResult {
    /// What the server answered.
    pub result: serde_json::Value,
    /// Edits the server asked lspgate to apply while running it (applied, journaled).
    // Declared as an object, as `CodeActionsResult::applied` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub applied: Option<EditResult>,
}
