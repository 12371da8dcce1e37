//! MCP resources (protocol §3): `lspgate://servers`, `lspgate://diagnostics` (every file with
//! problems), `lspgate://diagnostics/{file}` (a template) and `lspgate://events` (the newest
//! events), each read through the same tool call an agent would make. Subscriptions, both
//! `resources/subscribe` and MCP 2026-07-28's `subscriptions/listen`, follow the workspace's
//! event log by cursor from the moment of subscribing: after any file change (lspgate's, the
//! watcher's), server change or diagnostics change, the subscribed diagnostics are computed
//! afresh and compared with what the client was last told; `notifications/resources/updated`
//! goes out when they differ (or when the change came while the baseline was computed), and
//! `notifications/resources/list_changed` when servers come or go. A session's followers end
//! with the session.
//!
//! A session or listen stream holds at most `MAX_SUBSCRIPTIONS`; subscribing to a URI again
//! replaces its subscription. No change after a subscription is missed: it is in place (pending)
//! before its baseline is computed, so a follower already running for the session keeps what
//! concerns it and tells it once the baseline is in, and an event after a listen stream's
//! acknowledgment (which rmcp sends before `listen` runs) counts as a change.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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

/// Resources one session (or one listen stream) may be subscribed to at once: a subscription
/// past it is refused (`INVALID_REQUEST`, `data.max_subscriptions`); subscribing again to a URI
/// already subscribed replaces its subscription, and counts once.
pub const MAX_SUBSCRIPTIONS: usize = 256;

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

/// Percent-decoding (`%20` → space); `None` for a malformed escape (which the crate would
/// pass on as it is) or bytes that are not UTF-8.
fn decode(s: &str) -> Option<String> {
    let malformed = s.match_indices('%').any(|(i, _)| {
        !s.as_bytes()
            .get(i + 1..i + 3)
            .is_some_and(|hex| hex.iter().all(u8::is_ascii_hexdigit))
    });
    if malformed {
        return None;
    }
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(|d| d.into_owned())
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

/// A failed read as MCP reports it: a path that names no file, or a file no server serves
/// (it has no diagnostics to follow), is not found.
fn failure(uri: &str, e: ToolError) -> McpError {
    let data = Some(e.to_json());
    match e.code {
        Code::FileNotFound | Code::OutsideRoot | Code::InvalidParams => {
            McpError::resource_not_found(format!("{uri}: {e}"), data)
        }
        Code::NoServer => McpError::resource_not_found(
            format!("{uri}: no language server serves this file, so it has no diagnostics: {e}"),
            data,
        ),
        _ => McpError::internal_error(format!("{uri}: {e}"), data),
    }
}

/// The content of a resource, as the tool behind it answers (whatever the session's tool
/// profile: a listed resource reads). Diagnostics in one page, all of them: the resource is the
/// whole set, and a change past the tool's default page is a change.
async fn content(engine: &Engine, target: &Target) -> Result<Value, ToolError> {
    let all = u32::MAX;
    // Every severity, whatever the session's terse default (terse leaves info and hints out).
    let out = match target {
        Target::Servers => tools::call_for_resource(engine, "servers", json!({})).await?,
        Target::Diagnostics => {
            let args = json!({"limit": all, "terse": false});
            tools::call_for_resource(engine, "diagnostics", args).await?
        }
        Target::FileDiagnostics(f) => {
            let args = json!({"file": f, "limit": all, "terse": false});
            tools::call_for_resource(engine, "diagnostics", args).await?
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
    /// Which subscription this is (a resubscription to the same URI replaces it).
    id: u64,
    target: Target,
    /// A file's root-relative path (for `diagnostics_changed` events that name it).
    file: Option<String>,
    seen: Option<String>,
    /// Events up to this seq happened before the subscription: `seen` includes them.
    since: i64,
    /// Events after `since` and up to this seq happened while `seen` was computed: it may or
    /// may not include them, so one of them that concerns the resource is a change. `None`
    /// while `seen` is being computed (the entry is in place from the start, so a follower
    /// already running for the session does not pass over its events meanwhile).
    settled: Option<i64>,
    /// An event after `since` that concerns the resource was read while `seen` was computed.
    missed: bool,
    /// A change is certain and not yet told (a missed event, once `seen` is in place).
    due: bool,
}

/// A session's subscriptions (or one `subscriptions/listen` stream's).
#[derive(Default)]
pub struct Subscriptions {
    watched: tokio::sync::Mutex<HashMap<String, Watched>>,
    following: AtomicBool,
    next_id: AtomicU64,
    /// Wakes the follower when a subscription has a change due that no new event will bring.
    nudge: tokio::sync::Notify,
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
                    .map_err(|e| failure(uri, e.into()))?,
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
        let id = self.begin(uri, target.clone(), file, since).await?;
        match seen(engine, &target).await {
            Ok(seen) => {
                log.flush().await;
                self.settle(uri, id, seen, log.written()).await;
                Ok(since)
            }
            Err(e) => {
                let mut watched = self.watched.lock().await;
                if watched.get(uri).is_some_and(|w| w.id == id) {
                    watched.remove(uri);
                }
                Err(failure(uri, e))
            }
        }
    }

    /// Puts a subscription in place before its baseline is computed: events after `since` that
    /// concern it count from now on, even for a follower that is already running. Refused past
    /// `MAX_SUBSCRIPTIONS` (a URI already subscribed is replaced, not added).
    async fn begin(
        &self,
        uri: &str,
        target: Target,
        file: Option<String>,
        since: i64,
    ) -> Result<u64, McpError> {
        let mut watched = self.watched.lock().await;
        if watched.len() >= MAX_SUBSCRIPTIONS && !watched.contains_key(uri) {
            return Err(McpError::invalid_request(
                format!(
                    "{uri}: too many subscriptions: this session has {MAX_SUBSCRIPTIONS}, the most lspgate keeps for one; unsubscribe from one first"
                ),
                Some(json!({"max_subscriptions": MAX_SUBSCRIPTIONS})),
            ));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        watched.insert(
            uri.to_string(),
            Watched {
                id,
                target,
                file,
                seen: None,
                since,
                settled: None,
                missed: false,
                due: false,
            },
        );
        Ok(id)
    }

    /// Completes subscription `id` with its baseline `seen`, computed before event `settled`
    /// was written. An event a follower read meanwhile makes a change due at once.
    async fn settle(&self, uri: &str, id: u64, seen: Option<String>, settled: i64) {
        let mut watched = self.watched.lock().await;
        let Some(w) = watched.get_mut(uri).filter(|w| w.id == id) else {
            return;
        };
        w.seen = seen;
        w.settled = Some(settled);
        if w.missed {
            w.due = true;
            self.nudge.notify_one();
        }
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
        let mut nudged = false;
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
            if !news.is_empty() || nudged {
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
            // Sleep until more is written (or a subscription has a change due); wake-ups for
            // what was just read are passed over.
            nudged = tokio::select! {
                r = wake.recv() => match r {
                    Ok(_) | Err(RecvError::Lagged(_)) => false,
                    Err(RecvError::Closed) => return,
                },
                () = self.nudge.notified() => true,
            };
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
        // (uri, subscription, target, content last told, whether a change is certain)
        let asked: Vec<(String, u64, Target, Option<String>, bool)> = {
            let mut watched = self.watched.lock().await;
            watched
                .iter_mut()
                .filter_map(|(uri, w)| {
                    let seqs = news.concerning(w);
                    let after: Vec<i64> = seqs.into_iter().filter(|s| *s > w.since).collect();
                    let touched = !after.is_empty() || news.everything;
                    let Some(settled) = w.settled else {
                        // Its baseline is being computed: whether it holds this change is
                        // unknown, so the change is told once the baseline is in place.
                        w.missed |= touched;
                        return None;
                    };
                    let due = std::mem::take(&mut w.due);
                    if !touched && !due {
                        return None;
                    }
                    let certain = due || after.iter().any(|s| *s <= settled);
                    w.since = w.since.max(settled);
                    Some((uri.clone(), w.id, w.target.clone(), w.seen.clone(), certain))
                })
                .collect()
        };
        let mut out = Vec::new();
        for (uri, id, target, before, certain) in asked {
            if matches!(target, Target::Events | Target::Servers) {
                out.push(uri);
                continue;
            }
            match seen(engine, &target).await {
                Ok(now) if certain || now != before => {
                    if let Some(w) = self.watched.lock().await.get_mut(&uri)
                        && w.id == id
                    {
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
    /// The URIs told updated, for tests.
    #[cfg(test)]
    Test(tokio::sync::mpsc::UnboundedSender<String>),
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
            #[cfg(test)]
            Out::Test(tx) => tx.send(uri.to_string()).is_ok(),
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
            #[cfg(test)]
            Out::Test(_) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::EngineOptions;
    use crate::ops::activity::dropped::{engine, engine_with};
    use std::time::Duration;

    /// Resources read whatever the session's tool profile (they are listed whatever it is),
    /// and a file no server serves is not found, whether read or subscribed to.
    #[tokio::test]
    async fn resources_read_under_any_profile_and_an_unserved_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let opts = EngineOptions {
            tools: tools::Profile::parse(&["navigation"]).unwrap(),
            ..EngineOptions::default()
        };
        let (_, engine) = engine_with(dir.path(), opts);
        for r in list() {
            let read = read(&engine, &r.uri).await;
            assert!(read.is_ok(), "{}: {read:?}", r.uri);
        }
        let uri = "lspgate://diagnostics/a.py";
        let e = read(&engine, uri).await.unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::RESOURCE_NOT_FOUND, "{e:?}");
        assert!(e.message.contains("no language server"), "{e:?}");
        let subs = Subscriptions::default();
        let e = subs.add(&engine, uri, None).await.unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::RESOURCE_NOT_FOUND, "{e:?}");
        assert!(subs.watched.lock().await.is_empty());
    }

    /// A session's second subscription, while its baseline is computed, with the follower of
    /// the first already running: a change that lands then is told once the baseline is in
    /// place, not passed over.
    #[tokio::test]
    async fn a_change_while_a_later_subscriptions_baseline_is_computed_is_told() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.py"), "x = 1\n").unwrap();
        let engine = engine(dir.path());
        let log = engine.shared().events();
        let subs = Arc::new(Subscriptions::default());
        // The first subscription, and its follower.
        let since = subs.add(&engine, EVENTS_URI, None).await.unwrap();
        let (tx, mut told) = tokio::sync::mpsc::unbounded_channel();
        let follower = {
            let (subs, engine) = (subs.clone(), engine.clone());
            tokio::spawn(async move { subs.follow(&engine, &Out::Test(tx), false, since).await })
        };
        // The second one starts; its baseline is being computed when a file changes.
        log.flush().await;
        let since = log.written();
        let id = subs
            .begin(DIAGNOSTICS_URI, Target::Diagnostics, None, since)
            .await
            .unwrap();
        log.emit("file_changed", json!({"files": ["a.py"], "by": "outside"}));
        log.flush().await;
        // The follower reads the change and tells the first subscription of it (having passed
        // over the second, if it drops events of a subscription being made).
        assert_eq!(told.recv().await.as_deref(), Some(EVENTS_URI));
        // The baseline is in place (computed before the change, say): the change is told.
        let baseline = seen(&engine, &Target::Diagnostics).await.unwrap();
        subs.settle(DIAGNOSTICS_URI, id, baseline, since).await;
        let heard = tokio::time::timeout(Duration::from_secs(5), told.recv()).await;
        assert_eq!(heard.ok().flatten().as_deref(), Some(DIAGNOSTICS_URI));
        follower.abort();
    }

    /// A session holds at most `MAX_SUBSCRIPTIONS`; subscribing again to one it holds replaces
    /// it (nothing grows), and one more is refused with a clear error.
    #[tokio::test]
    async fn subscriptions_per_session_are_capped_and_resubscribing_grows_nothing() {
        let subs = Subscriptions::default();
        let uri = |i: usize| format!("{DIAGNOSTICS_PREFIX}f{i}.txt");
        for i in 0..MAX_SUBSCRIPTIONS {
            let target = Target::parse(&uri(i)).unwrap();
            subs.begin(&uri(i), target, None, 0).await.unwrap();
        }
        for _ in 0..3 {
            subs.begin(&uri(7), Target::parse(&uri(7)).unwrap(), None, 0)
                .await
                .unwrap();
        }
        assert_eq!(subs.watched.lock().await.len(), MAX_SUBSCRIPTIONS);
        let more = uri(MAX_SUBSCRIPTIONS);
        let e = subs
            .begin(&more, Target::parse(&more).unwrap(), None, 0)
            .await
            .unwrap_err();
        assert_eq!(e.code, rmcp::model::ErrorCode::INVALID_REQUEST, "{e:?}");
        assert!(e.message.contains("too many subscriptions"), "{e:?}");
        subs.remove(&uri(0)).await;
        subs.begin(&more, Target::parse(&more).unwrap(), None, 0)
            .await
            .unwrap();
    }

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
        // Two hex digits, no sign.
        assert_eq!(Target::parse("lspgate://diagnostics/a%+5"), None);
        assert_eq!(Target::parse("lspgate://diagnostics/a%-5"), None);
        assert_eq!(Target::parse("lspgate://diagnostics/a%5"), None);
        assert_eq!(Target::parse("lspgate://other"), None);
    }
}
