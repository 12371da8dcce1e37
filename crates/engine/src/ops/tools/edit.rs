//! `edit`: change a file by unique text or whole lines; a preview unless applied.

use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::types::{EditResult, EditSpec};

pub struct Edit;
impl Tool for Edit {
    const NAME: &'static str = "edit";
    const TITLE: &'static str = "Edit";
    const DESCRIPTION: &'static str = "Change a file: replace text that occurs once (`old_text`) or whole lines; shows the errors it introduces.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: false };
    type Params = EditParams;
    type Result = EditResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.edit(p).await
    }
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
