//! Work-done progress shown to a client while one of its requests waits for a server to be
//! ready (`ops::forward::Ready::Until`): begun once the server is seen still at work (never for
//! a server ready at once), a report each time what it does changes, ended when the request is
//! answered or given up. On the client's own `workDoneToken` when the request carries one,
//! else on a token created with `window/workDoneProgress/create`, and only for a client that
//! announced `window.workDoneProgress`: otherwise nothing is shown, and the request still waits.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Face;
use crate::registry::Server;

/// One request's progress.
pub(super) struct Progress {
    tx: Option<mpsc::UnboundedSender<String>>,
}

impl Progress {
    /// Progress for a request with `params`, shown if the client can be shown it.
    pub(super) fn new(face: &Arc<Face>, params: &Value) -> Progress {
        let token = params.get("workDoneToken").cloned();
        if token.is_none() && !face.work_done_progress.load(Ordering::Acquire) {
            return Progress { tx: None };
        }
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(show(face.clone(), token, rx));
        Progress { tx: Some(tx) }
    }

    /// `server` is still `doing` something: told to the client.
    pub(super) fn busy(&self, server: &Server, doing: &str) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(format!("{}: {doing}", server.name));
        }
    }
}

/// Shows what `rx` says until it closes (the request answered or dropped).
async fn show(face: Arc<Face>, token: Option<Value>, mut rx: mpsc::UnboundedReceiver<String>) {
    let Some(first) = rx.recv().await else {
        return; // ready at once: nothing to show
    };
    let token = match token {
        Some(t) => t,
        None => {
            let n = face.next_id.fetch_add(1, Ordering::Relaxed);
            let t = json!(format!("lspgate-ready-{n}"));
            if face
                .ask("window/workDoneProgress/create", json!({"token": t}))
                .await
                .is_none()
            {
                // Refused, or not answered: the request waits without showing it.
                while rx.recv().await.is_some() {}
                return;
            }
            t
        }
    };
    let progress = |value: Value| {
        face.notify("$/progress", json!({"token": token, "value": value}));
    };
    progress(json!({
        "kind": "begin",
        "title": "Waiting for the language server to be ready",
        "message": first,
        "cancellable": false,
    }));
    let mut last = first;
    while let Some(message) = rx.recv().await {
        if message != last {
            progress(json!({"kind": "report", "message": message}));
            last = message;
        }
    }
    progress(json!({"kind": "end"}));
}
