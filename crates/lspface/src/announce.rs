//! What a client is told of the servers, and when they start. `initialize` answers the
//! position encoding and the union of what the servers of the root's languages serve: those
//! running, and for the others what they announced when they last ran (`known`), so that none
//! is started for a language the client never opens (a server not seen yet is started to
//! learn it, unless the client takes registrations for everything). A client that takes
//! registrations (`client/registerCapability`) is not told in `initialize` what is particular
//! to a language: when it opens the language's first document (`opened`), the language's
//! servers start and what they serve is registered for that language's documents alone, so a
//! Python buffer is never offered TypeScript's formatting. A server that cannot start is said
//! once (`window/showMessage`, a warning naming it and how to install it).

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use super::Face;
use super::caps;
use super::known::{self, Known};
use crate::lsp::Cap;
use crate::registry::{Routed, Server};
use crate::text::Encoding;
use lspgate_core::error::CoreError;

/// The document requests a client may register for: the provider key, the request, and the
/// client's capability under `textDocument` that says it takes their registration.
const REGISTRABLE: &[(&str, &str, &str)] = &[
    ("hoverProvider", "textDocument/hover", "hover"),
    (
        "completionProvider",
        "textDocument/completion",
        "completion",
    ),
    (
        "signatureHelpProvider",
        "textDocument/signatureHelp",
        "signatureHelp",
    ),
    (
        "definitionProvider",
        "textDocument/definition",
        "definition",
    ),
    (
        "declarationProvider",
        "textDocument/declaration",
        "declaration",
    ),
    (
        "typeDefinitionProvider",
        "textDocument/typeDefinition",
        "typeDefinition",
    ),
    (
        "implementationProvider",
        "textDocument/implementation",
        "implementation",
    ),
    (
        "referencesProvider",
        "textDocument/references",
        "references",
    ),
    (
        "documentHighlightProvider",
        "textDocument/documentHighlight",
        "documentHighlight",
    ),
    (
        "documentSymbolProvider",
        "textDocument/documentSymbol",
        "documentSymbol",
    ),
    (
        "codeActionProvider",
        "textDocument/codeAction",
        "codeAction",
    ),
    (
        "documentFormattingProvider",
        "textDocument/formatting",
        "formatting",
    ),
    (
        "documentRangeFormattingProvider",
        "textDocument/rangeFormatting",
        "rangeFormatting",
    ),
    ("renameProvider", "textDocument/rename", "rename"),
    (
        "foldingRangeProvider",
        "textDocument/foldingRange",
        "foldingRange",
    ),
    (
        "selectionRangeProvider",
        "textDocument/selectionRange",
        "selectionRange",
    ),
    (
        "callHierarchyProvider",
        "textDocument/prepareCallHierarchy",
        "callHierarchy",
    ),
    (
        "typeHierarchyProvider",
        "textDocument/prepareTypeHierarchy",
        "typeHierarchy",
    ),
    ("inlayHintProvider", "textDocument/inlayHint", "inlayHint"),
];

/// The provider keys the client takes registrations for.
pub(crate) fn dynamic_keys(client: &Value) -> Vec<&'static str> {
    REGISTRABLE
        .iter()
        .filter(|(_, _, at)| {
            client.pointer(&format!("/textDocument/{at}/dynamicRegistration"))
                == Some(&Value::Bool(true))
        })
        .map(|(key, _, _)| *key)
        .collect()
}

pub(crate) async fn initialize(face: &Arc<Face>, params: &Value) -> Result<Value, (i64, String)> {
    let client_caps = params.get("capabilities").cloned().unwrap_or(Value::Null);
    let progress = client_caps.pointer("/window/workDoneProgress") == Some(&Value::Bool(true));
    face.work_done_progress
        .store(progress, std::sync::atomic::Ordering::Release);
    let _ = face.shape.set(super::shape::Shape::of(&client_caps));
    let client_root = params.get("rootUri").and_then(Value::as_str).or_else(|| {
        params
            .pointer("/workspaceFolders/0/uri")
            .and_then(Value::as_str)
    });
    let _ = face.aliases.set(super::aliases::Aliases::new(
        client_root,
        face.engine.root().path(),
    ));
    let dynamic = dynamic_keys(&client_caps);
    let everything = dynamic.len() == REGISTRABLE.len();
    let _ = face.dynamic.set(dynamic.clone());
    let asked = std::time::Instant::now();
    let (servers, known) = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        first_servers(face, everything),
    )
    .await
    .unwrap_or_default();
    let mut encodings: Vec<Encoding> = servers.iter().map(|s| s.client().encoding()).collect();
    encodings.extend(known.iter().filter_map(|k| Encoding::from_lsp(&k.encoding)));
    let encoding = caps::negotiate(&client_caps, &encodings);
    if let Ok(mut e) = face.encoding.lock() {
        *e = encoding;
    }
    // What a language's servers serve is registered for its documents when the client takes
    // that: only servers of every language say it here.
    let particular = |key: &str, every_language: bool| !every_language && dynamic.contains(&key);
    let mut offered: Vec<Value> = Vec::new();
    for s in &servers {
        offered.push(keep(offered_by(s), |k| !particular(k, s.every_language())));
    }
    for k in &known {
        offered.push(keep(k.capabilities.clone(), |key| !particular(key, false)));
    }
    let mut capabilities = caps::union(&offered.iter().collect::<Vec<_>>(), encoding);
    let mut commands: Vec<String> = servers
        .iter()
        .flat_map(|s| s.client().commands())
        .chain(known.iter().flat_map(|k| k.commands.clone()))
        .collect();
    commands.sort();
    commands.dedup();
    if !commands.is_empty() {
        capabilities["executeCommandProvider"] = json!({"commands": commands});
    }
    let mut result = json!({
        "capabilities": capabilities,
        "serverInfo": {"name": "lspgate", "version": env!("CARGO_PKG_VERSION")},
    });
    // clangd's extension, for clients that speak it rather than 3.17's `positionEncoding`.
    if client_caps.get("offsetEncoding").is_some() {
        result["offsetEncoding"] = json!(caps::encoding_name(encoding));
    }
    tracing::debug!(
        "initialize answered in {:?}: {} server(s) running, {} told from what they last announced",
        asked.elapsed(),
        servers.len(),
        known.len()
    );
    face.initialized
        .store(true, std::sync::atomic::Ordering::Release);
    Ok(result)
}

/// The servers a client is told of in `initialize`: those of every language and of the
/// languages it named (`--language`), started; for each other language the root holds, those
/// running, and what the others announced when they last ran (started now when never seen,
/// unless the client takes registrations for everything: it learns of them when it opens
/// their language).
async fn first_servers(face: &Arc<Face>, everything: bool) -> (Vec<Arc<Server>>, Vec<Known>) {
    let engine = &face.engine;
    let registry = engine.registry();
    let root = engine.root().path().to_path_buf();
    let admit = |name: &str, languages: &[String]| face.only.admits_entry(name, languages);
    let mut servers = registry.started_for_all(&admit).await;
    let mut known: Vec<Known> = Vec::new();
    let add = |servers: &mut Vec<Arc<Server>>, s: Arc<Server>| {
        if !servers.iter().any(|o| Arc::ptr_eq(o, &s)) {
            servers.push(s);
        }
    };
    for language in &face.only.languages {
        let (started, failed) = registry.start_for(&root, language, &admit).await;
        // Allowed while `initialize` is answered (LSP 3.17, "Initialize Request").
        for e in failed {
            warn(face, &e);
        }
        for s in started {
            add(&mut servers, s);
        }
    }
    let scan = std::time::Instant::now();
    let present = engine.present_languages().await;
    tracing::debug!(
        "the root's languages found in {:?}: {present:?}",
        scan.elapsed()
    );
    for language in present {
        for routed in registry.routed_now(&root, &language, &admit) {
            match routed {
                Routed::Running(s) => add(&mut servers, s),
                Routed::Idle { name, command } => {
                    if let Some(k) = known::recall(&name, &command) {
                        if !known.iter().any(|o| o.command == k.command) {
                            known.push(k);
                        }
                    } else if !everything {
                        let one = |n: &str, l: &[String]| n == name && admit(n, l);
                        for s in registry.start_for(&root, &language, &one).await.0 {
                            add(&mut servers, s);
                        }
                    }
                }
                Routed::Failed(_) => {}
            }
        }
    }
    for s in &servers {
        remember(face, s);
    }
    (servers, known)
}

/// What server `s` is asked for, as the tools ask it: its announced capabilities, less the
/// ones the config's `allow` list leaves out, plus those it registered since.
pub(crate) fn offered_by(s: &Server) -> Value {
    let mut caps = s.client().capabilities().clone();
    if let Value::Object(map) = &mut caps {
        for cap in Cap::ALL {
            let key = cap.provider_key();
            let legacy = cap == Cap::TypeHierarchy && s.client().legacy_type_hierarchy();
            if !s.supports(cap) || legacy {
                map.remove(key);
            } else if cap != Cap::InlayHints // clangd's are its own request, not this one
                && matches!(map.get(key), None | Some(Value::Null | Value::Bool(false)))
            {
                map.insert(key.into(), Value::Bool(true));
            }
        }
    }
    caps
}

/// `caps` with only the providers `keep` accepts (other fields kept).
fn keep(mut caps: Value, keep: impl Fn(&str) -> bool) -> Value {
    if let Value::Object(map) = &mut caps {
        map.retain(|k, _| !k.ends_with("Provider") || keep(k));
    }
    caps
}

/// Keeps what `s` announced, for clients to come (`known`).
fn remember(face: &Face, s: &Server) {
    let Some(command) = face.engine.registry().command_of(&s.name) else {
        return;
    };
    let client = s.client();
    known::remember(
        &s.name,
        &Known {
            command,
            capabilities: offered_by(s),
            commands: client.commands(),
            encoding: caps::encoding_name(client.encoding()).to_string(),
        },
    );
}

/// The client opened a document of `path` (`language_id`: the client's name of its language)
/// : the first of its language starts the language's servers, registers what they serve for
/// the language's documents (for a client that takes registrations), and says each server
/// that cannot start.
pub(crate) fn opened(face: &Arc<Face>, path: PathBuf, language_id: Option<String>) {
    let language = face.engine.languages().detect(&path);
    if !face.only.languages.is_empty() && !face.only.languages.contains(&language) {
        return;
    }
    let first = face
        .languages
        .lock()
        .map(|mut seen| seen.insert(language.clone()))
        .unwrap_or(false);
    if !first {
        return;
    }
    let face = face.clone();
    tokio::spawn(async move {
        let admit = |name: &str, languages: &[String]| face.only.admits_entry(name, languages);
        let (started, failed) = face
            .engine
            .registry()
            .start_for(&path, &language, &admit)
            .await;
        for e in failed {
            warn(&face, &e);
        }
        for s in &started {
            remember(&face, s);
        }
        let mut ids = vec![language.clone()];
        if let Some(id) = language_id
            && id != language
        {
            ids.push(id);
        }
        register(&face, &ids, &started).await;
    });
}

/// Says once to the client that a server cannot start, and why (the install hint of a
/// missing one).
fn warn(face: &Face, e: &CoreError) {
    let fresh = face
        .warned
        .lock()
        .map(|mut w| w.insert(e.message.clone()))
        .unwrap_or(false);
    if fresh {
        face.notify(
            "window/showMessage",
            json!({"type": 2, "message": format!("lspgate: {}", e.message)}),
        );
    }
}

/// Registers what `servers` (of one language, whose names for the client are `ids`) serve,
/// for that language's documents, as far as the client takes registrations.
async fn register(face: &Arc<Face>, ids: &[String], servers: &[Arc<Server>]) {
    let dynamic = face.dynamic.get().cloned().unwrap_or_default();
    if dynamic.is_empty() {
        return;
    }
    let offered: Vec<Value> = servers
        .iter()
        .filter(|s| !s.every_language())
        .map(|s| offered_by(s))
        .collect();
    let union = caps::union(&offered.iter().collect::<Vec<_>>(), face.encoding());
    let selector: Vec<Value> = ids
        .iter()
        .map(|l| json!({"language": l, "scheme": "file"}))
        .collect();
    let mut registrations = Vec::new();
    for (key, method, _) in REGISTRABLE {
        if !dynamic.contains(key) {
            continue;
        }
        let Some(value) = union.get(*key) else {
            continue;
        };
        let mut options = match value {
            Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        };
        options.remove("id");
        options.insert("documentSelector".into(), json!(selector));
        registrations.push(json!({
            "id": format!("lspgate:{}:{method}", ids[0]),
            "method": method,
            "registerOptions": options,
        }));
    }
    if !registrations.is_empty() {
        face.ask(
            "client/registerCapability",
            json!({"registrations": registrations}),
        )
        .await;
    }
}
