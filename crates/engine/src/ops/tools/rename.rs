//! `rename`: rename the symbol at a position everywhere it is used.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{CliShape, Effect, Group, Progress, Tool, schema};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::types::{EditResult, PositionParams};

pub struct Rename;
impl Tool for Rename {
    const NAME: &'static str = "rename";
    const TITLE: &'static str = "Rename";
    const DESCRIPTION: &'static str =
        "Rename the symbol at a position everywhere it is used, unopened files included.";
    const GROUP: Group = Group::Edits;
    const EFFECT: Effect = Effect::Write { idempotent: true };
    const CAPS: &'static [Cap] = &[Cap::Rename];
    const CLI: CliShape = CliShape {
        flag_aliases: &[("new_name", "to")],
        help: &[("new_name", "The new name")],
        ..CliShape::PLAIN
    };
    type Params = RenameParams;
    type Result = EditResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.rename(p).await
    }
    /// Applied, it touches every file that uses the symbol.
    fn heavy(args: &Value) -> bool {
        applies(args)
    }
    /// It writes the disk's text: it takes no `source` (an unsaved buffer is for reading
    /// tools), so one sent is refused rather than ignored.
    fn input() -> Value {
        let mut v = schema::input::<RenameParams>();
        if let Some(props) = v.get_mut("properties").and_then(Value::as_object_mut) {
            props.remove("source");
        }
        v
    }
}

/// Whether `args` say `apply: true`.
fn applies(args: &Value) -> bool {
    args.get("apply") == Some(&Value::Bool(true))
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
