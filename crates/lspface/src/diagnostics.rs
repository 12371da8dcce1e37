//! Diagnostics for a client of the face, merged per document from every server of the root
//! (each keeps its `source`), in the client's encoding. A document the client has open gets
//! those of its content (`refresh`): its buffer's, analysed as an overlay, while it differs
//! from the disk, else the disk's; pulled where the server offers it, else pushed; asked again
//! after each change of the client's, each change on disk (whoever wrote it: importers follow
//! their modules) and each server restart. What servers push for documents the client does
//! not have open is not its business (a direct server publishes for open documents only).
//! The same diagnostics are not sent twice.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::Face;
use super::positions::{Converter, Text};
use crate::text::Encoding;

/// How long a burst of changes settles before the buffer is analysed.
const SETTLE: Duration = Duration::from_millis(150);

/// Keeps the client's open documents' diagnostics up to date (server restarts, changes on
/// disk, the servers' refresh requests) and passes on the servers' messages, until the
/// connection closes.
pub(crate) async fn pump(face: Arc<Face>) {
    let mut closed = face.closed.subscribe();
    let mut events = face.engine.shared().events().follow();
    // Per server: the process last seen (a restart makes a new one).
    let mut seen: HashMap<String, usize> = HashMap::new();
    // Per process: its refresh requests.
    let mut refreshes: HashMap<usize, tokio::sync::broadcast::Receiver<String>> = HashMap::new();
    // Per process: its log and shown messages, passed on (this client uses the server).
    let mut messages: HashMap<usize, tokio::sync::broadcast::Receiver<(String, Value)>> =
        HashMap::new();
    loop {
        let mut restarted = false;
        for server in face.engine.registry().running() {
            if !face.only.admits(&server) {
                continue;
            }
            let client = server.client();
            let process = Arc::as_ptr(&client) as usize;
            if seen
                .insert(server.name.clone(), process)
                .is_some_and(|p| p != process)
            {
                restarted = true;
            }
            refreshes
                .entry(process)
                .or_insert_with(|| client.refreshes());
            messages.entry(process).or_insert_with(|| client.messages());
        }
        let live: Vec<usize> = seen.values().copied().collect();
        refreshes.retain(|p, _| live.contains(p));
        messages.retain(|p, _| live.contains(p));
        if restarted {
            // The new process has none of the documents open: open the client's again.
            for uri in face.docs.uris() {
                refresh(face.clone(), uri);
            }
        }
        let asked = async {
            if refreshes.is_empty() {
                return std::future::pending::<Option<String>>().await;
            }
            let next = refreshes
                .values_mut()
                .map(|rx| Box::pin(async move { rx.recv().await.ok() }));
            futures::future::select_all(next).await.0
        };
        let said = async {
            if messages.is_empty() {
                return std::future::pending::<Option<(String, Value)>>().await;
            }
            let next = messages.values_mut().map(|rx| {
                Box::pin(async move {
                    loop {
                        match rx.recv().await {
                            Ok(m) => return Some(m),
                            // Too many to keep up with: the ones missed are lost, not the rest.
                            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                            Err(_) => return None,
                        }
                    }
                })
            });
            futures::future::select_all(next).await.0
        };
        tokio::select! {
            message = said => {
                if let Some((method, params)) = message {
                    face.notify(&method, params);
                }
            }
            method = asked => {
                if let Some(method) = method {
                    refreshed(&face, method);
                }
            }
            event = events.recv() => {
                // A change on disk may change any open document's findings; a lagging feed
                // may have missed one.
                let disk = match &event {
                    Ok(e) => e.kind == "file_changed" || e.kind == "server_restarted",
                    Err(_) => true,
                };
                if disk {
                    for uri in face.docs.uris() {
                        refresh(face.clone(), uri);
                    }
                }
            }
            // Servers that start later are picked up.
            () = tokio::time::sleep(Duration::from_secs(1)) => {}
            _ = closed.wait_for(|c| *c) => return,
        }
    }
}

/// A server asked its client to refresh something: diagnostics are the face's own to ask
/// again (for every document the client has open); the rest (inlay hints, code lenses, …) is
/// asked of the client, whose answer does not matter.
fn refreshed(face: &Arc<Face>, method: String) {
    if method == "workspace/diagnostic/refresh" {
        for uri in face.docs.uris() {
            refresh(face.clone(), uri);
        }
        return;
    }
    let face = face.clone();
    tokio::spawn(async move {
        face.ask(&method, Value::Null).await;
    });
}

/// Brings a document's diagnostics up to date for the client after it opened or changed it:
/// its buffer's, computed on it, when unsaved; else the servers' for the disk, the document
/// opened in each server so that they publish.
pub(crate) fn refresh(face: Arc<Face>, uri: String) {
    tokio::spawn(async move {
        let before = face.docs.get(&uri).map(|d| d.version);
        tokio::time::sleep(SETTLE).await;
        let Some(doc) = face.docs.get(&uri) else {
            return;
        };
        // A later change has its own refresh.
        if Some(doc.version) != before {
            return;
        }
        let unsaved = doc.unsaved(face.engine.root());
        let found = face
            .engine
            .document_diagnostics(&doc.path, unsaved.as_deref(), &|name, languages| {
                face.only.admits_entry(name, languages)
            })
            .await;
        // Changed meanwhile: this is not the document's content any more.
        if face.docs.get(&uri).map(|d| d.version) != Some(doc.version) {
            return;
        }
        let mut all = Vec::new();
        for (snap, diags) in found {
            let mut diags = Value::Array(diags);
            face.aliases().to_client(&mut diags);
            convert(&face, snap.encoding, &doc.text, &mut diags);
            all.extend(diags.as_array().cloned().unwrap_or_default());
        }
        send(&face, &uri, merged(all), Some(doc.version));
    });
}

/// A document's diagnostics from its servers, merged as every answer's are
/// (`ops::merge_by`): by position, the most severe first, without repeats.
fn merged(all: Vec<Value>) -> Vec<Value> {
    let place = |d: &Value| {
        let start = &d["range"]["start"];
        (
            start["line"].as_u64().unwrap_or(0),
            start["character"].as_u64().unwrap_or(0),
            // No severity: the client decides; listed as an error would be.
            d["severity"].as_u64().unwrap_or(1),
        )
    };
    crate::ops::merge_by(all, |a, b| place(a).cmp(&place(b)), |a, b| a == b)
}

/// Converts diagnostics from a server's encoding to the client's.
fn convert(face: &Face, from: Encoding, text: &Text, diags: &mut Value) {
    let none = |_: &str| None;
    Converter {
        from,
        to: face.encoding(),
        document: text,
        text_of: &none,
    }
    .convert(diags);
}

/// Publishes `diagnostics` for `uri` to the client, unless it was told exactly that last.
fn send(face: &Face, uri: &str, diagnostics: Vec<Value>, version: Option<i64>) {
    let diagnostics = Value::Array(face.shape().diagnostics(diagnostics));
    if let Ok(mut sent) = face.sent.lock() {
        if sent.get(uri) == Some(&diagnostics) {
            return;
        }
        sent.insert(uri.to_string(), diagnostics.clone());
    }
    let mut params = json!({"uri": uri, "diagnostics": diagnostics});
    if let Some(v) = version {
        params["version"] = json!(v);
    }
    face.notify("textDocument/publishDiagnostics", params);
}
