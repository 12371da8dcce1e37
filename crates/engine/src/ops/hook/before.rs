//! Baselines for what lspgate knew nothing of before a write: asked now, of the content before
//! it (as the front end read it from the event): each server is shown the written files' old
//! text as overlays and asked for the diagnostics of the files with no baseline, the written ones
//! included; a file the write created had none. Nothing asked here is kept (`Held` holds what
//! was said of the disk only).

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::Said;
use crate::ops::Engine;

/// A written file's content before the write, as far as the event tells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "was", content = "text")]
pub enum Before {
    Text(String),
    /// The write created it.
    Absent,
    Unknown,
}

/// Baselines by (file, server).
pub(super) type Rebuilt = HashMap<(PathBuf, String), Arc<Vec<Said>>>;

impl Engine {
    /// What each server would have said of `missing` (files, each with the servers it has no
    /// baseline from) before the write, from `before` (the written files' old contents), until
    /// `deadline`. Only servers that see every written file's old content are asked.
    pub(super) async fn rebuild(
        &self,
        written: &[PathBuf],
        before: &[(PathBuf, Before)],
        missing: &[(PathBuf, Vec<String>)],
        deadline: Instant,
    ) -> Rebuilt {
        let mut out = Rebuilt::new();
        // Every written file must be known as it was: an unknown one would make the answers a
        // mix of before and after.
        let known: HashSet<&PathBuf> = before
            .iter()
            .filter(|(_, b)| matches!(b, Before::Text(_) | Before::Absent))
            .map(|(p, _)| p)
            .collect();
        if !written.iter().all(|f| known.contains(f)) {
            return out;
        }
        // A file the write created is on disk now, and overlays cannot hide it: only the
        // written files' own baselines can be had then.
        let absent: HashSet<&PathBuf> = before
            .iter()
            .filter(|(_, b)| *b == Before::Absent)
            .map(|(p, _)| p)
            .collect();
        let is_written: HashSet<&PathBuf> = written.iter().collect();
        let missing: Vec<(PathBuf, Vec<String>)> = missing
            .iter()
            .filter(|(p, _)| absent.is_empty() || is_written.contains(p))
            .cloned()
            .collect();
        let missing = missing.as_slice();
        // A created file had nothing to say before.
        for (p, servers) in missing {
            if absent.contains(p) {
                for s in servers {
                    out.insert((p.clone(), s.clone()), Arc::default());
                }
            }
        }
        let texts: Vec<(&PathBuf, &str)> = before
            .iter()
            .filter_map(|(p, b)| match b {
                Before::Text(t) => Some((p, t.as_str())),
                _ => None,
            })
            .collect();
        if texts.is_empty() {
            return out;
        }
        let work = self.rebuild_with(&texts, missing, &mut out);
        if tokio::time::timeout_at(deadline, work).await.is_err() {
            tracing::debug!("hook: the budget ran out rebuilding baselines");
        }
        out
    }

    async fn rebuild_with(
        &self,
        texts: &[(&PathBuf, &str)],
        missing: &[(PathBuf, Vec<String>)],
        out: &mut Rebuilt,
    ) {
        let mut servers: Vec<String> = missing.iter().flat_map(|(_, s)| s.clone()).collect();
        servers.sort();
        servers.dedup();
        tracing::debug!("hook: rebuilding baselines from {servers:?} for {missing:?}");
        for name in servers {
            // The written files of this server's languages, as overlays. Only servers that
            // answer when asked: a push computed under an overlay would outlive it.
            let mut overlays = Vec::new();
            for (path, text) in texts {
                let Some(server) = self.server_named(path, &name).await else {
                    continue;
                };
                if !pulls(&server) {
                    continue;
                }
                let language = self.languages().detect(path);
                if let Ok(lease) = server.docs.lease(path, &language, Some(text)).await {
                    overlays.push((server, (*path).clone(), lease));
                }
            }
            if overlays.is_empty() {
                continue;
            }
            for (path, wanted) in missing {
                if !wanted.contains(&name) || out.contains_key(&(path.clone(), name.clone())) {
                    continue;
                }
                let said = self.said_now(path, &name, &overlays).await;
                tracing::debug!(
                    "hook: {} said {:?} of {} before the write",
                    name,
                    said.as_ref().map(Vec::len),
                    path.display()
                );
                if let Some(said) = said {
                    out.insert((path.clone(), name.clone()), Arc::new(said));
                }
            }
        }
    }

    /// What `server` says of `path` now (an overlay's content when it is one).
    async fn said_now(
        &self,
        path: &Path,
        name: &str,
        overlays: &[(
            Arc<crate::registry::Server>,
            PathBuf,
            crate::documents::Lease,
        )],
    ) -> Option<Vec<Said>> {
        let timeout = self.opts.diagnostics_timeout;
        let found = match overlays.iter().find(|(_, p, _)| p == path) {
            Some((server, _, lease)) => server
                .docs
                .diagnostics(lease, timeout)
                .await
                .map(|d| (d, lease.snap.clone())),
            None => {
                let server = self.server_named(path, name).await?;
                let language = self.languages().detect(path);
                let lease = server.docs.lease(path, &language, None).await.ok()?;
                server
                    .docs
                    .diagnostics(&lease, timeout)
                    .await
                    .map(|d| (d, lease.snap.clone()))
            }
        };
        let (d, snap) = found.ok()?;
        if !d.fresh {
            return None;
        }
        Some(
            crate::ops::diags(&snap, d.diagnostics)
                .iter()
                .map(|x| Said::of(x, snap.line(x.line)))
                .collect(),
        )
    }

    /// `path`'s server named `name`, started if it was not.
    async fn server_named(&self, path: &Path, name: &str) -> Option<Arc<crate::registry::Server>> {
        let language = self.languages().detect(path);
        self.registry
            .servers_for(path, &language)
            .await
            .into_iter()
            .flatten()
            .find(|s| s.name == name)
    }
}

/// Whether `server` answers diagnostics when asked (a pull, or tsserver's own requests) rather
/// than pushing them when it likes.
pub(super) fn pulls(server: &crate::registry::Server) -> bool {
    server.client().supports(crate::lsp::Cap::PullDiagnostics)
}
