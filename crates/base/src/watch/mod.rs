//! The workspace watcher: learns of every file created, changed or deleted under the root,
//! whoever wrote it (lspgate, an editor, a shell, a formatter, `git`). inotify on Linux, one
//! watch per folder (skipping what `Filter` leaves alone); past the watch limit, or where
//! inotify is unavailable, a polling scan instead. It only collects and coalesces: `take`
//! hands over every change that happened before it was called (the kernel queue is drained in
//! the same call, so a write that finished before a tool call is in the batch that call takes),
//! and the registry decides what each server is told.
//!
//! One root's flood never stalls the daemon: every reading of the kernel's queue, walk and
//! scan runs on the blocking pool (never on the runtime's one thread), a drain reads at most
//! a kernel queue's worth of events, what is pending is bounded (`MAX_PENDING` files, past
//! which it collapses to "rescan needed"), a polling scan is bounded, and the status is read
//! without the lock a long drain holds.
//!
//! Past the watch limit (per root: `LSPGATE_WATCH_LIMIT`, else half the system's, at most 65,536)
//! it polls. Every drain, walk and scan of one watcher runs one at a time (`turn`).

mod filter;
mod pending;
mod version;

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};
use schemars::JsonSchema;
use serde::Serialize;
use tokio::io::unix::AsyncFd;

pub use filter::Filter;
pub use pending::MAX_PENDING;
use pending::{Pending, Seen};
pub use version::{FileVersion, SETTLE};

/// What happened to a file, as servers are told (`workspace/didChangeWatchedFiles`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Changed,
    Deleted,
}

impl ChangeKind {
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Changed => "changed",
            ChangeKind::Deleted => "deleted",
        }
    }
}

/// One file (or, for a folder moved or deleted as a whole, one folder) that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub kind: ChangeKind,
}

/// What one `take` hands over.
#[derive(Debug, Default)]
pub struct Batch {
    pub changes: Vec<Change>,
    /// Events were lost (the kernel queue overflowed): anything may have changed.
    pub rescan: bool,
}

impl Batch {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && !self.rescan
    }
}

/// Knobs of the watcher.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Watch at all (`LSPGATE_WATCH=off` turns it off; answers then rely on per-call checks of
    /// the files a call names).
    pub enabled: bool,
    /// At most this many inotify watches (one per folder) for this root; past it, poll.
    /// `None`: `default_limit()` (`LSPGATE_WATCH_LIMIT` sets it).
    pub limit: Option<usize>,
    /// Folders never watched: lspgate's own state.
    pub skip: Vec<PathBuf>,
    /// How often a polling watcher scans when no call asks.
    pub poll_interval: Duration,
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            enabled: true,
            limit: None,
            skip: Vec::new(),
            poll_interval: Duration::from_secs(2),
        }
    }
}

impl WatchOptions {
    /// Defaults with `LSPGATE_WATCH` (`off`) and `LSPGATE_WATCH_LIMIT` applied.
    pub fn from_env(skip: Vec<PathBuf>) -> WatchOptions {
        WatchOptions {
            enabled: std::env::var("LSPGATE_WATCH").map_or(true, |v| v != "off"),
            limit: std::env::var("LSPGATE_WATCH_LIMIT")
                .ok()
                .and_then(|v| v.parse().ok()),
            skip,
            ..WatchOptions::default()
        }
    }
}

/// Watches one root takes at most by default: half the user's inotify watches (the kernel's
/// `max_user_watches`, shared by every root and every program of the user's), at most
/// `MAX_DEFAULT_LIMIT`, so that one root's tree never takes them all.
// Not a read inside a root for an answer: the kernel's limits in /proc, no workspace's file.
#[allow(clippy::disallowed_methods)]
pub fn default_limit() -> usize {
    let system = std::fs::read_to_string("/proc/sys/fs/inotify/max_user_watches")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(8192);
    (system / 2).clamp(1, MAX_DEFAULT_LIMIT)
}

/// The default watch limit of a root, at most.
const MAX_DEFAULT_LIMIT: usize = 65_536;

/// Events read from the kernel in one drain when its queue length cannot be read (the
/// kernel's default `max_queued_events`).
const QUEUE_DEFAULT: usize = 16_384;

/// How the watcher is doing, for `servers` and `doctor`.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct WatchStatus {
    /// `inotify`, `poll` (a scan before every call and every few seconds) or `off`.
    pub mode: String,
    /// Folders watched (inotify) or files tracked (poll).
    pub watched: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl std::fmt::Display for WatchStatus {
    /// `inotify: 251 folders watched`, `poll: 5000 files polled — why`, `off — why`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.mode.as_str() {
            "inotify" => write!(f, "inotify: {} folders watched", self.watched)?,
            "poll" => write!(f, "poll: {} files polled", self.watched)?,
            other => write!(f, "{other}")?,
        }
        if let Some(n) = &self.note {
            write!(f, " — {n}")?;
        }
        Ok(())
    }
}

/// Files a polling scan tracks, at most (and folders it walks, at most).
const POLL_FILE_LIMIT: usize = 50_000;

const MASK: WatchMask = WatchMask::CREATE
    .union(WatchMask::DELETE)
    .union(WatchMask::MODIFY)
    .union(WatchMask::CLOSE_WRITE)
    .union(WatchMask::MOVED_FROM)
    .union(WatchMask::MOVED_TO)
    .union(WatchMask::DELETE_SELF)
    .union(WatchMask::MOVE_SELF)
    .union(WatchMask::ONLYDIR)
    .union(WatchMask::DONT_FOLLOW)
    .union(WatchMask::EXCL_UNLINK);

struct State {
    root: PathBuf,
    filter: Filter,
    pending: Pending,
    /// The inotify instance, kept open for the watcher's life (its readiness is registered).
    inotify: Option<Inotify>,
    /// Watched folders by watch descriptor id.
    dirs: HashMap<i32, (PathBuf, WatchDescriptor)>,
    limit: usize,
    /// Events one drain reads at most: the kernel's queue length, so everything queued
    /// before a drain began is read, and a flood that goes on does not keep it reading.
    queue: usize,
    /// Set once the watcher polls instead: every file it tracks, as last seen.
    poll: Option<HashMap<PathBuf, FileVersion>>,
    note: Option<String>,
    enabled: bool,
}

/// Watches one workspace root. Cheap to ask (`take`) before every call.
pub struct Watcher {
    /// Readiness of the inotify instance (through a duplicate of its descriptor).
    ready: Option<AsyncFd<OwnedFd>>,
    /// Taken on the blocking pool only (`on_state`): a drain or a walk may hold it long.
    state: Arc<Mutex<State>>,
    /// One task of this watcher's on the blocking pool at a time, the others waiting here
    /// (not on `state`, each holding a thread of the pool: a flooded root's drains, piling
    /// up, would take every thread and stall every other root's).
    turn: Arc<tokio::sync::Mutex<()>>,
    /// The status as of the last time the state was touched, read without its lock.
    shown: Arc<Mutex<WatchStatus>>,
    poll_interval: Duration,
}

impl Watcher {
    /// Starts watching `root`: a walk that adds a watch per folder, on the blocking pool.
    /// Changes made after this returns are seen.
    pub async fn start(root: &Path, opts: WatchOptions) -> Arc<Watcher> {
        let root = root.to_path_buf();
        let interval = opts.poll_interval;
        let mut state = tokio::task::spawn_blocking(move || State::start(root, opts))
            .await
            .unwrap_or_else(|e| State::off(PathBuf::new(), format!("the watcher failed: {e}")));
        let ready = match (&state.inotify, &state.poll) {
            (Some(ino), None) => match ino.as_fd().try_clone_to_owned().and_then(|fd| {
                // SAFETY: the AsyncFd owns this duplicate, which stays open (and the same
                // descriptor) until the AsyncFd is dropped.
                unsafe { AsyncFd::register_with_interest(fd, tokio::io::Interest::READABLE) }
                    .map_err(|e| std::io::Error::other(e.to_string()))
            }) {
                Ok(fd) => Some(fd),
                Err(e) => {
                    tracing::warn!("cannot wait on inotify: {e}; polling instead");
                    None
                }
            },
            _ => None,
        };
        if ready.is_none() && state.enabled && state.poll.is_none() {
            // A scan of the whole tree: on the blocking pool too.
            state = tokio::task::spawn_blocking(move || {
                state.switch_to_polling("inotify could not be waited on".into(), None);
                state
            })
            .await
            .unwrap_or_else(|e| State::off(PathBuf::new(), format!("the watcher failed: {e}")));
        }
        Arc::new(Watcher {
            ready,
            shown: Arc::new(Mutex::new(state.status())),
            state: Arc::new(Mutex::new(state)),
            turn: Arc::default(),
            poll_interval: interval,
        })
    }

    /// Runs `f` on the state, on the blocking pool (it reads the kernel's queue, stats files,
    /// walks new folders: never on the runtime's thread), then notes the status. `None` when
    /// the state is poisoned or the task failed.
    async fn on_state<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut State) -> R + Send + 'static,
    ) -> Option<R> {
        let (state, shown) = (self.state.clone(), self.shown.clone());
        // Held until the blocking task ends, even when the caller stops waiting for it.
        let turn = self.turn.clone().lock_owned().await;
        tokio::task::spawn_blocking(move || {
            let _turn = turn;
            let mut st = state.lock().ok()?;
            let out = f(&mut st);
            if let Ok(mut s) = shown.lock() {
                *s = st.status();
            }
            Some(out)
        })
        .await
        .ok()
        .flatten()
    }

    /// Every change since the last call, coalesced and checked against the disk. Drains the
    /// kernel's queue first (or scans, when polling), so nothing written before this call is
    /// left out.
    pub async fn take(&self) -> Batch {
        if let Some(nothing) = self.quiet() {
            return nothing;
        }
        self.on_state(|st| {
            st.collect();
            st.pending.take()
        })
        .await
        .unwrap_or_default()
    }

    /// `take`, with changes lspgate made itself (its edits) among them: they are what
    /// lspgate knows they are, whatever the kernel reported of the same files.
    pub async fn take_with(&self, own: Vec<Change>) -> Batch {
        if own.is_empty()
            && let Some(nothing) = self.quiet()
        {
            return nothing;
        }
        let kept = own.clone();
        self.on_state(move |st| {
            st.collect();
            for c in own {
                let seen = match c.kind {
                    ChangeKind::Created => Seen::New,
                    ChangeKind::Changed => Seen::Changed,
                    ChangeKind::Deleted => Seen::Deleted,
                };
                st.pending.map.insert(c.path, seen);
            }
            st.pending.take()
        })
        .await
        .unwrap_or(Batch {
            changes: kept,
            rescan: false,
        })
    }

    /// An empty batch when nothing changed since the last take, told here on the runtime's
    /// thread without a hop to the blocking pool (the common case, before every call): no
    /// event is queued in the kernel (FIONREAD, which reads none) and none is pending. `None`:
    /// the blocking pool is asked (something changed, the watcher polls, or a drain of its is
    /// under way).
    fn quiet(&self) -> Option<Batch> {
        let st = self.state.try_lock().ok()?;
        if !st.enabled {
            return Some(Batch::default());
        }
        if st.poll.is_some() || st.pending.any() {
            return None;
        }
        let queued = rustix::io::ioctl_fionread(st.inotify.as_ref()?.as_fd()).ok()?;
        (queued == 0).then(Batch::default)
    }

    /// Resolves once changes are pending (for the debounce loop; a call's `take` may get them
    /// first).
    pub async fn wait(&self) {
        loop {
            let mode = self.status().mode;
            if mode == "off" {
                std::future::pending::<()>().await;
            }
            let pending = match (&self.ready, mode == "poll") {
                (Some(fd), false) => {
                    // A second now and then, in case the watcher switched to polling or a
                    // drain left events behind.
                    if let Ok(Ok(mut guard)) =
                        tokio::time::timeout(Duration::from_secs(1), fd.readable()).await
                    {
                        // Cleared before the drain: what comes after it wakes this again.
                        guard.clear_ready();
                    }
                    if self.quiet().is_some() {
                        // Nothing queued, nothing pending: no hop to the blocking pool.
                        continue;
                    }
                    self.on_state(|st| {
                        st.drain();
                        st.pending.any()
                    })
                    .await
                }
                _ => {
                    tokio::time::sleep(self.poll_interval).await;
                    self.on_state(|st| {
                        st.collect();
                        st.pending.any()
                    })
                    .await
                }
            };
            if pending == Some(true) {
                return;
            }
        }
    }

    /// How the watcher is doing, as of its last drain (never waits for one).
    pub fn status(&self) -> WatchStatus {
        match self.shown.lock() {
            Ok(st) => st.clone(),
            Err(_) => WatchStatus {
                mode: "off".into(),
                watched: 0,
                note: Some("the watcher's state is poisoned".into()),
            },
        }
    }
}

impl State {
    fn off(root: PathBuf, note: String) -> State {
        State {
            filter: Filter::new(&root, Vec::new()),
            root,
            pending: Pending::default(),
            inotify: None,
            dirs: HashMap::new(),
            limit: 0,
            queue: QUEUE_DEFAULT,
            poll: None,
            note: Some(note),
            enabled: false,
        }
    }

    // Not a read inside a root for an answer: the kernel's limits in /proc, no workspace's file.
    #[allow(clippy::disallowed_methods)]
    fn start(root: PathBuf, opts: WatchOptions) -> State {
        if !opts.enabled {
            return State::off(root, "turned off (LSPGATE_WATCH=off)".into());
        }
        let mut st = State {
            filter: Filter::new(&root, opts.skip.clone()),
            root: root.clone(),
            pending: Pending::default(),
            inotify: None,
            dirs: HashMap::new(),
            limit: opts.limit.unwrap_or_else(default_limit),
            queue: std::fs::read_to_string("/proc/sys/fs/inotify/max_queued_events")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(QUEUE_DEFAULT),
            poll: None,
            note: None,
            enabled: true,
        };
        match Inotify::init() {
            Ok(ino) => {
                st.inotify = Some(ino);
                if let Err(why) = st.watch_tree(&root, None) {
                    st.switch_to_polling(why, None);
                }
            }
            Err(e) => st.switch_to_polling(format!("inotify is unavailable ({e})"), None),
        }
        tracing::debug!(root = %root.display(), status = ?st.status(), "watching");
        st
    }

    fn status(&self) -> WatchStatus {
        let (mode, watched) = match (&self.poll, self.enabled) {
            (_, false) => ("off", 0),
            (Some(files), _) => ("poll", files.len()),
            (None, _) => ("inotify", self.dirs.len()),
        };
        WatchStatus {
            mode: mode.into(),
            watched,
            note: self.note.clone(),
        }
    }

    /// Adds a watch on every folder of the tree at `top` that the filter keeps; with `found`,
    /// also reports its files as `Seen` (a folder that appeared after the walk began). Err:
    /// the watch limit was hit.
    fn watch_tree(&mut self, top: &Path, found: Option<Seen>) -> Result<(), String> {
        let State {
            filter,
            pending,
            inotify,
            dirs,
            limit,
            ..
        } = self;
        walk(
            filter,
            top,
            |dir| add_watch(inotify, dirs, *limit, dir),
            |path, _| {
                if let Some(seen) = found {
                    pending.add(path, seen);
                }
            },
        )
    }

    /// Stops using inotify and polls from now on; `new_tree` is reported as created.
    fn switch_to_polling(&mut self, why: String, new_tree: Option<&Path>) {
        tracing::warn!(root = %self.root.display(), "file watcher: {why}; polling instead");
        if let Some(ino) = self.inotify.as_mut() {
            let mut watches = ino.watches();
            for (_, (_, wd)) in self.dirs.drain() {
                let _ = watches.remove(wd);
            }
        }
        self.dirs.clear();
        self.note = Some(format!("{why}; polling instead"));
        let files = self.scan_files();
        if let Some(tree) = new_tree {
            for p in files.keys().filter(|p| p.starts_with(tree)) {
                self.pending.add(p.clone(), Seen::New);
            }
        }
        self.poll = Some(files);
    }

    /// Every file the filter keeps, with its version (polling).
    /// The walk ends once it tracks `POLL_FILE_LIMIT` files or has walked as many folders.
    fn scan_files(&mut self) -> HashMap<PathBuf, FileVersion> {
        let mut out = HashMap::new();
        let root = self.root.clone();
        let (files, mut folders) = (std::cell::Cell::new(0), 0);
        let _ = walk(
            &mut self.filter,
            &root,
            |_| {
                folders += 1;
                match files.get() < POLL_FILE_LIMIT && folders <= POLL_FILE_LIMIT {
                    true => Ok(()),
                    false => Err("the polling limit".into()),
                }
            },
            |path, entry| {
                if files.get() < POLL_FILE_LIMIT
                    && let Ok(meta) = entry.metadata()
                {
                    out.insert(path, FileVersion::of(&meta));
                    files.set(out.len());
                }
            },
        );
        out
    }

    /// Brings `pending` up to date: drains inotify, or scans when polling.
    fn collect(&mut self) {
        if !self.enabled {
            return;
        }
        if self.poll.is_some() {
            self.poll_scan();
        } else {
            self.drain();
        }
    }

    fn poll_scan(&mut self) {
        let now = self.scan_files();
        let Some(before) = self.poll.as_ref() else {
            return;
        };
        let mut seen = Vec::new();
        for (path, version) in &now {
            match before.get(path) {
                None => seen.push((path.clone(), Seen::New)),
                Some(old) if old != version => seen.push((path.clone(), Seen::Changed)),
                Some(_) => {}
            }
        }
        for path in before.keys() {
            if !now.contains_key(path) {
                seen.push((path.clone(), Seen::Deleted));
            }
        }
        for (p, s) in seen {
            self.pending.add(p, s);
        }
        self.poll = Some(now);
    }

    /// Reads the events the kernel has queued (non-blocking) into `pending`: at most a
    /// queue's length of them, so every event queued before the drain began is read and a
    /// flood that goes on meanwhile is left to the next one.
    fn drain(&mut self) {
        let mut buf = [0u8; 16 * 1024];
        // One more than the queue holds: its overflow event.
        let mut left = self.queue.saturating_add(1);
        while left > 0 {
            let mut events = Vec::new();
            {
                let Some(ino) = self.inotify.as_mut() else {
                    return;
                };
                match ino.read_events(&mut buf) {
                    Ok(evs) => {
                        for e in evs {
                            events.push((
                                e.wd.get_watch_descriptor_id(),
                                e.mask,
                                e.name.map(|n| n.to_os_string()),
                            ));
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                    Err(e) => {
                        tracing::warn!("reading inotify events: {e}");
                        return;
                    }
                }
            }
            if events.is_empty() {
                return;
            }
            left = left.saturating_sub(events.len());
            for (wd, mask, name) in events {
                self.event(wd, mask, name);
                if self.poll.is_some() {
                    // Switched to polling mid-batch: the scan covers the rest.
                    return;
                }
            }
        }
    }

    fn event(&mut self, wd: i32, mask: EventMask, name: Option<std::ffi::OsString>) {
        if mask.contains(EventMask::Q_OVERFLOW) {
            self.pending.overflow();
            return;
        }
        if mask.contains(EventMask::IGNORED) {
            self.dirs.remove(&wd);
            return;
        }
        let Some((dir, _)) = self.dirs.get(&wd) else {
            return;
        };
        let dir = dir.clone();
        let Some(name) = name else {
            // The watched folder itself went away or moved: its parent reports it; stop
            // watching what was under it.
            if mask.intersects(EventMask::DELETE_SELF | EventMask::MOVE_SELF) && dir != self.root {
                self.unwatch_under(&dir);
            }
            return;
        };
        let path = dir.join(&name);
        if mask.contains(EventMask::ISDIR) {
            if mask.intersects(EventMask::CREATE | EventMask::MOVED_TO) {
                if self.filter.skips_dir(&path) {
                    return;
                }
                let seen = if mask.contains(EventMask::CREATE) {
                    Seen::New
                } else {
                    Seen::MovedIn
                };
                if let Err(why) = self.watch_tree(&path, Some(seen)) {
                    self.switch_to_polling(why, Some(&path));
                }
            } else if mask.intersects(EventMask::DELETE | EventMask::MOVED_FROM) {
                self.unwatch_under(&path);
                if !self.filter.skips_dir(&path) {
                    self.pending.add(path, Seen::Deleted);
                }
            }
            return;
        }
        if name == ".gitignore" {
            self.filter.load_gitignore(&dir);
        }
        if self.filter.skips_file(&path) {
            return;
        }
        let seen = if mask.contains(EventMask::CREATE) {
            Seen::New
        } else if mask.contains(EventMask::MOVED_TO) {
            Seen::MovedIn
        } else if mask.intersects(EventMask::DELETE | EventMask::MOVED_FROM) {
            Seen::Deleted
        } else if mask.intersects(EventMask::MODIFY | EventMask::CLOSE_WRITE) {
            Seen::Changed
        } else {
            return;
        };
        self.pending.add(path, seen);
    }

    /// Stops watching `dir` and everything under it.
    fn unwatch_under(&mut self, dir: &Path) {
        let gone: Vec<i32> = self
            .dirs
            .iter()
            .filter(|(_, (p, _))| p.starts_with(dir))
            .map(|(id, _)| *id)
            .collect();
        for id in gone {
            if let Some((_, wd)) = self.dirs.remove(&id)
                && let Some(ino) = self.inotify.as_mut()
            {
                let _ = ino.watches().remove(wd);
            }
        }
    }
}

/// Walks the tree at `top` as the filter allows (reading each folder's .gitignore on the way):
/// `dir` for every folder kept (its Err stops the walk), `file` for every regular file kept.
/// Symlinks are not followed.
fn walk(
    filter: &mut Filter,
    top: &Path,
    mut dir: impl FnMut(&Path) -> Result<(), String>,
    mut file: impl FnMut(PathBuf, &std::fs::DirEntry),
) -> Result<(), String> {
    let mut stack = vec![top.to_path_buf()];
    while let Some(d) = stack.pop() {
        filter.load_gitignore(&d);
        dir(&d)?;
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            if ft.is_dir() {
                if !filter.skips_dir(&path) {
                    stack.push(path);
                }
            } else if ft.is_file() && !filter.skips_file(&path) {
                file(path, &e);
            }
        }
    }
    Ok(())
}

/// Adds an inotify watch on `dir`; Err when a limit (ours or the system's) is reached.
fn add_watch(
    inotify: &mut Option<Inotify>,
    dirs: &mut HashMap<i32, (PathBuf, WatchDescriptor)>,
    limit: usize,
    dir: &Path,
) -> Result<(), String> {
    let count = dirs.len();
    let Some(ino) = inotify.as_mut() else {
        return Err("inotify is unavailable".into());
    };
    if count >= limit {
        return Err(format!(
            "the watch limit of {limit} folders was reached (LSPGATE_WATCH_LIMIT)"
        ));
    }
    match ino.watches().add(dir, MASK) {
        Ok(wd) => {
            dirs.insert(wd.get_watch_descriptor_id(), (dir.to_path_buf(), wd));
            Ok(())
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => Err(format!(
            "the system's inotify watch limit was reached at {count} folders \
             (raise fs.inotify.max_user_watches)"
        )),
        // Gone already, or unreadable: nothing to watch there.
        Err(e) => {
            tracing::debug!("cannot watch {}: {e}", dir.display());
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests;
