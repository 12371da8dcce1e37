//! Positions between a client of the face and a server, whose encodings may differ (a client
//! speaking UTF-16, clangd UTF-8): every `{line, character}` of a message is converted with the
//! text of the document it points into. In a request's parameters that is the request's
//! document; in an answer, the document the nearest enclosing object names (`uri`, `targetUri`,
//! `textDocument.uri`, a key of a workspace edit's `changes`), else the request's
//! (`originSelectionRange` always is).

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::text::{Encoding, LineIndex, convert_character};

/// A document's text, to convert positions on its lines.
#[derive(Clone)]
pub(crate) struct Text {
    pub text: Arc<str>,
    pub index: Arc<LineIndex>,
}

impl Text {
    pub(crate) fn new(text: Arc<str>) -> Text {
        let index = Arc::new(LineIndex::new(&text));
        Text { text, index }
    }

    fn line(&self, line: u64) -> &str {
        usize::try_from(line)
            .ok()
            .and_then(|l| self.index.line(&self.text, l))
            .unwrap_or("")
    }
}

/// How to convert: from one encoding to another, with the texts of the documents involved.
pub(crate) struct Converter<'a> {
    pub from: Encoding,
    pub to: Encoding,
    /// The request's document: positions with no document of their own are in it.
    pub document: &'a Text,
    /// The text of another document by URI (none: its positions are left as they are).
    pub text_of: &'a dyn Fn(&str) -> Option<Text>,
}

impl Converter<'_> {
    /// Converts every position in `value`.
    pub(crate) fn convert(&self, value: &mut Value) {
        if self.from == self.to {
            return;
        }
        let mut cache = HashMap::new();
        self.walk(value, None, &mut cache);
    }

    fn walk(
        &self,
        value: &mut Value,
        uri: Option<&str>,
        cache: &mut HashMap<String, Option<Text>>,
    ) {
        match value {
            Value::Array(items) => {
                for v in items {
                    self.walk(v, uri, cache);
                }
            }
            Value::Object(map) => {
                if let (Some(line), Some(character)) = (
                    map.get("line").and_then(Value::as_u64),
                    map.get("character").and_then(Value::as_u64),
                ) && map.len() == 2
                {
                    let converted = self.character(uri, line, character, cache);
                    map.insert("character".into(), Value::from(converted));
                    return;
                }
                let own = map
                    .get("uri")
                    .or_else(|| map.get("targetUri"))
                    .or_else(|| map.get("textDocument").and_then(|d| d.get("uri")))
                    .and_then(Value::as_str)
                    .map(str::to_string);
                let here = own.as_deref().or(uri);
                for (key, v) in map.iter_mut() {
                    match key.as_str() {
                        // A workspace edit's `changes`: each key is the document of its edits.
                        "changes" => {
                            if let Value::Object(per_doc) = v {
                                for (doc, edits) in per_doc.iter_mut() {
                                    self.walk(edits, Some(doc), cache);
                                }
                            }
                        }
                        "originSelectionRange" => self.walk(v, None, cache),
                        _ => self.walk(v, here, cache),
                    }
                }
            }
            _ => {}
        }
    }

    fn character(
        &self,
        uri: Option<&str>,
        line: u64,
        character: u64,
        cache: &mut HashMap<String, Option<Text>>,
    ) -> u64 {
        let character = u32::try_from(character).unwrap_or(u32::MAX);
        let text = match uri {
            None => Some(self.document),
            Some(u) => cache
                .entry(u.to_string())
                .or_insert_with(|| (self.text_of)(u))
                .as_ref(),
        };
        match text {
            Some(t) => u64::from(convert_character(
                t.line(line),
                character,
                self.from,
                self.to,
            )),
            None => u64::from(character),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(s: &str) -> Text {
        Text::new(Arc::from(s))
    }

    #[test]
    fn positions_follow_the_document_they_point_into() {
        // "é" is 2 UTF-8 bytes and 1 UTF-16 unit; "😀" is 4 and 2.
        let doc = text("a = 'é' + x\n");
        let other = text("😀😀 = 1\n");
        let text_of = |u: &str| (u == "file:///o.py").then(|| other.clone());
        let c = Converter {
            from: Encoding::Utf8,
            to: Encoding::Utf16,
            document: &doc,
            text_of: &text_of,
        };
        let mut v = json!({
            "range": {"start": {"line": 0, "character": 11}, "end": {"line": 0, "character": 12}},
            "locations": [{"uri": "file:///o.py", "range": {"start": {"line": 0, "character": 8}, "end": {"line": 0, "character": 9}}}],
            "changes": {"file:///o.py": [{"range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 8}}, "newText": "x"}]},
            "targetUri": "file:///o.py",
            "originSelectionRange": {"start": {"line": 0, "character": 11}, "end": {"line": 0, "character": 12}},
        });
        c.convert(&mut v);
        assert_eq!(v["originSelectionRange"]["start"]["character"], 10, "{v}");
        assert_eq!(v["locations"][0]["range"]["start"]["character"], 4);
        assert_eq!(v["locations"][0]["range"]["end"]["character"], 5);
        assert_eq!(
            v["changes"]["file:///o.py"][0]["range"]["start"]["character"],
            2
        );
        // `range` sits beside `targetUri`: it is in that document.
        assert_eq!(v["range"]["start"]["character"], 7, "{v}");
    }

    #[test]
    fn same_encodings_and_unknown_documents_are_left_alone() {
        let doc = text("é\n");
        let none = |_: &str| None;
        let mut v = json!({"uri": "file:///gone.py", "position": {"line": 0, "character": 3}});
        let c = Converter {
            from: Encoding::Utf8,
            to: Encoding::Utf16,
            document: &doc,
            text_of: &none,
        };
        c.convert(&mut v);
        assert_eq!(v["position"]["character"], 3);
        let c = Converter {
            from: Encoding::Utf16,
            to: Encoding::Utf16,
            document: &doc,
            text_of: &none,
        };
        let mut w = json!({"position": {"line": 0, "character": 1}});
        c.convert(&mut w);
        assert_eq!(w["position"]["character"], 1);
    }
}
