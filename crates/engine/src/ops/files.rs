//! Reading the files an answer mentions, inside the root only (`read_in_root`: confined, then
//! reached without following a link), each once per answer (`FileCache`: code-point columns and
//! source lines for locations).
//!
//! Every file content read for an answer goes through here: a location's source line, fallback
//! symbols, `explain_failure`'s context, `shrink`'s original, `check`'s reads of files and
//! tsconfigs. A location outside the root keeps its file and the server's position, but no `text`,
//! only `text_omitted: outside_root`: nothing outside the root is read to build an answer. A text
//! read so is kept (`KEPT`, 8 MiB at most) and given again only while a `stat` of its path finds
//! the very same settled version (device, inode, size, change time), so a kept text is always what
//! a confined read would give.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use url::Url;

use super::types::{Loc, TextOmitted};
use crate::documents::Snapshot;
use crate::error::{Code, ToolError};
use crate::text;
use crate::watch::FileVersion;
use crate::workspace::Root;

pub(crate) use crate::edits::fs::{read_in_root, text_in_root};

/// `read_in_root` of a file that must exist (`shown` as the agent named it): `file_not_found`
/// when it does not.
pub(crate) fn read_existing(root: &Root, path: &Path, shown: &str) -> Result<Vec<u8>, ToolError> {
    read_in_root(root, path)?.ok_or_else(|| {
        let gone = std::io::Error::from(std::io::ErrorKind::NotFound);
        ToolError::io("read", shown, &gone)
    })
}

/// Texts read inside a root, with their lines, kept while their file is the same (`KEEP_BYTES`
/// at most): an answer naming a file asked about before reads one `stat` of it instead of a
/// confined walk, a read and an index. A text is kept only when its file's version was the
/// same before and after the read and had settled (`FileVersion::settled`), and is given only
/// while the path still leads to that very version (the same device, inode, size and change
/// time: a path that changed to lead elsewhere, out of the root included, has another), so it
/// is always the content a confined read would give.
type Kept = HashMap<(PathBuf, PathBuf), (FileVersion, Lines)>;

/// A text and its lines.
type Lines = (Arc<str>, Arc<text::LineIndex>);

/// How many bytes of text `KEPT` holds at most.
const KEEP_BYTES: usize = 8 << 20;

fn kept() -> &'static Mutex<(Kept, usize)> {
    static KEPT: OnceLock<Mutex<(Kept, usize)>> = OnceLock::new();
    KEPT.get_or_init(Mutex::default)
}

/// `text_in_root` with its lines, from `KEPT` while the file is the same.
fn kept_text_in_root(root: &Root, path: &Path) -> Result<Option<Lines>, ToolError> {
    let key = (root.path().to_path_buf(), path.to_path_buf());
    let version = || std::fs::metadata(path).ok().map(|m| FileVersion::of(&m));
    let before = version();
    if let Some(v) = before
        && let Ok(k) = kept().lock()
        && let Some((kv, lines)) = k.0.get(&key)
        && *kv == v
    {
        return Ok(Some(lines.clone()));
    }
    let Some(text) = text_in_root(root, path)? else {
        return Ok(None);
    };
    let text: Arc<str> = Arc::from(text);
    let index = Arc::new(text::LineIndex::new(&text));
    if let Some(v) = before
        && version() == before
        && v.settled(SystemTime::now())
        && let Ok(mut k) = kept().lock()
    {
        if k.1 + text.len() > KEEP_BYTES {
            k.0.clear();
            k.1 = 0;
        }
        if text.len() <= KEEP_BYTES / 4 {
            k.1 += text.len();
            if let Some((_, (old, _))) = k.0.insert(key, (v, (text.clone(), index.clone()))) {
                k.1 -= old.len();
            }
        }
    }
    Ok(Some((text, index)))
}

/// What a `FileCache` found of one file.
enum Read {
    Text(Arc<str>, Arc<text::LineIndex>),
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
            match kept_text_in_root(root, &path) {
                Ok(Some((text, index))) => Read::Text(text, index),
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
            Read::Text(text, index) => Some((text, index)),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept text is given while its file is the same, and never once the path leads
    /// elsewhere: rewritten, or replaced by a link out of the root.
    #[test]
    fn a_kept_text_follows_its_file_and_never_leads_out() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.go"), "package secret\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let file = root.path().join("a.go");
        std::fs::write(&file, "package a\n").unwrap();
        // Settled: its change time is more than `SETTLE` ago when it is read.
        std::thread::sleep(crate::watch::SETTLE + std::time::Duration::from_millis(200));
        let read = |p: &Path| kept_text_in_root(&root, p).map(|t| t.map(|(t, _)| t.to_string()));
        assert_eq!(read(&file).unwrap().as_deref(), Some("package a\n"));
        let key = (root.path().to_path_buf(), file.clone());
        assert!(kept().lock().unwrap().0.contains_key(&key), "kept");
        assert_eq!(read(&file).unwrap().as_deref(), Some("package a\n"));
        std::fs::write(&file, "package b\n").unwrap();
        assert_eq!(read(&file).unwrap().as_deref(), Some("package b\n"));
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.go"), &file).unwrap();
        let e = read(&file).unwrap_err();
        assert_eq!(e.code, Code::OutsideRoot, "{}", e.message);
    }
}
