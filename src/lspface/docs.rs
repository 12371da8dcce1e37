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

/// A document the client has open.
#[derive(Clone)]
pub struct Doc {
    pub path: PathBuf,
    pub version: i64,
    pub text: Text,
}

impl Doc {
    /// The buffer, when it differs from the file on disk (the disk's content is what every
    /// server holds unless a request of this client's is being answered).
    pub fn unsaved(&self) -> Option<Arc<str>> {
        match std::fs::read(&self.path) {
            Ok(disk) if disk == self.text.text.as_bytes() => None,
            _ => Some(self.text.text.clone()),
        }
    }
}

/// The client's open documents by URI.
#[derive(Default)]
pub struct Docs {
    open: Mutex<HashMap<String, Doc>>,
}

impl Docs {
    pub fn get(&self, uri: &str) -> Option<Doc> {
        self.open.lock().ok()?.get(uri).cloned()
    }

    pub fn uris(&self) -> Vec<String> {
        self.open
            .lock()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// `didOpen`, `didChange`, `didClose`, `didSave`: the client's documents follow, and the
/// document's diagnostics are brought up to date for the client.
pub fn changed(face: &Arc<Face>, method: &str, params: &Value) {
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
            open.insert(
                uri.clone(),
                Doc {
                    path,
                    version,
                    text: Text::new(Arc::from(text)),
                },
            );
        }
    }
    drop(open);
    super::diagnostics::refresh(face.clone(), uri);
}
