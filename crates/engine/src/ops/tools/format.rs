//! `format`: format a file with its language server.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::types::{EditResult, Num};

pub struct Format;
impl Tool for Format {
    const NAME: &'static str = "format";
    const TITLE: &'static str = "Format";
    const DESCRIPTION: &'static str = "Format a file with its language server.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: true };
    const CAPS: &'static [Cap] = &[Cap::Formatting];
    const CLI: CliShape = CliShape {
        help: &[
            ("tab_size", "Indent width (default 4)"),
            ("insert_spaces", "Spaces rather than tabs (default true)"),
        ],
        ..CliShape::PLAIN
    };
    type Params = FormatParams;
    type Result = EditResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.format(p).await
    }
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
