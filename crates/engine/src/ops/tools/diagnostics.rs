//! `diagnostics`: errors and warnings of a file, or of every file with problems.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::render::{Render, more_note, partial_note};
use crate::ops::types::{FileDiagnostics, Num, compact};

pub struct Diagnostics;
impl Tool for Diagnostics {
    const NAME: &'static str = "diagnostics";
    const TITLE: &'static str = "Diagnostics";
    const DESCRIPTION: &'static str =
        "Errors and warnings of a file as it is now; without `file`, of every file with problems.";
    const GROUP: Group = Group::Diagnostics;
    const EFFECT: Effect = Effect::Read;
    type Params = DiagnosticsParams;
    type Result = DiagnosticsResult;
    async fn run(e: &Engine, p: Self::Params, at: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.diagnostics_with_progress(p, at).await
    }
    /// Without a file it does a check's work on the whole workspace.
    fn heavy(args: &Value) -> bool {
        args.get("file").is_none_or(Value::is_null)
    }
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

impl Render for DiagnosticsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        partial_note(&mut out, self.partial, &self.reason);
        let mut shown = 0;
        for f in &self.files {
            for d in &f.diagnostics {
                shown += 1;
                if terse {
                    let _ = writeln!(out, "{}:{}:{} {}", f.file, d.line, d.column, d.message);
                } else {
                    let code = d
                        .code
                        .as_deref()
                        .map(|c| format!(" [{c}]"))
                        .unwrap_or_default();
                    let sev = serde_json::to_value(d.severity)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "{}:{}:{} {sev}{code}: {}",
                        f.file, d.line, d.column, d.message
                    );
                }
            }
        }
        if shown == 0 {
            let n = self.files.len();
            let _ = write!(
                out,
                "no problems in {n} file{}",
                if n == 1 { "" } else { "s" }
            );
        }
        let page = self.files.iter().map(|f| f.diagnostics.len()).sum();
        more_note(&mut out, page, self.total, &self.next_cursor);
        out.trim_end().to_string()
    }
}
