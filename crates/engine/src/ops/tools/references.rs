//! `references`: every use of the symbol at a position, grouped by file and paged.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::{Render, more_note, partial_note, render_locs};
use crate::ops::types::{Loc, Num, PositionParams, compact};

pub struct References;
impl Tool for References {
    const NAME: &'static str = "references";
    const TITLE: &'static str = "References";
    const DESCRIPTION: &'static str = "Every use of the symbol at a position in the whole workspace (unopened files too), grouped by file.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::References];
    const CLI: CliShape = CliShape {
        help: &[("include_declaration", "Count the declaration as a use too")],
        ..CliShape::PLAIN
    };
    type Params = ReferencesParams;
    type Result = ReferencesResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.references(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ReferencesParams {
    #[serde(flatten)]
    pub at: PositionParams,
    #[serde(default)]
    #[schemars(extend("default" = true))]
    pub include_declaration: Option<bool>,
    #[serde(default)]
    #[schemars(extend("default" = 200))]
    pub limit: Option<Num>,
    // `next_cursor` of a previous call, to get the rest.
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReferencesResult {
    #[serde(rename = "files", serialize_with = "compact::locations")]
    #[schemars(with = "Vec<compact::FilePositionsShape>")]
    pub locations: Vec<Loc>,
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Render for ReferencesResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        partial_note(&mut out, self.partial, &self.reason);
        if !terse {
            let files = {
                let mut f: Vec<&str> = self.locations.iter().map(|l| l.file.as_str()).collect();
                f.dedup();
                f.len()
            };
            let _ = writeln!(out, "{} references in {} files", self.total, files);
        }
        render_locs(&mut out, &self.locations, terse);
        more_note(
            &mut out,
            self.locations.len(),
            self.total,
            &self.next_cursor,
        );
        out.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn references_group_by_file_and_stay_short() {
        let locs: Vec<Loc> = (1..=3)
            .flat_map(|f| (1..=3).map(move |l| loc(&format!("pkg/mod{f}.py"), l * 10)))
            .collect();
        let r = ReferencesResult {
            total: locs.len(),
            locations: locs,
            next_cursor: None,
            partial: false,
            reason: None,
        };
        let terse = r.render(true);
        assert_eq!(terse.lines().next(), Some("pkg/mod1.py 10:5 20:5 30:5"));
        assert!(terse.chars().count() / 9 <= 12, "{terse}");
        let full = r.render(false);
        assert!(full.contains("  10:5 total = compute(x, y)"));
        assert!(full.chars().count() / 9 <= 40, "{full}");
    }
}
