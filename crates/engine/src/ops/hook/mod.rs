//! Hooks: what an agent's own write introduced, for the harness's hook after its edit tools
//! (`lspgate hook`, protocol §9). A pre-edit hook has the written files and their dependents
//! asked now, so what is known just before the write is exact; a post-edit hook asks them again
//! after it and compares each (file, server)'s diagnostics with the last ones asked before the
//! write was delivered (`Held`): only what is new is reported. A shell tool's files are those
//! the watcher saw change since the session's previous hook. Bounded by the hook's budget.
//!
//! Fresh diagnostics are asked `AT_ONCE` (four) files at a time until the budget. A hook never
//! fails and never outlasts its budget: what it could not ask is a count or a note in the verdict;
//! it checks `MAX_FILES` written files at most (whatever a client names or a shell command
//! changed), and nothing it does compares each written file with each. The verdict is logged as a
//! `hook` event. Go: a package is a folder (`imports.rs` reads `go.mod`'s module path; a file's own
//! package's files are its dependents).

mod after;
mod before;
mod gate;
mod held;
mod imports;
mod ledger;
mod signatures;
pub(super) use lspgate_analysis::surface;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::time::Instant;

pub use before::Before;
pub use held::{Held, Kept, Said, content_hash};
pub use imports::Imports;
pub(crate) use imports::{Family, Target, imports_of, keys, script_module, script_specifiers};
pub use ledger::{Later, Ledger};

use super::Engine;
use super::types::Diag;
use crate::lsp::wire::Severity;

/// Files asked about at once (the servers answer one at a time; this keeps them busy).
const AT_ONCE: usize = 4;
/// Written files a verdict lists, at most (the event log's record too).
const MAX_LISTED: usize = 50;
/// Written files a hook checks, at most (an `apply_patch` may name any number, a shell command
/// change any number): the first ones, the rest left out with a note (`left_out`).
pub const MAX_FILES: usize = 1000;
/// The turn-end gate's default bound, in seconds (`setup` gives the harness's hook more).
pub const GATE_BUDGET: f64 = 120.0;

/// `files` without repeats, in their order, and `MAX_FILES` of them at most: those kept, and
/// how many distinct ones there were in all. Linear: a hook naming a hundred thousand files
/// costs a pass over them, never a comparison of each with each.
pub fn distinct_bounded(files: impl IntoIterator<Item = PathBuf>) -> (Vec<PathBuf>, usize) {
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::new();
    for f in files {
        if seen.contains(&f) {
            continue;
        }
        if kept.len() < MAX_FILES {
            kept.push(f.clone());
        }
        seen.insert(f);
    }
    (kept, seen.len())
}

/// The note of a hook that left files out: `all` distinct files written, `MAX_FILES` checked.
pub fn left_out(all: usize) -> String {
    format!(
        "{} of the {all} files written (a hook checks {MAX_FILES} at most; \
         `lspgate diagnostics FILE` checks one)",
        all.saturating_sub(MAX_FILES)
    )
}

/// Before the harness's tool writes, or after; when its session starts (warm the workspace)
/// or its turn ends (the turn-end gate, `gate.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    PreEdit,
    PostEdit,
    Start,
    Stop,
}

/// What a harness's hook asks, read from its event by the front end.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HookAsk {
    pub stage: Stage,
    /// The harness and its session's id (`claude-code:…`): whose previous hook a shell
    /// command's files are counted from.
    pub session: String,
    /// The files the tool writes or wrote (absolute); none when it ran a shell command.
    pub files: Vec<PathBuf>,
    /// The tool ran a command: its files are those seen changing since the session's
    /// previous hook.
    pub shell: bool,
    /// The written files' contents before the write, where the event tells (`Before`): the
    /// baseline of what lspgate knew nothing of.
    #[serde(default)]
    pub before: Vec<(PathBuf, Before)>,
    /// Diagnostics below this severity are not reported.
    pub severity: Severity,
    /// How long the hook may take, in milliseconds.
    pub budget_ms: u64,
    /// At the turn's end: the harness goes on because this gate blocked before (block again
    /// only for errors not named yet).
    #[serde(default)]
    pub stop_hook_active: bool,
    /// When the hook's answer must be out, in milliseconds since the Unix epoch (the front
    /// end's clock, this machine's): the time it spent meanwhile (starting the daemon) counts.
    #[serde(default)]
    pub deadline_unix_ms: Option<u64>,
}

/// A diagnostic of a file, with the server that reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub file: String,
    pub server: String,
    #[serde(flatten)]
    pub diag: Diag,
}

/// What a hook found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct HookVerdict {
    /// The written files, root-relative (at most `MAX_LISTED`).
    pub files: Vec<String>,
    /// Files asked about: the written ones and the files that import them.
    pub checked: usize,
    /// What the write introduced: diagnostics that were not there before it.
    pub introduced: Vec<Finding>,
    /// Diagnostics of written files lspgate knew nothing of before the write: present after
    /// it, new or not.
    pub present: Vec<Finding>,
    /// Dependents whose diagnostics before the write were unknown (asked now, so known at the
    /// next hook; not reported).
    pub unknown: usize,
    /// Files not asked about within the budget.
    pub unchecked: usize,
    /// Which (root-relative, at most `MAX_LISTED`): importers among them are still being
    /// checked, their findings for the session's next answer.
    #[serde(default)]
    pub unchecked_files: Vec<String>,
    /// What the session's earlier hooks' checks found after their answers went out (told
    /// once).
    #[serde(default)]
    pub later: Option<Later>,
    /// At the turn's end: errors the session introduced that are still present and were named
    /// by an earlier gate (not named again).
    #[serde(default)]
    pub named_before: usize,
    /// Names only the inferred type of which the write changed (not their declarations):
    /// their importers, among `unchecked_files`, are checked behind the answer by choice.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behind: Vec<String>,
    /// The budget ran out.
    pub timed_out: bool,
    /// What else went wrong (a server that failed or did not answer in time).
    pub notes: Vec<String>,
}

/// One server's fresh answer for a file.
struct Answer {
    server: String,
    found: Vec<(Diag, Said)>,
}

/// What was asked of one file.
struct Asked {
    answers: Vec<Answer>,
    notes: Vec<String>,
}

impl Engine {
    /// A hook's verdict (see the module's comment). Never fails: what could not be asked is a
    /// note or a count in the verdict.
    pub async fn hook(&self, ask: HookAsk) -> HookVerdict {
        let mut deadline = Instant::now() + Duration::from_millis(ask.budget_ms.max(100));
        if let Some(at) = ask.deadline_unix_ms {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            deadline = deadline.min(Instant::now() + Duration::from_millis(at.saturating_sub(now)));
        }
        let mut v = HookVerdict::default();
        if ask.stage == Stage::Start {
            self.session_starts(&ask);
            return v;
        }
        // The watcher runs from a session's first hook, so a shell command's changes are seen.
        self.registry.start_watching().await;
        self.registry.sync().await;
        let now = self.registry.tick();
        let previous = self.held.session_moves(&ask.session, now);
        if ask.stage == Stage::Stop {
            self.turn_ends(&ask, previous, deadline, &mut v).await;
            self.record_hook(&ask, &v);
            return v;
        }
        let (written, all) = self.written(&ask, previous);
        if all > MAX_FILES {
            v.notes.push(left_out(all));
        }
        v.files = written
            .iter()
            .take(MAX_LISTED)
            .map(|p| self.root().relative(p))
            .collect();
        if !written.is_empty() {
            match ask.stage {
                Stage::PreEdit => self.pre_edit(&ask, &written, now, deadline, &mut v).await,
                _ => self.post_edit(&ask, &written, now, deadline, &mut v).await,
            }
        }
        if ask.stage == Stage::PostEdit {
            v.later = self.ledger.take_later(&ask.session);
        }
        self.record_hook(&ask, &v);
        v
    }

    /// The files the tool writes or wrote, in the root and served: those the event names, or
    /// for a command after it, those changed since the session's previous hook (its clock
    /// `previous`). The first `MAX_FILES` of them at most, with how many there were in all.
    fn written(&self, ask: &HookAsk, previous: Option<u64>) -> (Vec<PathBuf>, usize) {
        let (first, all) = if ask.shell {
            // Before a command, only the session's clock moves: its files are known after it.
            match previous.filter(|_| ask.stage == Stage::PostEdit) {
                Some(t) => distinct_bounded(self.registry.changed_since(t)),
                None => {
                    tracing::debug!("{}: changes are counted from now on", ask.session);
                    (Vec::new(), 0)
                }
            }
        } else {
            distinct_bounded(ask.files.iter().cloned())
        };
        let confined = first.iter().filter_map(|f| {
            // A file outside the root is none of this workspace's business.
            self.root()
                .confine(f)
                .map_err(|e| tracing::debug!("hook: {}", e.message))
                .ok()
        });
        // Two names of one file (a symlink) are one file.
        let (out, _) = distinct_bounded(confined.filter(|p| self.served(p)));
        (out, all)
    }

    /// Before the write: the written files' text kept (for the post-edit hook to compare
    /// with), and their diagnostics asked now unless they were at this tick already.
    async fn pre_edit(
        &self,
        ask: &HookAsk,
        written: &[PathBuf],
        now: u64,
        deadline: Instant,
        v: &mut HookVerdict,
    ) {
        for f in written {
            // Inside the root only, never through a link out nor from a FIFO.
            let text = match super::files::text_in_root(self.root(), f) {
                Ok(t) => t,
                // Outside the root, or unreadable: nothing to compare with.
                Err(_) => continue,
            };
            let was = match &text {
                Some(t) => before::Before::Text(t.clone()),
                None => before::Before::Absent,
            };
            self.ledger.origin(&ask.session, f, &was, now);
            // Within the budget (a server still starting answers hovers late): without
            // them, the post-edit hook asks the importers.
            let signatures = if text.is_some() && Instant::now() < deadline {
                tokio::time::timeout_at(deadline, self.signatures(f, None, None))
                    .await
                    .unwrap_or_default()
            } else {
                Default::default()
            };
            let kept = Kept {
                text: text.map(Into::into),
                signatures: std::sync::Arc::new(signatures),
            };
            self.held.keep(&ask.session, f, kept);
        }
        let targets: Vec<PathBuf> = written.iter().filter(|p| p.is_file()).cloned().collect();
        let asked = self.ask_all(&targets, Stage::PreEdit, now, deadline).await;
        v.checked = asked.len();
        v.unchecked = targets.len() - asked.len();
        v.timed_out = v.unchecked > 0;
        for (_, a) in asked {
            v.notes.extend(a.notes);
        }
    }

    /// Whether some server serves `path`'s language.
    fn served(&self, path: &std::path::Path) -> bool {
        let language = self.languages().detect(path);
        !language.is_empty() && !self.registry.by_language(&language).is_empty()
    }

    /// Asks every server of each target for its fresh diagnostics, `AT_ONCE` at a time, in
    /// order, until `deadline`; before an edit, a (file, server) already asked at tick `now`
    /// is not asked again. The targets answered, in order.
    async fn ask_all(
        &self,
        targets: &[PathBuf],
        stage: Stage,
        now: u64,
        deadline: Instant,
    ) -> Vec<(PathBuf, Asked)> {
        let done: Mutex<Vec<(usize, PathBuf, Asked)>> = Mutex::default();
        let each = |i: usize, path: &std::path::Path, asked: Asked| {
            if let Ok(mut d) = done.lock() {
                d.push((i, path.to_path_buf(), asked));
            }
        };
        let _ = tokio::time::timeout_at(deadline, self.ask_each(targets, stage, now, each)).await;
        let mut done = done.into_inner().unwrap_or_default();
        done.sort_by_key(|(i, _, _)| *i);
        done.into_iter().map(|(_, p, a)| (p, a)).collect()
    }

    /// Asks as `ask_all` does, with no deadline, handing each target's answers to `each` (its
    /// index, path and answers) as they come.
    async fn ask_each(
        &self,
        targets: &[PathBuf],
        stage: Stage,
        now: u64,
        each: impl Fn(usize, &std::path::Path, Asked),
    ) {
        futures::stream::iter(targets.iter().enumerate())
            .for_each_concurrent(AT_ONCE, |(i, path)| {
                let each = &each;
                async move {
                    let asked = self.ask_file(path, stage, now).await;
                    each(i, path, asked);
                }
            })
            .await;
    }

    /// One file's fresh diagnostics from each of its servers (recorded in `Held` on the way).
    async fn ask_file(&self, path: &std::path::Path, stage: Stage, now: u64) -> Asked {
        let mut out = Asked {
            answers: Vec::new(),
            notes: Vec::new(),
        };
        let file = self.root().relative(path);
        let language = self.languages().detect(path);
        for server in self.registry.servers_for(path, &language).await {
            let server = match server {
                Ok(s) => s,
                Err(e) => {
                    out.notes.push(format!("{file}: {}", e.message));
                    continue;
                }
            };
            if stage == Stage::PreEdit && self.held.current(path, &server.name, now) {
                continue;
            }
            let lease = match server.docs.lease_current(path, &language).await {
                Ok(l) => l,
                Err(e) => {
                    out.notes.push(format!("{file}: {}", e.message));
                    continue;
                }
            };
            match self.file_diagnostics(&server, &lease).await {
                Ok(d) if d.fresh => {
                    let snap = &lease.snap;
                    let found = super::diags(snap, d.diagnostics)
                        .into_iter()
                        .map(|x| {
                            let said = Said::of(&x, snap.line(x.line));
                            (x, said)
                        })
                        .collect();
                    out.answers.push(Answer {
                        server: server.name.clone(),
                        found,
                    });
                }
                Ok(_) => out.notes.push(format!(
                    "{file}: {} sent no diagnostics in time",
                    server.name
                )),
                Err(e) => out.notes.push(format!("{file}: {}", e.message)),
            }
        }
        out
    }

    /// The hook's verdict in the event log (`hook`): its stage, files and counts.
    fn record_hook(&self, ask: &HookAsk, v: &HookVerdict) {
        let errors = v
            .introduced
            .iter()
            .filter(|f| f.diag.severity == Severity::Error)
            .count();
        self.events.emit(
            "hook",
            json!({
                "stage": ask.stage,
                "session": ask.session,
                "files": v.files,
                "checked": v.checked,
                "introduced": v.introduced.len(),
                "errors": errors,
                "present": v.present.len(),
                "unknown": v.unknown,
                "timed_out": v.timed_out,
            }),
        );
    }
}
