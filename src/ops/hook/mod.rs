//! Hooks: what an agent's own write introduced, for the harness's hook after its edit tools
//! (`lspgate hook`, protocol §9). A pre-edit hook has the written files and their dependents
//! asked now, so what is known just before the write is exact; a post-edit hook asks them again
//! after it and compares each (file, server)'s diagnostics with the last ones asked before the
//! write was delivered (`Held`): only what is new is reported. A shell tool's files are those
//! the watcher saw change since the session's previous hook. Bounded by the hook's budget.

mod before;
mod held;
mod imports;
mod signatures;
mod surface;

use std::collections::{HashMap, HashSet};
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

/// Before the harness's tool writes, or after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    PreEdit,
    PostEdit,
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
    content: u64,
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
        // The watcher runs from a session's first hook, so a shell command's changes are seen.
        self.registry.start_watching().await;
        self.registry.sync().await;
        let now = self.registry.tick();
        let previous = self.held.session_moves(&ask.session, now);
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
                Stage::PostEdit => self.post_edit(&ask, &written, now, deadline, &mut v).await,
            }
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
            if let Ok(text) = std::fs::read_to_string(f) {
                // Within the budget (a server still starting answers hovers late): without
                // them, the post-edit hook asks the importers.
                let signatures = if Instant::now() < deadline {
                    tokio::time::timeout_at(deadline, self.signatures(f, None, None))
                        .await
                        .unwrap_or_default()
                } else {
                    Default::default()
                };
                let kept = Kept {
                    text: text.into(),
                    signatures: std::sync::Arc::new(signatures),
                };
                self.held.keep(&ask.session, f, kept);
            }
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

    /// After the write: the written files and the importers of the names it changed, asked
    /// now and compared with their baselines.
    async fn post_edit(
        &self,
        ask: &HookAsk,
        written: &[PathBuf],
        now: u64,
        deadline: Instant,
        v: &mut HookVerdict,
    ) {
        // The write's tick: what was asked before it knew nothing of it. A write the watcher
        // did not see (it started with this hook) is taken as of now: only what was asked
        // before this hook can be a baseline.
        let write_tick = written
            .iter()
            .filter_map(|p| self.registry.changed_at(p))
            .min()
            .unwrap_or(now);
        // What the written files held before: the pre-edit hook's text, else the event's (its
        // paths confined as the written files' are; outside the root, left out).
        let is_written: HashSet<&PathBuf> = written.iter().collect();
        let mut before: Vec<(PathBuf, Before)> = ask
            .before
            .iter()
            .take(MAX_FILES)
            .filter_map(|(p, b)| Some((self.root().confine(p).ok()?, b.clone())))
            .collect();
        let mut kept_signatures = None;
        let mut kept = Vec::new();
        for f in written {
            if let Some(k) = self.held.take(&ask.session, f) {
                kept.push((f.clone(), Before::Text(k.text.to_string())));
                kept_signatures = Some(k.signatures);
            }
        }
        if !kept.is_empty() {
            let kept_paths: HashSet<PathBuf> = kept.iter().map(|(p, _)| p.clone()).collect();
            before.retain(|(p, _)| !kept_paths.contains(p));
            before.extend(kept);
        }
        let changed = changed(written, &before);
        let seen_the_same = match (&changed, written) {
            (Some(c), [f]) if !c.names.is_empty() => {
                let look = self.look_the_same(f, &c.names, &before, kept_signatures.as_deref());
                tokio::time::timeout_at(deadline, look)
                    .await
                    .unwrap_or(false)
            }
            _ => false,
        };
        let dependents = match &changed {
            Some(c) if c.names.is_empty() => Vec::new(),
            _ if seen_the_same => Vec::new(),
            _ => {
                let reach = changed.map(|c| c.reaching);
                let found = self.dependents(written, reach);
                tokio::time::timeout_at(deadline, found)
                    .await
                    .unwrap_or_default()
            }
        };
        let existing = written.iter().filter(|p| p.is_file()).cloned();
        let targets: Vec<PathBuf> = existing
            .chain(dependents.into_iter().filter(|p| self.served(p)))
            .collect();
        // Half the time left at most: the written files' own answers must have room.
        let left = deadline.saturating_duration_since(Instant::now());
        let rebuilt = self
            .rebuild_missing(
                &before,
                &targets,
                written,
                write_tick,
                Instant::now() + left / 2,
            )
            .await;
        // Baselines are read before asking: what this hook asks is never its own baseline.
        let mut held = HashMap::new();
        for p in &targets {
            let content = is_written
                .contains(p)
                .then(|| std::fs::read_to_string(p).ok())
                .flatten()
                .map(|t| content_hash(&t));
            for name in self.registry.by_language(&self.languages().detect(p)) {
                let known = self.held.before(p, &name, write_tick, content);
                held.insert((p.clone(), name), known);
            }
        }
        let asked = self.ask_all(&targets, Stage::PostEdit, now, deadline).await;
        v.unchecked = targets.len() - asked.len();
        v.timed_out = v.unchecked > 0;
        v.checked = asked.len();
        for (path, a) in asked {
            let is_written = is_written.contains(&path);
            let file = self.root().relative(&path);
            v.notes.extend(a.notes);
            for answer in a.answers {
                let key = (path.clone(), answer.server.clone());
                let held = held.get(&key).cloned().flatten();
                // Asked when nothing else had changed since: exact. Else rebuilt from the old
                // text when it could be, else what was known, however old.
                let exact = held.clone().filter(|(_, t)| t + 1 >= write_tick);
                let before = exact
                    .map(|(s, _)| s)
                    .or_else(|| rebuilt.get(&key).cloned())
                    .or(held.map(|(s, _)| s));
                let found: Vec<(Diag, Said)> = answer
                    .found
                    .into_iter()
                    .filter(|(d, _)| d.severity <= ask.severity)
                    .collect();
                let finding = |d: Diag| Finding {
                    file: file.clone(),
                    server: answer.server.clone(),
                    diag: d,
                };
                match before {
                    Some(before) => v
                        .introduced
                        .extend(new_ones(found, &before).into_iter().map(finding)),
                    None if is_written => {
                        v.present.extend(found.into_iter().map(|(d, _)| finding(d)))
                    }
                    None => v.unknown += 1,
                }
            }
        }
        for list in [&mut v.introduced, &mut v.present] {
            list.sort_by(|a, b| {
                (&a.file, a.diag.line, a.diag.column).cmp(&(&b.file, b.diag.line, b.diag.column))
            });
            list.dedup_by(|a, b| a.file == b.file && a.diag == b.diag);
        }
    }

    /// Whether every one of `names` (changed in `f`) shows importers the same as before the
    /// write: `kept` (the pre-edit hook's hovers), else the old text's hovers asked now.
    async fn look_the_same(
        &self,
        f: &std::path::Path,
        names: &std::collections::BTreeSet<String>,
        before: &[(PathBuf, Before)],
        kept: Option<&signatures::Signatures>,
    ) -> bool {
        let old = match kept {
            Some(k) => k.clone(),
            None => match before.iter().find(|(p, _)| p == f) {
                Some((_, Before::Text(t))) => self.signatures(f, Some(t), Some(names)).await,
                _ => return false,
            },
        };
        let new = self.signatures(f, None, Some(names)).await;
        let same = signatures::unchanged(names, &old, &new);
        tracing::debug!("hook: {names:?} in {} show the same: {same}", f.display());
        same
    }

    /// Baselines, from the event's old contents, for the (target, server) pairs lspgate
    /// knew nothing of before the write (`rebuild`).
    async fn rebuild_missing(
        &self,
        before: &[(PathBuf, Before)],
        targets: &[PathBuf],
        written: &[PathBuf],
        write_tick: u64,
        deadline: Instant,
    ) -> before::Rebuilt {
        if before.is_empty() {
            return before::Rebuilt::new();
        }
        let is_written: HashSet<&PathBuf> = written.iter().collect();
        let missing: Vec<(PathBuf, Vec<String>)> = targets
            .iter()
            .filter_map(|p| {
                let names = self.registry.by_language(&self.languages().detect(p));
                let now = is_written
                    .contains(p)
                    .then(|| std::fs::read_to_string(p).ok())
                    .flatten()
                    .map(|t| content_hash(&t));
                let lacking: Vec<String> = names
                    .into_iter()
                    .filter(|n| {
                        // Missing unless asked when nothing else had changed.
                        self.held
                            .before(p, n, write_tick, now)
                            .is_none_or(|(_, t)| t + 1 < write_tick)
                    })
                    .collect();
                (!lacking.is_empty()).then(|| (p.clone(), lacking))
            })
            .collect();
        if missing.is_empty() {
            return before::Rebuilt::new();
        }
        self.rebuild(written, before, &missing, deadline).await
    }

    /// Whether some server serves `path`'s language.
    fn served(&self, path: &std::path::Path) -> bool {
        let language = self.languages().detect(path);
        !language.is_empty() && !self.registry.by_language(&language).is_empty()
    }

    /// The files that import the written ones (`Imports`) and, when `names` says which
    /// top-level names the write changed, mention one of them: from a walk of the root on the
    /// blocking pool.
    async fn dependents(
        &self,
        written: &[PathBuf],
        names: Option<std::collections::BTreeSet<String>>,
    ) -> Vec<PathBuf> {
        let ws = self.shared().clone();
        let written = written.to_vec();
        tokio::task::spawn_blocking(move || {
            let root = ws.registry.root().path();
            let tree = crate::workspace::walk(root, super::WALK_LIMIT);
            let all = ws.imports.dependents(root, &tree, &written);
            let Some(names) = names else {
                return all;
            };
            let texts: Vec<String> = all
                .iter()
                .map(|d| std::fs::read_to_string(d).unwrap_or_default())
                .collect();
            // A re-exporting importer may give a name another (`total as sum`).
            let names = with_aliases(&names, &texts);
            all.into_iter()
                .zip(texts)
                .filter(|(_, t)| surface::mentions(t, &names))
                .map(|(d, _)| d)
                .collect()
        })
        .await
        .unwrap_or_default()
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
        let work = futures::stream::iter(targets.iter().enumerate()).for_each_concurrent(
            AT_ONCE,
            |(i, path)| {
                let done = &done;
                async move {
                    let asked = self.ask_file(path, stage, now).await;
                    if let Ok(mut d) = done.lock() {
                        d.push((i, path.clone(), asked));
                    }
                }
            },
        );
        let _ = tokio::time::timeout_at(deadline, work).await;
        let mut done = done.into_inner().unwrap_or_default();
        done.sort_by_key(|(i, _, _)| *i);
        done.into_iter().map(|(_, p, a)| (p, a)).collect()
    }

    /// One file's fresh diagnostics from each of its servers (recorded in `Held` on the way).
    async fn ask_file(&self, path: &std::path::Path, stage: Stage, now: u64) -> Asked {
        let mut out = Asked {
            answers: Vec::new(),
            content: 0,
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
            let lease = match server.docs.lease(path, &language, None).await {
                Ok(l) => l,
                Err(e) => {
                    out.notes.push(format!("{file}: {}", e.message));
                    continue;
                }
            };
            out.content = content_hash(&lease.snap.text);
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

/// The top-level names the write changed in the written files (`surface`), from what they
/// held before; `None` when that cannot be told for one of them (then every importer may be
/// affected).
fn changed(written: &[PathBuf], before: &[(PathBuf, Before)]) -> Option<Changed> {
    let mut out = Changed::default();
    let mut was: HashMap<&PathBuf, &Before> = HashMap::new();
    for (p, b) in before {
        was.entry(p).or_insert(b);
    }
    for f in written {
        let Some(family) = imports::Family::of(f) else {
            continue;
        };
        let old = match was.get(f) {
            Some(Before::Text(t)) => t,
            _ => return None,
        };
        let new = std::fs::read_to_string(f).ok()?;
        let names = surface::changed_names(family, old, &new)?;
        out.reaching.extend(surface::reaching(family, &new, &names));
        out.reaching.extend(surface::reaching(family, old, &names));
        out.names.extend(names);
    }
    Some(out)
}

/// The top-level names a write changed, and those an importer may reach them through.
#[derive(Debug, Clone, Default)]
struct Changed {
    names: std::collections::BTreeSet<String>,
    reaching: std::collections::BTreeSet<String>,
}

/// `names` and the names the files in `texts` import them as (`total as sum`).
fn with_aliases(
    names: &std::collections::BTreeSet<String>,
    texts: &[String],
) -> std::collections::BTreeSet<String> {
    let mut out = names.clone();
    for t in texts {
        let words: Vec<&str> = t
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .filter(|w| !w.is_empty())
            .collect();
        for w in words.windows(3) {
            if w[1] == "as" && names.contains(w[0]) {
                out.insert(w[2].to_string());
            }
        }
    }
    out
}

/// The findings of `now` not in `before`, counting repeats (two equal diagnostics before and
/// three now: one is new).
fn new_ones(now: Vec<(Diag, Said)>, before: &[Said]) -> Vec<Diag> {
    let mut left: HashMap<&Said, usize> = HashMap::new();
    for s in before {
        *left.entry(s).or_default() += 1;
    }
    let mut out = Vec::new();
    for (d, s) in now {
        match left.get_mut(&s) {
            Some(n) if *n > 0 => *n -= 1,
            _ => out.push(d),
        }
    }
    out
}
