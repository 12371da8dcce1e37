//! One running server instance (surviving restarts of its process), its open documents, and
//! the request wrapper that retries once in a restarted process; `SupState` is what its
//! supervisor knows of its crashes.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use url::Url;

use super::readiness::{Projects, Readied, Scope};
use crate::documents::{Documents, Lease};
use crate::lsp::{Cap, LspClient, LspError};
use crate::watch::{Change, ChangeKind};
use crate::workspace::Languages;
use crate::workspace::presets::{OnDiskChange, Readiness};

/// At most this many changed files are opened in a server that reads changes from lspgate
/// (tsserver); past it, the server reloads its projects instead.
const OPEN_CHANGED_LIMIT: usize = 64;

pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Crashes further apart than this start a new streak.
pub(super) const STREAK_WINDOW: Duration = Duration::from_secs(60);

/// Something the MCP client should hear about (sent as `notifications/message`).
#[derive(Debug, Clone)]
pub struct ServerEvent {
    /// info, warning or error.
    pub level: &'static str,
    pub server: String,
    pub message: String,
}

#[derive(Default)]
pub(super) struct SupState {
    pub(super) restarting: bool,
    pub(super) given_up: Option<String>,
    pub(super) restarts: u32,
    pub(super) streak: u32,
    pub(super) last_crash: Option<std::time::Instant>,
    pub(super) last_error: Option<String>,
}

/// A running server instance (surviving restarts of its process) and its open documents.
pub struct Server {
    pub name: String,
    pub root: PathBuf,
    pub docs: Documents,
    pub(super) allow: Vec<String>,
    /// Languages it serves (empty: every language).
    pub(super) languages: Vec<String>,
    /// What it needs to notice files that changed on disk.
    pub(super) on_change: OnDiskChange,
    /// What it needs before a workspace-wide answer is complete.
    pub(super) readiness: Readiness,
    /// What readiness prepared once per process (see `readiness`): tsserver's projects, or the
    /// file of clangd's compilation database it opened.
    pub(super) projects: tokio::sync::Mutex<Option<Projects>>,
    /// The first process: its capabilities (and so the tool set) stay in force after restarts.
    pub(super) first: Arc<LspClient>,
    pub(super) sup: Mutex<SupState>,
    /// Bumped when a restart completes or the server is given up.
    pub(super) generation: tokio::sync::watch::Sender<u64>,
    /// When a call last asked for it.
    pub(super) last_used: Mutex<std::time::Instant>,
}

impl Server {
    /// Notes that a call asked for it now.
    pub(super) fn touch(&self) {
        if let Ok(mut t) = self.last_used.lock() {
            *t = std::time::Instant::now();
        }
    }

    /// How long since a call last asked for it.
    pub fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .map(|t| t.elapsed())
            .unwrap_or_default()
    }

    /// The current process.
    pub fn client(&self) -> Arc<LspClient> {
        self.docs.client()
    }

    /// Whether the server offers `cap` and the config allows lspgate to use it.
    pub fn supports(&self, cap: Cap) -> bool {
        (self.allow.is_empty() || self.allow.iter().any(|a| a == cap.name()))
            && self.first.supports(cap)
    }

    /// Why the server was given up, if it was.
    pub fn given_up(&self) -> Option<String> {
        self.sup.lock().ok().and_then(|s| s.given_up.clone())
    }

    /// The restart generation (bumped when a restart completes or the server is given up).
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// After `dead` (the process of generation `since`) ended: waits, bounded, for its
    /// replacement. Err says why there is none (given up, or not in time).
    pub async fn await_restart(&self, since: u64, dead: &Arc<LspClient>) -> Result<(), String> {
        let mut generation = self.generation.subscribe();
        let wait = async {
            loop {
                if let Some(why) = self.given_up() {
                    return Err(why);
                }
                if *generation.borrow_and_update() != since || !Arc::ptr_eq(&self.client(), dead) {
                    return Ok(());
                }
                if generation.changed().await.is_err() {
                    return Err(format!("{} is gone", self.name));
                }
            }
        };
        tokio::time::timeout(MAX_BACKOFF + Duration::from_secs(60), wait)
            .await
            .unwrap_or_else(|_| Err(format!("{} crashed and no restart came in time", self.name)))
    }

    /// Runs `f` against the current process; if that process dies under it, waits for the
    /// restart, reopens the leased document there, and runs `f` once more.
    pub async fn request<T, F, Fut>(&self, lease: Option<&Lease>, f: F) -> Result<T, LspError>
    where
        F: Fn(Arc<LspClient>) -> Fut,
        Fut: Future<Output = Result<T, LspError>>,
    {
        let since = self.generation();
        let client = self.client();
        let first = f(client.clone()).await;
        let Err(LspError::StreamClosed { stderr, .. }) = first else {
            return first;
        };
        match self.await_restart(since, &client).await {
            Ok(()) => {
                if let Some(lease) = lease {
                    lease.reopen();
                }
                f(self.client()).await
            }
            Err(why) => Err(LspError::StreamClosed {
                reason: why,
                stderr,
            }),
        }
    }

    pub(super) fn restart_count(&self) -> u32 {
        self.sup.lock().map(|s| s.restarts).unwrap_or(0)
    }
}

impl Server {
    /// What readiness works with of this server.
    fn readied(&self) -> Readied<'_> {
        Readied {
            name: &self.name,
            root: &self.root,
            docs: &self.docs,
            languages: &self.languages,
            readiness: self.readiness,
            projects: &self.projects,
        }
    }

    /// Waits (at most `bound`) until the server can answer a workspace-wide question
    /// completely, as its preset says, and returns what it can answer.
    pub async fn workspace_ready(&self, bound: Duration, languages: &Languages) -> Scope {
        self.readied().workspace_ready(bound, languages).await
    }

    /// Whatever readiness must prepare (tsserver's projects), begun in the background if it is
    /// not done: a wait for readiness given up (a bound, a client's cancel) does not undo it.
    pub fn prepare_in_background(self: &Arc<Self>, languages: &Arc<Languages>) {
        if self.readiness != Readiness::Projects {
            return;
        }
        let (s, languages) = (self.clone(), languages.clone());
        tokio::spawn(async move {
            s.prepare(&languages).await;
        });
    }

    /// Finds and loads tsserver's projects under the root, once (see `Readied::prepare`).
    pub(super) async fn prepare(&self, languages: &Languages) {
        self.readied().prepare(languages).await;
    }

    /// Forgets what readiness found (a restart, new project files).
    pub(super) fn rearm(&self) {
        if let Ok(mut p) = self.projects.try_lock() {
            *p = None;
        }
    }
}

/// Files of a delivery handled on the runtime's thread between two yields.
const CHUNK: usize = 256;

/// Whether `served` holds for any of `changes` (which it tells by their language, a stat or a
/// read each), yielding every `CHUNK`.
async fn any_served(changes: &[&Change], served: &impl Fn(&&Change) -> bool) -> bool {
    for chunk in changes.chunks(CHUNK) {
        if chunk.iter().any(served) {
            return true;
        }
        tokio::task::yield_now().await;
    }
    false
}

impl Server {
    /// Whether the server serves files of every language (a `-- CMD`, a config server naming
    /// none).
    pub fn every_language(&self) -> bool {
        self.languages.is_empty()
    }

    /// Whether the server serves files of `language`.
    pub fn serves(&self, language: &str) -> bool {
        self.languages.is_empty() || self.languages.iter().any(|l| l == language)
    }

    /// Brings the server up to date with files that changed on disk: its open documents follow
    /// the disk at once, what it pushed for changed files is dropped, its registered file
    /// watchers hear of the changes they asked for, and whatever else its preset says it
    /// needs is done (see `OnDiskChange`).
    ///
    /// A flood's delivery is handled a `CHUNK` of files at a time, yielding between them, so
    /// that the runtime's thread serves other roots and the daemon meanwhile.
    pub(super) async fn disk_changed(&self, changes: &[Change], languages: &Languages) {
        let mut mine: Vec<Change> = Vec::new();
        for chunk in changes.chunks(CHUNK) {
            mine.extend(
                chunk
                    .iter()
                    .filter(|c| c.path.starts_with(&self.root) || self.docs.is_open(&c.path))
                    .cloned(),
            );
            tokio::task::yield_now().await;
        }
        if mine.is_empty() {
            return;
        }
        let client = self.client();
        let mut others: Vec<&Change> = Vec::new();
        for chunk in mine.chunks(CHUNK) {
            for c in chunk {
                if self.docs.is_open(&c.path) {
                    self.docs.refresh(&c.path, false);
                } else {
                    others.push(c);
                    if let Ok(uri) = Url::from_file_path(&c.path) {
                        client.forget_pushed(&uri);
                        self.docs.changed_outside(&uri);
                    }
                }
            }
            tokio::task::yield_now().await;
        }
        for chunk in mine.chunks(CHUNK) {
            client.did_change_watched_files(chunk);
            tokio::task::yield_now().await;
        }
        // What readiness found may no longer hold: project files came or went, or many files
        // appeared at once.
        let created = mine
            .iter()
            .filter(|c| c.kind == ChangeKind::Created)
            .count();
        let projects_changed = mine.iter().any(|c| {
            c.kind != ChangeKind::Changed
                && c.path.file_name().is_some_and(|n| {
                    matches!(
                        n.to_str(),
                        Some("tsconfig.json" | "jsconfig.json" | "compile_commands.json")
                    )
                })
        });
        if projects_changed || created > OPEN_CHANGED_LIMIT {
            self.rearm();
        }
        let served = |c: &&Change| self.serves(&languages.detect(&c.path));
        match self.on_change {
            OnDiskChange::Watched => {
                if !client.watches_files() && any_served(&others, &served).await {
                    self.docs.resync();
                }
            }
            OnDiskChange::ResyncOpen => {
                if any_served(&others, &served).await {
                    self.docs.resync();
                }
            }
            OnDiskChange::OpenChanged => {
                // Files it serves that appeared or went away (or a folder that did, which may
                // have held some) change its projects' file lists and module resolution, which
                // only a reload redoes at once; a changed file is opened, so it is read from
                // lspgate.
                let (listed, changed): (Vec<&Change>, Vec<&Change>) =
                    others.iter().partition(|c| c.kind != ChangeKind::Changed);
                let relisted = listed.iter().any(|c| c.path.extension().is_none())
                    || any_served(&listed, &served).await;
                let mut kept: Vec<&Change> = Vec::new();
                for chunk in changed.chunks(CHUNK) {
                    kept.extend(chunk.iter().filter(|c| served(c)));
                    tokio::task::yield_now().await;
                }
                let changed = kept;
                if relisted || changed.len() > OPEN_CHANGED_LIMIT {
                    if let Err(e) = client.tsserver_reload().await {
                        tracing::warn!(server = %self.name, "reloading projects: {e}");
                    }
                } else {
                    for c in changed {
                        let language = languages.detect(&c.path);
                        match self.docs.lease(&c.path, &language, None).await {
                            Ok(lease) => drop(lease),
                            Err(e) => tracing::debug!(
                                server = %self.name,
                                "opening {}: {e}",
                                c.path.display()
                            ),
                        }
                    }
                }
            }
        }
    }
}
