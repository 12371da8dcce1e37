//! Handing servers out: a file's servers in routing order, each instance started on first use
//! (or its failure kept), and the running ones. Every server anyone is handed comes through
//! `instance`, which is the consistency point's guard (`sync` first).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use serde_json::json;

use super::{Admit, Entry, Instance, Registry, Server};
use crate::error::{CoreError, Kind};
use crate::lsp::Cap;
use crate::workspace::presets::PRESETS;
use crate::workspace::server_root;

impl Registry {
    /// The instance of `entry` for `root`, started (or its failure) on first use. Every
    /// server anyone is handed comes from here, so here is the consistency point's guard: what
    /// changed on disk before the call is delivered to the servers (`sync`, one `FIONREAD` when
    /// nothing did) before a server is handed out, whether its caller synced or not.
    pub(super) async fn instance(
        &self,
        entry: &Arc<Entry>,
        root: &Path,
    ) -> Result<Arc<Server>, CoreError> {
        self.sync().await;
        // Not cached in the instance: trusting the file later lets it start.
        if entry.untrusted().await? {
            self.stop_entry(
                entry,
                "the workspace is trusted now: started again with all its features",
            );
            if let Ok(mut m) = entry.instances.lock() {
                m.clear();
            }
        }
        let inst = {
            let mut map = entry
                .instances
                .lock()
                .map_err(|_| CoreError::new(Kind::ServerFailed, "registry poisoned"))?;
            map.entry(root.to_path_buf())
                .or_insert_with(|| {
                    Arc::new(Instance {
                        cell: OnceCell::new(),
                    })
                })
                .clone()
        };
        let server = inst
            .cell
            .get_or_init(|| self.start(entry, root))
            .await
            .clone();
        if let Ok(s) = &server {
            s.touch();
        }
        server
    }

    /// The servers for a file of `language`, in routing order, each started if needed (or its
    /// failure). Empty when no server serves the language.
    pub async fn servers_for(
        &self,
        path: &Path,
        language: &str,
    ) -> Vec<Result<Arc<Server>, CoreError>> {
        let mut out = Vec::new();
        for e in self.routed(language) {
            let root = self.server_root_of(path, &e.roots);
            out.push(self.instance(&e, &root).await);
        }
        out
    }

    /// The servers for a file that are running (or start now); those that cannot are left out.
    pub async fn started_for(&self, path: &Path, language: &str) -> Vec<Arc<Server>> {
        self.servers_for(path, language)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// `started_for`, starting only the servers `admit` accepts by name and languages (empty:
    /// every language): those a client fronted with some servers only is never made to start.
    pub async fn started_for_where(
        &self,
        path: &Path,
        language: &str,
        admit: &Admit<'_>,
    ) -> Vec<Arc<Server>> {
        let mut out = Vec::new();
        for e in self.routed(language) {
            if !admit(&e.name, &e.languages) {
                continue;
            }
            let root = self.server_root_of(path, &e.roots);
            if let Ok(s) = self.instance(&e, &root).await {
                out.push(s);
            }
        }
        out
    }

    /// The first server for the file that supports `cap`, starting servers in routing order
    /// only as far as needed.
    pub async fn first_supporting(
        &self,
        path: &Path,
        language: &str,
        cap: Cap,
        tool: &str,
    ) -> Result<Arc<Server>, CoreError> {
        let mut failure = None;
        let mut lacking = Vec::new();
        for e in self.routed(language) {
            let root = self.server_root_of(path, &e.roots);
            match self.instance(&e, &root).await {
                Ok(s) if s.supports(cap) => return Ok(s),
                Ok(s) => lacking.push(s.name.clone()),
                // The call would route here: say so, rather than ask the next server.
                Err(err) if err.kind == Kind::UntrustedConfig => return Err(err),
                Err(err) => {
                    failure.get_or_insert(err);
                }
            }
        }
        if !lacking.is_empty() {
            return Err(CoreError::new(
                Kind::NotSupported,
                format!("{} does not support {tool}", lacking.join(" and ")),
            )
            .with_data(json!({"servers": lacking, "tool": tool, "capability": cap.name()})));
        }
        Err(failure.unwrap_or_else(|| self.no_server(language, path)))
    }

    /// `no_server` for a language nobody serves, saying what would.
    pub fn no_server(&self, language: &str, path: &Path) -> CoreError {
        let candidates: Vec<_> = PRESETS
            .iter()
            .filter(|p| p.languages.contains(&language))
            .map(|p| json!({"server": p.name, "command": p.command, "install": p.install_hint()}))
            .collect();
        let hint = match candidates.first() {
            Some(c) => format!(
                "; install one with `{}`",
                c["install"].as_str().unwrap_or("")
            ),
            None => "; configure one in lspgate.toml ([[server]] with languages = [\"…\"])".into(),
        };
        CoreError::new(
            Kind::NoServer,
            format!(
                "no language server serves {language} files ({}){hint}",
                self.root.relative(path)
            ),
        )
        .with_data(json!({"language": language, "candidates": candidates}))
    }

    /// Running servers, to ask: what changed on disk before the call is delivered to them
    /// first (the guard `instance` has, for callers that ask every running server).
    pub async fn serving(&self) -> Vec<Arc<Server>> {
        self.sync().await;
        self.running()
    }

    /// Running servers, as they are (for status, and for telling them of lspgate's own
    /// writes before those are delivered); a caller that asks them takes `serving`.
    pub fn running(&self) -> Vec<Arc<Server>> {
        self.entries()
            .iter()
            .flat_map(|e| e.instances())
            .filter_map(|(_, i)| i.cell.get().and_then(|r| r.as_ref().ok()).cloned())
            .filter(|s| s.client().is_alive())
            .collect()
    }

    /// Starts the workspace-root instance of every server now (for `serve -- CMD`, whose
    /// capabilities decide the tool list).
    pub async fn start_all(&self) -> Vec<Result<Arc<Server>, CoreError>> {
        let root = self.root.path().to_path_buf();
        let mut out = Vec::new();
        for e in self.entries() {
            out.push(self.instance(&e, &root).await);
        }
        out
    }

    /// Starts (if need be) the root instance of every server that serves every language (an
    /// explicit command, a configured server naming no language): what serves a root whatever
    /// it holds.
    pub async fn started_for_all(&self, admit: &Admit<'_>) -> Vec<Arc<Server>> {
        let root = self.root.path().to_path_buf();
        let mut out = Vec::new();
        for e in self
            .entries()
            .into_iter()
            .filter(|e| e.languages.is_empty() && admit(&e.name, &e.languages))
        {
            match self.instance(&e, &root).await {
                Ok(s) => out.push(s),
                Err(err) => tracing::debug!("starting {}: {err}", e.name),
            }
        }
        out
    }
}

/// How long a server root found for a folder is used without looking again, at most: changes
/// the watcher delivers forget them all at once, and this bounds what it cannot see (a marker
/// made in an ignored folder).
const ROOT_SEEN_FOR: Duration = Duration::from_secs(5);

/// A file and the markers looked for.
type RootKey = (PathBuf, Vec<String>);

/// The server roots found, by file and markers, with when each was found.
#[derive(Default)]
pub(super) struct RootsSeen(Mutex<HashMap<RootKey, (PathBuf, Instant)>>);

impl RootsSeen {
    /// Forgets them all (files were created, removed or changed).
    pub(super) fn forget(&self) {
        if let Ok(mut seen) = self.0.lock() {
            seen.clear();
        }
    }
}

impl Registry {
    /// The root a server with `markers` uses for `path` (`workspace::server_root`): found again
    /// only after the watcher delivered a change or `ROOT_SEEN_FOR`, since looking costs a
    /// `stat` per marker and folder on every request. Without a watcher, always looked for.
    pub(super) fn server_root_of(&self, path: &Path, markers: &[String]) -> PathBuf {
        if markers.is_empty() || self.watcher.get().is_none() {
            return server_root(self.root.path(), path, markers);
        }
        let key = (path.to_path_buf(), markers.to_vec());
        if let Ok(seen) = self.roots.0.lock()
            && let Some((root, at)) = seen.get(&key)
            && at.elapsed() < ROOT_SEEN_FOR
        {
            return root.clone();
        }
        let root = server_root(self.root.path(), path, markers);
        if let Ok(mut seen) = self.roots.0.lock() {
            // Bounded: a check visits every file once.
            if seen.len() >= 4096 {
                seen.clear();
            }
            seen.insert(key, (root.clone(), Instant::now()));
        }
        root
    }
}
