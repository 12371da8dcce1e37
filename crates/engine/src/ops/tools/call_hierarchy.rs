//! `call_hierarchy`: callers or callees of the function at a position, with each call site.

use std::borrow::Cow;
use std::fmt::Write;

use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::{Render, line_text, more_note, partial_note};
use crate::ops::types::{Loc, Num, PositionParams, compact};

pub struct CallHierarchy;
impl Tool for CallHierarchy {
    const NAME: &'static str = "call_hierarchy";
    const TITLE: &'static str = "Call hierarchy";
    const DESCRIPTION: &'static str = "Callers (`incoming`) or callees (`outgoing`) of the function at a position, with each call site.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::CallHierarchy];
    const CLI: CliShape = CliShape {
        help: &[(
            "direction",
            "incoming (who calls this) or outgoing (what this calls)",
        )],
        ..CliShape::PLAIN
    };
    type Params = CallHierarchyParams;
    type Result = CallHierarchyResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.call_hierarchy(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct CallHierarchyParams {
    #[serde(flatten)]
    pub at: PositionParams,
    // incoming (who calls this) or outgoing (what this calls).
    pub direction: Direction,
    #[serde(default)]
    #[schemars(extend("default" = 100))]
    pub limit: Option<Num>,
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    Incoming,
    Outgoing,
}

/// A caller or callee; written as `{name, kind, file, at: [line, column], call_sites: [{file,
/// at}]}`.
#[derive(Debug, Clone)]
pub struct Call {
    pub name: String,
    pub kind: String,
    pub loc: Loc,
    pub call_sites: Vec<Loc>,
}

/// `{name, kind, file, at: [line, column], call_sites: [{file, at}]}`.
impl Serialize for Call {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Sites<'a>(&'a [Loc]);
        impl Serialize for Sites<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                compact::locations(self.0, s)
            }
        }
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("kind", &self.kind)?;
        m.serialize_entry("file", &self.loc.file)?;
        m.serialize_entry("at", &[self.loc.line, self.loc.column])?;
        m.serialize_entry("call_sites", &Sites(&self.call_sites))?;
        m.end()
    }
}

#[derive(JsonSchema)]
#[allow(dead_code)] // Only its schema is used.
#[schemars(rename = "Call")]
struct CallShape {
    name: String,
    kind: String,
    file: String,
    at: [u32; 2],
    call_sites: Vec<compact::FilePositionsShape>,
}

/// Its schema is its shape's.
impl JsonSchema for Call {
    fn schema_name() -> Cow<'static, str> {
        CallShape::schema_name()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        CallShape::json_schema(g)
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CallHierarchyResult {
    pub calls: Vec<Call>,
    pub total: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Render for CallHierarchyResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        partial_note(&mut out, self.partial, &self.reason);
        if self.calls.is_empty() {
            out.push_str("no calls");
        }
        for c in &self.calls {
            let _ = writeln!(
                out,
                "{} {} {}:{}:{}",
                c.kind, c.name, c.loc.file, c.loc.line, c.loc.column
            );
            if !terse {
                for s in &c.call_sites {
                    let _ = writeln!(out, "  {}:{}:{} {}", s.file, s.line, s.column, line_text(s));
                }
            }
        }
        more_note(&mut out, self.calls.len(), self.total, &self.next_cursor);
        out.trim_end().to_string()
    }
}
