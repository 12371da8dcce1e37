//! `code_actions`: quick fixes and refactorings for lines of a file, and applying one.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::{EditResult, Num};

pub struct CodeActions;
impl Tool for CodeActions {
    const NAME: &'static str = "code_actions";
    const TITLE: &'static str = "Code actions";
    const DESCRIPTION: &'static str = "Quick fixes and refactorings for lines of a file, numbered; `apply` one by number or title.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: false };
    const CAPS: &'static [Cap] = &[Cap::CodeActions];
    const CLI: CliShape = CliShape {
        help: &[
            ("line", "First line of the range (1-based)"),
            ("end_line", "Last line of the range (default: LINE)"),
            ("apply", "Apply the action with this index or exact title"),
        ],
        ..CliShape::PLAIN
    };
    type Params = CodeActionsParams;
    type Result = CodeActionsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.code_actions(p).await
    }
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

impl Render for CodeActionsResult {
    fn render(&self, terse: bool) -> String {
        if let Some(applied) = &self.applied {
            return applied.render(terse);
        }
        if self.actions.is_empty() {
            return "no code actions here".into();
        }
        let mut out = String::new();
        for a in &self.actions {
            let kind = a
                .kind
                .as_deref()
                .map(|k| format!(" [{k}]"))
                .unwrap_or_default();
            let star = if a.preferred { " *" } else { "" };
            let disabled = a
                .disabled
                .as_deref()
                .map(|d| format!(" (disabled: {d})"))
                .unwrap_or_default();
            let _ = writeln!(out, "{}. {}{kind}{star}{disabled}", a.index, a.title);
        }
        out.trim_end().to_string()
    }
}
