//! `execute_command`: a language server's own command.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::EditResult;

pub struct ExecuteCommand;
impl Tool for ExecuteCommand {
    const NAME: &'static str = "execute_command";
    const TITLE: &'static str = "Server command";
    const DESCRIPTION: &'static str = "Run a language server's own command (`servers` lists them).";
    const GROUP: Group = Group::Admin;
    const EFFECT: Effect = Effect::Run;
    const CLI: CliShape = CliShape {
        help: &[
            ("server", "The server's name, as `servers` lists it"),
            ("command", "One of the commands `servers` lists for it"),
            ("arguments", "The command's arguments, a JSON list"),
        ],
        ..CliShape::PLAIN
    };
    type Params = ExecuteCommandParams;
    type Result = ExecuteCommandResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.execute_command(p).await
    }
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

impl Render for ExecuteCommandResult {
    fn render(&self, terse: bool) -> String {
        let mut out = serde_json::to_string_pretty(&self.result).unwrap_or_default();
        if let Some(a) = &self.applied {
            out.push('\n');
            out.push_str(&a.render(terse));
        }
        out
    }
}
