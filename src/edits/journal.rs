//! The edit journal: every applied change with its files' before and after content, in an
//! embedded SQLite database (`.lspgate/state.db` by default) that survives restarts of lspgate.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use super::{FileChange, Plan};
use crate::error::{Code, ToolError};
use crate::text::digest;

/// An applied change as the journal holds it.
#[derive(Debug, Clone)]
pub struct Entry {
    pub id: i64,
    pub tool: String,
    pub summary: String,
    pub undone_by: Option<i64>,
    pub plan: Plan,
}

pub struct Journal {
    conn: Mutex<Connection>,
}

fn db_error(e: rusqlite::Error) -> ToolError {
    ToolError::new(Code::ServerError, format!("edit journal: {e}"))
}

impl Journal {
    /// Opens (creating) `dir/state.db`; the folder gets a `.gitignore` of its own.
    pub fn open(dir: &Path) -> Result<Journal, ToolError> {
        std::fs::create_dir_all(dir)
            .map_err(|e| ToolError::invalid(format!("cannot create {}: {e}", dir.display())))?;
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            let _ = std::fs::write(&ignore, "# lspgate's state (edit journal)\n*\n");
        }
        let conn = Connection::open(dir.join("state.db")).map_err(db_error)?;
        conn.execute_batch(
            "PRAGMA journal_mode=WAL;
             PRAGMA synchronous=FULL;
             CREATE TABLE IF NOT EXISTS edits (
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
        )
        .map_err(db_error)?;
        Ok(Journal {
            conn: Mutex::new(conn),
        })
    }

    fn conn(&self) -> Result<std::sync::MutexGuard<'_, Connection>, ToolError> {
        self.conn
            .lock()
            .map_err(|_| ToolError::new(Code::ServerError, "edit journal lock poisoned"))
    }

    /// Records an applied plan; returns its id.
    pub fn record(&self, tool: &str, summary: &str, plan: &Plan) -> Result<i64, ToolError> {
        let mut conn = self.conn()?;
        let tx = conn.transaction().map_err(db_error)?;
        tx.execute(
            "INSERT INTO edits (tool, summary) VALUES (?1, ?2)",
            params![tool, summary],
        )
        .map_err(db_error)?;
        let id = tx.last_insert_rowid();
        for (seq, c) in plan.changes.iter().enumerate() {
            tx.execute(
                "INSERT INTO files (edit_id, seq, path, before, after, before_digest, after_digest)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    seq as i64,
                    c.path.to_string_lossy(),
                    c.before,
                    c.after,
                    c.before.as_deref().map(digest),
                    c.after.as_deref().map(digest),
                ],
            )
            .map_err(db_error)?;
        }
        tx.commit().map_err(db_error)?;
        Ok(id)
    }

    pub fn get(&self, id: i64) -> Result<Option<Entry>, ToolError> {
        let conn = self.conn()?;
        let head: Option<(String, String, Option<i64>)> = conn
            .query_row(
                "SELECT tool, summary, undone_by FROM edits WHERE id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(db_error)?;
        let Some((tool, summary, undone_by)) = head else {
            return Ok(None);
        };
        let mut stmt = conn
            .prepare("SELECT path, before, after FROM files WHERE edit_id = ?1 ORDER BY seq")
            .map_err(db_error)?;
        let changes = stmt
            .query_map(params![id], |r| {
                Ok(FileChange {
                    path: PathBuf::from(r.get::<_, String>(0)?),
                    before: r.get(1)?,
                    after: r.get(2)?,
                })
            })
            .map_err(db_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db_error)?;
        Ok(Some(Entry {
            id,
            tool,
            summary,
            undone_by,
            plan: Plan { changes },
        }))
    }

    pub fn mark_undone(&self, id: i64, by: i64) -> Result<(), ToolError> {
        self.conn()?
            .execute(
                "UPDATE edits SET undone_by = ?2 WHERE id = ?1",
                params![id, by],
            )
            .map_err(db_error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join(".lspgate");
        let plan = Plan {
            changes: vec![FileChange {
                path: dir.path().join("a.py"),
                before: Some(b"x = 1\n".to_vec()),
                after: None,
            }],
        };
        let id = Journal::open(&state)
            .unwrap()
            .record("edit", "delete a.py", &plan)
            .unwrap();
        let j = Journal::open(&state).unwrap();
        let e = j.get(id).unwrap().unwrap();
        assert_eq!((e.tool.as_str(), e.plan.clone()), ("edit", plan));
        assert!(e.undone_by.is_none());
        j.mark_undone(id, id + 1).unwrap();
        assert_eq!(j.get(id).unwrap().unwrap().undone_by, Some(id + 1));
        assert!(j.get(999).unwrap().is_none());
        assert!(
            std::fs::read_to_string(state.join(".gitignore"))
                .unwrap()
                .contains('*')
        );
    }
}
