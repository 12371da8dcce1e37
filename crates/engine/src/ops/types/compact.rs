//! Version 2 of the result shapes (docs/protocol.md §1, "Result shapes"): how lists of locations
//! and diagnostics are written on the wire (a tool's own items, symbols, completions and calls,
//! are written by its file under `ops/tools/`, in the same manner). The operations keep building
//! `Loc`s and `Diag`s; these serializers group them per file, say what repeats per item (file,
//! severity, server, origin) once per group, and write positions as arrays. Each serializer has
//! a `*Shape` twin that only describes it (the output schema). `SHAPES` is announced in
//! `initialize`.

use schemars::JsonSchema;
use serde::de::Error as _;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::{CheckIssue, Diag, FileDiag, FileDiagnostics, Loc};
use crate::lsp::wire::Severity;

/// The version of the result shapes, announced as `experimental.lspgate.shapes`.
pub const SHAPES: u32 = 2;

// ---- locations ----

/// `[line, column]`, or `[line, column, "text"]` on the first position of each line.
struct Pos<'a>(&'a Loc, bool);

impl Serialize for Pos<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(2 + self.1 as usize))?;
        seq.serialize_element(&self.0.line)?;
        seq.serialize_element(&self.0.column)?;
        if self.1 {
            seq.serialize_element(&self.0.text)?;
        }
        seq.end()
    }
}

/// One run of locations in the same file.
struct FileRun<'a>(&'a [Loc]);

impl Serialize for FileRun<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let locs = self.0;
        let omitted = locs.first().and_then(|l| l.text_omitted);
        let mut m = s.serialize_map(Some(2 + omitted.is_some() as usize))?;
        m.serialize_entry("file", &locs.first().map_or("", |l| l.file.as_str()))?;
        let at: Vec<Pos> = locs
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let new_line = i == 0 || locs[i - 1].line != l.line;
                Pos(l, new_line && l.text_omitted.is_none())
            })
            .collect();
        m.serialize_entry("at", &at)?;
        if let Some(why) = omitted {
            m.serialize_entry("text_omitted", &why)?;
        }
        m.end()
    }
}

/// Consecutive locations of the same file, in order (a file may come back later in the list).
fn runs<T>(items: &[T], file: impl Fn(&T) -> &str) -> Vec<&[T]> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let mut j = i + 1;
        while j < items.len() && file(&items[j]) == file(&items[i]) {
            j += 1;
        }
        out.push(&items[i..j]);
        i = j;
    }
    out
}

/// A list of `Loc`s as `[{file, at: [[line, column, text?]], text_omitted?}]`.
pub fn locations<S: Serializer>(locs: &[Loc], s: S) -> Result<S::Ok, S::Error> {
    let groups: Vec<FileRun> = runs(locs, |l| l.file.as_str())
        .into_iter()
        .map(FileRun)
        .collect();
    groups.serialize(s)
}

/// What `locations` writes (its schema).
#[derive(JsonSchema)]
#[schemars(rename = "FilePositions")]
pub struct FilePositionsShape {
    pub file: String,
    #[schemars(schema_with = "position_items")]
    pub at: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_omitted: Option<String>,
}

fn position_items(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    // `[[int, int, string?]]`, said in the protocol, not here: the Python MCP SDK validates
    // every answer against its schema, and checking each position's items took it 9.3 ms for
    // 121 references where this takes 1.5 (`bench/peers`).
    schemars::json_schema!({ "type": "array" })
}

/// A place as `[line, column]` (a symbol's, a call's).
pub fn at<S: Serializer>(l: &Loc, s: S) -> Result<S::Ok, S::Error> {
    [l.line, l.column].serialize(s)
}

// ---- diagnostics ----

/// `[line, column, end_line, end_column, "message", "code"?]`.
struct Item<'a>(&'a Diag);

impl Serialize for Item<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        let mut seq = s.serialize_seq(Some(5 + d.code.is_some() as usize))?;
        seq.serialize_element(&d.line)?;
        seq.serialize_element(&d.column)?;
        seq.serialize_element(&d.end_line)?;
        seq.serialize_element(&d.end_column)?;
        seq.serialize_element(&d.message)?;
        if let Some(code) = &d.code {
            seq.serialize_element(code)?;
        }
        seq.end()
    }
}

/// Diagnostics of one file that share severity, source and origin.
struct Group<'a> {
    severity: Severity,
    source: Option<&'a str>,
    origin: Option<&'a str>,
    items: Vec<Item<'a>>,
}

impl Serialize for Group<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let n = 2 + self.source.is_some() as usize + self.origin.is_some() as usize;
        let mut m = s.serialize_map(Some(n))?;
        m.serialize_entry("severity", &self.severity)?;
        if let Some(source) = self.source {
            m.serialize_entry("source", source)?;
        }
        if let Some(origin) = self.origin {
            m.serialize_entry("origin", origin)?;
        }
        m.serialize_entry("items", &self.items)?;
        m.end()
    }
}

struct FileGroups<'a> {
    file: &'a str,
    groups: Vec<Group<'a>>,
}

impl Serialize for FileGroups<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("file", self.file)?;
        m.serialize_entry("diagnostics", &self.groups)?;
        m.end()
    }
}

/// One file's diagnostics (with their origin: `None` for the servers') grouped by severity
/// (worst first), then source and origin in the order met; each group in position order.
fn groups<'a>(diags: impl Iterator<Item = (&'a Diag, Option<&'a str>)>) -> Vec<Group<'a>> {
    let mut out: Vec<Group<'a>> = Vec::new();
    for (d, origin) in diags {
        let source = d.source.as_deref();
        match out
            .iter_mut()
            .find(|g| g.severity == d.severity && g.source == source && g.origin == origin)
        {
            Some(g) => g.items.push(Item(d)),
            None => out.push(Group {
                severity: d.severity,
                source,
                origin,
                items: vec![Item(d)],
            }),
        }
    }
    // Stable: sources and origins keep the order they were met in.
    out.sort_by_key(|g| g.severity);
    for g in &mut out {
        g.items
            .sort_by_key(|i| (i.0.line, i.0.column, i.0.end_line, i.0.end_column));
    }
    out
}

/// `diagnostics`' files as `[{file, diagnostics: [{severity, source?, items}]}]`.
pub fn file_diagnostics<S: Serializer>(files: &[FileDiagnostics], s: S) -> Result<S::Ok, S::Error> {
    let out: Vec<FileGroups> = files
        .iter()
        .map(|f| FileGroups {
            file: &f.file,
            groups: groups(f.diagnostics.iter().map(|d| (d, None))),
        })
        .collect();
    out.serialize(s)
}

/// Diagnostics with their files (an edit's `introduced`, `resolved`), grouped the same way.
pub fn file_diags<S: Serializer>(list: &[FileDiag], s: S) -> Result<S::Ok, S::Error> {
    let out: Vec<FileGroups> = runs(list, |d| d.file.as_str())
        .into_iter()
        .map(|run| FileGroups {
            file: &run[0].file,
            groups: groups(run.iter().map(|d| (&d.diag, None))),
        })
        .collect();
    out.serialize(s)
}

/// `Some` of `file_diags` (an edit's delta, when it was computed).
pub fn some_file_diags<S: Serializer>(
    list: &Option<Vec<FileDiag>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match list {
        Some(l) => file_diags(l, s),
        None => s.serialize_none(),
    }
}

/// Check issues grouped per file, with their origin where it is not the servers' (`lsp`).
pub fn issues<S: Serializer>(list: &[CheckIssue], s: S) -> Result<S::Ok, S::Error> {
    let out: Vec<FileGroups> = runs(list, |i| i.file.as_str())
        .into_iter()
        .map(|run| FileGroups {
            file: &run[0].file,
            groups: groups(
                run.iter()
                    .map(|i| (&i.diag, (i.origin != "lsp").then_some(i.origin.as_str()))),
            ),
        })
        .collect();
    out.serialize(s)
}

/// One file's diagnostics without a file (`explain_failure`'s), as `[{severity, source?, items}]`.
pub fn diag_groups<S: Serializer>(list: &[Diag], s: S) -> Result<S::Ok, S::Error> {
    groups(list.iter().map(|d| (d, None))).serialize(s)
}

/// What the diagnostics serializers write (their schema).
#[derive(JsonSchema)]
#[schemars(rename = "FileDiagnostics")]
pub struct FileDiagnosticsShape {
    pub file: String,
    pub diagnostics: Vec<DiagGroupShape>,
}

#[derive(JsonSchema, Deserialize)]
#[schemars(rename = "DiagGroup")]
pub struct DiagGroupShape {
    pub severity: Severity,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    #[schemars(schema_with = "diag_items")]
    pub items: Vec<Vec<Value>>,
}

fn diag_items(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    // `[[int × 4, message, code?]]`, said in the protocol (see `position_items`).
    schemars::json_schema!({ "type": "array" })
}

#[derive(Deserialize)]
struct FileDiagnosticsIn {
    file: String,
    diagnostics: Vec<DiagGroupShape>,
}

/// Reads `issues`' form back (`lspgate check` takes its exit code and SARIF from the result).
pub fn read_issues<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<CheckIssue>, D::Error> {
    let files = Vec::<FileDiagnosticsIn>::deserialize(d)?;
    let mut out = Vec::new();
    for f in files {
        for g in f.diagnostics {
            for item in g.items {
                let num = |i: usize| -> Result<u32, D::Error> {
                    item.get(i)
                        .and_then(Value::as_u64)
                        .and_then(|n| u32::try_from(n).ok())
                        .ok_or_else(|| D::Error::custom(format!("item {i} is not a position")))
                };
                let text = |i: usize| item.get(i).and_then(Value::as_str).map(str::to_string);
                out.push(CheckIssue {
                    file: f.file.clone(),
                    diag: Diag {
                        severity: g.severity,
                        line: num(0)?,
                        column: num(1)?,
                        end_line: num(2)?,
                        end_column: num(3)?,
                        code: text(5),
                        source: g.source.clone(),
                        message: text(4)
                            .ok_or_else(|| D::Error::custom("an item has no message"))?,
                    },
                    origin: g.origin.clone().unwrap_or_else(|| "lsp".into()),
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::types::TextOmitted;
    use serde_json::json;

    fn loc(file: &str, line: u32, column: u32, text: &str) -> Loc {
        Loc {
            file: file.into(),
            line,
            column,
            end_line: line,
            end_column: column + 3,
            text: text.into(),
            text_omitted: None,
        }
    }

    fn diag(sev: Severity, line: u32, source: &str, code: Option<&str>) -> Diag {
        Diag {
            severity: sev,
            line,
            column: 1,
            end_line: line,
            end_column: 4,
            code: code.map(String::from),
            source: Some(source.into()),
            message: format!("m{line}"),
        }
    }

    fn json_of(
        f: impl FnOnce(serde_json::value::Serializer) -> Result<Value, serde_json::Error>,
    ) -> Value {
        f(serde_json::value::Serializer).unwrap()
    }

    #[test]
    fn locations_group_per_file_and_say_a_line_once() {
        let locs = vec![
            loc("a.py", 1, 5, "x = f(f(1))"),
            loc("a.py", 1, 7, "x = f(f(1))"),
            loc("a.py", 3, 1, "f"),
            loc("b.py", 2, 2, "g"),
        ];
        let v = json_of(|s| locations(&locs, s));
        assert_eq!(
            v,
            json!([
                {"file": "a.py", "at": [[1, 5, "x = f(f(1))"], [1, 7], [3, 1, "f"]]},
                {"file": "b.py", "at": [[2, 2, "g"]]}
            ])
        );
        let mut out = loc("/usr/x.h", 4, 2, "");
        out.text_omitted = Some(TextOmitted::OutsideRoot);
        let v = json_of(|s| locations(&[out], s));
        assert_eq!(
            v,
            json!([{"file": "/usr/x.h", "at": [[4, 2]], "text_omitted": "outside_root"}])
        );
    }

    #[test]
    fn diagnostics_say_severity_and_source_once_and_read_back() {
        let issues_in = vec![
            CheckIssue {
                file: "a.ts".into(),
                diag: diag(Severity::Warning, 2, "ts", None),
                origin: "lsp".into(),
            },
            CheckIssue {
                file: "a.ts".into(),
                diag: diag(Severity::Error, 3, "ts", Some("2322")),
                origin: "lsp".into(),
            },
            CheckIssue {
                file: "a.ts".into(),
                diag: diag(Severity::Error, 1, "ts", Some("2304")),
                origin: "lsp".into(),
            },
            CheckIssue {
                file: "a.ts".into(),
                diag: diag(Severity::Error, 9, "tsc", None),
                origin: "tsc".into(),
            },
        ];
        let v = json_of(|s| issues(&issues_in, s));
        assert_eq!(
            v,
            json!([{"file": "a.ts", "diagnostics": [
                {"severity": "error", "source": "ts", "items": [
                    [1, 1, 1, 4, "m1", "2304"], [3, 1, 3, 4, "m3", "2322"]]},
                {"severity": "error", "source": "tsc", "origin": "tsc", "items": [
                    [9, 1, 9, 4, "m9"]]},
                {"severity": "warning", "source": "ts", "items": [[2, 1, 2, 4, "m2"]]}
            ]}])
        );
        let back = read_issues(v).unwrap();
        assert_eq!(back.len(), 4);
        assert!(back.iter().any(|i| i.origin == "tsc" && i.diag.line == 9));
        let coded = back.iter().find(|i| i.diag.line == 3).unwrap();
        assert_eq!(coded.diag, issues_in[1].diag);
        assert_eq!(coded.origin, "lsp");
    }
}
