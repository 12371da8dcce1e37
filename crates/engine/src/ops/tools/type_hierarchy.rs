//! `type_hierarchy`: supertypes or subtypes of the type at a position, nested.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::{Num, PositionParams};

pub struct TypeHierarchy;
impl Tool for TypeHierarchy {
    const NAME: &'static str = "type_hierarchy";
    const TITLE: &'static str = "Type hierarchy";
    const DESCRIPTION: &'static str = "Supertypes or subtypes of the class or interface at a position, nested `depth` levels deep.";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    const CAPS: &'static [Cap] = &[Cap::TypeHierarchy];
    const CLI: CliShape = CliShape {
        help: &[
            (
                "direction",
                "supertypes (what it extends) or subtypes (what extends it)",
            ),
            ("depth", "Levels to walk (default 3, at most 10)"),
        ],
        ..CliShape::PLAIN
    };
    type Params = TypeHierarchyParams;
    type Result = TypeHierarchyResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.type_hierarchy(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct TypeHierarchyParams {
    #[serde(flatten)]
    pub at: PositionParams,
    // supertypes (what it extends or implements) or subtypes (what extends or implements it).
    pub direction: TypeDirectionParam,
    #[serde(default)]
    #[schemars(extend("default" = 3))]
    pub depth: Option<Num>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TypeDirectionParam {
    Supertypes,
    Subtypes,
}

/// A type with the next level in the direction asked.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TypeNode {
    pub name: String,
    pub kind: String,
    pub file: String,
    /// `[line, column]` of its name.
    #[schemars(with = "Vec<Value>")]
    pub at: [u32; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<Value>")]
    pub types: Vec<TypeNode>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TypeHierarchyResult {
    /// The type at the position (a server may name more than one), its supertypes or subtypes
    /// nested in `types`.
    pub types: Vec<TypeNode>,
    pub direction: TypeDirectionParam,
    /// Types listed below the ones asked about.
    pub total: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Render for TypeHierarchyResult {
    fn render(&self, _terse: bool) -> String {
        fn walk(out: &mut String, n: &TypeNode, depth: usize) {
            let _ = writeln!(
                out,
                "{:indent$}{} {} {}:{}:{}",
                "",
                n.kind,
                n.name,
                n.file,
                n.at[0],
                n.at[1],
                indent = depth * 2
            );
            for t in &n.types {
                walk(out, t, depth + 1);
            }
        }
        let mut out = String::new();
        if self.partial {
            let _ = writeln!(
                out,
                "partial: {}",
                self.reason.as_deref().unwrap_or("the server was not ready")
            );
        }
        if self.types.is_empty() {
            out.push_str("no type at this position");
        }
        for t in &self.types {
            walk(&mut out, t, 0);
        }
        if !self.types.is_empty() && self.total == 0 {
            let _ = write!(
                out,
                "no {}",
                match self.direction {
                    TypeDirectionParam::Supertypes => "supertypes",
                    TypeDirectionParam::Subtypes => "subtypes",
                }
            );
        }
        out.trim_end().to_string()
    }
}
