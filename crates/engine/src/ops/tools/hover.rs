//! `hover`: type, signature and documentation of the symbol at a position (and its line with inlay
//! hints inlined).

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::PositionParams;

pub struct Hover;
impl Tool for Hover {
    const NAME: &'static str = "hover";
    const TITLE: &'static str = "Hover";
    const DESCRIPTION: &'static str = "Type, signature and documentation of the symbol at a position; `hints`: also its line with inferred types inlined.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::Hover];
    const CLI: CliShape = CliShape {
        help: &[(
            "hints",
            "Also the line with its inlay hints (inferred types, parameter names) inlined",
        )],
        ..CliShape::PLAIN
    };
    type Params = HoverParams;
    type Result = HoverResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.hover(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct HoverParams {
    #[serde(flatten)]
    pub at: PositionParams,
    // Also the line with its inlay hints inlined (the tool's description says so).
    #[serde(default)]
    pub hints: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Range {
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub end_column: u32,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct HoverResult {
    pub contents: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    /// With `hints`: the line with its inlay hints inlined (absent when it has none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<String>,
}

impl Render for HoverResult {
    fn render(&self, _terse: bool) -> String {
        let mut out = match self.contents.trim() {
            "" => "no hover information at this position".to_string(),
            text => text.to_string(),
        };
        if let Some(h) = &self.hints {
            let _ = write!(out, "\n\nhints: {}", h.trim());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_hover_says_so() {
        let h = HoverResult {
            contents: " \n".into(),
            range: None,
            hints: None,
        };
        assert_eq!(h.render(false), "no hover information at this position");
    }
}
