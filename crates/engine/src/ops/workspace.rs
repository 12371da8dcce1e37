//! `Workspace`: what every session on one root shares (its servers, its state database, event
//! log, edit lock and activities, what was learnt of the tree), and `OnRoot`, the part of it
//! that the daemon's workspaces on one root share whatever their environment.
//!
//! Sessions whose environment differs get a `Workspace` each; those on one root still share one
//! `OnRoot` (state database, event log, edit lock, heavy calls and activities; a workspace's
//! shutdown interrupts only the activities it started). Their registries report to the one log with
//! shared claims of lspgate's writes in flight (one workspace's edit is lspgate's in another's
//! deliveries), and a change is logged once whichever watcher delivers it (`events::store`'s
//! `file_versions`).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use super::{EngineOptions, activity};
use crate::registry::Registry;
use crate::workspace::Root;

/// How long stopping a workspace waits for its event log to be written out.
const LOG_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// What every session on one workspace root shares: its servers (the registry, with its
/// watcher), the edit journal and the one-edit-at-a-time lock, and what was learnt of the tree.
/// In the daemon, sessions that resolve to the same root, config and environment share one.
pub struct Workspace {
    pub(crate) registry: Arc<Registry>,
    /// Languages the workspace holds, scanned once (for the tool list).
    pub(crate) present: std::sync::OnceLock<Vec<String>>,
    /// Each language the workspace holds, with one file of it (walked once).
    pub(crate) samples: tokio::sync::OnceCell<Vec<(String, PathBuf)>>,
    /// The state database (the edit journal, the event log, the activities), opened on first
    /// use; shared by the workspaces on its root (`OnRoot`).
    pub(crate) state: crate::events::StateDb,
    /// The durable event log (shared as the database is).
    pub(crate) events: Arc<crate::events::EventLog>,
    /// Background activities and the heavy calls in flight, on the root (shared as the
    /// database is).
    pub(crate) activities: Arc<activity::Activities>,
    /// Tells this workspace from the others on its root (the activities it started).
    pub(crate) id: u64,
    /// One edit applies at a time, whichever session (and workspace on the root) asks.
    pub(crate) edit_lock: Arc<tokio::sync::Mutex<()>>,
    /// What the hooks remember: diagnostics by the change clock, sessions' clocks.
    pub(crate) held: super::hook::Held,
    /// What each harness session's edits owe its turn-end gate and its later answers.
    pub(crate) ledger: super::hook::Ledger,
    /// Each file's imported names, for the hooks' dependents.
    pub(crate) imports: super::hook::Imports,
    /// Checks' fresh answers, for re-checks that ask only what a change can affect.
    pub(crate) answers: Arc<super::gates::Answers>,
    /// Keeps what this workspace shares with the others on its root alive.
    _on_root: Arc<OnRoot>,
}

/// What every workspace on one root shares in this process: in the daemon, sessions on one
/// root whose environment differs (PATH, timeouts, an explicit server command) get a workspace
/// each, with servers of their own, but one state database, one event log (one writer, each
/// change logged once whoever's watcher delivers it), one edit lock, and one count of heavy
/// calls and set of activities (any session polls or cancels any; `max_inflight` is the first
/// workspace's).
struct OnRoot {
    state: crate::events::StateDb,
    events: Arc<crate::events::EventLog>,
    edit_lock: Arc<tokio::sync::Mutex<()>>,
    activities: Arc<activity::Activities>,
}

impl OnRoot {
    /// The one for `root`'s state in `state_dir`, made when no workspace holds it.
    fn get(state_dir: &std::path::Path, root: &Root, max_inflight: usize) -> Arc<OnRoot> {
        type Live = std::sync::Mutex<HashMap<(PathBuf, PathBuf), std::sync::Weak<OnRoot>>>;
        static LIVE: std::sync::LazyLock<Live> = std::sync::LazyLock::new(Live::default);
        let key = (state_dir.to_path_buf(), root.path().to_path_buf());
        let make = || {
            let state = crate::events::StateDb::new(state_dir, root);
            Arc::new(OnRoot {
                events: Arc::new(crate::events::EventLog::start(state.clone())),
                state,
                edit_lock: Arc::default(),
                activities: Arc::new(activity::Activities::new(max_inflight)),
            })
        };
        let Ok(mut live) = LIVE.lock() else {
            return make();
        };
        live.retain(|_, w| w.strong_count() > 0);
        if let Some(shared) = live.get(&key).and_then(std::sync::Weak::upgrade) {
            return shared;
        }
        let shared = make();
        live.insert(key, Arc::downgrade(&shared));
        shared
    }
}

impl Workspace {
    pub fn new(registry: Arc<Registry>, opts: EngineOptions) -> Arc<Workspace> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let on_root = OnRoot::get(&opts.state_dir, registry.root(), opts.max_inflight);
        on_root.events.record(&registry);
        let ws = Arc::new(Workspace {
            registry,
            activities: on_root.activities.clone(),
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            present: std::sync::OnceLock::new(),
            samples: tokio::sync::OnceCell::new(),
            state: on_root.state.clone(),
            events: on_root.events.clone(),
            edit_lock: on_root.edit_lock.clone(),
            held: Default::default(),
            ledger: Default::default(),
            imports: Default::default(),
            answers: Default::default(),
            _on_root: on_root,
        });
        ws.recover_edits();
        ws
    }

    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// How many heavy calls may run at once on this root.
    pub fn max_inflight(&self) -> usize {
        self.activities.max_inflight()
    }

    /// Ends the workspace: its running activities stop (recorded `failed`, reason
    /// `interrupted`; waited for at most `activity::INTERRUPT_WAIT`), every server stops
    /// whatever the activities did (shutdown, exit, bounded wait, kill), and the event log is
    /// written out (waited for at most `LOG_WAIT`). Bounded as a whole.
    pub async fn shutdown(&self) {
        if tokio::time::timeout(activity::INTERRUPT_WAIT, self.interrupt_activities())
            .await
            .is_err()
        {
            tracing::warn!(
                "activities still winding down after {} s; stopping the servers anyway",
                activity::INTERRUPT_WAIT.as_secs()
            );
        }
        self.registry.stop_all().await;
        if tokio::time::timeout(LOG_WAIT, self.events.flush())
            .await
            .is_err()
        {
            tracing::warn!(
                "the event log was not written out within {} s",
                LOG_WAIT.as_secs()
            );
        }
    }

    /// The durable event log.
    pub fn events(&self) -> &Arc<crate::events::EventLog> {
        &self.events
    }

    /// The root's state database (the journal, the event log, the activities).
    pub fn state(&self) -> &crate::events::StateDb {
        &self.state
    }

    /// Whether activities this workspace started still run (it must not be dropped meanwhile).
    pub fn busy(&self) -> bool {
        self.activities.running_of(self.id) > 0
    }
}
