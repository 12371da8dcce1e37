//! What a server's diagnostics may quote: no text of a file outside the workspace root reaches
//! an answer through them (issue 36). Every diagnostic a server gives (pushed, pulled, a
//! workspace pass, tsserver's) passes `confine` as it becomes a `WireDiagnostic`, so every door
//! (the tools, `check` and its SARIF, the hooks, the LSP face, `raw: true`) gets the same.
//!
//! clangd reports an error inside an included file at the `#include` line, its message
//! `In included file: …` quoting the included file, and (to a client without related
//! information, as lspgate is) folds its notes into the message as paragraphs
//! `FILE:LINE:COL:\nnote: …` (`NAME:LINE:COL: note: …` in the main file). So:
//!
//! - a diagnostic of a file outside the root keeps severity, code and range, and its message
//!   says only that;
//! - one attributed to an included file (`In included file:`) whose file is outside the root,
//!   or cannot be placed (a relative name, no note), keeps severity, code and range (the
//!   `#include` line) and the included file's position, not its words;
//! - a note (folded, or related information) that points outside the root keeps its place,
//!   not its words; a note quoting a diagnostic attributed to such an included file (clangd
//!   repeats the main diagnostic in a note it reports in the main file) likewise.
//!
//! What cannot be told from a message: a diagnostic of the file itself whose words the compiler
//! took from an outside file without saying so (a macro defined there, a value it computed).

use std::path::Path;
use std::sync::{Arc, LazyLock};

use regex::Regex;
use serde_json::{Value, json};
use url::Url;

use super::wire::{Severity, WireDiagnostic, WirePos};

/// Whether a file lies inside the workspace root, whose files alone may be quoted in an answer
/// (`Root::confine` decides, above this layer).
#[derive(Clone)]
pub struct Inside(Arc<dyn Fn(&Path) -> bool + Send + Sync>);

impl Inside {
    pub fn new(holds: impl Fn(&Path) -> bool + Send + Sync + 'static) -> Inside {
        Inside(Arc::new(holds))
    }

    /// Every file: a client kept to no root.
    pub fn anywhere() -> Inside {
        Inside::new(|_| true)
    }

    fn holds(&self, path: &Path) -> bool {
        (self.0)(path)
    }

    fn holds_uri(&self, uri: &str) -> bool {
        Url::parse(uri)
            .ok()
            .and_then(|u| u.to_file_path().ok())
            .is_some_and(|p| self.holds(&p))
    }
}

impl Default for Inside {
    fn default() -> Inside {
        Inside::anywhere()
    }
}

impl std::fmt::Debug for Inside {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Inside(..)")
    }
}

/// What stands for words not shown.
pub(crate) const OMITTED: &str = "(text omitted: outside_root)";

/// A note clangd folds into a message (a paragraph after the first): its file, line, column,
/// then a newline (a file other than the main one) or a space, then its level and its text.
#[allow(clippy::expect_used)] // a constant pattern, compiled by the tests
static NOTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?s)\A([^\n]+?):(\d+):(\d+):([\n ])(note|remark|warning|error|fatal error|ignored): (.*)\z")
        .expect("a valid regex")
});

/// Whether clangd attributes `text` to an included file (`In included file: …`; lower case
/// where it repeats the diagnostic in a note).
fn attributed(text: &str) -> bool {
    text.get(..16)
        .is_some_and(|s| s.eq_ignore_ascii_case("in included file"))
}

/// A folded note: where it points, whether that is inside the root, and its text.
struct Note {
    at: String,
    /// 0-based line and column, as a diagnostic's range counts (clangd writes them from 1).
    pos: Option<WirePos>,
    inside: bool,
    text: String,
}

fn note(paragraph: &str, inside: &Inside) -> Option<Note> {
    let c = NOTE.captures(paragraph)?;
    let file = c.get(1)?.as_str();
    let (line, column) = (c.get(2)?.as_str(), c.get(3)?.as_str());
    // A space: clangd's main file, named by its base name (the diagnostic's own file, inside);
    // a newline: another file, inside only when named absolutely (a relative name is relative
    // to the compile command's folder, which is not known here).
    let inside = match c.get(4)?.as_str() {
        " " => true,
        _ => Path::new(file).is_absolute() && inside.holds(Path::new(file)),
    };
    let pos = match (line.parse::<u32>(), column.parse::<u32>()) {
        (Ok(l), Ok(c)) if l > 0 && c > 0 => Some(WirePos {
            line: l - 1,
            character: c - 1,
        }),
        _ => None,
    };
    Some(Note {
        at: format!("{file}:{line}:{column}"),
        pos,
        inside,
        text: c.get(6)?.as_str().to_string(),
    })
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
        Severity::Hint => "hint",
    }
}

/// The diagnostics of `uri` (one server's, converted) as they may reach an answer: see the
/// module's comment.
pub(super) fn confine(
    uri: &Url,
    list: Vec<WireDiagnostic>,
    inside: &Inside,
) -> Vec<WireDiagnostic> {
    let own = uri.to_file_path().is_ok_and(|p| inside.holds(&p));
    if !own {
        return list
            .into_iter()
            .map(|d| {
                let message = format!(
                    "{} in a file outside the workspace root {OMITTED}",
                    severity_word(d.severity)
                );
                replaced(d, message)
            })
            .collect();
    }
    // Where each diagnostic attributed to an included file is reported (its `#include`), and
    // whether that file is inside: the notes clangd reports in the main file repeat them.
    let included: Vec<(WirePos, bool)> = list
        .iter()
        .filter(|d| attributed(&d.message))
        .map(|d| (d.range.start, included_file(d, inside).1))
        .collect();
    list.into_iter()
        .map(|d| {
            if attributed(&d.message) {
                let (at, placed) = included_file(&d, inside);
                if !placed {
                    let sev = severity_word(d.severity);
                    let message = match at {
                        Some(at) => format!("In included file: {sev} at {at} {OMITTED}"),
                        None => format!("In included file: {sev} {OMITTED}"),
                    };
                    return replaced(d, message);
                }
            }
            notes_confined(d, inside, &included)
        })
        .collect()
}

/// The included file a diagnostic is attributed to (clangd's first note, `error occurred
/// here`, or its first related information): where, and whether it is inside the root.
fn included_file(d: &WireDiagnostic, inside: &Inside) -> (Option<String>, bool) {
    if let Some(first) = d.message.split("\n\n").nth(1)
        && let Some(n) = note(first, inside)
    {
        return (Some(n.at), n.inside);
    }
    let related = d
        .raw
        .get("relatedInformation")
        .and_then(Value::as_array)
        .and_then(|r| r.first())
        .and_then(|r| r.get("location"));
    match related.and_then(|l| l.get("uri")).and_then(Value::as_str) {
        Some(uri) => {
            let line = related
                .and_then(|l| l.pointer("/range/start/line"))
                .and_then(Value::as_u64)
                .map_or(0, |l| l + 1);
            (Some(format!("{uri}:{line}")), inside.holds_uri(uri))
        }
        None => (None, false),
    }
}

/// `d` with the notes that point outside the root (folded in its message, or as related
/// information) keeping their place only, and a note repeating a diagnostic attributed to an
/// included file outside (`included`) its level only.
fn notes_confined(
    mut d: WireDiagnostic,
    inside: &Inside,
    included: &[(WirePos, bool)],
) -> WireDiagnostic {
    let mut changed = false;
    let mut paragraphs: Vec<String> = Vec::new();
    for (i, p) in d.message.split("\n\n").enumerate() {
        let Some(n) = note(p, inside).filter(|_| i > 0) else {
            paragraphs.push(p.to_string());
            continue;
        };
        let quotes_outside = attributed(&n.text)
            && !included
                .iter()
                .any(|(at, placed)| Some(*at) == n.pos && *placed);
        if n.inside && !quotes_outside {
            paragraphs.push(p.to_string());
            continue;
        }
        // Its place and level stay: `FILE:LINE:COL:` and `note:` as clangd wrote them.
        let head_len = p.len() - n.text.len();
        paragraphs.push(format!("{}{OMITTED}", &p[..head_len]));
        changed = true;
    }
    if let Some(Value::Array(related)) = d.raw.get_mut("relatedInformation") {
        for r in related {
            let out = r
                .pointer("/location/uri")
                .and_then(Value::as_str)
                .is_none_or(|u| !inside.holds_uri(u));
            if out && r.get("message") != Some(&json!(OMITTED)) {
                r["message"] = json!(OMITTED);
            }
        }
    }
    if changed {
        d.message = paragraphs.join("\n\n");
        d.raw["message"] = json!(d.message);
        // What else the server attached may quote the same.
        if let Value::Object(raw) = &mut d.raw {
            raw.remove("data");
            raw.remove("codeActions");
        }
    }
    d
}

/// `d` with `message` in place of its own; what else of the server's it carries that may
/// quote (related information, data, clangd's inline code actions) dropped.
fn replaced(mut d: WireDiagnostic, message: String) -> WireDiagnostic {
    if let Value::Object(raw) = &mut d.raw {
        raw.retain(|k, _| {
            matches!(
                k.as_str(),
                "range" | "severity" | "code" | "codeDescription" | "source" | "tags"
            )
        });
        raw.insert("message".into(), json!(message));
    }
    d.message = message;
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::WireRange;

    fn at(line: u32, character: u32) -> WireRange {
        let p = WirePos { line, character };
        WireRange { start: p, end: p }
    }

    fn diag(range: WireRange, message: &str) -> WireDiagnostic {
        WireDiagnostic {
            range,
            severity: Severity::Error,
            code: Some("undeclared_var_use".into()),
            source: Some("clang".into()),
            message: message.into(),
            raw: json!({"range": {}, "message": message, "severity": 1,
                        "code": "undeclared_var_use", "source": "clang", "data": {"x": message}}),
        }
    }

    /// The root is /ws.
    fn ws() -> Inside {
        Inside::new(|p| p.starts_with("/ws") && !p.to_string_lossy().contains(".."))
    }

    fn uri() -> Url {
        Url::parse("file:///ws/main.c").unwrap()
    }

    #[test]
    fn an_included_file_outside_keeps_its_place_not_its_words() {
        let list = vec![
            diag(
                at(1, 9),
                "In included file: use of undeclared identifier 'ghp_SECRET'\n\n/ws/../home/.env:1:14:\nnote: error occurred here\n\nmain.c:1:5: note: previous definition is here",
            ),
            diag(
                at(0, 4),
                "Previous definition is here\n\nmain.c:2:10: error: in included file: use of undeclared identifier 'ghp_SECRET'",
            ),
        ];
        let out = confine(&uri(), list, &ws());
        assert_eq!(
            out[0].message,
            "In included file: error at /ws/../home/.env:1:14 (text omitted: outside_root)"
        );
        assert_eq!(out[0].raw["message"], json!(out[0].message));
        assert!(out[0].raw.get("data").is_none());
        assert_eq!(out[0].raw["code"], "undeclared_var_use");
        assert_eq!(out[0].range, at(1, 9));
        assert_eq!(
            out[1].message,
            "Previous definition is here\n\nmain.c:2:10: error: (text omitted: outside_root)"
        );
        for d in &out {
            assert!(!d.raw.to_string().contains("ghp_"), "{:?}", d.raw);
        }
    }

    #[test]
    fn an_included_file_inside_and_notes_inside_are_kept() {
        let text = "In included file: unknown type name 'foo'\n\n/ws/inc/a.h:3:1:\nnote: error occurred here\n\nmain.c:2:10: error: in included file: unknown type name 'foo'";
        let list = vec![diag(at(1, 9), text)];
        let out = confine(&uri(), list.clone(), &ws());
        assert_eq!(out, list);
    }

    #[test]
    fn a_relative_or_missing_included_file_cannot_be_placed() {
        for text in [
            "In included file: bad\n\ninclude/a.h:3:1:\nnote: error occurred here",
            "In included file: bad",
        ] {
            let out = confine(&uri(), vec![diag(at(0, 0), text)], &ws());
            assert!(
                out[0].message.ends_with(OMITTED) && !out[0].message.contains("bad"),
                "{}",
                out[0].message
            );
        }
    }

    #[test]
    fn a_note_outside_keeps_its_place_and_the_message_its_words() {
        let text = "Incompatible integer to pointer conversion passing 'int' to parameter of type 'const char *'\n\n/usr/include/stdio.h:356:43:\nnote: passing argument to parameter '__format' here";
        let out = confine(&uri(), vec![diag(at(2, 5), text)], &ws());
        assert_eq!(
            out[0].message,
            "Incompatible integer to pointer conversion passing 'int' to parameter of type 'const char *'\n\n/usr/include/stdio.h:356:43:\nnote: (text omitted: outside_root)"
        );
        assert_eq!(out[0].raw["message"], json!(out[0].message));
    }

    #[test]
    fn related_information_outside_keeps_its_place() {
        let mut d = diag(at(0, 0), "x is redefined");
        d.raw["relatedInformation"] = json!([
            {"location": {"uri": "file:///etc/secret", "range": {}}, "message": "SECRET here"},
            {"location": {"uri": "file:///ws/a.c", "range": {}}, "message": "first here"},
        ]);
        let out = confine(&uri(), vec![d], &ws());
        assert_eq!(out[0].message, "x is redefined");
        assert_eq!(out[0].raw["relatedInformation"][0]["message"], OMITTED);
        assert_eq!(out[0].raw["relatedInformation"][1]["message"], "first here");
    }

    #[test]
    fn a_file_outside_says_only_that() {
        let outside = Url::parse("file:///home/me/.env").unwrap();
        let out = confine(&outside, vec![diag(at(0, 0), "'ghp_SECRET'")], &ws());
        assert_eq!(
            out[0].message,
            "error in a file outside the workspace root (text omitted: outside_root)"
        );
        assert!(!out[0].raw.to_string().contains("ghp_"));
    }
}
