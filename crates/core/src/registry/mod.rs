//! The server registry and lifecycle: servers defined (presets, config, `-- CMD`), a file routed
//! to its servers in the root their markers choose (one instance per (server, root)), lazy
//! start and install, sharing, health, restart, stop. A failing server never affects others.
//!
//! `server` is one running instance, `supervisor` keeps it alive. The registry owns the workspace's
//! `Languages` and its watcher. A server of an untrusted lspgate.toml is an entry whose launch is
//! `Launch::Untrusted`: listed (state `untrusted`) and answering `untrusted_config`, which is never
//! cached in the instance, so trusting the file later lets it start without a restart. Capabilities
//! (and so the tool list) are those of an instance's first process. No server outlives lspgate:
//! process groups are killed on every exit path (shutdown, signals, the binary's panic hook) and
//! the kernel kills them if lspgate is SIGKILLed (the parent-death signal).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio::sync::OnceCell;

use crate::error::CoreError;
use crate::lsp::Cap;

mod define;
mod feed;
mod launch;
mod lazy;
mod readiness;
mod route;
mod server;
mod status;
mod supervisor;
mod sync;
mod tree;

use crate::watch::{WatchOptions, Watcher};
use crate::workspace::presets::{Launch, Origin, ServerSpec};
use crate::workspace::{Languages, Root};
pub use feed::{Claims, RegistryEvent, Sink};
pub use lazy::Routed;
pub use readiness::Scope;
pub use server::{Server, ServerEvent};
pub use status::ServerStatus;
pub use supervisor::resident_bytes;

/// Which servers to start, by name and the languages they serve (empty: every language).
pub type Admit<'a> = dyn Fn(&str, &[String]) -> bool + Sync + 'a;

/// When a crashed server is restarted (`--restart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestartPolicy {
    Never,
    Always,
    /// At most this many crashes in a streak (crashes less than a minute apart).
    Limit(u32),
}

impl std::str::FromStr for RestartPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<RestartPolicy, String> {
        match s {
            "never" => Ok(RestartPolicy::Never),
            "always" => Ok(RestartPolicy::Always),
            n => n
                .parse::<u32>()
                .map(RestartPolicy::Limit)
                .map_err(|_| format!("`{s}` is not never, always or a number")),
        }
    }
}

/// Knobs of the registry.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    pub open_documents: usize,
    pub request_timeout: Duration,
    /// Bounds per request kind (capability name → bound).
    pub timeouts: HashMap<String, Duration>,
    /// Install a missing preset on first use.
    pub install: bool,
    pub restart: RestartPolicy,
    /// First restart delay; it doubles within a streak, up to 30 s.
    pub backoff: Duration,
    /// The workspace watcher, started with the first server.
    pub watch: WatchOptions,
    /// The PATH servers are found on and started with (a daemon serves sessions with their
    /// own); `None`: lspgate's own.
    pub path: Option<std::ffi::OsString>,
    /// The whole environment servers start with: that of the session that made the workspace
    /// (its client's, in the daemon); `None`: lspgate's own.
    pub env: Option<crate::workspace::env::SharedEnv>,
    /// The variables that set this workspace's servers apart from another's on the same root
    /// (`workspace::env`), for `daemon status`.
    pub identity: std::collections::BTreeMap<String, String>,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        RegistryOptions {
            open_documents: 200,
            request_timeout: Duration::from_secs(30),
            timeouts: HashMap::new(),
            install: false,
            restart: RestartPolicy::Limit(3),
            backoff: Duration::from_millis(500),
            watch: WatchOptions::default(),
            path: None,
            env: None,
            identity: Default::default(),
        }
    }
}

struct Instance {
    cell: OnceCell<Result<Arc<Server>, CoreError>>,
}

struct Entry {
    name: String,
    spec: tokio::sync::Mutex<ServerSpec>,
    languages: Vec<String>,
    roots: Vec<String>,
    origin: Origin,
    command: Mutex<String>,
    /// What a restricted preset goes without on an untrusted workspace (`servers` shows it
    /// while the workspace is not trusted).
    note: Mutex<Option<(String, crate::workspace::trust::Untrusted)>>,
    instances: Mutex<HashMap<PathBuf, Arc<Instance>>>,
    restarts: Mutex<u32>,
    /// How trusting the workspace's lspgate.toml changes what it serves (`define`).
    deferred: Option<define::Deferred>,
}

impl Entry {
    fn new(spec: ServerSpec) -> Entry {
        Entry {
            name: spec.name.clone(),
            languages: spec.languages.clone(),
            roots: spec.roots.clone(),
            origin: spec.origin,
            command: Mutex::new(spec.command_line()),
            note: Mutex::new(
                spec.restricted
                    .as_ref()
                    .map(|r| (r.status_note(), r.untrusted.clone())),
            ),
            spec: tokio::sync::Mutex::new(spec),
            instances: Mutex::default(),
            restarts: Mutex::new(0),
            deferred: None,
        }
    }

    /// Whether it serves `language` now (a server of an untrusted lspgate.toml waits while a
    /// built-in stands in for it, see `define`).
    fn serves(&self, language: &str) -> bool {
        (self.languages.is_empty() || self.languages.iter().any(|l| l == language))
            && self.deferred.as_ref().is_none_or(|d| d.serves(language))
    }

    /// `untrusted_config` while the entry comes from an untrusted lspgate.toml, or is a preset
    /// that does not start on an untrusted workspace; once the content it was loaded from (or
    /// the workspace) is trusted, its launch is the real one (no restart needed). `Ok(true)`:
    /// a restricted preset was just lifted to its full spec, so its restricted instances must go.
    async fn untrusted(&self) -> Result<bool, CoreError> {
        let mut spec = self.spec.lock().await;
        let mut lifted = false;
        if let Some(r) = &spec.restricted
            && r.untrusted.granted()
        {
            *spec = r.full.clone();
            lifted = true;
            if let Ok(mut n) = self.note.lock() {
                *n = None;
            }
        }
        if let Launch::Untrusted(inner, u) = &spec.launch {
            if !u.granted() {
                return Err(spec.untrusted_error(u));
            }
            spec.launch = (**inner).clone();
        }
        if let Ok(mut c) = self.command.lock() {
            *c = spec.command_line();
        }
        Ok(lifted)
    }

    fn instances(&self) -> Vec<(PathBuf, Arc<Instance>)> {
        self.instances
            .lock()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    }
}

/// Every server lspgate may run for a workspace. Safe to share between tasks.
pub struct Registry {
    root: Root,
    languages: Arc<Languages>,
    entries: RwLock<Vec<Arc<Entry>>>,
    opts: RegistryOptions,
    events: tokio::sync::broadcast::Sender<ServerEvent>,
    /// Lifecycle and deliveries, for the durable event log (see `feed_to`).
    feed: Arc<feed::Feed>,
    /// Extra open documents allowed while batches run (see `batch`).
    batch_room: Arc<std::sync::atomic::AtomicUsize>,
    /// Itself, for the tasks it spawns.
    me: std::sync::Weak<Registry>,
    /// The workspace watcher, started before the first server (see `sync`).
    watcher: OnceCell<Arc<Watcher>>,
    /// Held while changes are delivered to the servers: a call's consistency point waits for
    /// a delivery in progress.
    delivering: tokio::sync::Mutex<()>,
    /// When each file's latest change was delivered, on the registry's own clock (`sync`).
    clock: sync::ChangeClock,
    /// Dropped with the registry: ends its background tasks.
    _alive: tokio::sync::watch::Sender<()>,
    /// The workspace's trust when it is not trusted (`Config::workspace`): a preset installed
    /// on first use is restricted as the others are.
    workspace: std::sync::OnceLock<crate::workspace::trust::Untrusted>,
    /// The server roots found for a folder and a set of markers (`route::server_root_of`).
    roots: route::RootsSeen,
    /// The workspace's files, kept while the watcher vouches for them (`tree::Tree`).
    tree: tree::Tree,
}

/// lspgate's own writes in flight (see `Registry::claim_writes`).
pub struct Claim<'a> {
    feed: &'a feed::Feed,
    paths: Vec<PathBuf>,
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        self.feed.unclaim(&self.paths);
    }
}

/// While alive, every server may keep up to `room` more documents open; dropping it closes
/// what is over the cap again.
pub struct Batch<'a> {
    registry: &'a Registry,
    room: usize,
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.registry
            .batch_room
            .fetch_sub(self.room, std::sync::atomic::Ordering::AcqRel);
        for server in self.registry.running() {
            server.docs.trim_to_cap();
        }
    }
}

/// The most documents a batch keeps open beyond the cap.
const BATCH_ROOM_LIMIT: usize = 5_000;

impl Registry {
    pub fn new(root: Root, languages: Languages, opts: RegistryOptions) -> Arc<Registry> {
        Arc::new_cyclic(|me| Registry {
            root,
            languages: Arc::new(languages),
            entries: RwLock::default(),
            opts,
            events: tokio::sync::broadcast::channel(256).0,
            feed: Arc::default(),
            batch_room: Arc::default(),
            me: me.clone(),
            watcher: OnceCell::new(),
            delivering: tokio::sync::Mutex::new(()),
            clock: sync::ChangeClock::default(),
            _alive: tokio::sync::watch::channel(()).0,
            workspace: std::sync::OnceLock::new(),
            roots: route::RootsSeen::default(),
            tree: tree::Tree::default(),
        })
    }

    /// Language detection for the workspace (invalidated as files change).
    pub fn detector(&self) -> &Arc<Languages> {
        &self.languages
    }

    /// Room for a batch of `files` documents (at most `BATCH_ROOM_LIMIT`), so a check that
    /// visits every file does not close (and make the server re-analyse) the files it opened.
    pub fn batch(&self, files: usize) -> Batch<'_> {
        let room = files.min(BATCH_ROOM_LIMIT);
        self.batch_room
            .fetch_add(room, std::sync::atomic::Ordering::AcqRel);
        Batch {
            registry: self,
            room,
        }
    }

    /// Restarts, give-ups and memory kills, as they happen.
    pub fn events(&self) -> tokio::sync::broadcast::Receiver<ServerEvent> {
        self.events.subscribe()
    }

    /// How many receivers of `events` are alive (sessions forwarding them).
    pub fn event_listeners(&self) -> usize {
        self.events.receiver_count()
    }

    /// Sends what the registry sees happen (server lifecycle, deliveries of changes on disk) to
    /// `sink`, in order, from now on, lspgate's writes in flight shared as `claims` with the
    /// other registries reporting there; set once, by the workspace that records it.
    pub fn feed_to(&self, sink: Sink, claims: Claims) {
        if self.feed.set(sink, claims).is_err() {
            tracing::warn!("the registry already reports to an event log");
        }
    }

    /// Notes that lspgate is about to write `paths`: a delivery that carries them before the
    /// edit hands them over (`sync_with`) counts them as lspgate's own. The claim ends with that
    /// hand-over, or when the returned guard is dropped.
    pub fn claim_writes(&self, paths: &[PathBuf]) -> Claim<'_> {
        self.feed.claim(paths);
        Claim {
            feed: &self.feed,
            paths: paths.to_vec(),
        }
    }

    fn report(&self, e: RegistryEvent) {
        self.feed.send(e);
    }

    pub fn root(&self) -> &Root {
        &self.root
    }

    /// The PATH this workspace's servers and tasks are found on and run with (the session's,
    /// in a daemon); `None`: lspgate's own.
    pub fn path(&self) -> Option<&std::ffi::OsStr> {
        self.opts.path.as_deref()
    }

    /// The variables that set this workspace's servers apart (see `RegistryOptions::identity`).
    pub fn identity(&self) -> &std::collections::BTreeMap<String, String> {
        &self.opts.identity
    }

    fn entries(&self) -> Vec<Arc<Entry>> {
        self.entries.read().map(|e| e.clone()).unwrap_or_default()
    }

    fn entry(&self, name: &str) -> Option<Arc<Entry>> {
        self.entries().into_iter().find(|e| e.name == name)
    }

    /// Adds a server; one with the same name is replaced (and its instances stopped).
    pub fn register(&self, spec: ServerSpec) {
        self.insert(Entry::new(spec));
    }

    fn insert(&self, entry: Entry) {
        let entry = Arc::new(entry);
        let old = self.entries.write().ok().and_then(|mut list| {
            match list.iter().position(|e| e.name == entry.name) {
                Some(i) => Some(std::mem::replace(&mut list[i], entry)),
                None => {
                    list.push(entry);
                    None
                }
            }
        });
        if let Some(old) = old {
            self.stop_entry(&old, "replaced by a new definition");
        }
    }

    /// Removes a server and stops its instances. Returns whether it was there.
    pub fn remove(&self, name: &str) -> bool {
        let removed = self.entries.write().ok().and_then(|mut list| {
            let i = list.iter().position(|e| e.name == name)?;
            Some(list.remove(i))
        });
        match removed {
            Some(e) => {
                self.stop_entry(&e, "removed");
                true
            }
            None => false,
        }
    }

    /// The spec of a server by name.
    pub async fn get(&self, name: &str) -> Option<ServerSpec> {
        let e = self.entry(name)?;
        let spec = e.spec.lock().await.clone();
        Some(spec)
    }

    /// Names of every server, in routing order.
    pub fn list(&self) -> Vec<String> {
        self.entries().iter().map(|e| e.name.clone()).collect()
    }

    /// Names of the servers of a namespace (`builtin`, `local`, …).
    pub fn by_namespace(&self, namespace: &str) -> Vec<String> {
        self.entries()
            .iter()
            .filter(|e| e.name.split('/').next() == Some(namespace))
            .map(|e| e.name.clone())
            .collect()
    }

    /// The servers for `language`, in routing order. A built-in that stood in for a server of
    /// the workspace's lspgate.toml stops once that file is trusted: its own server takes over.
    fn routed(&self, language: &str) -> Vec<Arc<Entry>> {
        let all = self.entries();
        for e in &all {
            if e.deferred.as_ref().is_some_and(|d| d.handed_over()) {
                self.stop_entry(e, "lspgate.toml is trusted now: its own servers take over");
                if let Ok(mut m) = e.instances.lock() {
                    m.clear();
                }
            }
        }
        all.into_iter().filter(|e| e.serves(language)).collect()
    }

    /// What the workspace's lspgate.toml defines that waits for `lspgate trust` while
    /// built-ins serve in its place, a sentence each; none once the file is trusted.
    pub fn waiting(&self) -> Vec<String> {
        self.entries()
            .iter()
            .filter_map(|e| e.deferred.as_ref()?.waits())
            .collect()
    }

    /// Names of the servers for a language, in routing order.
    pub fn by_language(&self, language: &str) -> Vec<String> {
        self.entries()
            .iter()
            .filter(|e| e.serves(language))
            .map(|e| e.name.clone())
            .collect()
    }

    /// Whether a server that can run (installed, or installable with `--install`) serves
    /// `language`.
    pub fn can_serve(&self, language: &str) -> bool {
        self.entries()
            .iter()
            .filter(|e| e.serves(language))
            .any(|e| self.runnable(e))
    }

    /// Whether an entry can start: installed, or installable with `--install`.
    fn runnable(&self, e: &Entry) -> bool {
        self.opts.install
            || !matches!(
                e.spec
                    .try_lock()
                    .map(|s| matches!(s.launch, Launch::Missing(_))),
                Ok(true)
            )
    }

    /// Languages some registered server serves (`*` for an all-languages server).
    pub fn languages(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .entries()
            .iter()
            .flat_map(|e| {
                if e.languages.is_empty() {
                    vec!["*".to_string()]
                } else {
                    e.languages.clone()
                }
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Stops the servers nobody has asked anything for `idle` (they start again on the next
    /// question); returns their names.
    pub fn stop_idle(&self, idle: Duration) -> Vec<String> {
        let why = format!("unused for {}s", idle.as_secs());
        self.stop_where_because(&why, |s| s.idle_for() >= idle)
    }

    /// Stops the servers `pick` chooses; returns their names.
    pub fn stop_where(&self, pick: impl Fn(&Server) -> bool) -> Vec<String> {
        self.stop_where_because("stopped by lspgate", pick)
    }

    /// `stop_where`, saying why in the event log.
    fn stop_where_because(&self, why: &str, pick: impl Fn(&Server) -> bool) -> Vec<String> {
        let mut stopped = Vec::new();
        for e in self.entries() {
            let Ok(mut map) = e.instances.lock() else {
                continue;
            };
            map.retain(|_, inst| {
                let Some(Ok(server)) = inst.cell.get() else {
                    return true;
                };
                if !pick(server) {
                    return true;
                }
                stopped.push(server.name.clone());
                self.report(RegistryEvent::Stopped {
                    server: server.name.clone(),
                    root: server.root.clone(),
                    reason: why.to_string(),
                });
                let client = server.client();
                tokio::spawn(async move { client.shutdown().await });
                false
            });
        }
        stopped
    }

    /// Whether `cap` may be served for files of `languages`: a running server has it, or one
    /// not started yet (and installed, or installable) might.
    pub fn may_support(&self, cap: Cap, languages: &[String]) -> bool {
        let relevant =
            |e: &&Arc<Entry>| e.languages.is_empty() || languages.iter().any(|l| e.serves(l));
        self.entries().iter().filter(relevant).any(|e| {
            let insts = e.instances();
            if insts.is_empty() {
                return self.runnable(e);
            }
            insts.iter().any(|(_, i)| match i.cell.get() {
                Some(Ok(s)) => s.supports(cap),
                Some(Err(_)) => false,
                None => true,
            })
        })
    }

    /// Restarts every instance of `name` (a server never started is started at the root).
    pub async fn restart(&self, name: &str) -> Result<Vec<ServerStatus>, CoreError> {
        let Some(e) = self.entry(name) else {
            return Err(CoreError::invalid(format!(
                "no server `{name}`; known: {}",
                self.list().join(", ")
            )));
        };
        let roots: Vec<PathBuf> = {
            let old = e.instances();
            for (_, inst) in &old {
                if let Some(Ok(s)) = inst.cell.get() {
                    s.client().shutdown().await;
                    self.report(RegistryEvent::Stopped {
                        server: s.name.clone(),
                        root: s.root.clone(),
                        reason: "restart asked (restart_server)".into(),
                    });
                }
            }
            if let Ok(mut m) = e.instances.lock() {
                m.clear();
            }
            let mut r: Vec<PathBuf> = old.into_iter().map(|(r, _)| r).collect();
            if r.is_empty() {
                r.push(self.root.path().to_path_buf());
            }
            r
        };
        if let Ok(mut n) = e.restarts.lock() {
            *n += 1;
        }
        for root in roots {
            let _ = self.instance(&e, &root).await;
        }
        Ok(self
            .statuses()
            .into_iter()
            .filter(|s| s.name == name)
            .collect())
    }

    /// Starts, in the background, the root instance of a server for each language present.
    pub fn warm(self: &Arc<Self>, languages: Vec<String>) {
        for e in self.entries() {
            if languages.iter().any(|l| e.serves(l)) {
                let reg = self.clone();
                tokio::spawn(async move {
                    let root = reg.root.path().to_path_buf();
                    if let Err(err) = reg.instance(&e, &root).await {
                        tracing::warn!("warming {}: {err}", e.name);
                    }
                });
            }
        }
    }

    fn stop_entry(&self, e: &Entry, why: &str) {
        for (_, inst) in e.instances() {
            if let Some(Ok(s)) = inst.cell.get() {
                self.report(RegistryEvent::Stopped {
                    server: s.name.clone(),
                    root: s.root.clone(),
                    reason: why.to_string(),
                });
                let client = s.client().clone();
                tokio::spawn(async move { client.shutdown().await });
            }
        }
    }

    /// Stops every server (shutdown, exit, bounded wait, kill).
    pub async fn stop_all(&self) {
        // All at once: each is bounded (shutdown, exit, a wait, a kill), and so is the whole.
        let stops = self.running().into_iter().map(|s| async move {
            s.client().shutdown().await;
            self.report(RegistryEvent::Stopped {
                server: s.name.clone(),
                root: s.root.clone(),
                reason: "lspgate stopped".into(),
            });
        });
        futures::future::join_all(stops).await;
    }
}

#[cfg(test)]
mod tests;
