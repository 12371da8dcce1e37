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
use crate::lsp::wire::{WireFileOp, WireRange};
use crate::registry::Server;
use crate::text::{self, Encoding, LineIndex};
use crate::workspace::Root;
use lspgate_core::error::Kind;

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
    root.confine(&path).map_err(|e| match e.kind {
        Kind::OutsideRoot => ToolError::new(
            Code::OutsideRoot,
            format!(
                "the edit touches {}, outside the workspace; nothing was written",
                path.display()
            ),
        )
        .with_data(json!({"file": uri.as_str(), "root": root.path()})),
        _ => e.into(),
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
    let mut staged = Staged {
        root,
        original: BTreeMap::new(),
        current: BTreeMap::new(),
    };
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
                staged.edit(path, edits, enc)?;
            }
            WireFileOp::Create {
                uri,
                overwrite,
                ignore_if_exists,
            } => staged.create(confine(root, uri)?, *overwrite, *ignore_if_exists)?,
            WireFileOp::Rename {
                old,
                new,
                overwrite,
                ignore_if_exists,
            } => {
                let (from, to) = (confine(root, old)?, confine(root, new)?);
                staged.rename(from, to, *overwrite, *ignore_if_exists)?;
            }
            WireFileOp::Delete {
                uri,
                ignore_if_not_exists,
            } => staged.delete(confine(root, uri)?, *ignore_if_not_exists)?,
        }
    }
    Ok(staged.into_plan())
}

/// A workspace edit as it is applied, op by op, to the files it touches (in memory).
struct Staged<'a> {
    root: &'a Root,
    /// Each touched file's bytes before the edit (`None`: it did not exist).
    original: BTreeMap<PathBuf, Option<Vec<u8>>>,
    /// Each touched file's text after the ops so far (`None`: it does not exist).
    current: BTreeMap<PathBuf, Option<String>>,
}

impl Staged<'_> {
    /// Reads a file the edit touches the first time it is named (it must be UTF-8 if it exists).
    fn load(&mut self, path: &Path) -> Result<(), ToolError> {
        if self.current.contains_key(path) {
            return Ok(());
        }
        let bytes = crate::ops::files::read_in_root(self.root, path)?;
        let text = match &bytes {
            Some(b) => Some(String::from_utf8(b.clone()).map_err(|_| {
                ToolError::invalid(format!(
                    "{} is not UTF-8; lspgate will not edit it",
                    path.display()
                ))
            })?),
            None => None,
        };
        self.original.insert(path.to_path_buf(), bytes);
        self.current.insert(path.to_path_buf(), text);
        Ok(())
    }

    /// Applies a server's text edits (positions in `enc`) to an existing file.
    fn edit(
        &mut self,
        path: PathBuf,
        edits: &[(WireRange, String)],
        enc: Encoding,
    ) -> Result<(), ToolError> {
        self.load(&path)?;
        let Some(Some(text)) = self.current.get(&path) else {
            return Err(ToolError::invalid(format!(
                "the server edits {}, which does not exist",
                self.root.relative(&path)
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
        self.current.insert(path, Some(new));
        Ok(())
    }

    /// Creates an empty file (over an existing one only with `overwrite`).
    fn create(
        &mut self,
        path: PathBuf,
        overwrite: bool,
        ignore_if_exists: bool,
    ) -> Result<(), ToolError> {
        self.load(&path)?;
        if self.current[&path].is_some() && !overwrite {
            if ignore_if_exists {
                return Ok(());
            }
            return Err(ToolError::invalid(format!(
                "{} already exists",
                self.root.relative(&path)
            )));
        }
        self.current.insert(path, Some(String::new()));
        Ok(())
    }

    /// Moves a file's content to a new path (over an existing one only with `overwrite`).
    fn rename(
        &mut self,
        from: PathBuf,
        to: PathBuf,
        overwrite: bool,
        ignore_if_exists: bool,
    ) -> Result<(), ToolError> {
        self.load(&from)?;
        self.load(&to)?;
        if self.current[&to].is_some() && !overwrite {
            if ignore_if_exists {
                return Ok(());
            }
            return Err(ToolError::invalid(format!(
                "{} already exists",
                self.root.relative(&to)
            )));
        }
        let content = self
            .current
            .insert(from.clone(), None)
            .flatten()
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "cannot rename {}: it does not exist",
                    self.root.relative(&from)
                ))
            })?;
        self.current.insert(to, Some(content));
        Ok(())
    }

    /// Deletes a file (a missing one is an error unless `ignore_if_not_exists`).
    fn delete(&mut self, path: PathBuf, ignore_if_not_exists: bool) -> Result<(), ToolError> {
        self.load(&path)?;
        if self.current[&path].is_none() && !ignore_if_not_exists {
            return Err(ToolError::invalid(format!(
                "cannot delete {}: it does not exist",
                self.root.relative(&path)
            )));
        }
        self.current.insert(path, None);
        Ok(())
    }

    /// Every touched file, before and after, as a plan.
    fn into_plan(mut self) -> Plan {
        Plan {
            changes: self
                .current
                .into_iter()
                .map(|(path, after)| FileChange {
                    before: self.original.remove(&path).flatten(),
                    after: after.map(String::into_bytes),
                    path,
                })
                .collect(),
        }
        .normalized()
    }
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
                out = replace_unique(&out, i + 1, old_text, new_text)?;
            }
            EditSpec::Lines {
                start_line,
                end_line,
                new_text,
            } => {
                out = replace_lines(&out, i + 1, (start_line.0, end_line.0), new_text, newline)?;
            }
        }
    }
    Ok(out)
}

/// Edit `n`'s `old_text`, which must occur exactly once, replaced by `new_text`.
fn replace_unique(
    out: &str,
    n: usize,
    old_text: &str,
    new_text: &str,
) -> Result<String, ToolError> {
    if old_text.is_empty() {
        return Err(ToolError::invalid(format!("edit {n}: `old_text` is empty")));
    }
    match out.matches(old_text).count() {
        1 => Ok(out.replacen(old_text, new_text, 1)),
        0 => Err(ToolError::invalid(format!(
            "edit {n}: `old_text` is not in the file"
        ))),
        count => Err(ToolError::invalid(format!(
            "edit {n}: `old_text` occurs {count} times; include more context so it is unique"
        ))),
    }
}

/// Edit `n`'s whole lines `s..=e` (1-based) replaced by `new_text`.
fn replace_lines(
    out: &str,
    n: usize,
    (s, e): (i64, i64),
    new_text: &str,
    newline: &str,
) -> Result<String, ToolError> {
    let index = LineIndex::new(out);
    let lines = index.line_count();
    if s < 1 || e < s || e as usize > lines {
        return Err(ToolError::invalid(format!(
            "edit {n}: lines {s}..{e} are not within 1..{lines}"
        )));
    }
    // Whole lines, endings included; the new text gets the file's line ending if it
    // replaces lines that had one and brings none (so "" deletes the lines).
    let start = text::offset_of(out, &index, (s - 1) as u32, 0, text::Encoding::Utf8);
    let end_of_last = text::offset_of(out, &index, (e - 1) as u32, u32::MAX, text::Encoding::Utf8);
    let end = if (e as usize) < lines {
        text::offset_of(out, &index, e as u32, 0, text::Encoding::Utf8)
    } else {
        out.len()
    };
    let mut replacement = new_text.to_string();
    if !replacement.is_empty() && end > end_of_last && !replacement.ends_with('\n') {
        replacement.push_str(newline);
    }
    text::splice(out, &[(start, end, replacement.as_str())]).map_err(ToolError::invalid)
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
