//! `document_symbols`: a file's outline, nested, in line order.

use std::borrow::Cow;
use std::fmt::Write;

use schemars::JsonSchema;
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::render::{Render, short};
use crate::ops::types::{Num, SymbolSource};

pub struct DocumentSymbols;
impl Tool for DocumentSymbols {
    const NAME: &'static str = "document_symbols";
    const TITLE: &'static str = "Outline";
    const DESCRIPTION: &'static str = "Outline of a file in line order: classes, functions, methods and variables with their lines, nested; variables local to functions only with `locals`.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CLI: CliShape = CliShape {
        aliases: &["symbols"],
        ..CliShape::PLAIN
    };
    type Params = DocumentSymbolsParams;
    type Result = DocumentSymbolsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.document_symbols(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct DocumentSymbolsParams {
    pub file: String,
    #[serde(default)]
    pub source: Option<String>,
    /// Levels to show (1: top level only).
    #[serde(default)]
    pub depth: Option<Num>,
    /// Include variables local to functions.
    #[serde(default)]
    pub locals: Option<bool>,
    // A page is `limit` symbols in line order, counted at every level (see `shape::page`).
    #[serde(default)]
    #[schemars(extend("default" = 300))]
    pub limit: Option<Num>,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub terse: Option<bool>,
}

/// An outline's symbol; written as `{name, kind, at: [line, column, end_line], detail?,
/// children?}`.
#[derive(Debug, Clone)]
pub struct Symbol {
    pub name: String,
    pub kind: String,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
    pub detail: Option<String>,
    pub children: Vec<Symbol>,
}

/// `{name, kind, at: [line, column, end_line], detail?, children?}`.
impl Serialize for Symbol {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = 3 + self.detail.is_some() as usize + !self.children.is_empty() as usize;
        let mut m = s.serialize_map(Some(n))?;
        m.serialize_entry("name", &self.name)?;
        m.serialize_entry("kind", &self.kind)?;
        m.serialize_entry("at", &[self.line, self.column, self.end_line])?;
        if let Some(d) = &self.detail {
            m.serialize_entry("detail", d)?;
        }
        if !self.children.is_empty() {
            m.serialize_entry("children", &self.children)?;
        }
        m.end()
    }
}

#[derive(JsonSchema)]
#[allow(dead_code)] // Only its schema is used.
#[schemars(rename = "Symbol")]
struct SymbolShape {
    name: String,
    kind: String,
    at: [u32; 3],
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    children: Option<Vec<Value>>,
}

/// Its schema is its shape's.
impl JsonSchema for Symbol {
    fn schema_name() -> Cow<'static, str> {
        SymbolShape::schema_name()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        SymbolShape::json_schema(g)
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DocumentSymbolsResult {
    pub symbols: Vec<Symbol>,
    /// Symbols in the whole outline, at every level.
    pub total: usize,
    pub source: SymbolSource,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

fn render_symbols(out: &mut String, syms: &[Symbol], depth: usize, terse: bool) {
    for s in syms {
        let indent = "  ".repeat(depth);
        if terse {
            let _ = writeln!(out, "{indent}{} {} {}", s.line, s.kind, s.name);
        } else {
            let detail = s
                .detail
                .as_deref()
                .map(|d| format!(" — {}", short(d, 60)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{indent}{} {} {}-{}{}",
                s.kind, s.name, s.line, s.end_line, detail
            );
        }
        render_symbols(out, &s.children, depth + 1, terse);
    }
}

impl Render for DocumentSymbolsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        if self.source == SymbolSource::Fallback {
            out.push_str("(fallback: the server has no document symbols; lspgate's text scan)\n");
        }
        if self.symbols.is_empty() {
            out.push_str("no symbols");
        }
        render_symbols(&mut out, &self.symbols, 0, terse);
        if let Some(c) = &self.next_cursor {
            let _ = writeln!(
                out,
                "… {} symbols in all; cursor \"{c}\" for more",
                self.total
            );
        }
        out.trim_end().to_string()
    }
}
