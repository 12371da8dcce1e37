//! `shrink`: a failing file reduced to a minimal one with the same first error.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::{Diag, Num};

pub struct Shrink;
impl Tool for Shrink {
    const NAME: &'static str = "shrink";
    const TITLE: &'static str = "Shrink";
    const DESCRIPTION: &'static str = "Reduce a failing file to a minimal one with the same first error (in memory; the disk is not written).";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Read;
    const BACKGROUND: bool = true;
    const CLI: CliShape = CliShape {
        help: &[
            ("file", "The file to reduce to a smallest failing case"),
            ("max_steps", "Most oracle calls (default 200)"),
            ("max_seconds", "Time bound, in seconds (default 90)"),
        ],
        ..CliShape::PLAIN
    };
    type Params = ShrinkParams;
    type Result = ShrinkResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.shrink(p).await
    }
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

impl Render for ShrinkResult {
    fn render(&self, _terse: bool) -> String {
        format!(
            "{} → {} lines in {} steps{}, still: {}\n{}",
            self.original_lines,
            self.minimal_lines,
            self.steps,
            if self.partial {
                " (bound hit: best so far)"
            } else {
                ""
            },
            self.kept_error.message.lines().next().unwrap_or(""),
            self.minimal_source.trim_end()
        )
    }
}
