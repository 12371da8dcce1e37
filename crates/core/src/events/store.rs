//! The durable records beside the edit journal in the state database (`state.db`): the event
//! log (`events`, `seq INTEGER PRIMARY KEY AUTOINCREMENT`, so a seq is never reused or handed
//! out below one already given, even after pruning), the last diagnostic counts lspgate saw per
//! file and server (`diagnostic_counts`, so `diagnostics_changed` survives restarts), and the
//! background activities (`activities`, with the process that runs each, so one whose process is
//! gone reads `failed` with reason `interrupted`). Plain functions over a connection to those
//! tables (made and migrated by `crate::state`): the caller runs them off the async runtime, in
//! its transactions.
//!
//! The log keeps the newest `KEEP_EVENTS` (10,000); `meta` says where it was cut (`events`'s
//! `pruned_before`). An activity row names its owner process by pid, start time and boot id.
//! `file_versions`: a delivered file is logged only when its `FileVersion` differs from the last
//! one logged, in the same transaction, so however many watchers (workspaces, processes) see a
//! change, it is logged once.

use crate::procfs::boot_id;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};
use serde::Serialize;
use serde_json::{Map, Value};

/// Events kept: past this, the oldest go (and `events` says `pruned_before`).
pub const KEEP_EVENTS: i64 = 10_000;
/// Finished activities kept.
pub const KEEP_ACTIVITIES: i64 = 1_000;

/// Marks the running activities of processes that are gone as `failed` (reason
/// `interrupted`), each with its `activity_finished` event. The tables are `crate::state`'s.
pub fn init(conn: &mut Connection, alive: &dyn Fn(&str) -> bool) -> rusqlite::Result<()> {
    // Immediate: it reads, then writes; a deferred transaction's upgrade fails at once
    // (SQLITE_BUSY, no waiting) when another process committed in between.
    let tx = write_transaction(conn)?;
    let running: Vec<(i64, String, String)> = {
        let mut st = tx.prepare("SELECT n, kind, owner FROM activities WHERE state = 'running'")?;
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let now = now_ms();
    for (n, kind, owner) in running {
        if alive(&owner) {
            continue;
        }
        let error = serde_json::json!({
            "code": "internal",
            "message": "interrupted: the lspgate that ran this stopped before it finished",
            "data": {"reason": "interrupted"},
        });
        finish_activity(
            &tx,
            n,
            &Finish {
                state: "failed",
                error: Some(error),
                reason: Some("interrupted".into()),
                ..Finish::default()
            },
            now,
        )?;
        let data = activity_data(n, &kind, "failed", Some("interrupted"));
        append(&tx, "activity_finished", &data, now)?;
    }
    tx.commit()
}

/// A transaction that holds the write lock from its start (waiting for it as the busy timeout
/// allows): one that reads before it writes cannot then fail because another connection
/// (another lspgate on the same root) committed in between, as a deferred one would in WAL mode.
pub fn write_transaction(conn: &mut Connection) -> rusqlite::Result<Transaction<'_>> {
    conn.transaction_with_behavior(TransactionBehavior::Immediate)
}

/// Whether `e` is SQLite's "database is busy" (its extended codes included).
pub fn is_busy(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// RFC 3339 in UTC with milliseconds, as SQLite formats it.
const TIME: &str = "strftime('%Y-%m-%dT%H:%M:%fZ', ?1 / 1000.0, 'unixepoch')";

/// One event as `events` returns it.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Event {
    pub seq: i64,
    /// When it happened (RFC 3339, UTC).
    pub time: String,
    pub kind: String,
    pub data: Map<String, Value>,
}

/// Appends one event; returns it with its seq.
pub fn append(tx: &Transaction, kind: &str, data: &Value, at_ms: i64) -> rusqlite::Result<Event> {
    let text = data.to_string();
    let (seq, time): (i64, String) = tx.query_row(
        &format!(
            "INSERT INTO events (time, kind, data) VALUES ({TIME}, ?2, ?3) RETURNING seq, time"
        ),
        params![at_ms, kind, text],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(Event {
        seq,
        time,
        kind: kind.to_string(),
        data: match data {
            Value::Object(m) => m.clone(),
            _ => Map::new(),
        },
    })
}

/// Keeps the newest `keep` events; remembers where the kept ones start (`pruned_before`).
pub fn prune(tx: &Transaction, keep: i64) -> rusqlite::Result<()> {
    let Some(last): Option<i64> = tx.query_row("SELECT MAX(seq) FROM events", [], |r| r.get(0))?
    else {
        return Ok(());
    };
    let cut = last - keep;
    if cut <= 0 {
        return Ok(());
    }
    let gone = tx.execute("DELETE FROM events WHERE seq <= ?1", [cut])?;
    if gone > 0 {
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('events_pruned_before', ?1)
             ON CONFLICT (key) DO UPDATE SET value = MAX(value, excluded.value)",
            [cut + 1],
        )?;
    }
    Ok(())
}

/// One page of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub events: Vec<Event>,
    /// The cursor to pass as `after` next.
    pub next: i64,
    /// Whether more events (of the asked kinds) follow `next` already.
    pub more: bool,
    /// Events after the asked cursor and before this seq were pruned.
    pub pruned_before: Option<i64>,
}

/// Events after `after` (of `kinds`, when given), oldest first, at most `limit`.
pub fn read(
    conn: &mut Connection,
    after: i64,
    limit: usize,
    kinds: &[&str],
) -> rusqlite::Result<Page> {
    let tx = conn.transaction()?;
    let filter = if kinds.is_empty() {
        String::new()
    } else {
        let marks: Vec<String> = (0..kinds.len()).map(|i| format!("?{}", i + 3)).collect();
        format!(" AND kind IN ({})", marks.join(", "))
    };
    let sql = format!(
        "SELECT seq, time, kind, data FROM events WHERE seq > ?1{filter} ORDER BY seq LIMIT ?2"
    );
    let mut values: Vec<rusqlite::types::Value> = vec![after.into(), (limit as i64 + 1).into()];
    values.extend(
        kinds
            .iter()
            .map(|k| rusqlite::types::Value::Text(k.to_string())),
    );
    let mut events: Vec<Event> = {
        let mut st = tx.prepare(&sql)?;
        st.query_map(rusqlite::params_from_iter(values), |r| {
            let data: String = r.get(3)?;
            Ok(Event {
                seq: r.get(0)?,
                time: r.get(1)?,
                kind: r.get(2)?,
                data: serde_json::from_str(&data).unwrap_or_default(),
            })
        })?
        .collect::<rusqlite::Result<_>>()?
    };
    let more = events.len() > limit;
    events.truncate(limit);
    let last: i64 = tx
        .query_row("SELECT MAX(seq) FROM events", [], |r| {
            r.get::<_, Option<i64>>(0)
        })?
        .unwrap_or(0);
    let next = match events.last() {
        Some(e) if more => e.seq,
        // Everything of the asked kinds up to the newest was read: skip what did not match.
        _ => last.max(after),
    };
    let pruned: Option<i64> = tx
        .query_row(
            "SELECT value FROM meta WHERE key = 'events_pruned_before'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    let pruned_before = pruned.filter(|p| after + 1 < *p);
    tx.commit()?;
    Ok(Page {
        events,
        next,
        more,
        pruned_before,
    })
}

/// Notes that `file` (root-relative) is at `version` (`watch::FileVersion::logged`); whether
/// that version was not noted before (its change is then news to the log). So each change is
/// logged once however many watchers see it: in the daemon, sessions on one root whose
/// environment differs get workspaces of their own, each with a registry and a watcher, and
/// two lspgate processes on one root (standalone sessions, an old daemon draining beside a new
/// one) each watch it too.
pub fn saw_version(tx: &Transaction, file: &str, version: &str) -> rusqlite::Result<bool> {
    let changed = tx.execute(
        "INSERT INTO file_versions (file, version) VALUES (?1, ?2)
         ON CONFLICT (file) DO UPDATE SET version = excluded.version
         WHERE version <> excluded.version",
        params![file, version],
    )?;
    Ok(changed > 0)
}

/// Records that `server` reported `errors` and `warnings` for `file` (root-relative). When that
/// changes the file's totals over all its servers, returns the new totals.
pub fn saw_counts(
    tx: &Transaction,
    file: &str,
    server: &str,
    errors: u32,
    warnings: u32,
) -> rusqlite::Result<Option<(u32, u32)>> {
    let before: Option<(u32, u32)> = tx
        .query_row(
            "SELECT errors, warnings FROM diagnostic_counts WHERE file = ?1 AND server = ?2",
            params![file, server],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if before.unwrap_or((0, 0)) == (errors, warnings) {
        return Ok(None);
    }
    if (errors, warnings) == (0, 0) {
        tx.execute(
            "DELETE FROM diagnostic_counts WHERE file = ?1 AND server = ?2",
            params![file, server],
        )?;
    } else {
        tx.execute(
            "INSERT INTO diagnostic_counts (file, server, errors, warnings) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (file, server) DO UPDATE SET errors = excluded.errors, warnings = excluded.warnings",
            params![file, server, errors, warnings],
        )?;
    }
    let totals: (u32, u32) = tx.query_row(
        "SELECT COALESCE(SUM(errors), 0), COALESCE(SUM(warnings), 0) FROM diagnostic_counts WHERE file = ?1",
        [file],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(Some(totals))
}

/// The data of an `activity_started` / `activity_finished` event.
pub fn activity_data(n: i64, kind: &str, state: &str, reason: Option<&str>) -> Value {
    let mut data = serde_json::json!({"id": activity_id(n), "kind": kind, "state": state});
    if let Some(r) = reason {
        data["reason"] = Value::from(r);
    }
    data
}

/// An activity's id as agents see it.
pub fn activity_id(n: i64) -> String {
    format!("act-{n}")
}

/// The row number behind an activity id.
pub fn activity_number(id: &str) -> Option<i64> {
    id.strip_prefix("act-")?.parse().ok().filter(|n| *n > 0)
}

/// Records a new running activity owned by `owner`; returns its number.
pub fn begin_activity(
    conn: &mut Connection,
    kind: &str,
    params: &Value,
    owner: &str,
) -> rusqlite::Result<i64> {
    conn.query_row(
        &format!(
            "INSERT INTO activities (kind, params, state, owner, started)
             VALUES (?2, ?3, 'running', ?4, {TIME}) RETURNING n"
        ),
        params![now_ms(), kind, params.to_string(), owner],
        |r| r.get(0),
    )
}

/// How an activity ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Finish {
    /// succeeded, failed or cancelled.
    pub state: &'static str,
    pub result: Option<Value>,
    pub text: Option<String>,
    /// `{code, message, data}`.
    pub error: Option<Value>,
    pub reason: Option<String>,
    /// The last progress it reported.
    pub progress: Option<Value>,
}

/// Records the end of a running activity (an activity already ended keeps its end), and drops
/// the oldest finished ones past `KEEP_ACTIVITIES`.
pub fn finish_activity(tx: &Transaction, n: i64, f: &Finish, at_ms: i64) -> rusqlite::Result<bool> {
    let changed = tx.execute(
        &format!(
            "UPDATE activities SET state = ?2, finished = {TIME}, result = ?3, text = ?4,
             error = ?5, reason = ?6, progress = ?7 WHERE n = ?8 AND state = 'running'"
        ),
        params![
            at_ms,
            f.state,
            f.result.as_ref().map(Value::to_string),
            f.text,
            f.error.as_ref().map(Value::to_string),
            f.reason,
            f.progress.as_ref().map(Value::to_string),
            n
        ],
    )?;
    tx.execute(
        "DELETE FROM activities WHERE state != 'running'
         AND n <= (SELECT MAX(n) FROM activities) - ?1",
        [KEEP_ACTIVITIES],
    )?;
    Ok(changed > 0)
}

/// An activity as recorded.
#[derive(Debug, Clone, PartialEq)]
pub struct ActivityRow {
    pub n: i64,
    pub kind: String,
    pub state: String,
    pub owner: String,
    pub result: Option<Value>,
    pub text: Option<String>,
    pub error: Option<Value>,
    pub reason: Option<String>,
    pub progress: Option<Value>,
}

pub fn get_activity(conn: &mut Connection, n: i64) -> rusqlite::Result<Option<ActivityRow>> {
    let json = |s: Option<String>| s.and_then(|s| serde_json::from_str::<Value>(&s).ok());
    conn.query_row(
        "SELECT n, kind, state, owner, result, text, error, reason, progress
         FROM activities WHERE n = ?1",
        [n],
        |r| {
            Ok(ActivityRow {
                n: r.get(0)?,
                kind: r.get(1)?,
                state: r.get(2)?,
                owner: r.get(3)?,
                result: json(r.get(4)?),
                text: r.get(5)?,
                error: json(r.get(6)?),
                reason: r.get(7)?,
                progress: json(r.get(8)?),
            })
        },
    )
    .optional()
}

/// This process, as an activity's owner: pid, start time and boot, so a later process with the
/// same pid is not taken for it.
pub fn process_token() -> String {
    let pid = std::process::id();
    format!(
        "{pid}:{}:{}",
        start_time(pid).unwrap_or_default(),
        boot_id()
    )
}

/// Whether the process `token` names is alive.
pub fn token_alive(token: &str) -> bool {
    if token == process_token() {
        return true;
    }
    let mut parts = token.splitn(3, ':');
    let (Some(pid), Some(start), Some(boot)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let Ok(pid) = pid.parse::<u32>() else {
        return false;
    };
    boot == boot_id() && start_time(pid).is_some_and(|s| s.to_string() == start)
}

/// A process's start time (clock ticks after boot).
fn start_time(pid: u32) -> Option<u64> {
    crate::procfs::stat(pid).map(|s| s.start_time)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn db() -> Connection {
        let mut c = Connection::open_in_memory().unwrap();
        crate::state::migrate(&mut c, "test").unwrap();
        init(&mut c, &|_| true).unwrap();
        c
    }

    fn add(c: &mut Connection, kind: &str, n: i64) {
        let tx = c.transaction().unwrap();
        append(&tx, kind, &json!({"n": n}), 1_700_000_000_123).unwrap();
        tx.commit().unwrap();
    }

    /// Each version of a file is news once, whichever connection (process) notes it first.
    #[test]
    fn a_files_version_is_news_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let open = || {
            let mut c = Connection::open(&path).unwrap();
            crate::state::migrate(&mut c, "test").unwrap();
            init(&mut c, &|_| true).unwrap();
            c
        };
        let (mut one, mut two) = (open(), open());
        let saw = |c: &mut Connection, file: &str, version: &str| {
            let tx = write_transaction(c).unwrap();
            let news = saw_version(&tx, file, version).unwrap();
            tx.commit().unwrap();
            news
        };
        assert!(saw(&mut one, "a.py", "v1"));
        assert!(!saw(&mut two, "a.py", "v1"), "the other process logged it");
        assert!(saw(&mut two, "b.py", "v1"));
        assert!(saw(&mut one, "a.py", "v2"));
        assert!(saw(&mut two, "a.py", "gone"));
        assert!(!saw(&mut one, "a.py", "gone"));
    }

    #[test]
    fn pages_follow_the_cursor_and_filter_by_kind() {
        let mut c = db();
        for n in 1..=5 {
            add(&mut c, if n % 2 == 0 { "b" } else { "a" }, n);
        }
        let p = read(&mut c, 0, 2, &[]).unwrap();
        assert_eq!(p.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
        assert_eq!((p.next, p.more, p.pruned_before), (2, true, None));
        assert_eq!(p.events[0].time, "2023-11-14T22:13:20.123Z");
        assert_eq!(p.events[1].data["n"], 2);
        let p = read(&mut c, p.next, 10, &[]).unwrap();
        assert_eq!(
            p.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [3, 4, 5]
        );
        assert_eq!((p.next, p.more), (5, false));
        // Nothing new: the cursor stays.
        let p = read(&mut c, 5, 10, &[]).unwrap();
        assert!(p.events.is_empty());
        assert_eq!(p.next, 5);
        // A filter skips what does not match, and the cursor passes it.
        let p = read(&mut c, 0, 10, &["b"]).unwrap();
        assert_eq!(p.events.iter().map(|e| e.seq).collect::<Vec<_>>(), [2, 4]);
        assert_eq!(p.next, 5);
    }

    #[test]
    fn pruning_keeps_the_newest_and_seq_is_never_reused() {
        let mut c = db();
        for n in 1..=10 {
            add(&mut c, "a", n);
        }
        let tx = c.transaction().unwrap();
        prune(&tx, 4).unwrap();
        tx.commit().unwrap();
        let p = read(&mut c, 0, 100, &[]).unwrap();
        assert_eq!(
            p.events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [7, 8, 9, 10]
        );
        assert_eq!(p.pruned_before, Some(7));
        // A reader whose cursor is past the cut lost nothing.
        assert_eq!(read(&mut c, 6, 100, &[]).unwrap().pruned_before, None);
        // Even with every event gone, the next one is not given an old seq.
        c.execute("DELETE FROM events", []).unwrap();
        add(&mut c, "a", 11);
        assert_eq!(read(&mut c, 0, 100, &[]).unwrap().events[0].seq, 11);
    }

    #[test]
    fn diagnostic_counts_change_per_file_over_its_servers() {
        let mut c = db();
        let tx = c.transaction().unwrap();
        // Unseen counts as clean.
        assert_eq!(saw_counts(&tx, "a.py", "s1", 0, 0).unwrap(), None);
        assert_eq!(saw_counts(&tx, "a.py", "s1", 2, 1).unwrap(), Some((2, 1)));
        assert_eq!(saw_counts(&tx, "a.py", "s1", 2, 1).unwrap(), None);
        assert_eq!(saw_counts(&tx, "a.py", "s2", 1, 0).unwrap(), Some((3, 1)));
        assert_eq!(saw_counts(&tx, "a.py", "s1", 0, 0).unwrap(), Some((1, 0)));
        assert_eq!(saw_counts(&tx, "b.py", "s1", 0, 0).unwrap(), None);
        tx.commit().unwrap();
    }

    #[test]
    fn running_activities_of_a_gone_process_end_interrupted() {
        let mut c = db();
        let mine = begin_activity(&mut c, "check", &json!({}), "me").unwrap();
        let theirs = begin_activity(&mut c, "run_task", &json!({"name": "t"}), "gone").unwrap();
        init(&mut c, &|owner| owner == "me").unwrap();
        let row = get_activity(&mut c, theirs).unwrap().unwrap();
        assert_eq!(
            (row.state.as_str(), row.reason.as_deref()),
            ("failed", Some("interrupted"))
        );
        assert_eq!(row.error.unwrap()["data"]["reason"], "interrupted");
        assert_eq!(
            get_activity(&mut c, mine).unwrap().unwrap().state,
            "running"
        );
        let p = read(&mut c, 0, 10, &["activity_finished"]).unwrap();
        assert_eq!(p.events.len(), 1);
        assert_eq!(p.events[0].data["id"], activity_id(theirs));
        assert_eq!(p.events[0].data["reason"], "interrupted");
        // A finished activity keeps its end.
        let tx = c.transaction().unwrap();
        let again = Finish {
            state: "succeeded",
            ..Finish::default()
        };
        assert!(!finish_activity(&tx, theirs, &again, now_ms()).unwrap());
        tx.commit().unwrap();
    }

    #[test]
    fn ids_and_process_tokens() {
        assert_eq!(activity_number(&activity_id(17)), Some(17));
        assert_eq!(activity_number("17"), None);
        assert_eq!(activity_number("act-0"), None);
        assert!(token_alive(&process_token()));
        assert!(!token_alive("1:0:no-such-boot"));
        assert!(!token_alive("garbage"));
    }
}
