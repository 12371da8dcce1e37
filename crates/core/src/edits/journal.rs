//! The edit journal, write-ahead: every change with its files' paths, before and after content
//! and digests, in an embedded SQLite database that survives restarts of lspgate: `state.db` in
//! the root's own folder of lspgate's data folder (`default_dir`: the user's, 0700, the file
//! 0600), never the workspace's unless `--state` names a folder there. The journal makes that
//! folder and its files; the database's connection, schema and migrations are `crate::state`'s.
//!
//! Protocol (`Journal::apply`): under the journal's lock, the intent is committed (state
//! `pending`, durable: WAL with `synchronous=FULL`) before the first file is replaced; the files
//! are written (`edits::apply`, all or nothing); then the completion is committed (`applied`,
//! and the edit it undoes marked, in one transaction). An edit is applied exactly when its
//! completion is recorded. Recovery rolls back: an entry left `pending` (lspgate died, or the
//! journal failed, between intent and completion) has every file that holds its `after` put back
//! to its `before`; a file holding anything else was changed by someone since and is left alone.
//! So every file ends wholly before, and the entry becomes `rolled_back`. The agent never got an
//! `edit_id` for it, so before is what it last knew. Recovery runs when the journal is opened
//! (lspgate opens it at start when it exists) and again, under the lock, before every apply.
//!
//! Nothing read from the database is trusted: an entry is used only when it carries the seal
//! lspgate made for it with the user's key (`seal`), so one lspgate did not record for this
//! user and root is never recovered or undone; every path is confined to the root
//! (`Root::confine`) when an entry is read, and again when it is written (where a VCS folder
//! such as `.git/` is refused too, `edits::Target`), and the folder is opened without
//! following symlinks.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, params};
use serde_json::json;

use super::fs::{self, Dir};
use super::{FileChange, Plan};
use crate::error::{CoreError, Kind};
use crate::state::{self, DB, Db};
use crate::text::digest;
use crate::workspace::{Root, dirs, normalize};

mod seal;

/// lspgate's files in the state folder besides the database's (`state::FILES`); none may be a
/// symlink.
const OWN_FILES: [&str; 2] = [LOCK, ".gitignore"];
const LOCK: &str = "edits.lock";

/// Where an edit stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// The intent is recorded and files may be partly written: being applied now, or
    /// interrupted (the next recovery rolls it back).
    Pending,
    /// Every file was written and the completion recorded: it can be undone.
    Applied,
    /// Interrupted, then rolled back by recovery: no file holds what it would have written.
    RolledBack,
    /// Names paths outside the workspace (a database lspgate did not write for this root):
    /// never replayed.
    Refused,
}

impl State {
    fn as_str(self) -> &'static str {
        match self {
            State::Pending => "pending",
            State::Applied => "applied",
            State::RolledBack => "rolled_back",
            State::Refused => "refused",
        }
    }

    fn parse(s: &str) -> Option<State> {
        [
            State::Pending,
            State::Applied,
            State::RolledBack,
            State::Refused,
        ]
        .into_iter()
        .find(|st| st.as_str() == s)
    }
}

/// A change as the journal holds it, its paths confined to the root.
#[derive(Debug, Clone)]
pub struct Entry {
    pub id: i64,
    pub tool: String,
    pub summary: String,
    pub undone_by: Option<i64>,
    pub state: State,
    pub plan: Plan,
}

/// The journal of one workspace root; cheap to clone (one connection, shared).
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    db: Db,
    /// One apply at a time in this process (the file lock is per open file, so it cannot
    /// tell this process's threads apart).
    writing: Mutex<()>,
    /// `edits.lock`, locked (`flock`) for the whole of an apply and for recovery: one writer at a
    /// time across processes on the same state folder; the kernel releases a dead writer's.
    lock: std::fs::File,
    root: Root,
    /// The user's key: entries are sealed with it when recorded and checked when read.
    key: seal::Key,
}

/// Where lspgate keeps a root's state unless told otherwise: a folder of its own in lspgate's
/// data folder, named by the SHA-256 of the root's path (so a repository cannot ship it).
pub fn default_dir(root: &Path) -> PathBuf {
    let name = digest(root.as_os_str().as_encoded_bytes());
    crate::workspace::data_dir().join("state").join(&name[..32])
}

/// The folder the user's journal key is kept in: lspgate's data folder (a private temporary
/// one for unit tests, which must not write to the user's).
fn key_dir() -> PathBuf {
    if cfg!(test) {
        let uid = rustix::process::getuid().as_raw();
        return std::env::temp_dir().join(format!("lspgate-unit-tests-{uid}"));
    }
    crate::workspace::data_dir()
}

fn db_error(e: rusqlite::Error) -> CoreError {
    CoreError::internal(format!("edit journal: {e}"))
}

/// The state folder as an absolute, lexically normalized path (a relative one is taken from
/// the current folder, as on a command line).
fn location(dir: &Path) -> PathBuf {
    normalize(&std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()))
}

/// A symlink where lspgate keeps its state: refused either way. Leading out, `outside_root`;
/// leading inside, `internal`: lspgate would put its database, and a `.gitignore` of `*`, in
/// whatever folder of the workspace it points to.
fn linked(root: &Root, link: &Path) -> CoreError {
    let shown = root.relative(link);
    match root.confine(link) {
        Err(e) if e.kind == Kind::OutsideRoot => CoreError::new(
            Kind::OutsideRoot,
            format!(
                "{shown} is a symbolic link leading outside the workspace; lspgate keeps its edit journal only in a real folder (remove the link, or pass --state DIR)"
            ),
        ),
        _ => CoreError::internal(format!(
            "{shown} is a symbolic link; lspgate keeps its edit journal only in a real folder, never where a link points (remove the link, or pass --state DIR)"
        )),
    }
    .with_data(json!({"file": shown}))
}

/// Opens (creating) the state folder: every folder lspgate makes for it is 0700, and the folder
/// must be this user's and writable by no one else (`dirs`: another user could swap the
/// journal's entries), else the error says what to do. Inside the workspace (`--state` naming
/// a folder there) every folder of it is walked from the root and created following no
/// symlink, and a symlink on the way is refused (`linked`). Outside it (the default: in
/// lspgate's data folder, which is checked down to it) it is the user's choice of place.
fn state_folder(dir: &Path, root: &Root) -> Result<(PathBuf, Dir), CoreError> {
    let path = location(dir);
    let io = |action: &str, at: &Path, e: std::io::Error| {
        CoreError::io(action, &at.display().to_string(), &e)
    };
    if let Ok(rel) = path.strip_prefix(root.path()) {
        let mut folder = Dir::open(root.path()).map_err(|e| io("open", root.path(), e))?;
        let mut at = root.path().to_path_buf();
        for name in rel.iter() {
            at.push(name);
            folder = match folder.child_or_create(name, 0o700) {
                Ok(d) => d,
                Err(e) if fs::is_symlink_error(&e) => return Err(linked(root, &at)),
                Err(e) => return Err(io("create", &at, e)),
            };
        }
        if path != root.path() {
            dirs::check(&path).map_err(CoreError::internal)?;
        }
        return Ok((path, folder));
    }
    let data = location(&crate::workspace::data_dir());
    let top = if path.starts_with(&data) {
        &data
    } else {
        &path
    };
    dirs::private_dir(top, &path).map_err(CoreError::internal)?;
    let real = path.canonicalize().map_err(|e| io("open", &path, e))?;
    let folder = Dir::open(&real).map_err(|e| io("open", &real, e))?;
    Ok((real, folder))
}

/// A path as stored: text when it is UTF-8 (readable with any SQLite tool), else its bytes.
fn stored(path: &Path) -> rusqlite::types::Value {
    match path.to_str() {
        Some(s) => rusqlite::types::Value::Text(s.to_string()),
        None => rusqlite::types::Value::Blob(path.as_os_str().as_bytes().to_vec()),
    }
}

fn path_of(v: ValueRef<'_>) -> rusqlite::Result<PathBuf> {
    match v {
        ValueRef::Text(b) | ValueRef::Blob(b) => Ok(PathBuf::from(OsString::from_vec(b.to_vec()))),
        other => Err(rusqlite::Error::InvalidColumnType(
            0,
            "path".into(),
            other.data_type(),
        )),
    }
}

/// Holds `edits.lock` until dropped.
struct Locked<'a>(&'a std::fs::File);

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(self.0, rustix::fs::FlockOperation::Unlock);
    }
}

/// `data.reason` of the refusal of an entry without lspgate's seal.
const UNSEALED: &str = "unsealed";

/// Whether `e` refuses an entry for want of lspgate's seal.
fn unsealed(e: &CoreError) -> bool {
    e.data
        .as_ref()
        .is_some_and(|d| d.get("reason").and_then(|r| r.as_str()) == Some(UNSEALED))
}

/// An entry's head as stored: tool, summary, undone_by, state, seal.
type Head = (String, String, Option<i64>, String, Option<String>);

/// One stored file of an entry, before confinement.
type Row = (
    PathBuf,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Option<String>,
    Option<String>,
);

/// Opens (creating) the state folder and lspgate's files in it, none through a symlink: the
/// folder's `.gitignore`, the database file (0600; `state::Db` connects to it) and `edits.lock`,
/// which is returned with the folder's path.
fn own_files(dir: &Path, root: &Root) -> Result<(PathBuf, std::fs::File), CoreError> {
    let (path, folder) = state_folder(dir, root)?;
    for name in OWN_FILES.iter().chain(&state::FILES) {
        if folder.is_symlink(OsStr::new(name)) {
            return Err(linked(root, &path.join(name)));
        }
    }
    let io = |name: &str, e: std::io::Error| {
        CoreError::io("create", &path.join(name).display().to_string(), &e)
    };
    // Its own `.gitignore` when it is a folder of the workspace (not the root itself).
    if path != root.path() && path.starts_with(root.path()) {
        folder
            .create_new(
                OsStr::new(".gitignore"),
                b"# lspgate's state (edit journal)\n*\n",
                0o600,
            )
            .map_err(|e| io(".gitignore", e))?;
    }
    let lock = folder
        .open_own(OsStr::new(LOCK), 0o600)
        .map_err(|e| io(LOCK, e))?;
    // The database holds every edit's whole content: the user's alone. SQLite gives its
    // -wal and -shm files the database's mode.
    {
        use std::os::unix::fs::PermissionsExt;
        let db = folder
            .open_own(OsStr::new(DB), 0o600)
            .map_err(|e| io(DB, e))?;
        db.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(|e| io(DB, e))?;
    }
    Ok((path, lock))
}

impl Journal {
    /// Opens (creating) `dir/state.db` for the workspace `root`, and recovers the edits an
    /// earlier lspgate left half-applied. The folder gets a `.gitignore` of its own. Nothing of
    /// it is followed through a symlink.
    pub fn open(dir: &Path, root: &Root) -> Result<Journal, CoreError> {
        let (path, lock) = own_files(dir, root)?;
        let key = seal::Key::load(&key_dir())?;
        let db = Db::open(&path)?;
        let journal = Journal {
            inner: Arc::new(Inner {
                db,
                writing: Mutex::new(()),
                lock,
                root: root.clone(),
                key,
            }),
        };
        match journal.try_lock() {
            Some(_held) => {
                journal.recover();
            }
            // Another lspgate is applying an edit: its pending entry is alive. Whatever a dead
            // one left is recovered before the next apply.
            None => tracing::info!("another lspgate is applying an edit; recovery waits for it"),
        }
        Ok(journal)
    }

    /// Whether `dir` holds a journal (so lspgate can recover at start without creating one).
    pub fn exists(dir: &Path) -> bool {
        Db::exists(&location(dir))
    }

    /// The state database the journal keeps its tables in (the event log and the activities
    /// keep theirs beside them, `crate::events::store`).
    pub fn db(&self) -> &Db {
        &self.inner.db
    }

    fn conn(&self) -> Result<MutexGuard<'_, Connection>, CoreError> {
        self.inner.db.lock()
    }

    fn lock(&self) -> Result<Locked<'_>, CoreError> {
        loop {
            match rustix::fs::flock(&self.inner.lock, rustix::fs::FlockOperation::LockExclusive) {
                Ok(()) => return Ok(Locked(&self.inner.lock)),
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(CoreError::internal(format!("edit journal lock: {e}"))),
            }
        }
    }

    fn try_lock(&self) -> Option<Locked<'_>> {
        rustix::fs::flock(
            &self.inner.lock,
            rustix::fs::FlockOperation::NonBlockingLockExclusive,
        )
        .ok()
        .map(|()| Locked(&self.inner.lock))
    }

    /// Applies `plan` write-ahead (see the module doc) and returns its edit id. `undoes`: the
    /// edit this one undoes, marked so in the same transaction that records the completion.
    /// Run it off the async runtime: it holds the lock, writes files, and is never cut short by a
    /// client's cancel (the intent and the completion are both recorded, or the edit is rolled
    /// back).
    pub fn apply(
        &self,
        tool: &str,
        summary: &str,
        plan: &Plan,
        undoes: Option<i64>,
    ) -> Result<i64, CoreError> {
        let _writing = self
            .inner
            .writing
            .lock()
            .map_err(|_| CoreError::internal("edit journal lock poisoned"))?;
        let _held = self.lock()?;
        // Whatever a dead writer left, first.
        self.recover();
        let id = self.begin(tool, summary, plan)?;
        if let Err(e) = super::apply(&self.inner.root, plan) {
            // `apply` put back what it wrote; make sure from the disk, then forget the attempt.
            match self.roll_back(id) {
                Ok(()) => {
                    if let Err(fe) = self.forget(id) {
                        tracing::warn!("edit journal: cannot drop failed edit {id}: {fe}");
                    }
                }
                Err(re) => {
                    tracing::error!("edit {id} failed and could not be rolled back yet: {re}")
                }
            }
            return Err(e);
        }
        if let Err(e) = self.finish(id, undoes) {
            tracing::error!("edit {id}: cannot record its completion ({e}); rolling it back");
            match self.roll_back(id) {
                Ok(()) => {
                    if let Err(se) = self.set_state(id, State::RolledBack) {
                        tracing::warn!("edit {id}: rolled back, but not recorded as such ({se})");
                    }
                }
                Err(re) => tracing::error!(
                    "edit {id}: rollback failed ({re}); it is retried before the next edit and at the next start"
                ),
            }
            return Err(e);
        }
        Ok(id)
    }

    /// Records the intent: the entry, `pending`, with every file's content before and after.
    fn begin(&self, tool: &str, summary: &str, plan: &Plan) -> Result<i64, CoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction().map_err(db_error)?;
        tx.execute(
            "INSERT INTO edits (tool, summary, state) VALUES (?1, ?2, ?3)",
            params![tool, summary, State::Pending.as_str()],
        )
        .map_err(db_error)?;
        let id = tx.last_insert_rowid();
        // Each file's content digests, stored and sealed; its path's bytes are what `stored`
        // keeps (as text or blob) and `path_of` reads back.
        let digests: Vec<(Option<String>, Option<String>)> = plan
            .changes
            .iter()
            .map(|c| {
                (
                    c.before.as_deref().map(digest),
                    c.after.as_deref().map(digest),
                )
            })
            .collect();
        for (seq, (c, (before, after))) in plan.changes.iter().zip(&digests).enumerate() {
            tx.execute(
                "INSERT INTO files (edit_id, seq, path, before, after, before_digest, after_digest)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    seq as i64,
                    stored(&c.path),
                    c.before,
                    c.after,
                    before,
                    after,
                ],
            )
            .map_err(db_error)?;
        }
        let files: Vec<seal::Sealed> = plan
            .changes
            .iter()
            .zip(&digests)
            .map(|(c, (before, after))| seal::Sealed {
                path: c.path.as_os_str().as_bytes(),
                before: before.as_deref(),
                after: after.as_deref(),
            })
            .collect();
        let sealed = self
            .inner
            .key
            .seal(self.inner.root.path(), id, tool, summary, &files);
        tx.execute(
            "UPDATE edits SET seal = ?2 WHERE id = ?1",
            params![id, sealed],
        )
        .map_err(db_error)?;
        tx.commit().map_err(db_error)?;
        Ok(id)
    }

    /// Records the completion (and what it undoes).
    fn finish(&self, id: i64, undoes: Option<i64>) -> Result<(), CoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction().map_err(db_error)?;
        tx.execute(
            "UPDATE edits SET state = ?2 WHERE id = ?1",
            params![id, State::Applied.as_str()],
        )
        .map_err(db_error)?;
        if let Some(undone) = undoes {
            tx.execute(
                "UPDATE edits SET undone_by = ?2 WHERE id = ?1",
                params![undone, id],
            )
            .map_err(db_error)?;
        }
        tx.commit().map_err(db_error)
    }

    fn set_state(&self, id: i64, state: State) -> Result<(), CoreError> {
        self.conn()?
            .execute(
                "UPDATE edits SET state = ?2 WHERE id = ?1",
                params![id, state.as_str()],
            )
            .map_err(db_error)
            .map(drop)
    }

    /// Drops an attempt that failed cleanly (nothing of it is on disk).
    fn forget(&self, id: i64) -> Result<(), CoreError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction().map_err(db_error)?;
        tx.execute("DELETE FROM files WHERE edit_id = ?1", params![id])
            .map_err(db_error)?;
        tx.execute("DELETE FROM edits WHERE id = ?1", params![id])
            .map_err(db_error)?;
        tx.commit().map_err(db_error)
    }

    /// Rolls back every `pending` entry, newest first (the caller holds the lock, so none is
    /// being applied). Failures are logged and retried next time.
    fn recover(&self) {
        let pending: Vec<i64> = match self.conn().and_then(|c| {
            let mut stmt = c
                .prepare("SELECT id FROM edits WHERE state = ?1 ORDER BY id DESC")
                .map_err(db_error)?;
            stmt.query_map(params![State::Pending.as_str()], |r| r.get(0))
                .map_err(db_error)?
                .collect::<Result<Vec<i64>, _>>()
                .map_err(db_error)
        }) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!("edit journal: cannot look for interrupted edits: {e}");
                return;
            }
        };
        for id in pending {
            let outcome = self
                .roll_back(id)
                .and_then(|()| self.set_state(id, State::RolledBack));
            match outcome {
                Ok(()) => {
                    tracing::warn!("edit {id} was interrupted before it completed; rolled back")
                }
                // Not this workspace's (outside, or into a VCS folder), or not lspgate's (no
                // seal): never to be replayed. Anything else (a file not readable now) is
                // tried again.
                Err(e) if e.kind == Kind::OutsideRoot || unsealed(&e) => {
                    tracing::error!("edit {id} in the journal is refused: {e}");
                    if let Err(e) = self.set_state(id, State::Refused) {
                        tracing::error!("edit journal: {e}");
                    }
                }
                Err(e) => {
                    tracing::error!("edit {id} was interrupted and cannot be rolled back yet: {e}")
                }
            }
        }
    }

    /// Puts back, from the disk's current state, every file of entry `id` that holds what the
    /// entry would write; other files are left as they are. Removes the temporary files an
    /// interrupted write may have left beside them.
    fn roll_back(&self, id: i64) -> Result<(), CoreError> {
        let Some(entry) = self.get(id)? else {
            return Ok(());
        };
        let root = &self.inner.root;
        let mut back = Plan::default();
        for c in &entry.plan.changes {
            if super::read_current(root, &c.path)? == c.after {
                back.changes.push(FileChange {
                    path: c.path.clone(),
                    before: c.after.clone(),
                    after: c.before.clone(),
                });
            }
        }
        super::apply(root, &back.normalized())?;
        for c in &entry.plan.changes {
            super::remove_temporaries(root, &c.path);
        }
        Ok(())
    }

    /// The entry `id`, every path confined to the root (one outside: `outside_root`, and the
    /// entry is not used).
    pub fn get(&self, id: i64) -> Result<Option<Entry>, CoreError> {
        let (head, rows) = {
            let conn = self.conn()?;
            let head: Option<Head> = conn
                .query_row(
                    "SELECT tool, summary, undone_by, state, seal FROM edits WHERE id = ?1",
                    params![id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()
                .map_err(db_error)?;
            let mut stmt = conn
                .prepare(
                    "SELECT path, before, after, before_digest, after_digest
                     FROM files WHERE edit_id = ?1 ORDER BY seq",
                )
                .map_err(db_error)?;
            let rows: Vec<Row> = stmt
                .query_map(params![id], |r| {
                    Ok((
                        path_of(r.get_ref(0)?)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                    ))
                })
                .map_err(db_error)?
                .collect::<Result<_, _>>()
                .map_err(db_error)?;
            (head, rows)
        };
        let Some((tool, summary, undone_by, state, sealed)) = head else {
            return Ok(None);
        };
        let state = State::parse(&state).ok_or_else(|| {
            CoreError::internal(format!(
                "edit {id} has an unknown state `{state}` in the journal"
            ))
        })?;
        let files: Vec<seal::Sealed> = rows
            .iter()
            .map(|(path, _, _, before, after)| seal::Sealed {
                path: path.as_os_str().as_bytes(),
                before: before.as_deref(),
                after: after.as_deref(),
            })
            .collect();
        let genuine = self.inner.key.verify(
            sealed.as_deref(),
            self.inner.root.path(),
            id,
            &tool,
            &summary,
            &files,
        );
        drop(files);
        let mut changes = Vec::with_capacity(rows.len());
        for (path, before, after, before_digest, after_digest) in rows {
            let shown = path.display().to_string();
            let path = self.inner.root.confine(&path).map_err(|e| match e.kind {
                Kind::OutsideRoot => CoreError::new(
                    Kind::OutsideRoot,
                    format!(
                        "edit {id} in the journal names {shown}, outside the workspace; lspgate refuses it (this journal was not written for this workspace)"
                    ),
                )
                .with_data(json!({"edit_id": id, "file": shown})),
                _ => e,
            })?;
            if before.as_deref().map(digest) != before_digest
                || after.as_deref().map(digest) != after_digest
            {
                return Err(CoreError::internal(format!(
                    "edit {id} is damaged in the journal: the content of {shown} does not match its digest"
                )));
            }
            changes.push(FileChange {
                path,
                before,
                after,
            });
        }
        // Checked once every path is known to be inside: a path leading out says so first.
        if !genuine {
            return Err(CoreError::invalid(format!(
                "edit {id} in the journal was not recorded by lspgate for this workspace and user (it carries no valid seal: a state database shipped with a repository, copied from elsewhere, edited by hand, or older than sealed journals); lspgate never replays or undoes it"
            ))
            .with_data(json!({"edit_id": id, "reason": UNSEALED})));
        }
        Ok(Some(Entry {
            id,
            tool,
            summary,
            undone_by,
            state,
            plan: Plan { changes },
        }))
    }
}

#[cfg(test)]
mod tests;
