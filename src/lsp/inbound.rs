//! Serving a server's own messages: published diagnostics, `$/progress`, log messages (ready
//! markers), and answers to its requests (configuration, registrations, `workspace/applyEdit`).

use std::sync::Arc;

use lsp_types as lt;
use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use url::Url;

use super::client::{Published, State};
use super::requests::{convert_diag, workspace_edit};
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
}

pub(super) async fn serve_inbound(mut inbound: mpsc::UnboundedReceiver<Inbound>, inbox: Inbox) {
    let Inbox {
        transport,
        state,
        diag_tx,
        progress_tx,
        settings,
        root_uri,
        ready_marker,
    } = inbox;
    while let Some(msg) = inbound.recv().await {
        if let Ok(mut l) = state.last_inbound.lock() {
            *l = Some(Instant::now());
        }
        if tracing::enabled!(tracing::Level::TRACE) {
            tracing::trace!(server = %transport.name(), "inbound {msg:?}");
        }
        match msg {
            Inbound::Notification { method, params } => match method.as_str() {
                "textDocument/publishDiagnostics" => {
                    let Ok(p) = serde_json::from_value::<lt::PublishDiagnosticsParams>(params)
                    else {
                        tracing::debug!("bad publishDiagnostics");
                        continue;
                    };
                    let seq = match state.publish_seq.lock() {
                        Ok(mut s) => {
                            *s += 1;
                            *s
                        }
                        Err(_) => continue,
                    };
                    let published = Published {
                        version: p.version,
                        diags: Arc::new(p.diagnostics.into_iter().map(convert_diag).collect()),
                        seq,
                    };
                    if let Ok(mut d) = state.diags.lock() {
                        d.insert(p.uri, published);
                    }
                    diag_tx.send_replace(seq);
                }
                "$/progress" => {
                    let token = match params.get("token") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => continue,
                    };
                    let value = params.get("value");
                    let kind = value.and_then(|v| v.get("kind")).and_then(Value::as_str);
                    if let Ok(mut p) = state.progress.lock() {
                        match kind {
                            Some("begin") => {
                                let title = value
                                    .and_then(|v| v.get("title"))
                                    .and_then(Value::as_str)
                                    .unwrap_or("working")
                                    .to_string();
                                p.insert(token.clone(), title);
                                state
                                    .begun
                                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                            }
                            Some("end") => {
                                let title = p.remove(&token);
                                if let (Some(t), Some(m)) = (title, ready_marker.as_deref())
                                    && t.contains(m)
                                {
                                    state
                                        .marker_seen
                                        .store(true, std::sync::atomic::Ordering::SeqCst);
                                }
                            }
                            _ => {}
                        }
                    }
                    progress_tx.send_modify(|n| *n += 1);
                    let to = state
                        .partials
                        .lock()
                        .ok()
                        .and_then(|p| p.get(&token).cloned());
                    if let Some(tx) = to {
                        let _ = tx.send((token, value.cloned().unwrap_or(Value::Null)));
                    }
                }
                "window/logMessage" | "window/showMessage" => {
                    let text = params.get("message").and_then(Value::as_str).unwrap_or("");
                    if ready_marker.as_deref().is_some_and(|m| text.contains(m)) {
                        state
                            .marker_seen
                            .store(true, std::sync::atomic::Ordering::SeqCst);
                        progress_tx.send_modify(|n| *n += 1);
                    }
                    tracing::debug!(server = %transport.name(), "{method}: {text}");
                }
                _ => {}
            },
            Inbound::Request { id, method, params } if method == "workspace/applyEdit" => {
                let sink = state.edit_sink.lock().ok().and_then(|s| s.clone());
                let ops = params.get("edit").cloned().map(workspace_edit);
                match (sink, ops) {
                    (Some(sink), Some(Ok(ops))) => {
                        let (tx, rx) = tokio::sync::oneshot::channel();
                        if sink.send((ops, tx)).is_err() {
                            transport.respond(id, Ok(json!({"applied": false, "failureReason": "lspgate is not applying edits now"})));
                            continue;
                        }
                        let t = transport.clone();
                        tokio::spawn(async move {
                            let applied = rx.await.unwrap_or(false);
                            t.respond(id, Ok(json!({"applied": applied})));
                        });
                    }
                    (_, Some(Err(e))) => {
                        transport.respond(id, Ok(json!({"applied": false, "failureReason": e})))
                    }
                    _ => transport.respond(
                        id,
                        Ok(json!({
                            "applied": false,
                            "failureReason": "lspgate applies edits only through its edit tools"
                        })),
                    ),
                }
            }
            Inbound::Request { id, method, params } => {
                let reply = answer_server_request(&method, &params, &state, &settings, &root_uri);
                transport.respond(id, reply);
            }
        }
    }
}

fn answer_server_request(
    method: &str,
    params: &Value,
    state: &State,
    settings: &Value,
    root_uri: &Url,
) -> Result<Value, (i64, String)> {
    match method {
        "workspace/configuration" => {
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
            Ok(Value::Array(answers))
        }
        "window/workDoneProgress/create" => Ok(Value::Null),
        "client/registerCapability" => {
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
                    state
                        .workspace_diagnostics
                        .store(true, std::sync::atomic::Ordering::SeqCst);
                }
                if let Ok(mut r) = state.registrations.lock() {
                    r.insert(id.to_string(), m.to_string());
                }
            }
            Ok(Value::Null)
        }
        "client/unregisterCapability" => {
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
        | "workspace/codeLens/refresh" => Ok(Value::Null),
        _ => Err((-32601, format!("lspgate does not handle {method}"))),
    }
}
