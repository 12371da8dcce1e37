//! The client's requests: `initialize` (capabilities, encoding), document requests routed to
//! the document's servers and forwarded as they are (the document at the client's content),
//! `workspace/symbol` from every server once ready, and resolves sent back to the server that
//! made the item (its `data` carries the server's name). Positions are converted both ways.
//!
//! Code actions come from every server, concatenated; completion items and code actions are tagged
//! in `data` with their server for their resolve. Workspace-wide requests wait for readiness
//! however long, cancellable. A document request no server of its language serves is `-32601`.
//! `workspace/executeCommand` goes to the server offering the command, and its
//! `workspace/applyEdit` is relayed to this client. Progress and partial-result tokens are
//! stripped, so an answer comes whole.

use std::sync::Arc;

use serde_json::{Value, json};

use super::caps::{self, announces};
use super::positions::{Converter, Text};
use super::progress::Progress;
use super::{Face, code};
use crate::documents::Snapshot;
use crate::edits::fs::text_in_root;
use crate::error::{Code, ToolError};
use crate::lsp::Cap;
use crate::ops::forward::{Ask, Forwarded, Ready, Route};
use crate::registry::Server;
use crate::text::Encoding;

type Answer = Result<Value, (i64, String)>;

/// The key under which an item's `data` says which server made it.
const TAG: &str = "lspgate";

pub(crate) async fn answer(face: &Arc<Face>, method: &str, params: Value) -> Answer {
    match method {
        "initialize" => super::announce::initialize(face, &params).await,
        "workspace/symbol" => workspace_symbol(face, params).await,
        "completionItem/resolve" | "codeAction/resolve" => resolve(face, method, params).await,
        "workspace/executeCommand" => execute(face, params).await,
        _ => {
            let Some(key) = caps::provider_of(method) else {
                return Err((
                    code::METHOD_NOT_FOUND,
                    format!("lspgate does not serve {method}"),
                ));
            };
            let at = if method.starts_with("callHierarchy/") || method.starts_with("typeHierarchy/")
            {
                "/item/uri"
            } else {
                "/textDocument/uri"
            };
            let uri = params
                .pointer(at)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or((code::INVALID_PARAMS, format!("{method} names no document")))?;
            let serves = |s: &Server| face.only.admits(s) && served(s, method, key);
            document(face, method, &uri, params, serves).await
        }
    }
}

/// Whether server `s` serves `method`: for a request lspgate has a capability of, as the tools
/// ask (dynamic registrations and the config's `allow` list included), else by the provider
/// `key` it announced.
fn served(s: &Server, method: &str, key: &str) -> bool {
    let client = s.client();
    let caps = client.capabilities();
    match Cap::of_method(method) {
        // The standard request only: clangd 14's hints and hierarchy are its own requests.
        Some(Cap::InlayHints) => s.supports(Cap::InlayHints) && announces(caps, key),
        Some(Cap::TypeHierarchy) => {
            s.supports(Cap::TypeHierarchy) && !s.client().legacy_type_hierarchy()
        }
        Some(c) => s.supports(c),
        None if key == "typeHierarchyProvider" => {
            announces(caps, key) && !s.client().legacy_type_hierarchy()
        }
        None => announces(caps, key),
    }
}

/// A request about the document `uri`: forwarded to its servers (code actions: all of them,
/// concatenated), its items tagged with the server that made them.
async fn document(
    face: &Arc<Face>,
    method: &str,
    uri: &str,
    params: Value,
    serves: impl Fn(&Server) -> bool,
) -> Answer {
    let path = face.engine.document_path(uri).map_err(refused)?;
    let overlay = face
        .docs
        .get(uri)
        .and_then(|d| d.unsaved(face.engine.root()));
    let route = if method == "textDocument/codeAction" {
        Route::All
    } else {
        Route::First
    };
    // What depends on the whole workspace waits until the server is ready, however long:
    // LSP has no way to say an answer is partial. The client is shown the wait.
    let progress = Progress::new(face, &params);
    let busy = |s: &Server, doing: &str| progress.busy(s, doing);
    let ready = if workspace_wide(method) {
        Ready::Until(&busy)
    } else {
        Ready::No
    };
    let client = face.encoding();
    let to_server = |snap: &Snapshot| {
        let mut p = params.clone();
        untag(&mut p);
        // Progress and partial results would go to lspgate, not to the client: the whole
        // answer comes back as the response.
        if let Value::Object(m) = &mut p {
            m.remove("workDoneToken");
            m.remove("partialResultToken");
        }
        converter(face, client, snap.encoding, snap).convert(&mut p);
        face.aliases().to_server(&mut p);
        p
    };
    let answers = face
        .engine
        .forward(
            Ask {
                path: &path,
                overlay: overlay.as_deref(),
                method,
                route,
                ready,
                admit: &|name, languages| face.only.admits_entry(name, languages),
            },
            serves,
            to_server,
        )
        .await
        .map_err(|e| match e.code {
            // No server of the document's language serves it: what a direct server that does
            // not offer the method answers.
            Code::NotSupported => (code::METHOD_NOT_FOUND, e.message),
            _ => refused(e),
        })?;
    let mut merged: Option<Value> = None;
    for Forwarded {
        server,
        mut result,
        snap,
    } in answers
    {
        face.aliases().to_client(&mut result);
        converter(face, snap.encoding, client, &snap).convert(&mut result);
        match method {
            "textDocument/hover" => face.shape().hover(&mut result),
            "textDocument/completion" | "completionItem/resolve" => {
                face.shape().completion(&mut result)
            }
            _ => {}
        }
        if matches!(
            method,
            "textDocument/completion" | "textDocument/codeAction"
        ) {
            tag(&mut result, &server, uri);
        }
        merged = Some(match (merged, result) {
            (Some(Value::Array(mut a)), Value::Array(b)) => {
                a.extend(b);
                Value::Array(a)
            }
            (Some(Value::Null) | None, r) => r,
            (Some(m), _) => m,
        });
    }
    Ok(merged.unwrap_or(Value::Null))
}

/// Whether `method`'s answer depends on the whole workspace (what the server indexes), not
/// on its document alone.
fn workspace_wide(method: &str) -> bool {
    matches!(
        method,
        "textDocument/references"
            | "textDocument/definition"
            | "textDocument/declaration"
            | "textDocument/typeDefinition"
            | "textDocument/implementation"
            | "textDocument/rename"
            | "textDocument/prepareCallHierarchy"
            | "callHierarchy/incomingCalls"
            | "callHierarchy/outgoingCalls"
            | "textDocument/prepareTypeHierarchy"
            | "typeHierarchy/supertypes"
            | "typeHierarchy/subtypes"
    )
}

/// `completionItem/resolve`, `codeAction/resolve`: to the server that made the item.
async fn resolve(face: &Arc<Face>, method: &str, mut params: Value) -> Answer {
    let Some(Value::Object(tag)) = params.pointer(&format!("/data/{TAG}")).cloned() else {
        // Not one of ours (or made without data): nothing to resolve it with.
        return Ok(params);
    };
    let (Some(server), Some(uri)) = (
        tag.get("server")
            .and_then(Value::as_str)
            .map(str::to_string),
        tag.get("uri").and_then(Value::as_str).map(str::to_string),
    ) else {
        return Ok(params);
    };
    untag(&mut params);
    document(face, method, &uri, params, move |s: &Server| {
        s.name == server
    })
    .await
}

/// `workspace/executeCommand`: to the server that offers the command; the edits it asks to
/// apply meanwhile (`workspace/applyEdit`) go to this client, which answers whether it
/// applied them.
async fn execute(face: &Arc<Face>, params: Value) -> Answer {
    let command = params
        .get("command")
        .and_then(Value::as_str)
        .ok_or((code::INVALID_PARAMS, "no command".to_string()))?
        .to_string();
    let server = face
        .engine
        .registry()
        .serving()
        .await
        .into_iter()
        .find(|s| face.only.admits(s) && s.client().commands().contains(&command))
        .ok_or((
            code::INVALID_PARAMS,
            format!("no server offers the command `{command}`"),
        ))?;
    let (tx, mut rx) =
        tokio::sync::mpsc::unbounded_channel::<(Value, tokio::sync::oneshot::Sender<Value>)>();
    let from = server.client().encoding();
    let relay_face = face.clone();
    tokio::spawn(async move {
        while let Some((mut edit, reply)) = rx.recv().await {
            let empty = Text::new(Arc::from(""));
            let text_of = |u: &str| text_of(&relay_face, u);
            relay_face.aliases().to_client(&mut edit);
            Converter {
                from,
                to: relay_face.encoding(),
                document: &empty,
                text_of: &text_of,
            }
            .convert(&mut edit);
            let answer = relay_face
                .ask("workspace/applyEdit", edit)
                .await
                .unwrap_or_else(
                    || json!({"applied": false, "failureReason": "the client did not apply it"}),
                );
            let _ = reply.send(answer);
        }
    });
    let mut sent = params;
    if let Value::Object(m) = &mut sent {
        m.remove("workDoneToken");
    }
    face.aliases().to_server(&mut sent);
    server
        .request(None, |c| {
            let (sent, tx) = (sent.clone(), tx.clone());
            async move { c.forward_run("workspace/executeCommand", sent, tx).await }
        })
        .await
        .map_err(|e| refused(e.into()))
}

async fn workspace_symbol(face: &Arc<Face>, mut params: Value) -> Answer {
    let progress = Progress::new(face, &params);
    if let Value::Object(m) = &mut params {
        m.remove("workDoneToken");
        m.remove("partialResultToken");
    }
    let answers = face
        .engine
        .forward_workspace(
            "workspace/symbol",
            &params,
            |s| face.only.admits(s) && s.supports(Cap::WorkspaceSymbols),
            &|s: &Server, doing: &str| progress.busy(s, doing),
        )
        .await;
    let client = face.encoding();
    let mut all = Vec::new();
    for (server, mut result) in answers {
        let empty = Text::new(Arc::from(""));
        let text_of = |u: &str| text_of(face, u);
        face.aliases().to_client(&mut result);
        Converter {
            from: server.client().encoding(),
            to: client,
            document: &empty,
            text_of: &text_of,
        }
        .convert(&mut result);
        if let Value::Array(items) = result {
            all.extend(items);
        }
    }
    Ok(Value::Array(all))
}

/// A converter for positions of the document `snap` (as the server saw it) and others.
fn converter<'a>(
    face: &'a Arc<Face>,
    from: Encoding,
    to: Encoding,
    snap: &Snapshot,
) -> OwnedConverter<'a> {
    OwnedConverter {
        face,
        from,
        to,
        document: Text {
            text: snap.text.clone(),
            index: snap.index.clone(),
        },
    }
}

/// `Converter` with the texts it needs owned.
struct OwnedConverter<'a> {
    face: &'a Arc<Face>,
    from: Encoding,
    to: Encoding,
    document: Text,
}

impl OwnedConverter<'_> {
    fn convert(&self, value: &mut Value) {
        let text_of = |u: &str| text_of(self.face, u);
        Converter {
            from: self.from,
            to: self.to,
            document: &self.document,
            text_of: &text_of,
        }
        .convert(value);
    }
}

/// The text of a document for converting positions: the client's buffer when it has it open,
/// else the disk's (a document outside the root has none: its positions stay as they are).
fn text_of(face: &Face, uri: &str) -> Option<Text> {
    if let Some(doc) = face.docs.get(uri) {
        return Some(doc.text);
    }
    let path = face.engine.document_path(uri).ok()?;
    let text = text_in_root(face.engine.root(), &path).ok()??;
    Some(Text::new(Arc::from(text)))
}

/// Marks the completion items and code actions of an answer with the server that made them
/// (in their `data`), so that their resolve goes back there.
fn tag(result: &mut Value, server: &str, uri: &str) {
    let items = match result {
        Value::Array(items) => items,
        Value::Object(list) => match list.get_mut("items") {
            Some(Value::Array(items)) => items,
            _ => return,
        },
        _ => return,
    };
    for item in items {
        if let Value::Object(item) = item {
            let data = item.remove("data").unwrap_or(Value::Null);
            item.insert(
                "data".into(),
                json!({TAG: {"server": server, "uri": uri}, "data": data}),
            );
        }
    }
}

/// Gives an item (or each of the diagnostics a code action request carries) back its own
/// `data`.
fn untag(params: &mut Value) {
    fn restore(v: &mut Value) {
        if let Value::Object(m) = v
            && let Some(Value::Object(data)) = m.get("data")
            && data.contains_key(TAG)
        {
            let own = data.get("data").cloned().unwrap_or(Value::Null);
            if own.is_null() {
                m.remove("data");
            } else {
                m.insert("data".into(), own);
            }
        }
    }
    restore(params);
}

/// A tool error as the client's error.
fn refused(e: ToolError) -> (i64, String) {
    let code = match e.code {
        Code::InvalidParams | Code::OutsideRoot | Code::FileNotFound => code::INVALID_PARAMS,
        Code::Internal => code::INTERNAL,
        _ => code::REQUEST_FAILED,
    };
    (code, e.to_string())
}
