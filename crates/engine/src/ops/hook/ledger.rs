//! What a harness session's edits owe, kept for its turn-end gate and its later answers: each
//! file the session wrote as it was before the session's first edit of it, the baseline each
//! (file, server) was first compared with, what its hooks' background checks found after their
//! answer had gone out (told once, with the session's next answer), and the errors the gate has
//! named already (so a gate that blocked once blocks again only for new ones).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::before::Before;
use super::{Finding, Said};

/// Sessions remembered, at most; the least recently used go first.
const MAX_SESSIONS: usize = 200;
/// Files remembered per session, at most (their old texts at most `MAX_TEXT` bytes each;
/// larger ones are kept as unknown).
const MAX_FILES: usize = 1000;
const MAX_TEXT: usize = 1 << 20;
/// Old texts kept per session, at most, and findings waiting to be told.
const MAX_TEXTS: usize = 256;
const MAX_LATER: usize = 500;

/// What a session's background checks found after an answer had gone out.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Later {
    /// The written files whose checks these are (root-relative).
    pub from: Vec<String>,
    /// What they introduced.
    pub introduced: Vec<Finding>,
    /// Files still being checked when this was taken, or given up on (root-relative).
    pub unchecked: Vec<String>,
}

impl Later {
    pub fn is_empty(&self) -> bool {
        self.introduced.is_empty() && self.unchecked.is_empty()
    }
}

#[derive(Default)]
struct Session {
    /// Each written file before the session's first edit of it.
    origins: HashMap<PathBuf, Before>,
    texts: usize,
    /// The registry's clock at the session's first edit.
    first_tick: Option<u64>,
    /// The baseline each (file, server) was first compared with in this session.
    baselines: HashMap<(PathBuf, String), Arc<Vec<Said>>>,
    /// Background findings not yet told, from which written files, and files left.
    later: Later,
    /// Errors the turn-end gate has named, by file (what they say, not where: lines move).
    named: HashSet<(String, Said)>,
    uses: u64,
}

/// Every session's ledger (see the module's comment).
#[derive(Default)]
pub struct Ledger {
    inner: Mutex<(HashMap<String, Session>, u64)>,
    /// A session-start baseline pass runs on this workspace.
    pub(super) passing: std::sync::atomic::AtomicBool,
}

impl Ledger {
    fn with<T>(&self, session: &str, f: impl FnOnce(&mut Session) -> T) -> Option<T> {
        let mut guard = self.inner.lock().ok()?;
        let (sessions, uses) = &mut *guard;
        *uses += 1;
        let now = *uses;
        if !sessions.contains_key(session) && sessions.len() >= MAX_SESSIONS {
            let oldest = sessions
                .iter()
                .min_by_key(|(_, s)| s.uses)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                sessions.remove(&k);
            }
        }
        let s = sessions.entry(session.to_string()).or_default();
        s.uses = now;
        Some(f(s))
    }

    fn read<T>(&self, session: &str, f: impl FnOnce(&Session) -> T) -> Option<T> {
        let guard = self.inner.lock().ok()?;
        guard.0.get(session).map(f)
    }

    /// `path` as it was before `session`'s first edit of it (kept only the first time), at
    /// the registry's clock `tick`.
    pub fn origin(&self, session: &str, path: &Path, before: &Before, tick: u64) {
        self.with(session, |s| {
            s.first_tick.get_or_insert(tick);
            if s.origins.contains_key(path) || s.origins.len() >= MAX_FILES {
                return;
            }
            let kept = match before {
                Before::Text(t) if t.len() > MAX_TEXT || s.texts >= MAX_TEXTS => Before::Unknown,
                Before::Text(t) => {
                    s.texts += 1;
                    Before::Text(t.clone())
                }
                other => other.clone(),
            };
            s.origins.insert(path.to_path_buf(), kept);
        });
    }

    /// The files `session` wrote, each as it was before the session's first edit of it, and
    /// the clock at that first edit.
    pub fn origins(&self, session: &str) -> (Vec<(PathBuf, Before)>, Option<u64>) {
        self.read(session, |s| {
            let mut list: Vec<(PathBuf, Before)> = s
                .origins
                .iter()
                .map(|(p, b)| (p.clone(), b.clone()))
                .collect();
            list.sort_by(|a, b| a.0.cmp(&b.0));
            (list, s.first_tick)
        })
        .unwrap_or_default()
    }

    /// Records the baseline `path` was compared with for `server`, unless one was already.
    pub fn baseline(&self, session: &str, path: &Path, server: &str, said: Arc<Vec<Said>>) {
        self.with(session, |s| {
            if s.baselines.len() < MAX_FILES * 4 {
                s.baselines
                    .entry((path.to_path_buf(), server.to_string()))
                    .or_insert(said);
            }
        });
    }

    /// The baseline `path` was first compared with for `server` in `session`.
    pub fn first_baseline(
        &self,
        session: &str,
        path: &Path,
        server: &str,
    ) -> Option<Arc<Vec<Said>>> {
        self.read(session, |s| {
            s.baselines
                .get(&(path.to_path_buf(), server.to_string()))
                .cloned()
        })
        .flatten()
    }

    /// Keeps what a background check of `from` found after its answer went out, to be told
    /// with the session's next answer; `left` are files it is still checking (replacing what
    /// was said of them before) or gave up on.
    pub fn tell_later(
        &self,
        session: &str,
        from: &[String],
        found: Vec<Finding>,
        left: Vec<String>,
    ) {
        self.with(session, |s| {
            for f in from {
                if !s.later.from.contains(f) {
                    s.later.from.push(f.clone());
                }
            }
            let room = MAX_LATER.saturating_sub(s.later.introduced.len());
            s.later.introduced.extend(found.into_iter().take(room));
            let mut files: BTreeSet<String> = s.later.unchecked.drain(..).collect();
            files.extend(left);
            s.later.unchecked = files.into_iter().collect();
        });
    }

    /// A file the background check was left to check has been checked.
    pub fn checked_later(&self, session: &str, file: &str) {
        self.with(session, |s| s.later.unchecked.retain(|f| f != file));
    }

    /// What the session's background checks found and have not told yet, taken (told once).
    /// Files still being checked stay listed until they are.
    pub fn take_later(&self, session: &str) -> Option<Later> {
        self.with(session, |s| {
            // Nothing found yet: the files still being checked are told again later.
            if s.later.introduced.is_empty() {
                return None;
            }
            Some(Later {
                from: std::mem::take(&mut s.later.from),
                introduced: std::mem::take(&mut s.later.introduced),
                unchecked: s.later.unchecked.clone(),
            })
        })
        .flatten()
    }

    /// Of `found` (errors present at the turn's end), those the gate has not named before in
    /// `session`; all of them are named from now on.
    pub fn name(&self, session: &str, found: &[Finding]) -> Vec<Finding> {
        self.with(session, |s| {
            found
                .iter()
                .filter(|f| s.named.insert((f.file.clone(), Said::of(&f.diag, None))))
                .cloned()
                .collect()
        })
        .unwrap_or_else(|| found.to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lsp::wire::Severity;
    use crate::ops::types::Diag;

    fn finding(file: &str, line: u32, message: &str) -> Finding {
        Finding {
            file: file.into(),
            server: "pyright".into(),
            diag: Diag {
                severity: Severity::Error,
                line,
                column: 1,
                end_line: line,
                end_column: 2,
                code: None,
                source: None,
                message: message.into(),
            },
        }
    }

    #[test]
    fn an_origin_is_the_first_one_and_the_clock_the_first_edits() {
        let l = Ledger::default();
        let p = Path::new("/r/a.py");
        l.origin("s", p, &Before::Text("one".into()), 4);
        l.origin("s", p, &Before::Text("two".into()), 9);
        l.origin("s", Path::new("/r/new.py"), &Before::Absent, 9);
        let (list, tick) = l.origins("s");
        assert_eq!(tick, Some(4));
        assert_eq!(list[0], (p.to_path_buf(), Before::Text("one".into())));
        assert_eq!(list[1].1, Before::Absent);
        assert!(l.origins("t").0.is_empty());
        let big = "x".repeat(MAX_TEXT + 1);
        l.origin("s", Path::new("/r/big.py"), &Before::Text(big), 9);
        assert_eq!(l.origins("s").0[1].1, Before::Unknown);
    }

    #[test]
    fn later_findings_are_told_once_and_files_left_until_checked() {
        let l = Ledger::default();
        assert!(l.take_later("s").is_none());
        l.tell_later(
            "s",
            &["a.py".into()],
            vec![],
            vec!["b.py".into(), "c.py".into()],
        );
        // Nothing found yet: nothing to tell.
        assert!(l.take_later("s").is_none());
        l.checked_later("s", "b.py");
        l.tell_later(
            "s",
            &["a.py".into()],
            vec![finding("b.py", 3, "boom")],
            vec![],
        );
        let later = l.take_later("s").unwrap();
        assert_eq!(later.from, ["a.py"]);
        assert_eq!(later.introduced.len(), 1);
        assert_eq!(later.unchecked, ["c.py"]);
        assert!(l.take_later("s").is_none());
    }

    #[test]
    fn the_gate_names_an_error_once() {
        let l = Ledger::default();
        let first = [finding("a.py", 1, "x"), finding("b.py", 2, "y")];
        assert_eq!(l.name("s", &first).len(), 2);
        let again = [finding("a.py", 1, "x"), finding("a.py", 5, "z")];
        let new = l.name("s", &again);
        assert_eq!(new.len(), 1);
        assert_eq!(new[0].diag.message, "z");
        // Another session's gate names its own.
        assert_eq!(l.name("t", &again).len(), 2);
    }

    #[test]
    fn a_baseline_is_the_first_compared_with() {
        let l = Ledger::default();
        let p = Path::new("/r/a.py");
        l.baseline("s", p, "pyright", Arc::new(vec![]));
        let said = Said::of(&finding("a.py", 1, "x").diag, None);
        l.baseline("s", p, "pyright", Arc::new(vec![said]));
        assert_eq!(
            l.first_baseline("s", p, "pyright").map(|b| b.len()),
            Some(0)
        );
        assert!(l.first_baseline("s", p, "ruff").is_none());
    }
}
