//! The daemon's side of the status page (`mcp::status`): what it shows (`snapshot`: per root its
//! servers with pid, state, memory, uptime, restarts, last error and open documents, its
//! watcher, diagnostics counts with the worst files, running activities with their progress,
//! recent events; the connections attached), what its buttons do (restart a server, cancel an
//! activity, stop the daemon), and where it is served: `daemon status --web` (`Request::Web`)
//! has the daemon bind a loopback listener for the page on first use (port 0, a token of its
//! own that is never written anywhere) and answers its URL with a one-time ticket; a daemon
//! started with `--http` serves the page on that listener too, with the same keys.
//!
//! `Request::Snapshot` gives `daemon status` the same facts for its tables.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};

use serde_json::{Value, json};

use super::protocol::Answer;
use super::{Daemon, tree_rss};
use crate::mcp::status::{BoxFut, Page, Source, auth::Keys};
use crate::ops::Workspace;

/// Recent events a snapshot carries per root.
const RECENT: usize = 40;
/// Files a snapshot names per root, worst first.
const WORST: usize = 5;

/// The page's keys, the page itself (made on first use) and its on-demand listener.
#[derive(Default)]
pub(super) struct PageHost {
    keys: Arc<Keys>,
    page: OnceLock<Arc<Page>>,
    /// The on-demand listener's base URL, once bound.
    url: tokio::sync::OnceCell<String>,
}

/// What the page reads of the daemon (weakly: the page does not keep a stopped daemon).
struct DaemonSource(Weak<Daemon>);

impl Daemon {
    /// The status page of this daemon.
    pub(super) fn page(self: &Arc<Self>) -> Arc<Page> {
        self.web
            .page
            .get_or_init(|| {
                let source: Arc<dyn Source> = Arc::new(DaemonSource(Arc::downgrade(self)));
                Arc::new(Page::new(self.web.keys.clone(), source))
            })
            .clone()
    }

    /// Every workspace with its root, grouped by root (several when environments differ).
    fn by_root(&self) -> BTreeMap<PathBuf, Vec<Arc<Workspace>>> {
        let mut out: BTreeMap<PathBuf, Vec<Arc<Workspace>>> = BTreeMap::new();
        if let Ok(w) = self.workspaces.lock() {
            for s in w.values() {
                let root = s.ws.registry().root().path().to_path_buf();
                out.entry(root).or_default().push(s.ws.clone());
            }
        }
        out
    }
}

/// `Request::Web`: the page's URL with a one-time ticket, its listener bound first if need be.
pub(super) async fn web(daemon: &Arc<Daemon>) -> Answer {
    let bound = daemon
        .web
        .url
        .get_or_try_init(|| listen(daemon.clone()))
        .await;
    let base = match bound {
        Ok(b) => b,
        Err(e) => return Answer::refused(e),
    };
    match daemon.web.keys.mint() {
        Ok(ticket) => Answer::ok(json!({
            "url": format!("{base}/status?ticket={ticket}"),
            "expires_in_secs": crate::mcp::status::auth::TICKET_LIFE.as_secs(),
        })),
        Err(e) => Answer::refused(e),
    }
}

/// Binds the page's loopback listener and serves it until the daemon stops.
async fn listen(daemon: Arc<Daemon>) -> Result<String, String> {
    let tcp = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| format!("cannot listen for the status page: {e}"))?;
    let addr = tcp
        .local_addr()
        .map_err(|e| format!("cannot listen for the status page: {e}"))?;
    let token = crate::mcp::http::Token::generate()?;
    let page = daemon.page();
    let mut stopping = daemon.http.stopping();
    tracing::info!(%addr, "serving the status page");
    tokio::spawn(async move {
        let stop = async move {
            let _ = stopping.wait_for(|s| *s).await;
        };
        crate::mcp::http::serve_page(tcp, &token, page, stop).await;
    });
    Ok(format!("http://{addr}"))
}

impl Source for DaemonSource {
    fn snapshot(&self) -> BoxFut<'_, Value> {
        Box::pin(async move {
            match self.0.upgrade() {
                Some(d) => snapshot(&d).await,
                None => json!({"state": "stopping"}),
            }
        })
    }

    fn logs(&self) -> Vec<(String, Arc<crate::events::EventLog>)> {
        let Some(d) = self.0.upgrade() else {
            return Vec::new();
        };
        let mut out: Vec<(String, Arc<crate::events::EventLog>)> = Vec::new();
        for (root, all) in d.by_root() {
            for ws in all {
                if !out.iter().any(|(_, l)| Arc::ptr_eq(l, ws.events())) {
                    out.push((root.display().to_string(), ws.events().clone()));
                }
            }
        }
        out
    }

    fn stopping(&self) -> tokio::sync::watch::Receiver<bool> {
        match self.0.upgrade() {
            Some(d) => d.http.stopping(),
            // A daemon gone is stopped.
            None => tokio::sync::watch::channel(true).1,
        }
    }

    fn pulse(&self) -> tokio::sync::watch::Receiver<u64> {
        match self.0.upgrade() {
            Some(d) => d.conns.pulse(),
            None => tokio::sync::watch::channel(0).1,
        }
    }

    fn memory(&self) -> Value {
        let Some(d) = self.0.upgrade() else {
            return json!([]);
        };
        let mut out = Vec::new();
        for (root, all) in d.by_root() {
            for ws in all {
                for s in ws.registry().running() {
                    if let Some(pid) = s.client().pid() {
                        out.push(json!({"root": root, "name": s.name, "pid": pid, "rss_bytes": tree_rss(pid)}));
                    }
                }
            }
        }
        json!({"at_ms": crate::events::store::now_ms(), "servers": out})
    }

    fn restart(&self, root: String, name: String) -> BoxFut<'_, Result<Value, String>> {
        Box::pin(async move {
            let d = self.0.upgrade().ok_or("the daemon is stopping")?;
            let all = d
                .by_root()
                .remove(&PathBuf::from(&root))
                .ok_or_else(|| format!("no workspace on {root}"))?;
            let mut restarted = Vec::new();
            for ws in all {
                if ws.registry().list().contains(&name) {
                    let st = ws
                        .registry()
                        .restart(&name)
                        .await
                        .map_err(|e| e.to_string())?;
                    restarted.extend(st);
                }
            }
            if restarted.is_empty() {
                return Err(format!("no server {name} on {root}"));
            }
            d.conns.bump();
            Ok(json!({"servers": restarted}))
        })
    }

    fn cancel(&self, root: String, id: String) -> BoxFut<'_, Result<Value, String>> {
        Box::pin(async move {
            let d = self.0.upgrade().ok_or("the daemon is stopping")?;
            let ws = d
                .by_root()
                .remove(&PathBuf::from(&root))
                .and_then(|all| all.into_iter().next())
                .ok_or_else(|| format!("no workspace on {root}"))?;
            let engine = crate::ops::Engine::session(ws, Default::default());
            let r = engine
                .activity(&id, true)
                .await
                .map_err(|e| e.to_string())?;
            serde_json::to_value(r).map_err(|e| e.to_string())
        })
    }

    fn stop(&self) {
        if let Some(d) = self.0.upgrade() {
            d.stop.notify_one();
        }
    }
}

/// Everything the page shows (protocol §5, "Status page").
pub(super) async fn snapshot(d: &Arc<Daemon>) -> Value {
    let mut roots = Vec::new();
    let mut seen_logs: Vec<Arc<crate::events::EventLog>> = Vec::new();
    for (root, all) in d.by_root() {
        let mut servers = Vec::new();
        let mut watcher = Value::Null;
        let mut sessions = 0;
        let mut activities = Vec::new();
        let mut diagnostics = Value::Null;
        let mut events = Vec::new();
        for ws in &all {
            let registry = ws.registry();
            if let Some(w) = registry.watch_status() {
                watcher = serde_json::to_value(w).unwrap_or_default();
            }
            let running = registry.running();
            for st in registry.statuses() {
                let mut v = serde_json::to_value(&st).unwrap_or_default();
                if let Some(pid) = st.pid {
                    v["rss_bytes"] = json!(tree_rss(pid));
                    v["uptime_secs"] = json!(crate::procfs::uptime_secs(pid));
                }
                if let Some(s) = running
                    .iter()
                    .find(|s| s.name == st.name && st.pid.is_some() && s.client().pid() == st.pid)
                {
                    v["open_documents"] = json!(s.docs.open_count());
                    v["indexing"] = json!(s.client().busy().titles);
                }
                servers.push(v);
            }
            if let Some(shared) = d.workspaces.lock().ok().and_then(|w| {
                w.values()
                    .find(|s| Arc::ptr_eq(&s.ws, ws))
                    .map(|s| s.sessions.clone())
            }) {
                sessions += shared.load(std::sync::atomic::Ordering::Acquire);
            }
            if seen_logs.iter().any(|l| Arc::ptr_eq(l, ws.events())) {
                continue;
            }
            seen_logs.push(ws.events().clone());
            if ws.state().exists() {
                diagnostics = counts(ws).await;
                activities = running_activities(ws).await;
            }
            if let Ok(page) = ws.events().tail(RECENT).await {
                events.extend(page.events.into_iter().map(
                    |e| json!({"seq": e.seq, "time": e.time, "kind": e.kind, "data": e.data}),
                ));
            }
        }
        roots.push(json!({
            "root": root,
            "servers": servers,
            "watcher": watcher,
            "sessions": sessions,
            "diagnostics": diagnostics,
            "activities": activities,
            "events": events,
        }));
    }
    json!({
        "version": super::protocol::VERSION,
        "pid": std::process::id(),
        "uptime_secs": d.started.elapsed().as_secs(),
        "rss_bytes": crate::procfs::resident_bytes(std::process::id()),
        "sessions": d.conns.list(),
        "roots": roots,
        "http": d.http.status(),
        "at_ms": crate::events::store::now_ms(),
    })
}

/// Errors and warnings on the root, file by file as last counted, the worst first.
async fn counts(ws: &Workspace) -> Value {
    let read = ws
        .state()
        .run(|c| {
            let mut q = c.prepare(
                "SELECT file, SUM(errors), SUM(warnings) FROM diagnostic_counts GROUP BY file
                 HAVING SUM(errors) + SUM(warnings) > 0 ORDER BY SUM(errors) DESC, SUM(warnings) DESC, file",
            )?;
            let rows = q.query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })
        .await;
    let Ok(rows) = read else {
        return Value::Null;
    };
    let errors: i64 = rows.iter().map(|r| r.1).sum();
    let warnings: i64 = rows.iter().map(|r| r.2).sum();
    let worst: Vec<Value> = rows
        .iter()
        .take(WORST)
        .map(|(f, e, w)| json!({"file": f, "errors": e, "warnings": w}))
        .collect();
    json!({"errors": errors, "warnings": warnings, "files": rows.len(), "worst": worst})
}

/// The activities running on the root, with their progress when this process runs them.
async fn running_activities(ws: &Arc<Workspace>) -> Vec<Value> {
    let read = ws
        .state()
        .run(|c| {
            let mut q = c.prepare(
                "SELECT n, kind, started FROM activities WHERE state = 'running' ORDER BY n",
            )?;
            let rows = q.query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })
        .await;
    let engine = crate::ops::Engine::session(ws.clone(), Default::default());
    read.unwrap_or_default()
        .into_iter()
        .map(|(n, kind, started)| {
            let id = crate::events::store::activity_id(n);
            let progress = engine.activity_progress(&id);
            json!({"id": id, "kind": kind, "started": started, "progress": progress})
        })
        .collect()
}
