//! `workspace_symbols`: symbols found by name across the workspace.

use std::borrow::Cow;
use std::fmt::Write;

use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::{Render, more_note, partial_note};
use crate::ops::types::{Loc, Num, SymbolSource};

pub struct WorkspaceSymbols;
impl Tool for WorkspaceSymbols {
    const NAME: &'static str = "workspace_symbols";
    const TITLE: &'static str = "Symbol search";
    const DESCRIPTION: &'static str = "Find classes, functions and other symbols by name across the workspace, best matches first.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::WorkspaceSymbols];
    const CLI: CliShape = CliShape {
        help: &[
            (
                "kind",
                "Only symbols of this kind: class, function, method, variable, …",
            ),
            ("query", "The name, or part of it, to look for"),
        ],
        ..CliShape::PLAIN
    };
    type Params = WorkspaceSymbolsParams;
    type Result = WorkspaceSymbolsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.workspace_symbols(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct WorkspaceSymbolsParams {
    pub query: String,
    // class, function, method, variable, …
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    #[schemars(extend("default" = 100))]
    pub limit: Option<Num>,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub terse: Option<bool>,
}

/// A symbol found in the workspace; written as `{name, kind, container?, file, at: [line,
/// column]}`.
#[derive(Debug, Clone)]
pub struct WorkspaceSymbol {
    pub name: String,
    pub kind: String,
    pub container: Option<String>,
    pub loc: Loc,
}

/// `{name, kind, container?, file, at: [line, column]}`.
impl Serialize for WorkspaceSymbol {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(4 + self.container.is_some() as usize))?;
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("kind", &self.kind)?;
        if let Some(c) = &self.container {
            m.serialize_entry("container", c)?;
        }
        m.serialize_entry("file", &self.loc.file)?;
        m.serialize_entry("at", &[self.loc.line, self.loc.column])?;
        m.end()
    }
}

#[derive(JsonSchema)]
#[allow(dead_code)] // Only its schema is used.
#[schemars(rename = "WorkspaceSymbol")]
struct WorkspaceSymbolShape {
    name: String,
    kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    container: Option<String>,
    file: String,
    at: [u32; 2],
}

/// Its schema is its shape's.
impl JsonSchema for WorkspaceSymbol {
    fn schema_name() -> Cow<'static, str> {
        WorkspaceSymbolShape::schema_name()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        WorkspaceSymbolShape::json_schema(g)
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WorkspaceSymbolsResult {
    pub symbols: Vec<WorkspaceSymbol>,
    pub total: usize,
    pub source: SymbolSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Render for WorkspaceSymbolsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        partial_note(&mut out, self.partial, &self.reason);
        if self.symbols.is_empty() {
            out.push_str("no symbols\n");
        }
        for s in &self.symbols {
            if terse {
                let _ = writeln!(
                    out,
                    "{}:{}:{} {}",
                    s.loc.file, s.loc.line, s.loc.column, s.name
                );
            } else {
                let container = s
                    .container
                    .as_deref()
                    .map(|c| format!(" in {c}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{} {}{} {}:{}:{}",
                    s.kind, s.name, container, s.loc.file, s.loc.line, s.loc.column
                );
            }
        }
        more_note(&mut out, self.symbols.len(), self.total, &self.next_cursor);
        out.trim_end().to_string()
    }
}
