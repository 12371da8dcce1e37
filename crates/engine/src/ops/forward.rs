//! Requests forwarded as LSP for a client of lspgate's own language-server face (`lspgate
//! lsp`): routed as the tools route (the file's servers, in order, the first that serves the
//! request), the document held at the asking client's content (its unsaved buffer as an
//! overlay, else the disk's), workspace-wide requests once the server is ready, however long it takes. The answer is
//! the server's, untouched; the front end converts positions with what this hands back.
//!
//! `forward` answers an `Ask` (the document, the client's unsaved text, the method, one server or
//! all; `until_ready` first for workspace-wide requests, the tools' readiness asked step by step
//! while the server is still at work), each server's parameters made from the document as it sees
//! it; also `forward_workspace`, `present_languages` and `document_diagnostics` (pulled or pushed,
//! for an overlay or the disk). Each reaches the consistency point first (`Registry::sync`), as
//! every tool call does. Answers are the servers' own JSON: only the face reads them.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

use super::Engine;
use crate::documents::Snapshot;
use crate::error::{Code, ToolError};
use crate::registry::{Admit, Scope, Server};

/// A server's answer to a forwarded request, and the document as the server saw it then (its
/// text and position encoding, to convert positions with).
pub struct Forwarded {
    pub server: String,
    pub result: Value,
    pub snap: Snapshot,
}

/// How a forwarded request picks its servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The first of the file's servers that serves it.
    First,
    /// Every server of the file that serves it (code actions: their answers are concatenated).
    All,
}

/// What a workspace-wide request is told while it waits for a server to be ready: the server
/// and what it is still doing, once per `READY_STEP` until it is ready.
pub type Busy<'a> = dyn Fn(&Server, &str) + Send + Sync + 'a;

/// Whether a forwarded request waits for its server to be ready first.
#[derive(Clone, Copy)]
pub enum Ready<'a> {
    /// No: it depends on its document alone.
    No,
    /// Until the server is ready, however long that takes (LSP has no way to say an answer is
    /// partial; the caller gives up by dropping the request, as on the client's cancel).
    Until(&'a Busy<'a>),
}

/// How long the languages a root holds are taken as found (`present_languages`).
const PRESENT_FOR: Duration = Duration::from_secs(30);

/// How often a request waiting for a server's readiness is told what the server is doing.
const READY_STEP: Duration = Duration::from_secs(1);

/// A request about a document, to forward.
pub struct Ask<'a> {
    pub path: &'a Path,
    /// The client's unsaved text of the document, held as an overlay while it is answered;
    /// `None`: the disk's.
    pub overlay: Option<&'a str>,
    pub method: &'a str,
    pub route: Route,
    /// Whether it depends on the whole workspace: it then waits for the server to be ready.
    pub ready: Ready<'a>,
    /// The servers it may start (and go to).
    pub admit: &'a Admit<'a>,
}

impl Engine {
    /// The path of a document URI the client named: inside the root, or `outside_root`.
    pub fn document_path(&self, uri: &str) -> Result<PathBuf, ToolError> {
        self.resolve(uri)
    }

    /// The languages the root holds: what a client of the face may open (their servers are
    /// started when it opens one, `Registry::start_for`). The walk (a tenth of a second on
    /// Django) is made once per `PRESENT_FOR` per root, not for every client's `initialize`:
    /// what it decides is only what `initialize` tells of servers not running yet.
    pub async fn present_languages(&self) -> Vec<String> {
        static SEEN: std::sync::Mutex<Vec<(PathBuf, std::time::Instant, Vec<String>)>> =
            std::sync::Mutex::new(Vec::new());
        let root = self.root().path().to_path_buf();
        if let Ok(seen) = SEEN.lock()
            && let Some((_, _, languages)) = seen
                .iter()
                .find(|(r, at, _)| *r == root && at.elapsed() < PRESENT_FOR)
        {
            return languages.clone();
        }
        let languages = self.scan_languages().await;
        if let Ok(mut seen) = SEEN.lock() {
            seen.retain(|(r, at, _)| *r != root && at.elapsed() < PRESENT_FOR);
            seen.push((root, std::time::Instant::now(), languages.clone()));
        }
        languages
    }

    /// The servers of `path` (started now if need be) that `serves` accepts, in routing order.
    pub async fn servers_of(
        &self,
        path: &Path,
        admit: &Admit<'_>,
        serves: impl Fn(&Server) -> bool,
    ) -> Vec<Arc<Server>> {
        let language = self.languages().detect(path);
        self.registry
            .started_for_where(path, &language, admit)
            .await
            .into_iter()
            .filter(|s| serves(s))
            .collect()
    }

    /// Forwards a request about a document (`ask`) to its servers that `serves` accepts;
    /// `params` makes each server's parameters from the document as it sees it (its
    /// encoding).
    pub async fn forward(
        &self,
        ask: Ask<'_>,
        serves: impl Fn(&Server) -> bool,
        params: impl Fn(&Snapshot) -> Value,
    ) -> Result<Vec<Forwarded>, ToolError> {
        let Ask {
            path,
            overlay,
            method,
            route,
            ready,
            admit,
        } = ask;
        // The consistency point, as for every tool: what was written before is delivered.
        self.registry.sync().await;
        let servers = self.servers_of(path, admit, serves).await;
        if servers.is_empty() {
            return Err(ToolError::new(
                Code::NotSupported,
                format!(
                    "no server of {} serves {method}",
                    self.root().relative(path)
                ),
            ));
        }
        let language = self.languages().detect(path);
        let mut out = Vec::new();
        for server in servers {
            if let Ready::Until(busy) = ready {
                self.until_ready(&server, busy).await;
            }
            let lease = server.docs.lease(path, &language, overlay).await?;
            let sent = params(&lease.snap);
            let result = server
                .request(Some(&lease), |c| {
                    let sent = sent.clone();
                    async move { c.forward(method, sent).await }
                })
                .await;
            match result {
                Ok(result) => out.push(Forwarded {
                    server: server.name.clone(),
                    result,
                    snap: lease.snap.clone(),
                }),
                // One server failing does not lose the others' answers.
                Err(e) if route == Route::All && !out.is_empty() => {
                    tracing::debug!(server = %server.name, "{method}: {e}");
                }
                Err(e) => return Err(e.into()),
            }
            if route == Route::First {
                break;
            }
        }
        Ok(out)
    }

    /// Waits until `server` is ready for workspace-wide questions, however long that takes:
    /// the readiness the tools wait for (`Server::workspace_ready`), asked again step by step
    /// while the server is still at work (`busy` told what it does), until it is ready, what
    /// it lacks is not a matter of time, or it is gone. What it can answer then.
    pub async fn until_ready(&self, server: &Arc<Server>, busy: &Busy<'_>) -> Scope {
        server.prepare_in_background(self.registry.detector());
        loop {
            let scope = server.workspace_ready(READY_STEP, self.languages()).await;
            match &scope.waiting {
                Some(doing) if server.client().is_alive() => busy(server, doing),
                _ => return scope,
            }
        }
    }

    /// Forwards a request that names no document (`workspace/symbol`) to every running server
    /// that `serves` accepts, each once it is ready (`until_ready`, `busy` told meanwhile):
    /// their answers.
    pub async fn forward_workspace(
        &self,
        method: &str,
        params: &Value,
        serves: impl Fn(&Server) -> bool,
        busy: &Busy<'_>,
    ) -> Vec<(Arc<Server>, Value)> {
        let mut out = Vec::new();
        for server in self.registry.serving().await {
            if !serves(&server) {
                continue;
            }
            self.until_ready(&server, busy).await;
            let sent = params.clone();
            let r = server
                .request(None, |c| {
                    let sent = sent.clone();
                    async move { c.forward(method, sent).await }
                })
                .await;
            match r {
                Ok(v) => out.push((server, v)),
                Err(e) => tracing::debug!(server = %server.name, "{method}: {e}"),
            }
        }
        out
    }

    /// The diagnostics each server of `path` reports for its content: `overlay` (a client's
    /// unsaved buffer, analysed as an overlay) or the disk's; pulled where the server offers
    /// it, else its push for that content, bounded. Per server: the document as it saw it and
    /// the diagnostics exactly as sent.
    pub async fn document_diagnostics(
        &self,
        path: &Path,
        overlay: Option<&str>,
        admit: &Admit<'_>,
    ) -> Vec<(Snapshot, Vec<Value>)> {
        self.registry.sync().await;
        let mut out = Vec::new();
        for server in self.servers_of(path, admit, |_| true).await {
            let language = self.languages().detect(path);
            let Ok(lease) = server.docs.lease(path, &language, overlay).await else {
                continue;
            };
            match server
                .docs
                .diagnostics_as_sent(&lease, self.opts.diagnostics_timeout)
                .await
            {
                Ok(d) => out.push((
                    lease.snap.clone(),
                    d.diagnostics.into_iter().map(|d| d.raw).collect(),
                )),
                Err(e) => {
                    tracing::debug!(server = %server.name, "diagnostics of {}: {e}", path.display())
                }
            }
        }
        out
    }
}
