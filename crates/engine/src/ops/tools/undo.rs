//! `undo`: undo an applied change by its `edit_id`.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::types::{EditResult, Num};

pub struct Undo;
impl Tool for Undo {
    const NAME: &'static str = "undo";
    const TITLE: &'static str = "Undo";
    const DESCRIPTION: &'static str =
        "Undo an applied change by its `edit_id`, if its files still hold what it wrote.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: true };
    const CLI: CliShape = CliShape {
        help: &[("edit_id", "The `edit_id` an edit returned")],
        ..CliShape::PLAIN
    };
    type Params = UndoParams;
    type Result = EditResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.undo(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct UndoParams {
    // The `edit_id` an edit returned.
    pub edit_id: Num,
    #[serde(default)]
    pub terse: Option<bool>,
}
