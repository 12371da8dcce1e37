//! A span scanner for JSON and JSONC (comments, trailing commas): where each object member and
//! array element starts and ends in the text, so `setup` can edit the text around them and leave
//! every other byte as it was.

use serde_json::Value;

/// A value and where it lies: `text[start..end]`.
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub(super) enum Kind {
    Object(Vec<Item>),
    Array(Vec<Item>),
    Scalar,
}

/// An object member (`key` set, `start` at its key) or an array element (`start` at the value).
#[derive(Debug, Clone)]
pub(super) struct Item {
    pub key: Option<String>,
    pub start: usize,
    pub value: Node,
}

impl Node {
    pub(super) fn items(&self) -> &[Item] {
        match &self.kind {
            Kind::Object(items) | Kind::Array(items) => items,
            Kind::Scalar => &[],
        }
    }

    /// The member `key` of this object: the last of that name, the one a harness reading the
    /// file (`JSON.parse`, `serde_json`) takes.
    pub(super) fn member(&self, key: &str) -> Option<(usize, &Item)> {
        match &self.kind {
            Kind::Object(items) => items
                .iter()
                .enumerate()
                .rev()
                .find(|(_, m)| m.key.as_deref() == Some(key)),
            _ => None,
        }
    }

    pub(super) fn is_object(&self) -> bool {
        matches!(self.kind, Kind::Object(_))
    }

    pub(super) fn is_array(&self) -> bool {
        matches!(self.kind, Kind::Array(_))
    }
}

/// Where and why a text is not JSON (1-based line and column).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// Parses `text`, one value with only whitespace and comments around it. `jsonc` allows
/// comments and trailing commas; without it the text must be strict JSON (checked by
/// `serde_json`, whose message is given).
pub(super) fn parse(text: &str, jsonc: bool) -> Result<Node, SyntaxError> {
    if !jsonc && let Err(e) = serde_json::from_str::<Value>(text) {
        let message = e.to_string();
        let message = match message.rfind(" at line ") {
            Some(at) => message[..at].to_string(),
            None => message,
        };
        return Err(SyntaxError {
            line: e.line(),
            column: e.column(),
            message,
        });
    }
    let mut s = Scanner { text, at: 0 };
    s.blank()?;
    let node = s.value(0)?;
    s.blank()?;
    if s.at < text.len() {
        return Err(s.error("trailing characters after the value"));
    }
    Ok(node)
}

/// The value `node` holds, comments left out.
pub(super) fn value_of(text: &str, node: &Node) -> Value {
    match &node.kind {
        Kind::Scalar => serde_json::from_str(&text[node.start..node.end]).unwrap_or(Value::Null),
        Kind::Array(items) => {
            Value::Array(items.iter().map(|i| value_of(text, &i.value)).collect())
        }
        Kind::Object(items) => Value::Object(
            items
                .iter()
                .map(|i| (i.key.clone().unwrap_or_default(), value_of(text, &i.value)))
                .collect(),
        ),
    }
}

/// Skips whitespace and comments from `at`; where the next token starts.
pub(super) fn skip_blank(text: &str, mut at: usize) -> usize {
    let b = text.as_bytes();
    loop {
        while at < b.len() && matches!(b[at], b' ' | b'\t' | b'\n' | b'\r') {
            at += 1;
        }
        if b[at..].starts_with(b"//") {
            at = text[at..].find('\n').map_or(b.len(), |n| at + n);
        } else if b[at..].starts_with(b"/*") {
            at = text[at + 2..]
                .find("*/")
                .map_or(b.len(), |n| at + 2 + n + 2);
        } else {
            return at;
        }
    }
}

/// The end of the comments between `from` and `to` (whitespace and comments only): `from`
/// when there are none. A line comment ends before its line's `\r\n` (or `\n`).
pub(super) fn comments_end(text: &str, from: usize, to: usize) -> usize {
    let b = text.as_bytes();
    let (mut at, mut end) = (from, from);
    while at < to {
        if matches!(b[at], b' ' | b'\t' | b'\n' | b'\r') {
            at += 1;
        } else if b[at..].starts_with(b"//") {
            at = text[at..].find('\n').map_or(to, |n| at + n).min(to);
            end = if b[at - 1] == b'\r' { at - 1 } else { at };
        } else if b[at..].starts_with(b"/*") {
            at = text[at + 2..]
                .find("*/")
                .map_or(to, |n| at + 2 + n + 2)
                .min(to);
            end = at;
        } else {
            break;
        }
    }
    end
}

/// Nesting deeper than this is refused (no stack overflow on hostile files).
const MAX_DEPTH: usize = 256;

struct Scanner<'a> {
    text: &'a str,
    at: usize,
}

impl Scanner<'_> {
    fn error(&self, message: &str) -> SyntaxError {
        let before = &self.text[..self.at.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before
            .rfind('\n')
            .map_or(before, |n| &before[n + 1..])
            .chars()
            .count()
            + 1;
        SyntaxError {
            line,
            column,
            message: message.to_string(),
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn blank(&mut self) -> Result<(), SyntaxError> {
        self.at = skip_blank(self.text, self.at);
        if self.peek() == Some(b'/') {
            return Err(self.error("expected a value or a comment"));
        }
        Ok(())
    }

    fn value(&mut self, depth: usize) -> Result<Node, SyntaxError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        let start = self.at;
        let kind = match self.peek() {
            Some(b'{') => Kind::Object(self.items(b'}', depth, true)?),
            Some(b'[') => Kind::Array(self.items(b']', depth, false)?),
            Some(b'"') => {
                self.string()?;
                Kind::Scalar
            }
            Some(_) => {
                self.scalar()?;
                Kind::Scalar
            }
            None => return Err(self.error("unexpected end of file")),
        };
        Ok(Node {
            start,
            end: self.at,
            kind,
        })
    }

    /// An object's members or an array's elements, from the opening bracket past the closing.
    fn items(&mut self, close: u8, depth: usize, keyed: bool) -> Result<Vec<Item>, SyntaxError> {
        self.at += 1;
        let mut items = Vec::new();
        loop {
            self.blank()?;
            if self.peek() == Some(close) {
                self.at += 1;
                return Ok(items);
            }
            if !items.is_empty() {
                if self.peek() != Some(b',') {
                    return Err(self.error(if keyed {
                        "expected `,` or `}`"
                    } else {
                        "expected `,` or `]`"
                    }));
                }
                self.at += 1;
                self.blank()?;
                if self.peek() == Some(close) {
                    self.at += 1;
                    return Ok(items);
                }
            }
            let start = self.at;
            let key = if keyed {
                if self.peek() != Some(b'"') {
                    return Err(self.error("expected a member name in double quotes"));
                }
                let key = self.string()?;
                self.blank()?;
                if self.peek() != Some(b':') {
                    return Err(self.error("expected `:`"));
                }
                self.at += 1;
                self.blank()?;
                Some(key)
            } else {
                None
            };
            let value = self.value(depth + 1)?;
            items.push(Item { key, start, value });
        }
    }

    fn string(&mut self) -> Result<String, SyntaxError> {
        let b = self.text.as_bytes();
        let start = self.at;
        let mut at = start + 1;
        loop {
            match b.get(at) {
                None | Some(b'\n') => return Err(self.error("unterminated string")),
                Some(b'\\') => at += 2,
                Some(b'"') => break,
                Some(_) => at += 1,
            }
        }
        let raw = &self.text[start..=at];
        match serde_json::from_str::<String>(raw) {
            Ok(s) => {
                self.at = at + 1;
                Ok(s)
            }
            Err(e) => Err(self.error(&format!("invalid string: {e}"))),
        }
    }

    fn scalar(&mut self) -> Result<(), SyntaxError> {
        let b = self.text.as_bytes();
        let mut end = self.at;
        while end < b.len() && (b[end].is_ascii_alphanumeric() || b"+-.".contains(&b[end])) {
            end += 1;
        }
        let word = &self.text[self.at..end];
        if word.is_empty() || serde_json::from_str::<Value>(word).is_err() {
            return Err(self.error("expected a value"));
        }
        self.at = end;
        Ok(())
    }
}
