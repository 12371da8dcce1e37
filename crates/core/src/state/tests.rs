//! The state database's migrations: a new database, each shape an older lspgate left, and one
//! from a newer lspgate.

use super::*;

/// The journal as the first lspgate wrote it (no `state`, no `seal`), with one applied edit.
const FIRST_JOURNAL: &str = "
    CREATE TABLE edits (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        time TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        tool TEXT NOT NULL,
        summary TEXT NOT NULL,
        undone_by INTEGER
    );
    CREATE TABLE files (
        edit_id INTEGER NOT NULL REFERENCES edits(id),
        seq INTEGER NOT NULL,
        path TEXT NOT NULL,
        before BLOB,
        after BLOB,
        before_digest TEXT,
        after_digest TEXT,
        PRIMARY KEY (edit_id, seq)
    );
    INSERT INTO edits (tool, summary) VALUES ('edit', 'first');
    INSERT INTO files VALUES (1, 0, 'a.txt', x'6130', x'6131', 'd0', 'd1');";

const WITH_STATE: &str = "
    ALTER TABLE edits ADD COLUMN state TEXT NOT NULL DEFAULT 'applied';
    INSERT INTO edits (tool, summary, state) VALUES ('edit', 'second', 'rolled_back');";

const WITH_SEAL: &str = "
    ALTER TABLE edits ADD COLUMN seal TEXT;
    INSERT INTO edits (tool, summary, state, seal) VALUES ('edit', 'third', 'applied', 's');";

/// The event log before `file_versions` and `meta` were added.
const FIRST_EVENTS: &str = "
    CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        time TEXT NOT NULL,
        kind TEXT NOT NULL,
        data TEXT NOT NULL
    );
    CREATE INDEX events_kind ON events (kind, seq);
    CREATE TABLE diagnostic_counts (
        file TEXT NOT NULL,
        server TEXT NOT NULL,
        errors INTEGER NOT NULL,
        warnings INTEGER NOT NULL,
        PRIMARY KEY (file, server)
    );
    CREATE TABLE activities (
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
    INSERT INTO events (time, kind, data) VALUES ('t', 'file_changed', '{}');";

/// A folder holding a database made by `sql` (no version recorded, as older lspgates left it).
fn older(sql: &[&str]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join(DB)).unwrap();
    for s in sql {
        conn.execute_batch(s).unwrap();
    }
    dir
}

fn strings(db: &Db, sql: &str) -> Vec<String> {
    db.with(|c| {
        c.prepare(sql)?
            .query_map([], |r| r.get::<_, String>(0))?
            .collect()
    })
    .unwrap()
}

/// Every table and column of the latest schema is there: one row through each.
fn has_latest_schema(db: &Db) {
    db.with(|c| {
        assert_eq!(version(c)?, VERSION);
        c.execute_batch(
            "INSERT INTO edits (tool, summary, state, seal) VALUES ('t', 's', 'pending', 'x');
             INSERT INTO events (time, kind, data) VALUES ('t', 'k', '{}');
             INSERT OR REPLACE INTO diagnostic_counts VALUES ('f', 's', 1, 0);
             INSERT INTO activities (kind, params, state, owner, started)
                 VALUES ('check', '{}', 'running', 'o', 't');
             INSERT OR REPLACE INTO file_versions VALUES ('f', 'gone');
             INSERT OR REPLACE INTO meta VALUES ('k', 1);",
        )
    })
    .unwrap();
}

#[test]
fn a_new_database_gets_the_latest_version() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path()).unwrap();
    has_latest_schema(&db);
    let mode: String = db
        .with(|c| c.pragma_query_value(None, "journal_mode", |r| r.get(0)))
        .unwrap();
    assert_eq!(mode, "wal");
    drop(db);
    // Opened again (and by a second connection at once): nothing to do.
    let (a, b) = (Db::open(dir.path()).unwrap(), Db::open(dir.path()).unwrap());
    has_latest_schema(&a);
    assert_eq!(b.with(|c| version(c)).unwrap(), VERSION);
}

#[test]
fn each_older_shape_is_migrated_and_keeps_its_rows() {
    let shapes: [&[&str]; 4] = [
        &[FIRST_JOURNAL],
        &[FIRST_JOURNAL, WITH_STATE],
        &[FIRST_JOURNAL, WITH_STATE, WITH_SEAL],
        &[FIRST_JOURNAL, WITH_STATE, WITH_SEAL, FIRST_EVENTS],
    ];
    for (n, shape) in shapes.iter().enumerate() {
        let dir = older(shape);
        let db = Db::open(dir.path()).unwrap_or_else(|e| panic!("shape {n}: {e}"));
        // The first edit was applied, and carries no seal (it is never replayed).
        assert_eq!(
            strings(
                &db,
                "SELECT summary || ':' || state || ':' || COALESCE(seal, '-') FROM edits WHERE id = 1"
            ),
            ["first:applied:-"],
            "shape {n}"
        );
        assert_eq!(
            strings(&db, "SELECT path FROM files WHERE edit_id = 1"),
            ["a.txt"]
        );
        let edits = strings(&db, "SELECT summary FROM edits ORDER BY id");
        assert_eq!(edits, ["first", "second", "third"][..shape.len().min(3)]);
        if shape.len() == 4 {
            assert_eq!(strings(&db, "SELECT kind FROM events"), ["file_changed"]);
        }
        has_latest_schema(&db);
    }
}

#[test]
fn a_database_of_a_newer_lspgate_is_refused_untouched() {
    let dir = older(&[
        FIRST_JOURNAL,
        &format!("PRAGMA user_version = {};", VERSION + 1),
    ]);
    let path = dir.path().join(DB);
    let before = std::fs::read(&path).unwrap();
    let e = Db::open(dir.path()).err().expect("refused");
    assert!(e.message.contains("newer lspgate"), "{e}");
    assert_eq!(
        e.data.as_ref().unwrap()["reason"],
        "newer_state_database",
        "{e}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), before, "left as it was");
    assert!(!dir.path().join("state.db-wal").exists());
}
