//! Reading the files an answer mentions, inside the root only (`read_in_root`: confined, then
//! reached without following a link), each once per answer (`FileCache`: code-point columns and
//! source lines for locations).

use std::collections::HashMap;
use std::path::Path;

use serde_json::json;
use url::Url;

use super::types::{Loc, TextOmitted};
use crate::documents::Snapshot;
use crate::error::{Code, ToolError};
use crate::text;
use crate::workspace::Root;

/// The bytes of the file at `path`, read only when it is inside the root: confined
/// (`Root::confine`: `..` resolved, symlinks followed) and then reached from the root one folder
/// at a time without following any symlink (`edits::fs`), so a path that leads out, or that
/// changed to lead out after it was confined, is never read. Every file lspgate reads to build
/// an answer is read here. `Ok(None)`: no such file; `outside_root` when it leads out.
pub(crate) fn read_in_root(root: &Root, path: &Path) -> Result<Option<Vec<u8>>, ToolError> {
    use crate::edits::fs;
    let shown = root.relative(path);
    let real = root.confine(path)?;
    let moved = |e: &std::io::Error| {
        ToolError::new(
            Code::OutsideRoot,
            format!("{shown} changed to lead through a symbolic link ({e}); not read"),
        )
        .with_data(json!({"file": shown, "root": root.path()}))
    };
    let rel = real.strip_prefix(root.path()).map_err(|_| {
        ToolError::new(
            Code::OutsideRoot,
            format!("{shown} is outside the workspace root"),
        )
    })?;
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Err(ToolError::invalid(format!(
            "{shown} is a folder, not a file"
        )));
    };
    let dir = match fs::walk(root.path(), parent) {
        Ok(Some(dir)) => dir,
        Ok(None) => return Ok(None),
        Err(e) if fs::is_symlink_error(&e) => return Err(moved(&e)),
        Err(e) => return Err(ToolError::io("read", &shown, &e)),
    };
    match dir.read(name) {
        Ok(bytes) => Ok(bytes),
        Err(e) if fs::is_symlink_error(&e) => Err(moved(&e)),
        Err(e) => Err(ToolError::io("read", &shown, &e)),
    }
}

/// A file's text as `read_in_root` reads it (invalid UTF-8 replaced): `None` when it is missing
/// or cannot be read, `outside_root` when it leads out.
pub(crate) fn text_in_root(root: &Root, path: &Path) -> Result<Option<String>, ToolError> {
    Ok(
        read_in_root(root, path)?.map(|b| match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
    )
}

/// What a `FileCache` found of one file.
enum Read {
    Text(String, text::LineIndex),
    /// Missing, unreadable, or not a file path: a location keeps the server's position.
    Unread,
    /// Outside the root: never read, and said so on its locations.
    Outside,
}

/// Reads each file a result mentions once (inside the root only: `read_in_root`), to give
/// code-point columns and source lines.
pub(super) struct FileCache<'a> {
    root: &'a Root,
    snap: Option<&'a Snapshot>,
    encoding: text::Encoding,
    files: HashMap<Url, Read>,
    /// Each location's file as the answer names it, per URI (hundreds of locations name a few
    /// files).
    names: HashMap<Url, String>,
}

impl<'a> FileCache<'a> {
    pub(super) fn new(root: &'a Root, snap: &'a Snapshot) -> Self {
        FileCache {
            root,
            snap: Some(snap),
            encoding: snap.encoding,
            files: HashMap::new(),
            names: HashMap::new(),
        }
    }

    pub(super) fn empty(root: &'a Root, encoding: text::Encoding) -> Self {
        FileCache {
            root,
            snap: None,
            encoding,
            files: HashMap::new(),
            names: HashMap::new(),
        }
    }

    /// What can be had of the file at `uri` (not the leased snapshot), read once.
    fn read(&mut self, uri: &Url) -> &Read {
        let root = self.root;
        self.files.entry(uri.clone()).or_insert_with(|| {
            let Ok(path) = uri.to_file_path() else {
                return Read::Unread;
            };
            match text_in_root(root, &path) {
                Ok(Some(text)) => {
                    let index = text::LineIndex::new(&text);
                    Read::Text(text, index)
                }
                Ok(None) => Read::Unread,
                Err(e) if e.code == Code::OutsideRoot => {
                    tracing::debug!(file = %path.display(), "a location outside the root: not read");
                    Read::Outside
                }
                Err(e) => {
                    tracing::debug!(file = %path.display(), "a location's file not read: {}", e.message);
                    Read::Unread
                }
            }
        })
    }

    /// The text of the file at `uri` (the leased snapshot's, else the disk's inside the root)
    /// and its lines.
    pub(super) fn text(&mut self, uri: &Url) -> Option<(&str, &text::LineIndex)> {
        if let Some(snap) = self.snap.filter(|s| s.uri == *uri) {
            return Some((&snap.text, &snap.index));
        }
        match self.read(uri) {
            Read::Text(text, index) => Some((text.as_str(), index)),
            Read::Unread | Read::Outside => None,
        }
    }

    pub(super) fn loc(&mut self, uri: &Url, r: crate::lsp::wire::WireRange) -> Option<Loc> {
        let file = match self.names.get(uri) {
            Some(f) => f.clone(),
            None => {
                let f = self.root.relative(&uri.to_file_path().ok()?);
                self.names.insert(uri.clone(), f.clone());
                f
            }
        };
        if let Some(snap) = self.snap.filter(|s| s.uri == *uri) {
            let (line, column, end_line, end_column) = snap.range(r);
            let text = snap.line(line).unwrap_or("").trim().to_string();
            return Some(Loc {
                file,
                line,
                column,
                end_line,
                end_column,
                text,
                text_omitted: None,
            });
        }
        let encoding = self.encoding;
        Some(match self.read(uri) {
            Read::Text(text, index) => {
                let (line, column) =
                    text::from_wire(text, index, r.start.line, r.start.character, encoding);
                let (end_line, end_column) =
                    text::from_wire(text, index, r.end.line, r.end.character, encoding);
                let src = index.line(text, r.start.line as usize).unwrap_or("");
                Loc {
                    file,
                    line,
                    column,
                    end_line,
                    end_column,
                    text: src.trim().to_string(),
                    text_omitted: None,
                }
            }
            // The server's position as it gave it (+ 1): columns cannot be converted unread.
            read => Loc {
                file,
                line: r.start.line.saturating_add(1),
                column: r.start.character.saturating_add(1),
                end_line: r.end.line.saturating_add(1),
                end_column: r.end.character.saturating_add(1),
                text: String::new(),
                text_omitted: matches!(read, Read::Outside).then_some(TextOmitted::OutsideRoot),
            },
        })
    }
}
