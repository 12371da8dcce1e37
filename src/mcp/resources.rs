//! MCP resources (SPEC §3): `lspgate://servers`, `lspgate://diagnostics` (every file with
//! problems), `lspgate://diagnostics/{file}` (a template) and `lspgate://events` (the newest
//! events), each read through the same tool call an agent would make. Subscriptions, both
//! `resources/subscribe` and MCP 2026-07-28's `subscriptions/listen`, follow the workspace's
//! event log by cursor from the moment of subscribing: after any file change (lspgate's, the
//! watcher's), server change or diagnostics change, the subscribed diagnostics are computed
//! afresh and compared with what the client was last told; `notifications/resources/updated`
//! goes out when they differ (or when the change came while the baseline was computed), and
//! `notifications/resources/list_changed` when servers come or go. A session's followers end
//! with the session.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
    ResourceUpdatedNotificationParam,
};
use rmcp::service::SubscriptionSink;
use rmcp::{ErrorData as McpError, Peer, RoleServer};
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::error::{Code, ToolError};
use crate::events::Event;
use crate::ops::Engine;
use crate::ops::tools;

/// The resource listing the servers.
pub const SERVERS_URI: &str = "lspgate://servers";
/// Every file with problems.
pub const DIAGNOSTICS_URI: &str = "lspgate://diagnostics";
/// One file's diagnostics: this, then the file's path (percent-encoded where needed).
pub const DIAGNOSTICS_PREFIX: &str = "lspgate://diagnostics/";
/// The newest events.
pub const EVENTS_URI: &str = "lspgate://events";

/// Events `lspgate://events` shows (the `events` tool pages through all).
const EVENTS_SHOWN: i64 = 100;

/// What a resource URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Servers,
    Diagnostics,
    /// A file as the URI names it (decoded).
    FileDiagnostics(String),
    Events,
}

impl Target {
    pub fn parse(uri: &str) -> Option<Target> {
        match uri {
            SERVERS_URI => Some(Target::Servers),
            DIAGNOSTICS_URI => Some(Target::Diagnostics),
            EVENTS_URI => Some(Target::Events),
            _ => {
                let file = decode(uri.strip_prefix(DIAGNOSTICS_PREFIX)?)?;
                (!file.is_empty()).then_some(Target::FileDiagnostics(file))
            }
        }
    }
}

/// Percent-decoding (`%20` → space); `None` for a malformed escape or bytes that are not UTF-8.
fn decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

pub fn list() -> Vec<Resource> {
    let json = |r: Resource| r.with_mime_type("application/json");
    vec![
        json(Resource::new(SERVERS_URI, "servers").with_description(
            "The workspace's language servers and their state (as the `servers` tool)",
        )),
        json(Resource::new(DIAGNOSTICS_URI, "diagnostics").with_description(
            "Every file with problems (as `diagnostics` without a file); subscribe to follow it",
        )),
        json(Resource::new(EVENTS_URI, "events").with_description(
            "The newest events of the durable log (the `events` tool pages through all)",
        )),
    ]
}

pub fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{DIAGNOSTICS_PREFIX}{{file}}"), "file diagnostics")
            .with_description(
                "A file's diagnostics for its current content (as `diagnostics` with `file`, a root-relative path); subscribe to hear when they change, whoever changed it",
            )
            .with_mime_type("application/json"),
    ]
}

/// A failed read as MCP reports it: a path that names no file is not found.
fn failure(uri: &str, e: ToolError) -> McpError {
    let data = Some(e.to_json());
    match e.code {
        Code::FileNotFound | Code::OutsideRoot | Code::InvalidParams => {
            McpError::resource_not_found(format!("{uri}: {e}"), data)
        }
        _ => McpError::internal_error(format!("{uri}: {e}"), data),
    }
}

/// The content of a resource, as the tool behind it answers.
async fn content(engine: &Engine, target: &Target) -> Result<Value, ToolError> {
    let out = match target {
        Target::Servers => tools::call(engine, "servers", json!({})).await?,
        Target::Diagnostics => tools::call(engine, "diagnostics", json!({})).await?,
        Target::FileDiagnostics(f) => {
            tools::call(engine, "diagnostics", json!({"file": f})).await?
        }
        Target::Events => {
            let page = engine.shared().events().tail(EVENTS_SHOWN as usize).await?;
            return Ok(json!({"events": page.events, "next": page.next}));
        }
    };
    Ok(out.structured)
}

pub async fn read(engine: &Engine, uri: &str) -> Result<ReadResourceResult, McpError> {
    let target = Target::parse(uri)
        .ok_or_else(|| McpError::resource_not_found(format!("no resource {uri}"), None))?;
    let value = content(engine, &target)
        .await
        .map_err(|e| failure(uri, e))?;
    let text = serde_json::to_string_pretty(&value).unwrap_or_default();
    let contents = match ResourceContents::text(text, uri) {
        ResourceContents::TextResourceContents {
            uri, text, meta, ..
        } => ResourceContents::TextResourceContents {
            uri,
            mime_type: Some("application/json".into()),
            text,
            meta,
        },
        other => other,
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

/// What a client was last told of a subscribed resource: the diagnostics it names, compared
/// by their `files` (partial answers and reasons aside). `None`: nothing known (no such file).
async fn seen(engine: &Engine, target: &Target) -> Result<Option<String>, ToolError> {
    match target {
        Target::Diagnostics | Target::FileDiagnostics(_) => match content(engine, target).await {
            Ok(v) => Ok(Some(v["files"].to_string())),
            Err(e) if e.code == Code::FileNotFound => Ok(None),
            Err(e) => Err(e),
        },
        Target::Servers | Target::Events => Ok(None),
    }
}

/// One subscribed resource.
struct Watched {
    target: Target,
    /// A file's root-relative path (for `diagnostics_changed` events that name it).
    file: Option<String>,
    seen: Option<String>,
    /// Events up to this seq happened before the subscription: `seen` includes them.
    since: i64,
    /// Events after `since` and up to this seq happened while `seen` was computed: it may or
    /// may not include them, so one of them that concerns the resource is a change.
    settled: i64,
}

/// A session's subscriptions (or one `subscriptions/listen` stream's).
#[derive(Default)]
pub struct Subscriptions {
    watched: tokio::sync::Mutex<HashMap<String, Watched>>,
    following: AtomicBool,
}

impl Subscriptions {
    /// Subscribes to `uri`, remembering its current content (computed now: a change that
    /// lands after this returns is a change). `since`: the newest event the client may
    /// already know of (a listen stream's acknowledgment came before this); by default,
    /// the newest written now. Returns the subscription's `since`.
    pub async fn add(
        &self,
        engine: &Engine,
        uri: &str,
        since: Option<i64>,
    ) -> Result<i64, McpError> {
        let target = Target::parse(uri)
            .ok_or_else(|| McpError::resource_not_found(format!("no resource {uri}"), None))?;
        let file = match &target {
            Target::FileDiagnostics(f) => Some(
                engine
                    .root()
                    .resolve(f)
                    .map(|p| engine.root().relative(&p))
                    .map_err(|e| failure(uri, e))?,
            ),
            _ => None,
        };
        let log = engine.shared().events();
        let since = match since {
            Some(s) => s,
            None => {
                log.flush().await;
                log.written()
            }
        };
        let seen = seen(engine, &target).await.map_err(|e| failure(uri, e))?;
        log.flush().await;
        let settled = log.written();
        self.watched.lock().await.insert(
            uri.to_string(),
            Watched {
                target,
                file,
                seen,
                since,
                settled,
            },
        );
        Ok(since)
    }

    pub async fn remove(&self, uri: &str) {
        self.watched.lock().await.remove(uri);
    }

    /// Starts following the event log for a session's peer (once per session), from event
    /// `since` on, until `ended` completes (the session's end).
    pub fn follow_for(
        self: &Arc<Self>,
        engine: Arc<Engine>,
        peer: Peer<RoleServer>,
        since: i64,
        ended: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        if self.following.swap(true, Ordering::AcqRel) {
            return;
        }
        let subs = self.clone();
        tokio::spawn(async move {
            let out = Out::Peer(peer);
            tokio::select! {
                () = subs.follow(&engine, &out, true, since) => {}
                () = ended => {}
            }
        });
    }

    /// Follows the event log from the event after `cursor`, telling `out` what changed,
    /// until `out` is closed (or the caller stops awaiting). The log is read from the database
    /// by cursor (its live feed only wakes this up), so nothing between the subscription and
    /// the first wake-up is missed, and a slow reader loses nothing.
    pub async fn follow(&self, engine: &Engine, out: &Out, list_changes: bool, cursor: i64) {
        let log = engine.shared().events();
        let mut wake = log.follow();
        let mut cursor = cursor;
        loop {
            let mut news = News::default();
            loop {
                match log.read(cursor, 1_000, Vec::new()).await {
                    Ok(page) => {
                        if page.pruned_before.is_some() {
                            news.everything = true;
                        }
                        for e in &page.events {
                            news.add(e);
                        }
                        cursor = page.next;
                        if !page.more {
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::warn!("subscriptions cannot read the event log: {e}");
                        break;
                    }
                }
            }
            if !news.is_empty() {
                if list_changes
                    && (!news.servers.is_empty() || news.everything)
                    && !out.list_changed().await
                {
                    return;
                }
                for uri in self.changed(engine, &news).await {
                    if !out.updated(&uri).await {
                        return;
                    }
                }
            }
            // Sleep until more is written; wake-ups for what was just read are passed over.
            match wake.recv().await {
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            }
            while !matches!(
                wake.try_recv(),
                Err(tokio::sync::broadcast::error::TryRecvError::Empty
                    | tokio::sync::broadcast::error::TryRecvError::Closed)
            ) {}
        }
    }

    /// The subscribed resources that changed with `news`: diagnostics computed afresh and
    /// compared with what the client was last told (no lock is held while they are computed).
    async fn changed(&self, engine: &Engine, news: &News) -> Vec<String> {
        // (uri, target, content last told, whether a change is certain)
        let asked: Vec<(String, Target, Option<String>, bool)> = {
            let mut watched = self.watched.lock().await;
            watched
                .iter_mut()
                .filter_map(|(uri, w)| {
                    let seqs = news.concerning(w);
                    let after: Vec<i64> = seqs.into_iter().filter(|s| *s > w.since).collect();
                    if after.is_empty() && !news.everything {
                        return None;
                    }
                    let certain = after.iter().any(|s| *s <= w.settled);
                    w.since = w.since.max(w.settled);
                    Some((uri.clone(), w.target.clone(), w.seen.clone(), certain))
                })
                .collect()
        };
        let mut out = Vec::new();
        for (uri, target, before, certain) in asked {
            if matches!(target, Target::Events | Target::Servers) {
                out.push(uri);
                continue;
            }
            match seen(engine, &target).await {
                Ok(now) if certain || now != before => {
                    if let Some(w) = self.watched.lock().await.get_mut(&uri) {
                        w.seen = now;
                    }
                    out.push(uri);
                }
                Ok(_) => {}
                Err(e) => tracing::debug!("{uri}: {e}"),
            }
        }
        out
    }
}

/// What a round of events says changed: the seqs of the events of each sort.
#[derive(Default)]
struct News {
    all: Vec<i64>,
    files: Vec<i64>,
    servers: Vec<i64>,
    /// Per file, the events that changed its diagnostic counts.
    diagnostics: HashMap<String, Vec<i64>>,
    /// Events were pruned before they were read: anything may have changed.
    everything: bool,
}

impl News {
    fn add(&mut self, e: &Event) {
        self.all.push(e.seq);
        match e.kind.as_str() {
            "file_changed" => self.files.push(e.seq),
            "diagnostics_changed" => {
                if let Some(f) = e.data.get("file").and_then(Value::as_str) {
                    self.diagnostics
                        .entry(f.to_string())
                        .or_default()
                        .push(e.seq);
                }
            }
            k if k.starts_with("server_") => self.servers.push(e.seq),
            _ => {}
        }
    }

    fn is_empty(&self) -> bool {
        self.all.is_empty() && !self.everything
    }

    /// The events that may change what `w` names: any file change or server change may
    /// change diagnostics (a dependency's, a restart's), and so do the file's own counts.
    fn concerning(&self, w: &Watched) -> Vec<i64> {
        let broad = || self.files.iter().chain(&self.servers).copied();
        match &w.target {
            Target::Events => self.all.clone(),
            Target::Servers => self.servers.clone(),
            Target::Diagnostics => broad()
                .chain(self.diagnostics.values().flatten().copied())
                .collect(),
            Target::FileDiagnostics(_) => broad()
                .chain(
                    w.file
                        .as_ref()
                        .and_then(|f| self.diagnostics.get(f))
                        .into_iter()
                        .flatten()
                        .copied(),
                )
                .collect(),
        }
    }
}

/// Where notifications go: a session's peer (`resources/subscribe`) or one
/// `subscriptions/listen` stream.
pub enum Out {
    Peer(Peer<RoleServer>),
    Listen(SubscriptionSink),
}

impl Out {
    /// `notifications/resources/updated`; false once nobody listens.
    async fn updated(&self, uri: &str) -> bool {
        match self {
            Out::Peer(p) => p
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_ok(),
            Out::Listen(s) => !matches!(
                s.notify_resource_updated(uri).await,
                Err(rmcp::service::SubscriptionSendError::SubscriptionClosed
                    | rmcp::service::SubscriptionSendError::Service(_))
            ),
        }
    }

    /// `notifications/resources/list_changed`; false once nobody listens.
    async fn list_changed(&self) -> bool {
        match self {
            Out::Peer(p) => p.notify_resource_list_changed().await.is_ok(),
            Out::Listen(s) => !matches!(
                s.notify_resource_list_changed().await,
                Err(rmcp::service::SubscriptionSendError::SubscriptionClosed
                    | rmcp::service::SubscriptionSendError::Service(_))
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_name_their_resources() {
        assert_eq!(Target::parse(SERVERS_URI), Some(Target::Servers));
        assert_eq!(Target::parse(DIAGNOSTICS_URI), Some(Target::Diagnostics));
        assert_eq!(Target::parse(EVENTS_URI), Some(Target::Events));
        assert_eq!(
            Target::parse("lspgate://diagnostics/src/a%20b.py"),
            Some(Target::FileDiagnostics("src/a b.py".into()))
        );
        assert_eq!(
            Target::parse("lspgate://diagnostics/caf%C3%A9.py"),
            Some(Target::FileDiagnostics("café.py".into()))
        );
        assert_eq!(Target::parse("lspgate://diagnostics/"), None);
        assert_eq!(Target::parse("lspgate://diagnostics/bad%zz"), None);
        assert_eq!(Target::parse("lspgate://other"), None);
    }
}
