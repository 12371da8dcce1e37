//! `signature_help`: the signature of the call at a position and its active parameter.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::Serialize;

use super::{Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::PositionParams;

pub struct SignatureHelp;
impl Tool for SignatureHelp {
    const NAME: &'static str = "signature_help";
    const TITLE: &'static str = "Signature help";
    const DESCRIPTION: &'static str =
        "Signature of the call at a position, and which parameter the position is in.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::SignatureHelp];
    type Params = PositionParams;
    type Result = SignatureHelpResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.signature_help(p).await
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Signature {
    pub label: String,
    pub parameters: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_parameter: Option<u32>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SignatureHelpResult {
    pub signatures: Vec<Signature>,
}

impl Render for SignatureHelpResult {
    fn render(&self, _terse: bool) -> String {
        if self.signatures.is_empty() {
            return "no signature here".into();
        }
        let mut out = String::new();
        for s in &self.signatures {
            let active = s
                .active_parameter
                .and_then(|i| s.parameters.get(i as usize))
                .map(|p| format!("  (at: {p})"))
                .unwrap_or_default();
            let _ = writeln!(out, "{}{active}", s.label);
        }
        out.trim_end().to_string()
    }
}
