//! Serving a server's own messages: published diagnostics, `$/progress`, log messages (ready
//! markers), and answers to its requests (configuration, registrations, `workspace/applyEdit`).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use lsp_types as lt;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use url::Url;

use super::convert::{convert_diag, workspace_edit};
use super::state::{Published, State};
use super::transport::{Inbound, Transport};
use super::watched;

/// What the task that serves a server's own messages needs.
pub(super) struct Inbox {
    pub(super) transport: Arc<Transport>,
    pub(super) state: Arc<State>,
    pub(super) diag_tx: watch::Sender<u64>,
    pub(super) progress_tx: watch::Sender<u64>,
    pub(super) settings: Value,
    pub(super) root_uri: Url,
    pub(super) ready_marker: Option<String>,
    /// What its diagnostics may quote.
    pub(super) inside: super::Inside,
}

/// Serves a server's own messages, in order, until its transport closes.
pub(super) async fn serve_inbound(mut inbound: mpsc::UnboundedReceiver<Inbound>, inbox: Inbox) {
    while let Some(msg) = inbound.recv().await {
        if let Ok(mut l) = inbox.state.last_inbound.lock() {
            *l = Some(Instant::now());
        }
        if tracing::enabled!(tracing::Level::TRACE) {
            tracing::trace!(server = %inbox.transport.name(), "inbound {msg:?}");
        }
        match msg {
            Inbound::Notification { method, params } => match method.as_str() {
                "textDocument/publishDiagnostics" => inbox.publish_diagnostics(params),
                "$/progress" => inbox.progress(&params),
                "window/logMessage" | "window/showMessage" => inbox.log_message(&method, &params),
                _ => {}
            },
            Inbound::Request { id, method, params } if method == "workspace/applyEdit" => {
                inbox.apply_edit(id, &params);
            }
            Inbound::Request { id, method, params } => {
                let reply = answer_server_request(
                    &method,
                    &params,
                    &inbox.state,
                    &inbox.settings,
                    &inbox.root_uri,
                );
                inbox.transport.respond(id, reply);
            }
        }
    }
}

impl Inbox {
    /// `textDocument/publishDiagnostics`: stores the file's diagnostics, numbered, and wakes
    /// whoever waits for them.
    fn publish_diagnostics(&self, params: Value) {
        let Ok(p) = serde_json::from_value::<lt::PublishDiagnosticsParams>(params) else {
            tracing::debug!("bad publishDiagnostics");
            return;
        };
        if let Some(view) = self.state.view.get()
            && !view.admits_push(&p.uri, p.version)
        {
            tracing::debug!(uri = %p.uri, "a push computed on an overlay, dropped");
            return;
        }
        let seq = match self.state.publish_seq.lock() {
            Ok(mut s) => {
                *s += 1;
                *s
            }
            Err(_) => return,
        };
        let published = Published {
            version: p.version,
            diags: Arc::new(super::quotes::confine(
                &p.uri,
                p.diagnostics.into_iter().map(convert_diag).collect(),
                &self.inside,
            )),
            seq,
        };
        if let Ok(mut d) = self.state.diags.lock() {
            d.insert(p.uri, published);
        }
        self.diag_tx.send_replace(seq);
    }

    /// `$/progress`: tracks work begun and ended (the ready marker among their titles), and
    /// routes partial results to whoever handed out the token.
    fn progress(&self, params: &Value) {
        let token = match params.get("token") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => return,
        };
        let value = params.get("value");
        let kind = value.and_then(|v| v.get("kind")).and_then(Value::as_str);
        if let Ok(mut p) = self.state.progress.lock() {
            match kind {
                Some("begin") => {
                    let title = value
                        .and_then(|v| v.get("title"))
                        .and_then(Value::as_str)
                        .unwrap_or("working")
                        .to_string();
                    p.insert(token.clone(), title);
                    self.state.begun.fetch_add(1, Ordering::SeqCst);
                }
                Some("end") => {
                    let title = p.remove(&token);
                    if let (Some(t), Some(m)) = (title, self.ready_marker.as_deref())
                        && t.contains(m)
                    {
                        self.state.marker_seen.store(true, Ordering::SeqCst);
                    }
                }
                _ => {}
            }
        }
        self.progress_tx.send_modify(|n| *n += 1);
        let to = self
            .state
            .partials
            .lock()
            .ok()
            .and_then(|p| p.get(&token).cloned());
        if let Some(tx) = to {
            let _ = tx.send((token, value.cloned().unwrap_or(Value::Null)));
        }
    }

    /// `window/logMessage`, `window/showMessage`: logged, passed to front ends listening
    /// (`LspClient::messages`); the ready marker noted.
    fn log_message(&self, method: &str, params: &Value) {
        let text = params.get("message").and_then(Value::as_str).unwrap_or("");
        if self
            .ready_marker
            .as_deref()
            .is_some_and(|m| text.contains(m))
        {
            self.state.marker_seen.store(true, Ordering::SeqCst);
            self.progress_tx.send_modify(|n| *n += 1);
        }
        tracing::debug!(server = %self.transport.name(), "{method}: {text}");
        if let Some(tx) = self.state.messages.get() {
            let _ = tx.send((method.to_string(), params.clone()));
        }
    }

    /// `workspace/applyEdit`: handed to the edit sink of the command running (if any), which
    /// answers whether it applied it.
    fn apply_edit(&self, id: Value, params: &Value) {
        let raw = self.state.raw_edit_sink.lock().ok().and_then(|s| s.clone());
        if let Some(raw) = raw {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let refused = json!({"applied": false, "failureReason": "the client is gone"});
            if raw.send((params.clone(), tx)).is_err() {
                self.transport.respond(id, Ok(refused));
                return;
            }
            let t = self.transport.clone();
            tokio::spawn(async move {
                t.respond(id, Ok(rx.await.unwrap_or(refused)));
            });
            return;
        }
        let sink = self.state.edit_sink.lock().ok().and_then(|s| s.clone());
        let ops = params.get("edit").cloned().map(workspace_edit);
        match (sink, ops) {
            (Some(sink), Some(Ok(ops))) => {
                let (tx, rx) = tokio::sync::oneshot::channel();
                if sink.send((ops, tx)).is_err() {
                    self.transport.respond(id, Ok(json!({"applied": false, "failureReason": "lspgate is not applying edits now"})));
                    return;
                }
                let t = self.transport.clone();
                tokio::spawn(async move {
                    let applied = rx.await.unwrap_or(false);
                    t.respond(id, Ok(json!({"applied": applied})));
                });
            }
            (_, Some(Err(e))) => self
                .transport
                .respond(id, Ok(json!({"applied": false, "failureReason": e}))),
            _ => self.transport.respond(
                id,
                Ok(json!({
                    "applied": false,
                    "failureReason": "lspgate applies edits only through its edit tools"
                })),
            ),
        }
    }
}

/// Answers a server's request other than `workspace/applyEdit` (a JSON-RPC error for those
/// lspgate does not handle).
fn answer_server_request(
    method: &str,
    params: &Value,
    state: &State,
    settings: &Value,
    root_uri: &Url,
) -> Result<Value, (i64, String)> {
    match method {
        "workspace/configuration" => Ok(configuration(params, settings)),
        "window/workDoneProgress/create" => Ok(Value::Null),
        "client/registerCapability" => {
            register(params, state);
            Ok(Value::Null)
        }
        "client/unregisterCapability" => {
            unregister(params, state);
            Ok(Value::Null)
        }
        "workspace/applyEdit" => Ok(json!({
            "applied": false,
            "failureReason": "lspgate applies edits only through its edit tools"
        })),
        "window/showMessageRequest" => Ok(Value::Null),
        "window/showDocument" => Ok(json!({"success": false})),
        "workspace/workspaceFolders" => Ok(json!([{"uri": root_uri, "name": "root"}])),
        "workspace/diagnostic/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh"
        | "workspace/codeLens/refresh" => {
            if let Some(tx) = state.refreshes.get() {
                let _ = tx.send(method.to_string());
            }
            Ok(Value::Null)
        }
        _ => Err((-32601, format!("lspgate does not handle {method}"))),
    }
}

/// `workspace/configuration`: each item's section of the server's settings (all of them for
/// an item without one).
fn configuration(params: &Value, settings: &Value) -> Value {
    let items = params
        .get("items")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let answers: Vec<Value> = items
        .iter()
        .map(|item| match item.get("section").and_then(Value::as_str) {
            Some(section) => section
                .split('.')
                .try_fold(settings, |v, k| v.get(k))
                .cloned()
                .unwrap_or(Value::Null),
            None => settings.clone(),
        })
        .collect();
    Value::Array(answers)
}

/// `client/registerCapability`: remembers each registration (file watchers parsed, workspace
/// diagnostics noted).
fn register(params: &Value, state: &State) {
    for reg in params
        .get("registrations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (Some(id), Some(m)) = (
            reg.get("id").and_then(Value::as_str),
            reg.get("method").and_then(Value::as_str),
        ) else {
            continue;
        };
        if m == "workspace/didChangeWatchedFiles"
            && let Some(opts) = reg.get("registerOptions")
            && let Ok(mut w) = state.watchers.lock()
        {
            w.insert(id.to_string(), watched::parse(opts));
        }
        if m == "textDocument/diagnostic"
            && reg
                .get("registerOptions")
                .and_then(|o| o.get("workspaceDiagnostics"))
                .and_then(Value::as_bool)
                == Some(true)
        {
            state.workspace_diagnostics.store(true, Ordering::SeqCst);
        }
        if let Ok(mut r) = state.registrations.lock() {
            r.insert(id.to_string(), m.to_string());
        }
    }
}

/// `client/unregisterCapability` (either spelling of its list): forgets the registrations.
fn unregister(params: &Value, state: &State) {
    let list = params
        .get("unregisterations")
        .or_else(|| params.get("unregistrations"))
        .and_then(Value::as_array);
    for u in list.into_iter().flatten() {
        if let Some(id) = u.get("id").and_then(Value::as_str) {
            if let Ok(mut r) = state.registrations.lock() {
                r.remove(id);
            }
            if let Ok(mut w) = state.watchers.lock() {
                w.remove(id);
            }
        }
    }
}
