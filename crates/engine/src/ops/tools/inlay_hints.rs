//! `inlay_hints`: a file's lines with inferred types and parameter names inlined, and each
//! identifier's semantic class.

use std::fmt::Write;

use schemars::JsonSchema;
use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use super::{CliShape, Effect, Group, Progress, Tool};
use crate::error::ToolError;
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::types::Num;

pub struct InlayHints;
impl Tool for InlayHints {
    const NAME: &'static str = "inlay_hints";
    const TITLE: &'static str = "Inlay hints";
    const DESCRIPTION: &'static str = "Lines of a file with the inferred types and parameter names an editor shows inline; `classes`: each identifier's kind and modifiers (deprecated, readonly …).";
    const GROUP: Group = Group::Navigation;
    const EFFECT: Effect = Effect::Read;
    // Hover: Python's hints are derived from it where the server has none.
    const CAPS: &'static [Cap] = &[Cap::InlayHints, Cap::Hover];
    const CLI: CliShape = CliShape {
        help: &[
            (
                "classes",
                "Also each identifier's kind and modifiers (semantic tokens)",
            ),
            ("end_line", "The last line (default: the page's end)"),
            ("limit", "Source lines a page covers (default 200)"),
        ],
        ..CliShape::PLAIN
    };
    type Params = InlayHintsParams;
    type Result = InlayHintsResult;
    async fn run(e: &Engine, p: Self::Params, _: Progress<'_>) -> Result<Self::Result, ToolError> {
        e.inlay_hints(p).await
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct InlayHintsParams {
    pub file: String,
    // The first line (1-based; default 1) and the last (default: the page's end).
    #[serde(default)]
    pub line: Option<Num>,
    #[serde(default)]
    pub end_line: Option<Num>,
    // Also each identifier's kind and modifiers (semantic tokens; the description says so).
    #[serde(default)]
    pub classes: Option<bool>,
    // Source lines a page covers.
    #[serde(default)]
    #[schemars(extend("default" = 200))]
    pub limit: Option<Num>,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub source: Option<String>,
}

/// One inlay hint: at a 1-based code-point column of the source line, its text as the server
/// wrote it (`: int`, `width: `; derived ones `: int`, `width=`), and `type` or `parameter`.
#[derive(Debug, Clone, PartialEq)]
pub struct Hint {
    pub column: u32,
    pub label: String,
    pub kind: &'static str,
}

/// One identifier's semantic class: column, the identifier, its kind and modifiers.
#[derive(Debug, Clone, PartialEq)]
pub struct Class {
    pub column: u32,
    pub name: String,
    pub kind: String,
    pub modifiers: Vec<String>,
}

/// A line with what is known of it: `text` is the source line with the hints inlined.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct AnnotatedLine {
    pub line: u32,
    pub text: String,
    /// `[column, label, kind]` each.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "hints")]
    #[schemars(with = "Vec<Value>")]
    pub hints: Vec<Hint>,
    /// `[column, identifier, kind, "modifier …"?]` each.
    #[serde(skip_serializing_if = "Vec::is_empty", serialize_with = "classes")]
    #[schemars(with = "Vec<Value>")]
    pub classes: Vec<Class>,
}

fn hints<S: Serializer>(h: &[Hint], s: S) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(h.len()))?;
    for h in h {
        seq.serialize_element(&(h.column, &h.label, h.kind))?;
    }
    seq.end()
}

fn classes<S: Serializer>(c: &[Class], s: S) -> Result<S::Ok, S::Error> {
    let mut seq = s.serialize_seq(Some(c.len()))?;
    for c in c {
        if c.modifiers.is_empty() {
            seq.serialize_element(&(c.column, &c.name, &c.kind))?;
        } else {
            seq.serialize_element(&(c.column, &c.name, &c.kind, c.modifiers.join(" ")))?;
        }
    }
    seq.end()
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct InlayHintsResult {
    /// The lines of the page that have hints (or classes), in order.
    pub lines: Vec<AnnotatedLine>,
    /// The page's first and last source lines.
    pub first_line: u32,
    pub last_line: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How hints were made when the server has none of its own (pyright: from hover and
    /// signature help).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived: Option<String>,
    /// Why `classes` were asked but are not given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub classes_unavailable: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Render for InlayHintsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        if let Some(d) = &self.derived
            && !terse
        {
            let _ = writeln!(out, "(derived from {d})");
        }
        if self.lines.is_empty() {
            let _ = writeln!(
                out,
                "no hints on lines {}-{}",
                self.first_line, self.last_line
            );
        }
        let width = self.last_line.to_string().len();
        for l in &self.lines {
            let _ = writeln!(out, "{:>width$}  {}", l.line, l.text.trim_end());
            if !l.classes.is_empty() {
                let words: Vec<String> = l
                    .classes
                    .iter()
                    .map(|c| {
                        let mut w = format!("{} {}", c.name, c.kind);
                        for m in &c.modifiers {
                            w.push(' ');
                            w.push_str(m);
                        }
                        w
                    })
                    .collect();
                let _ = writeln!(out, "{:>width$}  ↳ {}", "", words.join(" · "));
            }
        }
        if let Some(why) = self.reason.as_ref().filter(|_| self.partial) {
            let _ = writeln!(out, "partial: {why}");
        }
        if let Some(why) = &self.classes_unavailable {
            let _ = writeln!(out, "classes: {why}");
        }
        if let Some(c) = &self.next_cursor {
            let _ = writeln!(
                out,
                "… lines to {} shown; cursor \"{c}\" for more",
                self.last_line
            );
        }
        out.trim_end().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_serialize_compactly_and_render_like_code() {
        let r = InlayHintsResult {
            lines: vec![AnnotatedLine {
                line: 12,
                text: "x: list[int] = compute(values=v)".into(),
                hints: vec![
                    Hint {
                        column: 2,
                        label: ": list[int]".into(),
                        kind: "type",
                    },
                    Hint {
                        column: 13,
                        label: "values=".into(),
                        kind: "parameter",
                    },
                ],
                classes: vec![Class {
                    column: 5,
                    name: "compute".into(),
                    kind: "function".into(),
                    modifiers: vec!["deprecated".into()],
                }],
            }],
            first_line: 1,
            last_line: 120,
            next_cursor: None,
            derived: None,
            classes_unavailable: None,
            partial: false,
            reason: None,
        };
        let v = serde_json::to_value(&r).expect("serializes");
        assert_eq!(
            v["lines"][0]["hints"][1],
            serde_json::json!([13, "values=", "parameter"])
        );
        assert_eq!(
            v["lines"][0]["classes"][0],
            serde_json::json!([5, "compute", "function", "deprecated"])
        );
        let text = r.render(false);
        assert!(
            text.contains(" 12  x: list[int] = compute(values=v)"),
            "{text}"
        );
        assert!(text.contains("compute function deprecated"), "{text}");
    }
}
