//! `explain_failure`: why a file fails, in five lines.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::{Diag, compact};

pub struct ExplainFailure;
impl Tool for ExplainFailure {
    const NAME: &'static str = "explain_failure";
    const TITLE: &'static str = "Explain failure";
    const DESCRIPTION: &'static str = "Why a file fails, in five lines: its first error, the enclosing function and the source around it.";
    const GROUP: Group = Group::Gates;
    const EFFECT: Effect = Effect::Read;
    const CLI: CliShape = CliShape {
        help: &[("file", "The file whose diagnostics to explain")],
        ..CliShape::PLAIN
    };
    type Params = ExplainParams;
    type Result = ExplainResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.explain_failure(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ExplainParams {
    pub file: String,
    #[serde(default)]
    pub terse: Option<bool>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Culprit {
    pub file: String,
    /// The line of the error.
    pub line: u32,
    /// The enclosing symbol, when a server named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
    /// Source lines around the error (±3), numbered.
    pub lines: Vec<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ExplainResult {
    pub ok: bool,
    /// At most five lines: the first error, what it is about, where.
    pub verdict: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub culprit: Option<Culprit>,
    #[serde(serialize_with = "compact::diag_groups")]
    #[schemars(with = "Vec<compact::DiagGroupShape>")]
    pub diagnostics: Vec<Diag>,
}

impl Render for ExplainResult {
    fn render(&self, terse: bool) -> String {
        let mut out = self.verdict.clone();
        if let (Some(c), false) = (&self.culprit, terse) {
            out.push('\n');
            out.push_str(&c.lines.join("\n"));
        }
        out
    }
}
