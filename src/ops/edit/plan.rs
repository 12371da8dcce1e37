//! Planning edits: a `Plan` from a server's workspace edit (text edits in the server's
//! encoding, creates, renames, deletes; every path confined to the root as it is named) and
//! from an agent's `edit` specs (unique old text, or whole lines).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use url::Url;

use super::super::Engine;
use super::super::types::*;
use crate::edits::{FileChange, Plan};
use crate::error::{Code, ToolError};
use crate::lsp::wire::WireFileOp;
use crate::registry::Server;
use crate::text::{self, Encoding, LineIndex};
use crate::workspace::Root;

impl Engine {
    /// A plan from a server's workspace edit, computed against the files as they are now.
    pub(super) fn plan_from_ops(
        &self,
        server: &Server,
        ops: &[WireFileOp],
    ) -> Result<Plan, ToolError> {
        plan_workspace_edit(
            self.root(),
            server.client().encoding(),
            |path| server.docs.open_version(path),
            ops,
        )
    }
}

/// A path a server named (workspace edits, file operations), confined to the root by the
/// one confinement function, `Root::confine`.
fn confine(root: &Root, uri: &Url) -> Result<PathBuf, ToolError> {
    let path = uri
        .to_file_path()
        .map_err(|_| ToolError::invalid(format!("the server named a non-file URI {uri}")))?;
    root.confine(&path).map_err(|e| match e.code {
        Code::OutsideRoot => ToolError::new(
            Code::OutsideRoot,
            format!(
                "the edit touches {}, outside the workspace; nothing was written",
                path.display()
            ),
        )
        .with_data(json!({"file": uri.as_str(), "root": root.path()})),
        _ => e,
    })
}

/// A plan from a server's workspace edit (`ops`, positions in `enc`), computed against the
/// files under `root` as they are now; `open_version` gives the version a document is open
/// at in that server, if it is. Every path is confined as it is named. Public for the fuzz
/// targets (`fuzz/`); callers use `Engine::plan_from_ops`.
#[doc(hidden)]
pub fn plan_workspace_edit(
    root: &Root,
    enc: Encoding,
    open_version: impl Fn(&Path) -> Option<i32>,
    ops: &[WireFileOp],
) -> Result<Plan, ToolError> {
    let mut original: BTreeMap<PathBuf, Option<Vec<u8>>> = BTreeMap::new();
    let mut current: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
    fn load(
        path: &Path,
        original: &mut BTreeMap<PathBuf, Option<Vec<u8>>>,
        current: &mut BTreeMap<PathBuf, Option<String>>,
    ) -> Result<(), ToolError> {
        if current.contains_key(path) {
            return Ok(());
        }
        let bytes = match std::fs::read(path) {
            Ok(b) => Some(b),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                return Err(ToolError::io("read", &path.display().to_string(), &e));
            }
        };
        let text = match &bytes {
            Some(b) => Some(String::from_utf8(b.clone()).map_err(|_| {
                ToolError::invalid(format!(
                    "{} is not UTF-8; lspgate will not edit it",
                    path.display()
                ))
            })?),
            None => None,
        };
        original.insert(path.to_path_buf(), bytes);
        current.insert(path.to_path_buf(), text);
        Ok(())
    }
    for op in ops {
        match op {
            WireFileOp::Edit {
                uri,
                version,
                edits,
            } => {
                let path = confine(root, uri)?;
                if let (Some(v), Some(open)) = (version, open_version(&path))
                    && *v != open
                {
                    return Err(ToolError::new(
                        Code::RevisionConflict,
                        format!(
                            "{} changed while the edit was computed",
                            root.relative(&path)
                        ),
                    ));
                }
                load(&path, &mut original, &mut current)?;
                let Some(Some(text)) = current.get(&path) else {
                    return Err(ToolError::invalid(format!(
                        "the server edits {}, which does not exist",
                        root.relative(&path)
                    )));
                };
                let index = LineIndex::new(text);
                let spans: Vec<(usize, usize, &str)> = edits
                    .iter()
                    .map(|(r, new)| {
                        (
                            text::offset_of(text, &index, r.start.line, r.start.character, enc),
                            text::offset_of(text, &index, r.end.line, r.end.character, enc),
                            new.as_str(),
                        )
                    })
                    .collect();
                let new = text::splice(text, &spans).map_err(|e| {
                    ToolError::new(
                        Code::ServerError,
                        format!("the server's edit is malformed: {e}"),
                    )
                })?;
                current.insert(path, Some(new));
            }
            WireFileOp::Create {
                uri,
                overwrite,
                ignore_if_exists,
            } => {
                let path = confine(root, uri)?;
                load(&path, &mut original, &mut current)?;
                if current[&path].is_some() && !overwrite {
                    if *ignore_if_exists {
                        continue;
                    }
                    return Err(ToolError::invalid(format!(
                        "{} already exists",
                        root.relative(&path)
                    )));
                }
                current.insert(path, Some(String::new()));
            }
            WireFileOp::Rename {
                old,
                new,
                overwrite,
                ignore_if_exists,
            } => {
                let (from, to) = (confine(root, old)?, confine(root, new)?);
                load(&from, &mut original, &mut current)?;
                load(&to, &mut original, &mut current)?;
                if current[&to].is_some() && !overwrite {
                    if *ignore_if_exists {
                        continue;
                    }
                    return Err(ToolError::invalid(format!(
                        "{} already exists",
                        root.relative(&to)
                    )));
                }
                let content = current
                    .insert(from.clone(), None)
                    .flatten()
                    .ok_or_else(|| {
                        ToolError::invalid(format!(
                            "cannot rename {}: it does not exist",
                            root.relative(&from)
                        ))
                    })?;
                current.insert(to, Some(content));
            }
            WireFileOp::Delete {
                uri,
                ignore_if_not_exists,
            } => {
                let path = confine(root, uri)?;
                load(&path, &mut original, &mut current)?;
                if current[&path].is_none() && !ignore_if_not_exists {
                    return Err(ToolError::invalid(format!(
                        "cannot delete {}: it does not exist",
                        root.relative(&path)
                    )));
                }
                current.insert(path, None);
            }
        }
    }
    Ok(Plan {
        changes: current
            .into_iter()
            .map(|(path, after)| FileChange {
                before: original.remove(&path).flatten(),
                after: after.map(String::into_bytes),
                path,
            })
            .collect(),
    }
    .normalized())
}

pub(super) fn edits_key(specs: &[EditSpec]) -> Value {
    Value::Array(
        specs
            .iter()
            .map(|s| match s {
                EditSpec::Replace { old_text, new_text } => json!([old_text, new_text]),
                EditSpec::Lines {
                    start_line,
                    end_line,
                    new_text,
                } => json!([start_line.0, end_line.0, new_text]),
            })
            .collect(),
    )
}

/// Applies `edit` specs to a text, in order.
pub fn apply_specs(text: &str, specs: &[EditSpec]) -> Result<String, ToolError> {
    if specs.is_empty() {
        return Err(ToolError::invalid("`edits` is empty"));
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let mut out = text.to_string();
    for (i, spec) in specs.iter().enumerate() {
        match spec {
            EditSpec::Replace { old_text, new_text } => {
                if old_text.is_empty() {
                    return Err(ToolError::invalid(format!(
                        "edit {}: `old_text` is empty",
                        i + 1
                    )));
                }
                let count = out.matches(old_text.as_str()).count();
                match count {
                    1 => out = out.replacen(old_text.as_str(), new_text, 1),
                    0 => {
                        return Err(ToolError::invalid(format!(
                            "edit {}: `old_text` is not in the file",
                            i + 1
                        )));
                    }
                    n => {
                        return Err(ToolError::invalid(format!(
                            "edit {}: `old_text` occurs {n} times; include more context so it is unique",
                            i + 1
                        )));
                    }
                }
            }
            EditSpec::Lines {
                start_line,
                end_line,
                new_text,
            } => {
                let index = LineIndex::new(&out);
                let lines = index.line_count();
                let (s, e) = (start_line.0, end_line.0);
                if s < 1 || e < s || e as usize > lines {
                    return Err(ToolError::invalid(format!(
                        "edit {}: lines {s}..{e} are not within 1..{lines}",
                        i + 1
                    )));
                }
                // Whole lines, endings included; the new text gets the file's line ending if it
                // replaces lines that had one and brings none (so "" deletes the lines).
                let start = text::offset_of(&out, &index, (s - 1) as u32, 0, text::Encoding::Utf8);
                let end_of_last =
                    text::offset_of(&out, &index, (e - 1) as u32, u32::MAX, text::Encoding::Utf8);
                let end = if (e as usize) < lines {
                    text::offset_of(&out, &index, e as u32, 0, text::Encoding::Utf8)
                } else {
                    out.len()
                };
                let mut replacement = new_text.clone();
                if !replacement.is_empty() && end > end_of_last && !replacement.ends_with('\n') {
                    replacement.push_str(newline);
                }
                out = text::splice(&out, &[(start, end, replacement.as_str())])
                    .map_err(ToolError::invalid)?;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_replace_unique_text_and_lines() {
        let t = "a\nb\nc\n";
        let r = |s: &[EditSpec]| apply_specs(t, s);
        let rep = |o: &str, n: &str| EditSpec::Replace {
            old_text: o.into(),
            new_text: n.into(),
        };
        let lines = |s: i64, e: i64, n: &str| EditSpec::Lines {
            start_line: Num(s),
            end_line: Num(e),
            new_text: n.into(),
        };
        assert_eq!(r(&[rep("b", "B")]).unwrap(), "a\nB\nc\n");
        assert_eq!(r(&[lines(2, 3, "X\n")]).unwrap(), "a\nX\n");
        assert_eq!(r(&[lines(1, 1, "first")]).unwrap(), "first\nb\nc\n");
        assert_eq!(r(&[lines(2, 2, "")]).unwrap(), "a\nc\n");
        assert_eq!(
            apply_specs("a\r\nb\r\n", &[lines(1, 1, "z")]).unwrap(),
            "z\r\nb\r\n"
        );
        assert_eq!(apply_specs("a\nb", &[lines(2, 2, "c")]).unwrap(), "a\nc");
        assert!(r(&[rep("\n", "")]).unwrap_err().message.contains("3 times"));
        assert!(
            r(&[rep("zz", "")])
                .unwrap_err()
                .message
                .contains("not in the file")
        );
        assert!(r(&[lines(3, 9, "")]).is_err());
    }

    /// Found by fuzzing (fuzz/edit_plan): a server naming a path with a component longer than
    /// the file system allows got `internal` (lspgate's own failure) instead of a refusal.
    #[test]
    fn a_name_the_file_system_cannot_hold_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let long = "r".repeat(300);
        for uri in [
            format!("file:///{long}/a.txt"),
            format!("file://{}/{long}", root.path().display()),
            format!("file://{}/{long}/a.txt", root.path().display()),
        ] {
            let ops = [WireFileOp::Create {
                uri: Url::parse(&uri).unwrap(),
                overwrite: false,
                ignore_if_exists: false,
            }];
            let e = plan_workspace_edit(&root, Encoding::Utf16, |_| None, &ops).unwrap_err();
            assert_eq!(e.code, Code::InvalidParams, "{uri}: {e:?}");
        }
    }
}
