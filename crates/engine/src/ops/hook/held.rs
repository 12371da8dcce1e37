//! What a workspace remembers for its hooks: each (file, server)'s last few fresh diagnostics of
//! the file on disk, stamped with the registry's change clock when they were asked for (so a
//! hook finds what was known just before a write, never the write's own result), and each
//! harness session's clock at its previous hook (what a shell command changed since).

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::lsp::wire::Severity;
use crate::ops::types::Diag;

/// Snapshots kept per (file, server): each of a different tick.
const HISTORY: usize = 3;
/// (file, server) pairs remembered, at most; the least recently seen go first.
const MAX_KEYS: usize = 20_000;
/// Harness sessions remembered, at most.
const MAX_SESSIONS: usize = 1_000;
/// Files' texts kept from pre-edit hooks, at most (and each at most `MAX_TEXT` bytes).
const MAX_TEXTS: usize = 256;
const MAX_TEXT: usize = 1 << 20;

/// A written file as its pre-edit hook saw it: its text (`None`: it did not exist), and what
/// its top-level names showed.
#[derive(Debug, Clone)]
pub struct Kept {
    pub text: Option<Arc<str>>,
    pub signatures: Arc<super::signatures::Signatures>,
}

/// A diagnostic as a hook compares it: what it says and the text of the line it starts on (its
/// position moves when lines are added above it; what it says does not). What it says is its
/// first line (`said`): pyright words the rest of a message, and sometimes a type in it, by the
/// order it happened to check files in.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Said {
    pub severity: Severity,
    pub code: Option<String>,
    pub source: Option<String>,
    pub message: String,
    pub line_text: String,
}

impl Said {
    pub fn of(d: &Diag, line_text: Option<&str>) -> Said {
        Said {
            severity: d.severity,
            code: d.code.clone(),
            source: d.source.clone(),
            message: said(&d.message),
            line_text: line_text.unwrap_or_default().trim().to_string(),
        }
    }
}

/// A message as compared: its first line, a pyright `Self@T` as `T`, 200 characters at most.
fn said(message: &str) -> String {
    let first = message.lines().next().unwrap_or("").replace("Self@", "");
    match first.char_indices().nth(200) {
        Some((i, _)) => first[..i].to_string(),
        None => first,
    }
}

/// One server's fresh diagnostics of a file's content on disk.
#[derive(Debug, Clone)]
pub(super) struct Snap {
    /// The registry's change clock when they were asked for.
    pub tick: u64,
    /// A hash of the content they are of.
    pub content: u64,
    pub said: Arc<Vec<Said>>,
}

#[derive(Default)]
struct Inner {
    snaps: HashMap<(PathBuf, String), (u64, VecDeque<Snap>)>,
    /// Harness session → the clock at its previous hook, and when (a use counter).
    sessions: HashMap<String, (u64, u64)>,
    /// (harness session, file) → its text and its names' hovers at the session's pre-edit
    /// hook, and when.
    texts: HashMap<(String, PathBuf), (Kept, u64)>,
    uses: u64,
}

/// The hooks' memory of a workspace (see the module's comment).
#[derive(Default)]
pub struct Held {
    inner: Mutex<Inner>,
}

/// A hash of a file's content, to tell a snapshot of the written content from one before it.
pub fn content_hash(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

impl Held {
    /// Records `server`'s fresh diagnostics of `path`'s content `content`, asked for at `tick`:
    /// a snapshot of the same tick is replaced, older ticks are kept (the newest `HISTORY`).
    pub fn record(&self, path: &Path, server: &str, tick: u64, content: u64, said: Vec<Said>) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.uses += 1;
        let uses = inner.uses;
        let entry = inner
            .snaps
            .entry((path.to_path_buf(), server.to_string()))
            .or_default();
        entry.0 = uses;
        let snap = Snap {
            tick,
            content,
            said: Arc::new(said),
        };
        // Kept in tick order; a late answer asked for at an older tick goes where it belongs.
        match entry.1.iter().position(|s| s.tick >= tick) {
            Some(i) if entry.1[i].tick == tick => entry.1[i] = snap,
            Some(i) => entry.1.insert(i, snap),
            None => entry.1.push_back(snap),
        }
        while entry.1.len() > HISTORY {
            entry.1.pop_front();
        }
        if inner.snaps.len() > MAX_KEYS {
            let mut ages: Vec<u64> = inner.snaps.values().map(|(u, _)| *u).collect();
            ages.sort_unstable();
            let keep_from = ages[ages.len() - MAX_KEYS * 9 / 10];
            inner.snaps.retain(|_, (u, _)| *u >= keep_from);
        }
    }

    /// What `server` said of `path` when last asked before tick `before`, of content other than
    /// `not_content` (the written one, when the file is one the write changed), and the tick
    /// it was asked at.
    pub fn before(
        &self,
        path: &Path,
        server: &str,
        before: u64,
        not_content: Option<u64>,
    ) -> Option<(Arc<Vec<Said>>, u64)> {
        let inner = self.inner.lock().ok()?;
        let (_, snaps) = inner.snaps.get(&(path.to_path_buf(), server.to_string()))?;
        snaps
            .iter()
            .rev()
            .find(|s| s.tick < before && Some(s.content) != not_content)
            .map(|s| (s.said.clone(), s.tick))
    }

    /// Keeps `path` as `session`'s pre-edit hook saw it.
    pub fn keep(&self, session: &str, path: &Path, kept: Kept) {
        if kept.text.as_ref().is_some_and(|t| t.len() > MAX_TEXT) {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        inner.uses += 1;
        let uses = inner.uses;
        inner
            .texts
            .insert((session.to_string(), path.to_path_buf()), (kept, uses));
        evict_oldest(&mut inner.texts, MAX_TEXTS);
    }

    /// `path` as `session`'s pre-edit hook saw it, taken (once).
    pub fn take(&self, session: &str, path: &Path) -> Option<Kept> {
        let mut inner = self.inner.lock().ok()?;
        inner
            .texts
            .remove(&(session.to_string(), path.to_path_buf()))
            .map(|(t, _)| t)
    }

    /// Whether `server` has said something of `path` at `tick` (nothing changed since).
    pub fn current(&self, path: &Path, server: &str, tick: u64) -> bool {
        self.inner.lock().is_ok_and(|inner| {
            inner
                .snaps
                .get(&(path.to_path_buf(), server.to_string()))
                .and_then(|(_, s)| s.back())
                .is_some_and(|s| s.tick == tick)
        })
    }

    /// Moves `session`'s clock to `tick`; what it was (`None`: the session's first hook).
    pub fn session_moves(&self, session: &str, tick: u64) -> Option<u64> {
        let mut inner = self.inner.lock().ok()?;
        inner.uses += 1;
        let uses = inner.uses;
        let was = inner.sessions.insert(session.to_string(), (tick, uses));
        evict_oldest(&mut inner.sessions, MAX_SESSIONS);
        was.map(|(t, _)| t)
    }
}

/// Drops the entry used least recently (its use counter, the value's second part) while
/// `map` holds more than `cap`.
fn evict_oldest<K: Clone + Eq + std::hash::Hash, V>(map: &mut HashMap<K, (V, u64)>, cap: usize) {
    while map.len() > cap {
        let Some(oldest) = map
            .iter()
            .min_by_key(|(_, (_, u))| *u)
            .map(|(k, _)| k.clone())
        else {
            return;
        };
        map.remove(&oldest);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(m: &str) -> Said {
        Said {
            severity: Severity::Error,
            code: None,
            source: None,
            message: m.into(),
            line_text: String::new(),
        }
    }

    #[test]
    fn the_baseline_is_the_last_snapshot_asked_before_the_write_of_other_content() {
        let held = Held::default();
        let p = Path::new("/r/a.py");
        held.record(p, "pyright", 1, 10, vec![said("old")]);
        held.record(p, "pyright", 2, 20, vec![said("before")]);
        // Asked again at tick 2 (nothing changed): replaces, does not push the older out.
        held.record(p, "pyright", 2, 20, vec![said("before")]);
        held.record(p, "pyright", 3, 30, vec![said("after")]);
        let (b, tick) = held.before(p, "pyright", 3, Some(30)).unwrap();
        assert_eq!((b[0].message.as_str(), tick), ("before", 2));
        // A snapshot of the written content is never the baseline, whatever its tick.
        held.record(p, "pyright", 4, 30, vec![]);
        let (b, _) = held.before(p, "pyright", 5, Some(30)).unwrap();
        assert_eq!(b[0].message, "before");
        assert!(held.before(p, "pyright", 1, None).is_none());
        assert!(held.before(p, "ruff", 9, None).is_none());
        assert!(held.current(p, "pyright", 4));
        assert!(!held.current(p, "pyright", 5));
    }

    #[test]
    fn a_message_reworded_past_its_first_line_says_the_same() {
        let diag = |message: &str| Diag {
            severity: Severity::Error,
            line: 436,
            column: 9,
            end_line: 436,
            end_column: 24,
            code: Some("reportIncompatibleMethodOverride".into()),
            source: Some("Pyright".into()),
            message: message.into(),
        };
        let a = Said::of(
            &diag(
                "Method \"relabeled_clone\" overrides class \"Self@BaseExpression\"\n  Return type mismatch: A",
            ),
            Some("def relabeled_clone(self, change_map):"),
        );
        let b = Said::of(
            &diag(
                "Method \"relabeled_clone\" overrides class \"BaseExpression\"\n  Return type mismatch: B",
            ),
            Some("  def relabeled_clone(self, change_map):  "),
        );
        assert_eq!(a, b);
        let c = Said::of(
            &diag("Method \"other\" overrides"),
            Some("def other(self):"),
        );
        assert_ne!(a, c);
        let long = Said::of(&diag(&"x".repeat(500)), None);
        assert_eq!(long.message.chars().count(), 200);
    }

    #[test]
    fn a_kept_text_is_the_sessions_own_and_taken_once() {
        let held = Held::default();
        let p = Path::new("/r/a.py");
        let kept = Kept {
            text: Some(Arc::from("old")),
            signatures: Arc::default(),
        };
        held.keep("s", p, kept);
        assert!(held.take("t", p).is_none());
        assert_eq!(
            held.take("s", p).and_then(|k| k.text).as_deref(),
            Some("old")
        );
        assert!(held.take("s", p).is_none());
    }

    #[test]
    fn a_session_clock_starts_unset_and_moves() {
        let held = Held::default();
        assert_eq!(held.session_moves("s", 4), None);
        assert_eq!(held.session_moves("s", 7), Some(4));
        assert_eq!(held.session_moves("t", 7), None);
    }
}
