//! The durable event log of a workspace root (protocol §3, Events): what happened, in order, with a
//! `seq` that never goes back and is never reused, kept in the state database beside the edit
//! journal so it survives restarts of lspgate and of the daemon.
//!
//! Everything is emitted into one unbounded channel, in the order it happened (the registry's
//! lifecycle and deliveries through the sink it is given, the workspace's edits, undos,
//! diagnostic counts and activities directly); one writer task appends what it receives in a
//! transaction per batch, on the blocking pool, then tells live listeners (resource
//! subscriptions). `flush` waits until everything emitted before it is written, so a reader
//! sees every event that happened before its call.
//!
//! `StateDb` is the state database (`crate::state::Db`) opened on first use and shared by the
//! journal, the log and the activities.

pub mod store;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::edits::journal::Journal;
use crate::error::CoreError;
use crate::registry::{RegistryEvent, Sink};
use crate::watch::FileVersion;
use crate::workspace::Root;
pub use store::{Event, Page};

/// The kinds of events, as protocol §3 names them.
pub const KINDS: [&str; 11] = [
    "file_changed",
    "diagnostics_changed",
    "edit_applied",
    "edit_undone",
    "server_started",
    "server_restarted",
    "server_failed",
    "server_stopped",
    "activity_started",
    "activity_finished",
    "hook",
];

/// Files listed in one `file_changed` event, at most (`more` says how many were left out).
const MAX_FILES: usize = 1_000;

/// The workspace's state database (`crate::state`, its folder made by the edit journal), opened
/// on first use and shared by the journal, the event log and the activities.
#[derive(Clone)]
pub struct StateDb {
    inner: Arc<StateInner>,
}

struct StateInner {
    dir: PathBuf,
    root: Root,
    journal: OnceLock<Result<Journal, CoreError>>,
    /// Interrupted activities recorded as such (only a success is kept: a failure, say a busy
    /// database, is tried again at the next use).
    ready: OnceLock<()>,
}

impl StateDb {
    pub fn new(dir: &Path, root: &Root) -> StateDb {
        // A `.lspgate/state.db` in the workspace is a repository's (committed or shipped) or an
        // older lspgate's: the two look alike, so it is never opened, migrated or replayed.
        let found = root.path().join(".lspgate").join("state.db");
        if std::fs::symlink_metadata(&found).is_ok() && dir != found.parent().unwrap_or(dir) {
            tracing::info!(
                "{} is left alone: lspgate keeps its state in {} and never replays a state database found in a workspace (its undo history, if it was lspgate's, stays behind)",
                found.display(),
                dir.display()
            );
        }
        StateDb {
            inner: Arc::new(StateInner {
                dir: dir.to_path_buf(),
                root: root.clone(),
                journal: OnceLock::new(),
                ready: OnceLock::new(),
            }),
        }
    }

    /// The edit journal (opening the database, and recovering interrupted edits, on first use).
    pub fn journal(&self) -> Result<&Journal, CoreError> {
        self.inner
            .journal
            .get_or_init(|| Journal::open(&self.inner.dir, &self.inner.root))
            .as_ref()
            .map_err(|e| e.clone())
    }

    /// Whether the database exists already (lspgate recovers at start without creating one).
    pub fn exists(&self) -> bool {
        Journal::exists(&self.inner.dir)
    }

    /// Runs `f` on the database, its tables ready. Blocking.
    pub fn with<T>(
        &self,
        f: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T>,
    ) -> Result<T, CoreError> {
        let journal = self.journal()?;
        if self.inner.ready.get().is_none() {
            // Two first uses at once both init: it is idempotent, and the connection's lock
            // runs them one after the other.
            journal.db().with(|c| store::init(c, &store::token_alive))?;
            let _ = self.inner.ready.set(());
        }
        journal.db().with(f)
    }

    /// `with`, on the blocking pool.
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut rusqlite::Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, CoreError> {
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.with(f))
            .await
            .map_err(|e| CoreError::internal(format!("state database: {e}")))?
    }
}

/// What the writer receives.
enum Emit {
    Event {
        kind: &'static str,
        data: Value,
        at_ms: i64,
    },
    /// Files a delivery of changes on disk carried (root-relative, each with its version when
    /// delivered), written by `by`; an event of those whose version was not logged yet.
    Files {
        by: &'static str,
        files: Vec<(String, String)>,
        at_ms: i64,
    },
    /// A server's counts for a file; an event only when the file's totals change.
    Counts {
        file: String,
        server: String,
        errors: u32,
        warnings: u32,
        at_ms: i64,
    },
    Flush(oneshot::Sender<()>),
}

/// A workspace's event log: emit, flush, read, follow.
pub struct EventLog {
    tx: mpsc::UnboundedSender<Emit>,
    appended: broadcast::Sender<Arc<Event>>,
    db: StateDb,
    /// The newest seq known written (read from the database at start when it exists).
    written: Arc<AtomicI64>,
    /// lspgate's writes in flight, shared by the registries reporting here.
    claims: crate::registry::Claims,
}

impl EventLog {
    /// Starts the writer (which ends once every sender is gone, the rest written).
    pub fn start(db: StateDb) -> EventLog {
        let (tx, rx) = mpsc::unbounded_channel();
        let appended = broadcast::channel(1024).0;
        // Where the log stands, before anything new, known at once (a listen stream started
        // right away follows from here): a database that does not exist yet holds nothing (and
        // is not made for this). Blocking, once per workspace, as the journal's recovery at
        // start is.
        let mut last = 0;
        if db.exists() {
            match db
                .with(|c| c.query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |r| r.get(0)))
            {
                Ok(n) => last = n,
                Err(e) => tracing::warn!("the event log cannot be read: {e}"),
            }
        }
        let written = Arc::new(AtomicI64::new(last));
        tokio::spawn(write(rx, db.clone(), appended.clone(), written.clone()));
        EventLog {
            tx,
            appended,
            db,
            written,
            claims: Default::default(),
        }
    }

    /// The newest seq written, as far as this process knows: every event recorded before the
    /// call has a seq at most this (those still on their way to the database excepted; `flush`
    /// first to include them).
    pub fn written(&self) -> i64 {
        self.written.load(Ordering::Acquire)
    }

    pub fn db(&self) -> &StateDb {
        &self.db
    }

    /// Records an event of `kind` (one of `KINDS`).
    pub fn emit(&self, kind: &'static str, data: Value) {
        let _ = self.tx.send(Emit::Event {
            kind,
            data,
            at_ms: store::now_ms(),
        });
    }

    /// Notes the counts `server` reported for `file` (root-relative) at its current content:
    /// `diagnostics_changed` when the file's totals differ from the last ones lspgate saw.
    pub fn saw_diagnostics(&self, file: String, server: &str, errors: u32, warnings: u32) {
        let _ = self.tx.send(Emit::Counts {
            file,
            server: server.to_string(),
            errors,
            warnings,
            at_ms: store::now_ms(),
        });
    }

    /// Waits until everything emitted before this call is written (or could not be).
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Emit::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }

    /// Every event as it is written, from now on (a receiver that lags learns it).
    pub fn follow(&self) -> broadcast::Receiver<Arc<Event>> {
        self.appended.subscribe()
    }

    /// How many `follow` receivers are alive.
    pub fn followers(&self) -> usize {
        self.appended.receiver_count()
    }

    /// Events after `after`, everything emitted before the call included.
    pub async fn read(
        &self,
        after: i64,
        limit: usize,
        kinds: Vec<String>,
    ) -> Result<Page, CoreError> {
        self.flush().await;
        self.db
            .run(move |c| {
                let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
                store::read(c, after, limit, &kinds)
            })
            .await
    }

    /// The newest `n` events (and the cursor after them), everything emitted before the call
    /// included.
    pub async fn tail(&self, n: usize) -> Result<Page, CoreError> {
        self.flush().await;
        self.db
            .run(move |c| {
                let last: i64 =
                    c.query_row("SELECT COALESCE(MAX(seq), 0) FROM events", [], |r| r.get(0))?;
                store::read(c, (last - n as i64).max(0), n, &[])
            })
            .await
    }

    /// Makes `registry` report to this log: its events, in this log's order, with paths made
    /// root-relative. Several registries may report to one log (the daemon's workspaces on one
    /// root): they share lspgate's writes in flight, and a change of a file is logged once, by
    /// whichever delivers it first (so across processes too: `store::saw_version`).
    pub fn record(&self, registry: &crate::registry::Registry) {
        registry.feed_to(self.registry_sink(registry.root()), self.claims.clone());
    }

    fn registry_sink(&self, root: &Root) -> Sink {
        let tx = self.tx.clone();
        let root = root.clone();
        Box::new(move |e: RegistryEvent| {
            for emit in registry_emits(&root, e, store::now_ms()) {
                let _ = tx.send(emit);
            }
        })
    }
}

/// A path as events show it: root-relative, `.` for the root itself.
fn shown(root: &Root, path: &Path) -> String {
    match root.relative(path) {
        s if s.is_empty() => ".".into(),
        s => s,
    }
}

/// What a registry event gives the writer: a server's lifecycle as an event; a delivery of
/// changes on disk as the files each side wrote, each with its version now (logged by version).
fn registry_emits(root: &Root, e: RegistryEvent, at_ms: i64) -> Vec<Emit> {
    let server = |kind: &'static str, server: String, at: PathBuf, reason: Option<String>| {
        let mut data = json!({"server": server, "root": shown(root, &at)});
        if let Some(r) = reason {
            data["reason"] = Value::from(r);
        }
        vec![Emit::Event { kind, data, at_ms }]
    };
    match e {
        RegistryEvent::Started { server: s, root: r } => server("server_started", s, r, None),
        RegistryEvent::Restarted {
            server: s,
            root: r,
            reason,
        } => server("server_restarted", s, r, Some(reason)),
        RegistryEvent::Failed {
            server: s,
            root: r,
            reason,
        } => server("server_failed", s, r, Some(reason)),
        RegistryEvent::Stopped {
            server: s,
            root: r,
            reason,
        } => server("server_stopped", s, r, Some(reason)),
        RegistryEvent::FilesChanged { own, outside } => [("lspgate", own), ("outside", outside)]
            .into_iter()
            .filter(|(_, files)| !files.is_empty())
            .map(|(by, files)| Emit::Files {
                by,
                files: files
                    .iter()
                    .map(|p| (shown(root, p), FileVersion::logged(p)))
                    .collect(),
                at_ms,
            })
            .collect(),
    }
}

/// `{files, by}` (and `more` past `MAX_FILES`), of root-relative names.
fn files_changed(mut list: Vec<String>, by: &str) -> Value {
    list.sort();
    list.dedup();
    let more = list.len().saturating_sub(MAX_FILES);
    list.truncate(MAX_FILES);
    let mut data = json!({"files": list, "by": by});
    if more > 0 {
        data["more"] = Value::from(more);
    }
    data
}

/// The writer: appends what it receives, a transaction per batch, then tells followers.
async fn write(
    mut rx: mpsc::UnboundedReceiver<Emit>,
    db: StateDb,
    appended: broadcast::Sender<Arc<Event>>,
    written: Arc<AtomicI64>,
) {
    let mut failures = Failures::default();
    while let Some(first) = rx.recv().await {
        let mut batch = vec![first];
        while batch.len() < 1_000 {
            match rx.try_recv() {
                Ok(e) => batch.push(e),
                Err(_) => break,
            }
        }
        let mut flushes = Vec::new();
        let mut work = Vec::new();
        for e in batch {
            match e {
                Emit::Flush(done) => flushes.push(done),
                other => work.push(other),
            }
        }
        if !work.is_empty() {
            let appended_now = db.run(move |c| append_retrying(c, &work)).await;
            match appended_now {
                Ok(events) => {
                    if let Some(last) = events.last() {
                        written.fetch_max(last.seq, Ordering::AcqRel);
                    }
                    for e in events {
                        let _ = appended.send(Arc::new(e));
                    }
                }
                Err(e) => {
                    failures.failed(&e, Instant::now());
                }
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

/// How often, at most, the writer warns that batches are being lost.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// The batches the writer could not write: the first is warned of at once, the next ones
/// counted and warned of at most every `WARN_EVERY`, so a log that keeps failing is never
/// silent.
#[derive(Default)]
struct Failures {
    /// Since the last warning.
    unwarned: u64,
    total: u64,
    warned_at: Option<Instant>,
}

impl Failures {
    /// One more batch lost; whether it was warned of.
    fn failed(&mut self, e: &CoreError, now: Instant) -> bool {
        self.unwarned += 1;
        self.total += 1;
        if self
            .warned_at
            .is_some_and(|at| now.duration_since(at) < WARN_EVERY)
        {
            return false;
        }
        tracing::warn!(
            "the event log cannot be written: {e} ({} batch(es) of events lost since the last warning, {} in all)",
            self.unwarned,
            self.total
        );
        self.unwarned = 0;
        self.warned_at = Some(now);
        true
    }
}

/// `append_all`, tried once more when the database was busy (another process holding it
/// past the busy timeout).
fn append_retrying(c: &mut rusqlite::Connection, work: &[Emit]) -> rusqlite::Result<Vec<Event>> {
    match append_all(c, work) {
        Err(e) if store::is_busy(&e) => {
            tracing::debug!("the event log's database is busy; trying the batch once more");
            append_all(c, work)
        }
        other => other,
    }
}

fn append_all(c: &mut rusqlite::Connection, work: &[Emit]) -> rusqlite::Result<Vec<Event>> {
    // Immediate: `saw_counts` and `prune` read before they write.
    let tx = store::write_transaction(c)?;
    let mut out = Vec::new();
    for e in work {
        match e {
            Emit::Event { kind, data, at_ms } => out.push(store::append(&tx, kind, data, *at_ms)?),
            Emit::Files { by, files, at_ms } => {
                let mut unseen = Vec::new();
                for (file, version) in files {
                    if store::saw_version(&tx, file, version)? {
                        unseen.push(file.clone());
                    }
                }
                if !unseen.is_empty() {
                    let data = files_changed(unseen, by);
                    out.push(store::append(&tx, "file_changed", &data, *at_ms)?);
                }
            }
            Emit::Counts {
                file,
                server,
                errors,
                warnings,
                at_ms,
            } => {
                if let Some((errors, warnings)) =
                    store::saw_counts(&tx, file, server, *errors, *warnings)?
                {
                    let data = json!({"file": file, "errors": errors, "warnings": warnings});
                    out.push(store::append(&tx, "diagnostics_changed", &data, *at_ms)?);
                }
            }
            Emit::Flush(_) => {}
        }
    }
    store::prune(&tx, store::KEEP_EVENTS)?;
    tx.commit()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use rusqlite::Connection;

    use super::*;

    /// Two connections to one state database in WAL mode, as two lspgate processes on one root
    /// have: the second holds a write transaction open (a diagnostic count written, not yet
    /// committed).
    fn two(dir: &Path) -> (Connection, Connection) {
        let path = dir.join("state.db");
        let mut ours = Connection::open(&path).unwrap();
        ours.execute_batch("PRAGMA journal_mode=WAL;").unwrap();
        crate::state::migrate(&mut ours, "test").unwrap();
        store::init(&mut ours, &|_| true).unwrap();
        let other = Connection::open(&path).unwrap();
        other
            .execute_batch(
                "BEGIN IMMEDIATE;
                 INSERT INTO diagnostic_counts VALUES ('other.py', 's', 1, 0);",
            )
            .unwrap();
        (ours, other)
    }

    fn counts(file: &str) -> Emit {
        Emit::Counts {
            file: file.into(),
            server: "s".into(),
            errors: 2,
            warnings: 0,
            at_ms: 0,
        }
    }

    static WAITED_FOR: Mutex<Option<Connection>> = Mutex::new(None);

    /// While our batch waits for the lock, the other process commits, and we then get it.
    fn other_commits_then_wait(_: i32) -> bool {
        if let Some(c) = WAITED_FOR.lock().unwrap().take() {
            c.execute_batch("COMMIT").unwrap();
        }
        true
    }

    #[test]
    fn a_batch_that_reads_first_is_written_when_another_process_commits_meanwhile() {
        let dir = tempfile::tempdir().unwrap();
        let (mut ours, other) = two(dir.path());
        *WAITED_FOR.lock().unwrap() = Some(other);
        ours.busy_handler(Some(other_commits_then_wait)).unwrap();
        // `saw_counts` reads the counts before it writes them.
        let events = append_all(&mut ours, &[counts("a.py")]).expect("the batch is written");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind, "diagnostics_changed");
        let others: i64 = ours
            .query_row("SELECT COUNT(*) FROM diagnostic_counts", [], |r| r.get(0))
            .unwrap();
        assert_eq!(others, 2, "both processes' counts are kept");
    }

    static GAVE_UP_ON: Mutex<Option<Connection>> = Mutex::new(None);

    /// The other process commits, but our wait is over already (the busy timeout ran out).
    fn other_commits_no_wait(_: i32) -> bool {
        if let Some(c) = GAVE_UP_ON.lock().unwrap().take() {
            c.execute_batch("COMMIT").unwrap();
        }
        false
    }

    #[test]
    fn a_batch_refused_as_busy_is_tried_once_more() {
        let dir = tempfile::tempdir().unwrap();
        let (mut ours, other) = two(dir.path());
        *GAVE_UP_ON.lock().unwrap() = Some(other);
        ours.busy_handler(Some(other_commits_no_wait)).unwrap();
        let events =
            append_retrying(&mut ours, &[counts("a.py")]).expect("written the second time");
        assert_eq!(events.len(), 1);
    }

    #[test]
    fn a_failed_init_is_tried_again_at_the_next_use() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let db = StateDb::new(&dir.path().join(".lspgate"), &root);
        // The table out of the way: init's read of running activities fails.
        let raw = |sql: &str| db.journal().unwrap().db().with(|c| c.execute_batch(sql));
        raw("ALTER TABLE activities RENAME TO moved").unwrap();
        assert!(db.with(|_| Ok(())).is_err());
        raw("ALTER TABLE moved RENAME TO activities").unwrap();
        db.with(|c| {
            c.query_row("SELECT COUNT(*) FROM activities", [], |r| {
                r.get::<_, i64>(0)
            })
        })
        .expect("init ran again");
    }

    #[tokio::test]
    async fn the_log_knows_where_it_stands_as_soon_as_it_starts() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let db = StateDb::new(&dir.path().join(".lspgate"), &root);
        db.with(|c| {
            let tx = c.transaction()?;
            for _ in 0..3 {
                store::append(&tx, "file_changed", &json!({}), 0)?;
            }
            tx.commit()
        })
        .unwrap();
        let log = EventLog::start(StateDb::new(&dir.path().join(".lspgate"), &root));
        assert_eq!(
            log.written(),
            3,
            "a listen stream started now would replay the log"
        );
    }

    #[test]
    fn write_failures_keep_being_warned_of() {
        let mut f = Failures::default();
        let e = CoreError::internal("state database: database is locked");
        let t0 = Instant::now();
        assert!(f.failed(&e, t0), "the first failure is warned of");
        assert!(!f.failed(&e, t0 + Duration::from_secs(1)));
        assert!(!f.failed(&e, t0 + Duration::from_secs(2)));
        assert!(
            f.failed(&e, t0 + WARN_EVERY + Duration::from_secs(1)),
            "a log that keeps failing is warned of again"
        );
        assert_eq!((f.unwarned, f.total), (0, 4));
    }
}
