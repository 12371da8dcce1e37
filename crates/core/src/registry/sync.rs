//! Keeping every server in step with the disk, whoever writes: the workspace watcher starts
//! before the first server; at the start of every call (`sync`, the consistency point) every
//! change made before the call arrived is delivered to the servers, and between calls a
//! debounce loop delivers bursts once they settle. The registry, not the watcher, decides what
//! each server is told (`Server::disk_changed`). A flood costs its root only: a rescan's walk
//! runs on the blocking pool, the debounce loop rescans at most every `RESCAN_GAP`, and
//! servers are told a chunk of files at a time, the runtime's thread serving others between.
//!
//! Between calls the debounce loop delivers a burst after `QUIET` (50 ms), or `MAX_WAIT` (500 ms)
//! at most; lspgate's own edits are delivered through the same path (`sync_with`), so each change
//! reaches a server once. Per server (`Server::disk_changed`): open documents resent when their
//! content changed (closed when deleted), pushed diagnostics of changed files dropped,
//! `didChangeWatchedFiles` with what its registered watchers want (nothing to a server that
//! registered none), then its preset's `OnDiskChange` (clangd's open documents resent, since it
//! rereads headers only then; tsserver's changed files opened in it and its projects reloaded when
//! files come or go). The `ChangeClock` ticks once per delivery, before any server is told, and
//! keeps each file's latest tick (`tick`, `changed_at`), which the hooks' baselines and shell
//! commands' files are read from. When nothing changed, a call costs one `FIONREAD` of the
//! watcher's queue, with no hop to the blocking pool.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::time::Instant;

use super::{Registry, RegistryEvent};
use crate::watch::{Batch, Change, ChangeKind, WatchStatus, Watcher};

/// A burst is delivered once no new change came for this long…
const QUIET: Duration = Duration::from_millis(50);
/// …or once it has lasted this long.
const MAX_WAIT: Duration = Duration::from_millis(500);
/// After a rescan (events lost: a flood), the debounce loop waits this long before it
/// delivers again: a flood that goes on costs a walk of the root every few seconds, not
/// every burst. A call delivers at once all the same.
const RESCAN_GAP: Duration = Duration::from_secs(2);

impl Registry {
    /// Starts the workspace watcher (once), before the first server starts: a change made
    /// after that is seen, one made before it is on disk when the server reads it.
    pub(super) async fn ensure_watcher(&self) {
        self.watcher
            .get_or_init(|| async {
                let w = Watcher::start(self.root.path(), self.opts.watch.clone()).await;
                tokio::spawn(debounce(
                    self.me.clone(),
                    w.clone(),
                    self._alive.subscribe(),
                ));
                w
            })
            .await;
    }

    /// The consistency point, at the start of every call: every change made on disk before
    /// it (by anyone) has been delivered to the servers when it returns. Costs one
    /// `FIONREAD` of the watcher's queue when nothing changed.
    pub async fn sync(&self) {
        self.sync_with(Vec::new()).await;
    }

    /// `sync`, with the changes lspgate's own edit made among them (each file is delivered
    /// once, whether the watcher saw it too or not).
    pub async fn sync_with(&self, own: Vec<Change>) {
        self.deliver_pending(own).await;
    }

    /// `sync_with`; true when what it delivered was a rescan.
    async fn deliver_pending(&self, own: Vec<Change>) -> bool {
        let _delivering = self.delivering.lock().await;
        let own_paths: Vec<PathBuf> = own.iter().map(|c| c.path.clone()).collect();
        let batch = match self.watcher.get() {
            Some(w) => w.take_with(own).await,
            None => Batch {
                changes: own,
                rescan: false,
            },
        };
        let rescan = batch.rescan;
        if !batch.is_empty() {
            self.deliver(batch, &own_paths).await;
        }
        rescan
    }

    /// Delivers a batch; `own` are the files lspgate's edit handed over with it.
    async fn deliver(&self, batch: Batch, own: &[PathBuf]) {
        // A marker may have come or gone: servers' roots are found again.
        self.roots.forget();
        let delivered: Vec<PathBuf> = batch.changes.iter().map(|c| c.path.clone()).collect();
        let mut changes = batch.changes;
        if batch.rescan {
            // Events were lost (the kernel's queue, or the watcher's bound): anything may have
            // changed. The walk and its merge are on the blocking pool.
            tracing::warn!(
                root = %self.root.path().display(),
                "file events were lost; telling servers every file may have changed"
            );
            let root = self.root.path().to_path_buf();
            changes = tokio::task::spawn_blocking(move || {
                let mut seen: std::collections::HashSet<PathBuf> =
                    changes.iter().map(|c| c.path.clone()).collect();
                for path in crate::workspace::walk(&root, crate::workspace::WALK_LIMIT) {
                    if seen.insert(path.clone()) {
                        changes.push(Change {
                            path,
                            kind: ChangeKind::Changed,
                        });
                    }
                }
                changes
            })
            .await
            .unwrap_or_default();
        }
        self.tree
            .delivered(self.root.path(), &changes, batch.rescan);
        tracing::debug!(changes = changes.len(), "delivering changes on disk");
        // Ticked before any server is told: whatever was computed at an earlier tick knew
        // nothing of these changes.
        self.clock.tick(changes.iter().map(|c| c.path.as_path()));
        self.languages
            .forget(changes.iter().map(|c| c.path.as_path()));
        // A flood's delivery is long: others are served between its steps (and its chunks).
        tokio::task::yield_now().await;
        for server in self.running() {
            server.disk_changed(&changes, &self.languages).await;
        }
        // Recorded once the servers know (a reader that reacts to it asks them afresh); the
        // files a rescan added are not listed: nobody saw them change.
        let (own, outside) = self.feed.split(own, &delivered);
        if !own.is_empty() || !outside.is_empty() {
            self.report(RegistryEvent::FilesChanged { own, outside });
        }
    }

    /// Starts the watcher now if no server has, and says how it is doing (for `doctor`).
    pub async fn start_watching(&self) -> WatchStatus {
        self.ensure_watcher().await;
        self.watch_status().unwrap_or(WatchStatus {
            mode: "off".into(),
            watched: 0,
            note: None,
        })
    }

    /// How the watcher is doing; `None` before the first server started it.
    pub fn watch_status(&self) -> Option<WatchStatus> {
        self.watcher.get().map(|w| w.status())
    }
}

/// The registry's clock of changes on disk: a tick per delivery, and the tick at which each
/// file's latest change was delivered (the newest `MAX_TRACKED` files). What was computed at
/// a tick before a file's knew nothing of that change (the hooks' baselines).
#[derive(Default)]
pub(super) struct ChangeClock {
    now: std::sync::atomic::AtomicU64,
    at: std::sync::Mutex<std::collections::HashMap<PathBuf, u64>>,
    /// The highest tick of a change the map has forgotten: `changed_since` of an earlier
    /// tick may miss files.
    forgotten: std::sync::atomic::AtomicU64,
}

/// Files whose latest change the clock remembers, at most (the oldest are forgotten first).
const MAX_TRACKED: usize = 50_000;

impl ChangeClock {
    fn tick<'a>(&self, paths: impl Iterator<Item = &'a std::path::Path>) {
        use std::sync::atomic::Ordering;
        let Ok(mut at) = self.at.lock() else { return };
        let now = self.now.fetch_add(1, Ordering::AcqRel) + 1;
        for p in paths {
            at.insert(p.to_path_buf(), now);
        }
        if at.len() > MAX_TRACKED {
            let mut ticks: Vec<u64> = at.values().copied().collect();
            ticks.sort_unstable();
            let keep_from = ticks[ticks.len() - MAX_TRACKED / 2];
            at.retain(|_, t| *t >= keep_from);
            self.forgotten
                .fetch_max(keep_from.saturating_sub(1), Ordering::AcqRel);
        }
    }
}

impl Registry {
    /// The clock now: the number of deliveries of changes on disk so far.
    pub fn tick(&self) -> u64 {
        self.clock.now.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The tick at which `path`'s latest change was delivered, if the clock remembers one.
    pub fn changed_at(&self, path: &std::path::Path) -> Option<u64> {
        self.clock.at.lock().ok()?.get(path).copied()
    }

    /// `changed_since(since)` when the clock still remembers every file changed after `since`,
    /// else `None` (older entries were forgotten: anything may have changed).
    pub fn changed_since_complete(&self, since: u64) -> Option<Vec<PathBuf>> {
        // Without a watcher (off, or not started) the clock knows only lspgate's own edits.
        if self.watch_status().is_none_or(|w| w.mode == "off") {
            return None;
        }
        let forgotten = self
            .clock
            .forgotten
            .load(std::sync::atomic::Ordering::Acquire);
        if since < forgotten {
            return None;
        }
        let out = self.changed_since(since);
        // Forgotten meanwhile: the list may miss some.
        (self
            .clock
            .forgotten
            .load(std::sync::atomic::Ordering::Acquire)
            <= since)
            .then_some(out)
    }

    /// The files whose latest change was delivered after tick `since`, in path order.
    pub fn changed_since(&self, since: u64) -> Vec<PathBuf> {
        let Ok(at) = self.clock.at.lock() else {
            return Vec::new();
        };
        let mut out: Vec<PathBuf> = at
            .iter()
            .filter(|(_, t)| **t > since)
            .map(|(p, _)| p.clone())
            .collect();
        out.sort();
        out
    }
}

/// Delivers changes between calls, once a burst has settled.
async fn debounce(
    registry: Weak<Registry>,
    watcher: Arc<Watcher>,
    mut alive: tokio::sync::watch::Receiver<()>,
) {
    loop {
        tokio::select! {
            () = watcher.wait() => {}
            _ = alive.changed() => return,
        }
        let first = Instant::now();
        loop {
            tokio::select! {
                more = tokio::time::timeout(QUIET, watcher.wait()) => {
                    if more.is_err() || first.elapsed() >= MAX_WAIT {
                        break;
                    }
                }
                _ = alive.changed() => return,
            }
        }
        let Some(registry) = registry.upgrade() else {
            return;
        };
        let rescanned = registry.deliver_pending(Vec::new()).await;
        drop(registry);
        if rescanned {
            tokio::select! {
                () = tokio::time::sleep(RESCAN_GAP) => {}
                _ = alive.changed() => return,
            }
        }
    }
}
