//! `definition`: where the symbol at a position is defined, declared, its type defined or
//! implemented.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::{Render, partial_note, render_locs};
use crate::ops::types::{Loc, PositionParams, compact};

pub struct Definition;
impl Tool for Definition {
    const NAME: &'static str = "definition";
    const TITLE: &'static str = "Definition";
    const DESCRIPTION: &'static str = "Where the symbol at a position is defined (or declared, its type defined, implemented: `kind`).";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[
        Cap::Definition,
        Cap::Declaration,
        Cap::TypeDefinition,
        Cap::Implementation,
    ];
    const CLI: CliShape = CliShape {
        help: &[(
            "kind",
            "definition (default), declaration, type_definition or implementation",
        )],
        ..CliShape::PLAIN
    };
    type Params = DefinitionParams;
    type Result = LocationsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.definition(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DefinitionParams {
    #[serde(flatten)]
    pub at: PositionParams,
    // definition (default), declaration, type_definition or implementation.
    #[serde(default)]
    pub kind: Option<GotoKindParam>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum GotoKindParam {
    Definition,
    Declaration,
    TypeDefinition,
    Implementation,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct LocationsResult {
    #[serde(rename = "files", serialize_with = "compact::locations")]
    #[schemars(with = "Vec<compact::FilePositionsShape>")]
    pub locations: Vec<Loc>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Render for LocationsResult {
    fn render(&self, terse: bool) -> String {
        // A partial answer says so first, an empty one too: "no locations" alone would mislead.
        let mut out = String::new();
        partial_note(&mut out, self.partial, &self.reason);
        if self.locations.is_empty() {
            out.push_str("no locations");
        }
        render_locs(&mut out, &self.locations, terse);
        out.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::types::TextOmitted;

    fn loc(file: &str, line: u32) -> Loc {
        Loc {
            file: file.into(),
            line,
            column: 5,
            end_line: line,
            end_column: 12,
            text: "total = compute(x, y)".into(),
            text_omitted: None,
        }
    }

    #[test]
    fn a_location_outside_the_root_says_why_it_has_no_text() {
        let outside = Loc {
            file: "/usr/include/stdio.h".into(),
            text: String::new(),
            text_omitted: Some(TextOmitted::OutsideRoot),
            ..loc("", 3)
        };
        let r = LocationsResult {
            locations: vec![loc("a.c", 1), outside],
            partial: false,
            reason: None,
        };
        let full = r.render(false);
        assert!(
            full.contains("/usr/include/stdio.h\n  3:5 (not read: outside the workspace root)"),
            "{full}"
        );
        assert!(full.contains("  1:5 total = compute(x, y)"), "{full}");
        assert_eq!(r.render(true), "a.c 1:5\n/usr/include/stdio.h 3:5");
        let json = serde_json::to_value(&r).unwrap_or_default();
        assert_eq!(json["files"][1]["text_omitted"], "outside_root");
        assert_eq!(json["files"][1]["at"], serde_json::json!([[3, 5]]));
        assert!(json["files"][0].get("text_omitted").is_none(), "{json}");
    }
}
