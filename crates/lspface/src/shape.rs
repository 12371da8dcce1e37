//! Answers shaped for the client's capabilities: the servers are initialized with the richest
//! lspgate can translate (markdown hovers, diagnostic tags, snippets), and each client is given
//! what a direct server would give it after its own `initialize` — markdown made plain text for
//! a client whose hover `contentFormat` lacks it, tags and the hints that exist only to carry
//! them left out for a client without `tagSupport`, related information for one without it,
//! snippets made plain text for one without `snippetSupport`.

use serde_json::Value;

/// What the client can take, from its `initialize`.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    markdown_hover: bool,
    /// The diagnostic tags it renders; `None`: no tag support.
    tags: Option<Vec<u64>>,
    related: bool,
    snippets: bool,
}

impl Default for Shape {
    /// A client that announced nothing.
    fn default() -> Shape {
        Shape::of(&Value::Null)
    }
}

impl Shape {
    /// From the client's `capabilities`.
    pub(super) fn of(caps: &Value) -> Shape {
        let formats = caps.pointer("/textDocument/hover/contentFormat");
        let publish = caps.pointer("/textDocument/publishDiagnostics");
        Shape {
            markdown_hover: formats
                .and_then(Value::as_array)
                .is_some_and(|f| f.iter().any(|k| k == "markdown")),
            tags: publish
                .and_then(|p| p.pointer("/tagSupport/valueSet"))
                .and_then(Value::as_array)
                .map(|v| v.iter().filter_map(Value::as_u64).collect()),
            related: publish
                .and_then(|p| p.get("relatedInformation"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            snippets: caps
                .pointer("/textDocument/completion/completionItem/snippetSupport")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }

    /// Diagnostics as the client can take them.
    pub(super) fn diagnostics(&self, list: Vec<Value>) -> Vec<Value> {
        list.into_iter()
            .filter_map(|mut d| {
                let tags: Vec<u64> = d
                    .get("tags")
                    .and_then(Value::as_array)
                    .map(|t| t.iter().filter_map(Value::as_u64).collect())
                    .unwrap_or_default();
                let Value::Object(m) = &mut d else {
                    return Some(d);
                };
                match &self.tags {
                    None if !tags.is_empty() => {
                        // A hint of no rule, there only to be rendered by its tags: a server
                        // does not send it to a client without tag support.
                        let hint = m.get("severity").and_then(Value::as_u64) == Some(4);
                        if hint && m.get("code").is_none() {
                            return None;
                        }
                        m.remove("tags");
                    }
                    Some(known) if !tags.is_empty() => {
                        let kept: Vec<u64> =
                            tags.into_iter().filter(|t| known.contains(t)).collect();
                        if kept.is_empty() {
                            m.remove("tags");
                        } else {
                            m.insert("tags".into(), kept.into());
                        }
                    }
                    _ => {}
                }
                if !self.related {
                    m.remove("relatedInformation");
                }
                Some(d)
            })
            .collect()
    }

    /// A hover answer as the client can take it.
    pub(super) fn hover(&self, hover: &mut Value) {
        if self.markdown_hover {
            return;
        }
        if let Some(Value::Object(c)) = hover.get_mut("contents")
            && c.get("kind").and_then(Value::as_str) == Some("markdown")
        {
            let text = c.get("value").and_then(Value::as_str).unwrap_or_default();
            let plain = markdown_to_plain(text);
            c.insert("kind".into(), "plaintext".into());
            c.insert("value".into(), plain.into());
        }
    }

    /// A completion answer (a list or an item) as the client can take it.
    pub(super) fn completion(&self, answer: &mut Value) {
        if self.snippets {
            return;
        }
        let plain = |item: &mut Value| {
            let Value::Object(m) = item else { return };
            if m.get("insertTextFormat").and_then(Value::as_u64) != Some(2) {
                return;
            }
            if let Some(Value::String(t)) = m.get_mut("insertText") {
                *t = snippet_to_plain(t);
            }
            if let Some(Value::String(t)) = m.get_mut("textEdit").and_then(|e| e.get_mut("newText"))
            {
                *t = snippet_to_plain(t);
            }
            m.insert("insertTextFormat".into(), 1.into());
        };
        match answer {
            Value::Array(items) => items.iter_mut().for_each(plain),
            Value::Object(list) if list.contains_key("items") => {
                if let Some(Value::Array(items)) = list.get_mut("items") {
                    items.iter_mut().for_each(plain);
                }
            }
            item => plain(item),
        }
    }
}

/// Markdown as plain text: code fences and rules taken out, backslash escapes undone.
fn markdown_to_plain(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut in_fence = false;
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            out.push(line.to_string());
        } else if t == "---" || t == "***" || t == "___" {
            out.push(String::new());
        } else {
            out.push(unescape(line));
        }
    }
    out.join("\n").trim().to_string()
}

/// A markdown line with its backslash escapes undone and its trailing hard breaks dropped.
fn unescape(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&n) = chars.peek()
            && n.is_ascii_punctuation()
        {
            out.push(n);
            chars.next();
            continue;
        }
        out.push(c);
    }
    let trimmed = out.trim_end_matches(['\\']).trim_end();
    if trimmed.len() < out.len() && out.ends_with("  ") {
        return trimmed.to_string();
    }
    out
}

/// A snippet's text as it reads with every placeholder at its default: `$1`, `$0` and
/// variables dropped, `${1:name}` its default, `${1|a,b|}` its first choice, `\$` a `$`.
fn snippet_to_plain(snippet: &str) -> String {
    let chars: Vec<char> = snippet.chars().collect();
    let mut out = String::new();
    plain_until(&chars, &mut 0, None, &mut out);
    out
}

/// Copies `chars` from `i` into `out` until `end` (unescaped) or their end, placeholders made
/// plain; `i` left after `end`.
fn plain_until(chars: &[char], i: &mut usize, end: Option<char>, out: &mut String) {
    while *i < chars.len() {
        let c = chars[*i];
        *i += 1;
        match c {
            '\\' if *i < chars.len() => {
                out.push(chars[*i]);
                *i += 1;
            }
            c if Some(c) == end => return,
            '$' if *i < chars.len() && chars[*i] == '{' => {
                *i += 1;
                // `${1:default}`, `${1|a,b|}`, `${1}`, `${name:default}`, `${name}`.
                while *i < chars.len() && (chars[*i].is_alphanumeric() || chars[*i] == '_') {
                    *i += 1;
                }
                match chars.get(*i) {
                    Some(':') => {
                        *i += 1;
                        plain_until(chars, i, Some('}'), out);
                    }
                    Some('|') => {
                        *i += 1;
                        let mut first = String::new();
                        plain_until(chars, i, Some(','), &mut first);
                        out.push_str(first.trim_end_matches('|'));
                        // The other choices, then `|}`.
                        while *i < chars.len() && chars[*i] != '}' {
                            *i += 1;
                        }
                        *i += 1;
                    }
                    _ => {
                        while *i < chars.len() && chars[*i] != '}' {
                            *i += 1;
                        }
                        *i += 1;
                    }
                }
            }
            '$' if *i < chars.len() && (chars[*i].is_alphanumeric() || chars[*i] == '_') => {
                while *i < chars.len() && (chars[*i].is_alphanumeric() || chars[*i] == '_') {
                    *i += 1;
                }
            }
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snippets_read_at_their_defaults() {
        assert_eq!(snippet_to_plain("print($1)$0"), "print()");
        assert_eq!(snippet_to_plain("f(${1:x}, ${2:y})"), "f(x, y)");
        assert_eq!(snippet_to_plain("${1|a,b|} \\$x"), "a $x");
        assert_eq!(snippet_to_plain("g(${1:h(${2:z})})"), "g(h(z))");
        assert_eq!(snippet_to_plain("${TM_FILENAME} ok"), " ok");
    }

    #[test]
    fn markdown_hovers_become_plain_text() {
        let text = "```python\ndef f(a_b: int) -> None\n```\n---\nDoes \\_this\\_.";
        assert_eq!(
            markdown_to_plain(text),
            "def f(a_b: int) -> None\n\nDoes _this_."
        );
        let shape =
            Shape::of(&json!({"textDocument": {"hover": {"contentFormat": ["plaintext"]}}}));
        let mut hover =
            json!({"contents": {"kind": "markdown", "value": "```python\nx: int\n```"}});
        shape.hover(&mut hover);
        assert_eq!(
            hover["contents"],
            json!({"kind": "plaintext", "value": "x: int"})
        );
    }

    #[test]
    fn diagnostics_lose_what_the_client_cannot_take() {
        let list = vec![
            json!({"message": "x is not accessed", "severity": 4, "tags": [1]}),
            json!({"message": "old", "severity": 2, "code": "c", "tags": [2],
                   "relatedInformation": []}),
        ];
        let bare = Shape::default().diagnostics(list.clone());
        assert_eq!(
            bare,
            vec![json!({"message": "old", "severity": 2, "code": "c"})]
        );
        let tags = Shape::of(&json!({"textDocument": {"publishDiagnostics": {
            "tagSupport": {"valueSet": [1]}, "relatedInformation": true}}}));
        let shaped = tags.diagnostics(list.clone());
        assert_eq!(shaped[0], list[0]);
        assert_eq!(
            shaped[1],
            json!({"message": "old", "severity": 2, "code": "c", "relatedInformation": []})
        );
    }
}
