//! The state database of a workspace root (`state.db`): the one place that connects to it and
//! holds its whole schema (the edit journal's `edits` and `files`, the event log's `events`,
//! `diagnostic_counts`, `file_versions` and `meta`, and the `activities`), migrated in numbered
//! steps recorded in `PRAGMA user_version`. A database an older lspgate wrote (no version
//! recorded) is told by its shape and brought up from there; one a newer lspgate wrote is
//! refused untouched. The folder it lives in is made and checked (modes, no symlinks) by the
//! journal (`edits::journal`), which opens it.
//!
//! Connected with `SQLITE_OPEN_NOFOLLOW`, a 10 s busy timeout, WAL and `synchronous=FULL`; migrated
//! in one write transaction. An older database's shape is read from what it lacks (`edits.state`,
//! `edits.seal`, the event tables).

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, TransactionBehavior};
use serde_json::json;

use crate::error::CoreError;

/// The database's name in its folder.
pub const DB: &str = "state.db";
/// The database's files in its folder (SQLite's beside it included); none may be a symlink.
pub const FILES: [&str; 4] = [DB, "state.db-wal", "state.db-shm", "state.db-journal"];

/// The schema, one step per version: step `n` (1-based) takes a database at version `n - 1` to
/// `n`. Never edit a step a released lspgate ran: add one.
const STEPS: &[&str] = &[
    // 1: the edit journal as first written (applied edits only).
    "CREATE TABLE IF NOT EXISTS edits (
         id INTEGER PRIMARY KEY AUTOINCREMENT,
         time TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
         tool TEXT NOT NULL,
         summary TEXT NOT NULL,
         undone_by INTEGER
     );
     CREATE TABLE IF NOT EXISTS files (
         edit_id INTEGER NOT NULL REFERENCES edits(id),
         seq INTEGER NOT NULL,
         path TEXT NOT NULL,
         before BLOB,
         after BLOB,
         before_digest TEXT,
         after_digest TEXT,
         PRIMARY KEY (edit_id, seq)
     );",
    // 2: the write-ahead protocol; what was there before was applied.
    "ALTER TABLE edits ADD COLUMN state TEXT NOT NULL DEFAULT 'applied';",
    // 3: sealed entries; older ones carry no seal and are never replayed.
    "ALTER TABLE edits ADD COLUMN seal TEXT;",
    // 4: the event log and the activities.
    "CREATE TABLE IF NOT EXISTS events (
         seq INTEGER PRIMARY KEY AUTOINCREMENT,
         time TEXT NOT NULL,
         kind TEXT NOT NULL,
         data TEXT NOT NULL
     );
     CREATE INDEX IF NOT EXISTS events_kind ON events (kind, seq);
     CREATE TABLE IF NOT EXISTS diagnostic_counts (
         file TEXT NOT NULL,
         server TEXT NOT NULL,
         errors INTEGER NOT NULL,
         warnings INTEGER NOT NULL,
         PRIMARY KEY (file, server)
     );
     CREATE TABLE IF NOT EXISTS activities (
         n INTEGER PRIMARY KEY AUTOINCREMENT,
         kind TEXT NOT NULL,
         params TEXT NOT NULL,
         state TEXT NOT NULL,
         owner TEXT NOT NULL,
         started TEXT NOT NULL,
         finished TEXT,
         result TEXT,
         text TEXT,
         error TEXT,
         reason TEXT,
         progress TEXT
     );
     CREATE TABLE IF NOT EXISTS file_versions (
         file TEXT PRIMARY KEY,
         version TEXT NOT NULL
     );
     CREATE TABLE IF NOT EXISTS meta (
         key TEXT PRIMARY KEY,
         value INTEGER NOT NULL
     );",
];

/// The schema version this lspgate writes.
pub const VERSION: i64 = STEPS.len() as i64;

/// The tables of step 4, all of which a database at that version has.
const EVENT_TABLES: [&str; 5] = [
    "events",
    "diagnostic_counts",
    "activities",
    "file_versions",
    "meta",
];

/// The state database, connected and at `VERSION`; cheap to clone (one connection, shared).
#[derive(Clone)]
pub struct Db {
    conn: Arc<Mutex<Connection>>,
}

impl Db {
    /// Connects to `folder/state.db` (made by the caller: a real folder, the file 0600) and
    /// migrates it. Blocking.
    pub fn open(folder: &Path) -> Result<Db, CoreError> {
        let path = folder.join(DB);
        let shown = path.display().to_string();
        let failed =
            |e: rusqlite::Error| CoreError::internal(format!("state database {shown}: {e}"));
        // SQLite refuses a symlink there (and opens its own files O_NOFOLLOW).
        let mut conn = Connection::open_with_flags(
            &path,
            OpenFlags::default() | OpenFlags::SQLITE_OPEN_NOFOLLOW,
        )
        .map_err(failed)?;
        conn.busy_timeout(Duration::from_secs(10)).map_err(failed)?;
        // Refused before anything is written to it (the journal mode included).
        refuse_newer(version(&conn).map_err(failed)?, &shown)?;
        conn.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;")
            .map_err(failed)?;
        migrate(&mut conn, &shown)?;
        Ok(Db {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Whether `folder` holds a state database.
    pub fn exists(folder: &Path) -> bool {
        std::fs::symlink_metadata(folder.join(DB)).is_ok()
    }

    /// The connection, held until the guard is dropped. Blocking: call it off the runtime.
    pub fn lock(&self) -> Result<MutexGuard<'_, Connection>, CoreError> {
        self.conn
            .lock()
            .map_err(|_| CoreError::internal("state database lock poisoned"))
    }

    /// Runs `f` on the connection. Blocking: call it off the runtime.
    pub fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Result<T, CoreError> {
        f(&mut *self.lock()?).map_err(|e| CoreError::internal(format!("state database: {e}")))
    }
}

/// Brings `conn`'s database to `VERSION`, every step and the new version in one transaction
/// (which holds the write lock from its start, so two processes opening one database migrate
/// it once). A database without a recorded version is told by its shape (`legacy_version`).
pub fn migrate(conn: &mut Connection, db: &str) -> Result<(), CoreError> {
    let failed = |e: rusqlite::Error| CoreError::internal(format!("state database {db}: {e}"));
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(failed)?;
    let mut at = version(&tx).map_err(failed)?;
    refuse_newer(at, db)?;
    if at == VERSION {
        return Ok(());
    }
    if at == 0 {
        at = legacy_version(&tx).map_err(failed)?;
    }
    for (n, step) in STEPS.iter().enumerate().skip(at as usize) {
        tracing::info!("state database {db}: migrating to version {}", n + 1);
        tx.execute_batch(step).map_err(failed)?;
    }
    tx.pragma_update(None, "user_version", VERSION)
        .map_err(failed)?;
    tx.commit().map_err(failed)
}

/// The version recorded in the database (0: none, a new database or an older lspgate's).
pub fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

fn refuse_newer(found: i64, db: &str) -> Result<(), CoreError> {
    if found <= VERSION {
        return Ok(());
    }
    Err(CoreError::internal(format!(
        "the state database {db} was written by a newer lspgate (schema version {found}; this lspgate knows up to {VERSION}); it is left as it is: use that lspgate, or pass --state DIR to keep this one's state elsewhere"
    ))
    .with_data(json!({"reason": "newer_state_database", "version": found, "known": VERSION})))
}

/// The version of a database an lspgate wrote before versions were recorded, by its shape:
/// which of the steps' tables and columns it has (none: a new database).
fn legacy_version(conn: &Connection) -> rusqlite::Result<i64> {
    let has = |sql: &str, name: &str| -> rusqlite::Result<bool> {
        conn.query_row(sql, [name], |r| r.get(0))
    };
    let table = "SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?1";
    let column = "SELECT COUNT(*) > 0 FROM pragma_table_info('edits') WHERE name = ?1";
    if !has(table, "edits")? {
        return Ok(0);
    }
    if !has(column, "state")? {
        return Ok(1);
    }
    if !has(column, "seal")? {
        return Ok(2);
    }
    for t in EVENT_TABLES {
        if !has(table, t)? {
            return Ok(3);
        }
    }
    Ok(4)
}

#[cfg(test)]
mod tests;
