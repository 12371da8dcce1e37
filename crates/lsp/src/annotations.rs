//! What a server knows of code beyond a position's answer: inlay hints, type hierarchies and
//! semantic tokens, each asked in the standard form or in clangd 14's older extensions
//! (`clangd/inlayHints`, `textDocument/typeHierarchy` with its direction and resolve), and
//! answered as `wire` types (hints with their text, tokens decoded with the server's legend).
//! Hierarchies are bounded (`MAX_TYPES`).

use lsp_types as lt;
use serde_json::{Value, json};
use url::Url;

use super::client::LspClient;
use super::convert::{symbol_kind, text_pos, wire_range_json};
use super::wire::*;
use super::{LspError, announces};

/// LSP's "method not found": a server without the standard request.
const METHOD_NOT_FOUND: i64 = -32601;

/// The most types one hierarchy answer walks (a bound against servers that loop).
pub const MAX_TYPES: usize = 500;

impl LspClient {
    /// Whether the server has inlay hints, standard or clangd's.
    pub(super) fn has_inlay_hints(&self) -> bool {
        self.standard_inlay_hints() || announces(&self.caps, "clangdInlayHintsProvider")
    }

    /// Whether the server answers the standard `textDocument/inlayHint`.
    fn standard_inlay_hints(&self) -> bool {
        announces(&self.caps, "inlayHintProvider") || self.registered("textDocument/inlayHint")
    }

    /// The inlay hints of `range` of a document.
    pub async fn inlay_hints(
        &self,
        uri: &Url,
        range: WireRange,
    ) -> Result<Vec<WireInlayHint>, LspError> {
        let method = if self.standard_inlay_hints() {
            "textDocument/inlayHint"
        } else {
            "clangd/inlayHints"
        };
        let params = json!({"textDocument": {"uri": uri}, "range": wire_range_json(range)});
        let answer: Value = self.call(method, params).await?;
        let mut hints: Vec<WireInlayHint> = answer
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(inlay_hint)
            .filter(|h| h.pos.line >= range.start.line && h.pos.line <= range.end.line)
            .collect();
        hints.sort_by_key(|h| (h.pos.line, h.pos.character));
        Ok(hints)
    }

    /// The types above (`Supertypes`) or below (`Subtypes`) the type at a position, `depth`
    /// levels deep: the standard requests, else clangd's `textDocument/typeHierarchy`. The flag
    /// says the walk was cut short (`MAX_TYPES` reached, or a level the server failed to give).
    pub async fn type_hierarchy(
        &self,
        uri: &Url,
        pos: WirePos,
        direction: TypeDirection,
        depth: u32,
    ) -> Result<(Vec<WireTypeItem>, bool), LspError> {
        if self.legacy_type_hierarchy() {
            return self.clangd_type_hierarchy(uri, pos, direction, depth).await;
        }
        let prepared: Result<Value, LspError> = self
            .call("textDocument/prepareTypeHierarchy", text_pos(uri, pos))
            .await;
        let items = match prepared {
            Err(LspError::Server { code, .. }) if code == METHOD_NOT_FOUND => {
                return self.clangd_type_hierarchy(uri, pos, direction, depth).await;
            }
            other => other?,
        };
        let mut walk = Walk {
            budget: MAX_TYPES,
            cut: false,
        };
        let mut out = Vec::new();
        for raw in items.as_array().into_iter().flatten() {
            let Some(mut item) = type_item(raw) else {
                continue;
            };
            item.next = Box::pin(self.type_level(raw, direction, depth, &mut walk)).await;
            out.push(item);
        }
        Ok((out, walk.cut))
    }

    /// The next `depth` levels from `raw` (an item as the server sent it), standard requests.
    async fn type_level(
        &self,
        raw: &Value,
        direction: TypeDirection,
        depth: u32,
        walk: &mut Walk,
    ) -> Vec<WireTypeItem> {
        if depth == 0 {
            return Vec::new();
        }
        let method = match direction {
            TypeDirection::Supertypes => "typeHierarchy/supertypes",
            TypeDirection::Subtypes => "typeHierarchy/subtypes",
        };
        let answer: Value = match self.call(method, json!({"item": raw})).await {
            Ok(a) => a,
            Err(e) => {
                tracing::debug!(error = %e, "{method}");
                walk.cut = true;
                return Vec::new();
            }
        };
        let mut out = Vec::new();
        for next in answer.as_array().into_iter().flatten() {
            if walk.budget == 0 {
                walk.cut = true;
                break;
            }
            walk.budget -= 1;
            let Some(mut item) = type_item(next) else {
                continue;
            };
            item.next = Box::pin(self.type_level(next, direction, depth - 1, walk)).await;
            out.push(item);
        }
        out
    }

    /// clangd 14's extension: one request resolving `depth` levels (`parents` or `children`).
    async fn clangd_type_hierarchy(
        &self,
        uri: &Url,
        pos: WirePos,
        direction: TypeDirection,
        depth: u32,
    ) -> Result<(Vec<WireTypeItem>, bool), LspError> {
        let (dir, key) = match direction {
            TypeDirection::Supertypes => (1, "parents"),
            TypeDirection::Subtypes => (0, "children"),
        };
        let mut params = text_pos(uri, pos);
        params["resolve"] = json!(depth);
        params["direction"] = json!(dir);
        let answer: Value = self.call("textDocument/typeHierarchy", params).await?;
        let mut budget = MAX_TYPES;
        // The root is the type asked about; its levels are the answer.
        let tree = type_tree(&answer, key, depth, &mut budget);
        Ok((tree.into_iter().collect(), budget == 0))
    }

    /// The server's semantic tokens of lines `first..=last`, decoded with its legend; `None`
    /// when it has none.
    pub async fn semantic_tokens(
        &self,
        uri: &Url,
        first: u32,
        last: u32,
    ) -> Result<Option<Vec<WireToken>>, LspError> {
        let Some(provider) = self
            .caps
            .get("semanticTokensProvider")
            .filter(|p| p.is_object())
        else {
            return Ok(None);
        };
        let legend = provider.get("legend");
        let words = |k: &str| -> Vec<String> {
            legend
                .and_then(|l| l.get(k))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|v| v.as_str().unwrap_or("unknown").to_string())
                        .collect()
                })
                .unwrap_or_default()
        };
        let (types, modifiers) = (words("tokenTypes"), words("tokenModifiers"));
        let ranged = announces(provider, "range");
        let doc = json!({"uri": uri});
        let answer: Value = if ranged {
            let range = WireRange {
                start: WirePos {
                    line: first,
                    character: 0,
                },
                end: WirePos {
                    line: last.saturating_add(1),
                    character: 0,
                },
            };
            self.call(
                "textDocument/semanticTokens/range",
                json!({"textDocument": doc, "range": wire_range_json(range)}),
            )
            .await?
        } else {
            self.call(
                "textDocument/semanticTokens/full",
                json!({"textDocument": doc}),
            )
            .await?
        };
        let data: Vec<u32> = answer
            .get("data")
            .and_then(Value::as_array)
            .map(|a| {
                // A bad entry counts as 0: dropping it would shift every later token.
                a.iter().map(|v| v.as_u64().unwrap_or(0) as u32).collect()
            })
            .unwrap_or_default();
        Ok(Some(
            decode_tokens(&data, &types, &modifiers)
                .into_iter()
                .filter(|t| t.line >= first && t.line <= last)
                .collect(),
        ))
    }
}

/// One hint of either form: the standard's (`kind` 1 type, 2 parameter; a label string or its
/// parts; padding flags) or clangd 14's (`kind` a word, padding inside the label).
fn inlay_hint(v: &Value) -> Option<WireInlayHint> {
    let p = v.get("position")?;
    let pos = WirePos {
        line: p.get("line")?.as_u64()? as u32,
        character: p.get("character")?.as_u64()? as u32,
    };
    let mut label = match v.get("label")? {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("value").and_then(Value::as_str))
            .collect(),
        _ => return None,
    };
    if v.get("paddingLeft") == Some(&Value::Bool(true)) {
        label.insert(0, ' ');
    }
    if v.get("paddingRight") == Some(&Value::Bool(true)) {
        label.push(' ');
    }
    let kind = match v.get("kind") {
        Some(Value::Number(n)) if n.as_u64() == Some(1) => HintKind::Type,
        Some(Value::Number(n)) if n.as_u64() == Some(2) => HintKind::Parameter,
        Some(Value::String(s)) if s == "type" => HintKind::Type,
        Some(Value::String(s)) if s == "parameter" => HintKind::Parameter,
        _ => HintKind::Other,
    };
    Some(WireInlayHint { pos, label, kind })
}

/// How much of a hierarchy may still be walked, and whether it was cut short.
struct Walk {
    budget: usize,
    cut: bool,
}

/// A hierarchy item (standard or clangd's) without its levels.
fn type_item(v: &Value) -> Option<WireTypeItem> {
    let uri = Url::parse(v.get("uri")?.as_str()?).ok()?;
    let r: lt::Range = serde_json::from_value(
        v.get("selectionRange")
            .or_else(|| v.get("range"))
            .cloned()?,
    )
    .ok()?;
    let kind = serde_json::from_value::<lt::SymbolKind>(v.get("kind")?.clone())
        .map(symbol_kind)
        .unwrap_or("unknown");
    Some(WireTypeItem {
        name: v.get("name")?.as_str()?.to_string(),
        kind,
        detail: v
            .get("detail")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
            .map(str::to_string),
        location: WireLocation {
            uri,
            range: super::convert::range(r),
        },
        next: Vec::new(),
    })
}

/// clangd's nested answer: the item and its `key` levels (`parents` or `children`), `depth` deep.
fn type_tree(v: &Value, key: &str, depth: u32, budget: &mut usize) -> Option<WireTypeItem> {
    let mut item = type_item(v)?;
    if depth > 0 {
        for next in v.get(key).and_then(Value::as_array).into_iter().flatten() {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            if let Some(n) = type_tree(next, key, depth - 1, budget) {
                item.next.push(n);
            }
        }
    }
    Some(item)
}

/// Semantic tokens' relative encoding (five numbers a token) decoded with a legend.
pub(super) fn decode_tokens(
    data: &[u32],
    types: &[String],
    modifiers: &[String],
) -> Vec<WireToken> {
    let mut out = Vec::with_capacity(data.len() / 5);
    let (mut line, mut start) = (0u32, 0u32);
    for t in data.chunks_exact(5) {
        if t[0] > 0 {
            line = line.saturating_add(t[0]);
            start = t[1];
        } else {
            start = start.saturating_add(t[1]);
        }
        let kind = types
            .get(t[3] as usize)
            .cloned()
            .unwrap_or_else(|| "unknown".into());
        let mods = modifiers
            .iter()
            .enumerate()
            .filter(|(i, _)| *i < 32 && t[4] & (1 << i) != 0)
            .map(|(_, m)| m.clone())
            .collect();
        out.push(WireToken {
            line,
            start,
            length: t[2],
            kind,
            modifiers: mods,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_decode_relative_positions_and_modifier_bits() {
        let types: Vec<String> = ["class", "parameter", "function"]
            .map(String::from)
            .to_vec();
        let mods: Vec<String> = ["declaration", "readonly", "deprecated"]
            .map(String::from)
            .to_vec();
        // line 2 col 4 len 3 function [declaration|deprecated]; same line +6: parameter; next
        // line col 1: class, no modifiers; an unknown type index.
        let data = [
            2, 4, 3, 2, 0b101, 0, 6, 1, 1, 0, 1, 1, 5, 0, 0, 0, 2, 1, 9, 0,
        ];
        let t = decode_tokens(&data, &types, &mods);
        assert_eq!(t.len(), 4);
        assert_eq!((t[0].line, t[0].start, t[0].length), (2, 4, 3));
        assert_eq!(t[0].kind, "function");
        assert_eq!(t[0].modifiers, vec!["declaration", "deprecated"]);
        assert_eq!(
            (t[1].line, t[1].start, t[1].kind.as_str()),
            (2, 10, "parameter")
        );
        assert_eq!((t[2].line, t[2].start, t[2].kind.as_str()), (3, 1, "class"));
        assert_eq!(
            (t[3].line, t[3].start, t[3].kind.as_str()),
            (3, 3, "unknown")
        );
    }

    #[test]
    fn hints_of_both_forms_read_alike() {
        let std = json!({"position": {"line": 4, "character": 22}, "kind": 2, "paddingRight": true,
            "label": [{"value": "width", "location": {}}, {"value": ":"}]});
        let h = inlay_hint(&std).expect("standard hint");
        assert_eq!((h.label.as_str(), h.kind), ("width: ", HintKind::Parameter));
        let clangd =
            json!({"position": {"line": 3, "character": 8}, "kind": "type", "label": ": int"});
        let h = inlay_hint(&clangd).expect("clangd hint");
        assert_eq!(
            (h.label.as_str(), h.kind, h.pos.character),
            (": int", HintKind::Type, 8)
        );
        assert!(inlay_hint(&json!({"label": "x"})).is_none());
    }

    #[test]
    fn clangd_trees_are_bounded() {
        let leaf = |n: &str| {
            json!({"name": n, "kind": 5, "uri": "file:///a.h",
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}})
        };
        let mut root = leaf("Base");
        root["children"] = json!([leaf("A"), leaf("B"), leaf("C")]);
        let mut budget = 2;
        let t = type_tree(&root, "children", 3, &mut budget).expect("tree");
        assert_eq!(t.next.len(), 2);
        assert_eq!(t.kind, "class");
        let mut budget = 10;
        assert!(
            type_tree(&root, "children", 0, &mut budget)
                .expect("tree")
                .next
                .is_empty()
        );
    }
}
