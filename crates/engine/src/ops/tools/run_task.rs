//! `run_task`: a toolchain task run, its errors parsed.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::{CheckIssue, compact};

pub struct RunTask;
impl Tool for RunTask {
    const NAME: &'static str = "run_task";
    const TITLE: &'static str = "Run task";
    const DESCRIPTION: &'static str = "Run a toolchain task (from lspgate.toml, or a preset: cargo, tsc, cc, nim, pytest, make) and parse its errors.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Run;
    const BACKGROUND: bool = true;
    const CLI: CliShape = CliShape {
        trailing: Some("args"),
        renamed: &[("timeout", "task-timeout")],
        help: &[
            (
                "name",
                "A task from lspgate.toml ([[task]]) or a preset (cargo, tsc, cc, nim, pytest, make)",
            ),
            ("args", "Appended to the task's command"),
        ],
        ..CliShape::PLAIN
    };
    type Params = RunTaskParams;
    type Result = RunTaskResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.run_task(p).await
    }
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

impl Render for RunTaskResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        let code = self.exit_code.map_or("none".to_string(), |c| c.to_string());
        let _ = writeln!(
            out,
            "{} — exit {code}{}",
            self.command,
            if self.timed_out { " (timed out)" } else { "" }
        );
        for d in &self.diagnostics {
            let _ = writeln!(
                out,
                "{}:{}:{} {}",
                d.file, d.diag.line, d.diag.column, d.diag.message
            );
        }
        if !terse {
            if !self.stdout.trim().is_empty() {
                let _ = writeln!(out, "stdout:\n{}", self.stdout.trim_end());
            }
            if !self.stderr.trim().is_empty() {
                let _ = writeln!(out, "stderr:\n{}", self.stderr.trim_end());
            }
        }
        out.trim_end().to_string()
    }
}
