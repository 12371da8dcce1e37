//! A client's open documents: its own (never another client's, never what the servers hold),
//! whole texts at the client's versions (`textDocumentSync` is full). Whether a document is
//! dirty, its buffer differing from the disk, is asked of the disk each time: a write from
//! anywhere can make a buffer clean or dirty.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::Face;
use super::positions::Text;
use crate::edits::fs::read_in_root;
use crate::watch::FileVersion;
use crate::workspace::Root;

/// A document the client has open.
#[derive(Clone)]
pub(crate) struct Doc {
    pub path: PathBuf,
    pub version: i64,
    pub text: Text,
    /// The file's version when this text was last compared with it, and whether they differed
    /// (shared by the copies of this version of the document).
    compared: Arc<Mutex<Option<(FileVersion, bool)>>>,
}

impl Doc {
    /// The buffer, when it differs from the file on disk (the disk's content is what every
    /// server holds unless a request of this client's is being answered). The file is read
    /// again only when its version moved since the last comparison, inside `root` only
    /// (`read_in_root`: never through a link out, never a FIFO that would block).
    pub(crate) fn unsaved(&self, root: &Root) -> Option<Arc<str>> {
        let now = std::fs::metadata(&self.path)
            .ok()
            .map(|m| FileVersion::of(&m));
        let known = self.compared.lock().ok().and_then(|c| *c);
        let differs = match (now, known) {
            (Some(now), Some((then, differs))) if now == then => differs,
            _ => {
                let differs = !matches!(
                    read_in_root(root, &self.path),
                    Ok(Some(disk)) if disk == self.text.text.as_bytes()
                );
                if let (Some(now), Ok(mut c)) = (now, self.compared.lock()) {
                    *c = Some((now, differs));
                }
                differs
            }
        };
        differs.then(|| self.text.text.clone())
    }
}

/// The client's open documents by URI.
#[derive(Default)]
pub(crate) struct Docs {
    open: Mutex<HashMap<String, Doc>>,
}

impl Docs {
    pub(crate) fn get(&self, uri: &str) -> Option<Doc> {
        self.open.lock().ok()?.get(uri).cloned()
    }

    pub(crate) fn uris(&self) -> Vec<String> {
        self.open
            .lock()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// `didOpen`, `didChange`, `didClose`, `didSave`: the client's documents follow, and the
/// document's diagnostics are brought up to date for the client.
pub(crate) fn changed(face: &Arc<Face>, method: &str, params: &Value) {
    let Some(uri) = params
        .pointer("/textDocument/uri")
        .and_then(Value::as_str)
        .map(str::to_string)
    else {
        return;
    };
    let version = params
        .pointer("/textDocument/version")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let text = match method {
        "textDocument/didOpen" => params.pointer("/textDocument/text"),
        "textDocument/didChange" => params
            .get("contentChanges")
            .and_then(Value::as_array)
            .and_then(|c| c.last())
            .and_then(|c| c.get("text")),
        _ => None,
    }
    .and_then(Value::as_str);
    let Ok(mut open) = face.docs.open.lock() else {
        return;
    };
    // A document opened (again) gets its diagnostics whatever it was told before.
    if matches!(method, "textDocument/didOpen" | "textDocument/didClose")
        && let Ok(mut sent) = face.sent.lock()
    {
        sent.remove(&uri);
    }
    match method {
        "textDocument/didClose" => {
            open.remove(&uri);
            return;
        }
        "textDocument/didSave" => {}
        _ => {
            let Some(text) = text else {
                return;
            };
            // A document outside the root is the client's business, not the servers'.
            let Ok(path) = face.engine.document_path(&uri) else {
                return;
            };
            if method == "textDocument/didOpen" {
                let id = params
                    .pointer("/textDocument/languageId")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                super::announce::opened(face, path.clone(), id);
            }
            open.insert(
                uri.clone(),
                Doc {
                    path,
                    version,
                    text: Text::new(Arc::from(text)),
                    compared: Arc::default(),
                },
            );
        }
    }
    drop(open);
    super::diagnostics::refresh(face.clone(), uri);
}
