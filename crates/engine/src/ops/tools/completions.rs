//! `completions`: the members and names valid at a position.

use std::borrow::Cow;
use std::fmt::Write;

use schemars::JsonSchema;
use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};

use super::{Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::{Render, partial_note, short};
use crate::ops::types::{Num, PositionParams};

pub struct Completions;
impl Tool for Completions {
    const NAME: &'static str = "completions";
    const TITLE: &'static str = "Completions";
    const DESCRIPTION: &'static str =
        "Completions at a position: the members and names valid there.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::Completion];
    type Params = CompletionsParams;
    type Result = CompletionsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.completions(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CompletionsParams {
    #[serde(flatten)]
    pub at: PositionParams,
    #[serde(default)]
    #[schemars(extend("default" = 20))]
    pub limit: Option<Num>,
}

/// Written as `["label", "kind", "detail"?]` (`compact`).
#[derive(Debug, Clone)]
pub struct CompletionItem {
    pub label: String,
    pub kind: String,
    pub detail: Option<String>,
}

/// `["label", "kind", "detail"?]`.
impl Serialize for CompletionItem {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(2 + self.detail.is_some() as usize))?;
        seq.serialize_element(&self.label)?;
        seq.serialize_element(&self.kind)?;
        if let Some(d) = &self.detail {
            seq.serialize_element(d)?;
        }
        seq.end()
    }
}

impl JsonSchema for CompletionItem {
    fn schema_name() -> Cow<'static, str> {
        "CompletionItem".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        // `[label, kind, detail?]`, said in the protocol (see `position_items`).
        schemars::json_schema!({ "type": "array" })
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CompletionsResult {
    pub items: Vec<CompletionItem>,
    pub total: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Render for CompletionsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        for i in &self.items {
            match (&i.detail, terse) {
                (Some(d), false) => {
                    let _ = writeln!(out, "{} ({}) {}", i.label, i.kind, short(d, 60));
                }
                _ => {
                    let _ = writeln!(out, "{} ({})", i.label, i.kind);
                }
            }
        }
        if self.total > self.items.len() {
            let _ = writeln!(out, "… {} of {} shown", self.items.len(), self.total);
        }
        if out.is_empty() {
            out.push_str("no completions");
        }
        let mut said = String::new();
        partial_note(&mut said, self.partial, &self.reason);
        said.push_str(&out);
        said.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_completion_is_a_tuple() {
        let item = CompletionItem {
            label: "compute".into(),
            kind: "function".into(),
            detail: None,
        };
        assert_eq!(
            serde_json::to_value(&item).unwrap(),
            json!(["compute", "function"])
        );
    }
}
