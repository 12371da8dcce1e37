//! `check`: is the code right? CheckReport v1: the issues of every file in scope and what could not
//! be checked.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::{CheckIssue, Num, Severity, compact};

pub struct Check;
impl Tool for Check {
    const NAME: &'static str = "check";
    const TITLE: &'static str = "Check";
    const DESCRIPTION: &'static str = "Is the code right? `ok` and the issues of every file in scope (the workspace, `paths`, or git's `changed` files) from all servers and `tasks`; what could not be checked is in `unchecked`.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Read;
    const BACKGROUND: bool = true;
    const CLI: CliShape = CliShape {
        positional: &["paths"],
        flag_aliases: &[("tasks", "task")],
        help: &[
            ("limit", "Issues per page (the summary counts them all)"),
            (
                "changed",
                "Only files git reports as modified, added or untracked",
            ),
            ("severity", "The least severity that fails the check"),
            (
                "tasks",
                "Configured tasks to run too (their diagnostics merge in)",
            ),
        ],
        sarif: true,
        ..CliShape::PLAIN
    };
    type Params = CheckParams;
    type Result = CheckReport;
    async fn run(e: &Engine, p: Self::Params, at: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.check_with_progress(p, at).await
    }
}

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

impl Render for CheckReport {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        // How files were checked, first: a long list of issues is cut from the end.
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        for i in &self.issues {
            if terse {
                let _ = writeln!(
                    out,
                    "{}:{}:{} {}",
                    i.file,
                    i.diag.line,
                    i.diag.column,
                    i.diag.message.lines().next().unwrap_or("")
                );
            } else {
                let sev = serde_json::to_value(i.diag.severity)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                let code = i
                    .diag
                    .code
                    .as_deref()
                    .map(|c| format!(" [{c}]"))
                    .unwrap_or_default();
                let origin = if i.origin == "lsp" {
                    String::new()
                } else {
                    format!(" ({})", i.origin)
                };
                let _ = writeln!(
                    out,
                    "{}:{}:{} {sev}{code}: {}{origin}",
                    i.file,
                    i.diag.line,
                    i.diag.column,
                    i.diag.message.lines().next().unwrap_or("")
                );
            }
        }
        // What could not be checked, one line per server (or task) and cause, instead of
        // the partial note.
        for u in &self.unchecked {
            let _ = writeln!(out, "not checked: {}", u.reason);
            if !terse && !u.examples.is_empty() {
                let more = u.files.unwrap_or(0).saturating_sub(u.examples.len());
                let _ = writeln!(
                    out,
                    "  e.g. {}{}",
                    u.examples.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                );
            }
        }
        let status = if !self.unchecked.is_empty() {
            "COULD NOT CHECK"
        } else if self.ok {
            "ok"
        } else {
            "FAILED"
        };
        let _ = write!(
            out,
            "{status}: {} files, {} errors, {} warnings",
            self.summary.files, self.summary.errors, self.summary.warnings
        );
        if self.summary.unchecked > 0 {
            let _ = write!(out, ", {} files not checked", self.summary.unchecked);
        }
        if let Some(c) = &self.next_cursor {
            let _ = write!(
                out,
                "\n… {} of {} issues shown; cursor \"{c}\" for more",
                self.issues.len(),
                self.total
            );
        }
        out
    }
}
