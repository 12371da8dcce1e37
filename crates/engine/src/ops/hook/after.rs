//! The post-edit hook. The written files first: their fresh diagnostics against what was known
//! just before the write, before any importer is looked at. Then the importers of the names the
//! write changed, in a task of their own that the hook waits for until its deadline; what that
//! task finds after the answer went out is kept in the session's ledger and told with the
//! session's next answer (`Ledger::take_later`), so a budget cut loses nothing.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::before::{self, Before};
use super::signatures::Signatures;
use super::{
    Asked, Finding, HookAsk, HookVerdict, MAX_FILES, MAX_LISTED, Said, Stage, content_hash,
    imports, surface,
};
use crate::lsp::wire::Severity;
use crate::ops::Engine;
use crate::ops::files::text_in_root;
use crate::ops::types::Diag;
use crate::workspace::Root;

/// How long the importers' check may go on, whether its hook is still waiting or not.
const BACKGROUND: Duration = Duration::from_secs(180);

/// The written files' content hashes now, by path.
type Contents = HashMap<PathBuf, u64>;

/// Baselines by (file, server): what each said before the write, where known.
pub(super) type Baselines = HashMap<(PathBuf, String), Option<Arc<Vec<Said>>>>;

/// What comparing one file's answers with their baselines found.
#[derive(Default)]
pub(super) struct Compared {
    pub introduced: Vec<Finding>,
    pub present: Vec<Finding>,
    pub unknown: usize,
    pub notes: Vec<String>,
}

/// The importers' check, shared by the hook waiting for it and the task doing it.
#[derive(Default)]
struct Relay {
    found: Vec<Finding>,
    unknown: usize,
    checked: usize,
    notes: Vec<String>,
    /// Importers not answered yet.
    left: BTreeSet<PathBuf>,
    /// The importers are known (`left` is all that is left).
    planned: bool,
    /// The hook answered: what is found from now on goes to the session's ledger.
    handed_off: bool,
    /// Only what is inferred of these names changed, not what they declare: the hook does not
    /// wait for their importers (`importers`).
    behind: Vec<String>,
}

/// What the importers' task needs to know of the write.
struct Job {
    session: String,
    written: Vec<PathBuf>,
    /// The written files, root-relative, as the ledger names them.
    from: Vec<String>,
    before: Vec<(PathBuf, Before)>,
    changed: Option<Changed>,
    kept: Option<Arc<Signatures>>,
    write_tick: u64,
    now: u64,
    severity: Severity,
}

impl Engine {
    /// After the write: the written files asked now and compared with their baselines, then
    /// the importers of the names it changed (`importers`), until `deadline`.
    pub(super) async fn post_edit(
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
        let (before, kept) = self.befores(ask, written);
        for (p, b) in &before {
            self.ledger.origin(&ask.session, p, b, write_tick);
        }
        // A file a shell command wrote: the turn-end gate covers it too, against what was known.
        for f in written {
            self.ledger
                .origin(&ask.session, f, &Before::Unknown, write_tick);
        }
        // The written files first, whatever else there is to do. Their content now, read once:
        // a snapshot of it is never a baseline.
        let existing: Vec<PathBuf> = written.iter().filter(|p| p.is_file()).cloned().collect();
        let contents: Contents = existing
            .iter()
            .filter_map(|p| {
                Some((
                    p.clone(),
                    content_hash(&text_in_root(self.root(), p).ok()??),
                ))
            })
            .collect();
        let left = deadline.saturating_duration_since(Instant::now());
        let rebuilt = self
            .rebuild_missing(
                &before,
                &existing,
                written,
                &contents,
                write_tick,
                false,
                Instant::now() + left / 2,
            )
            .await;
        let baselines = self.baselines(&existing, &contents, write_tick, &rebuilt);
        let asked = self
            .ask_all(&existing, Stage::PostEdit, now, deadline)
            .await;
        tracing::debug!(
            "hook: {}: the written files answered, {:?} of the budget left",
            ask.session,
            deadline.saturating_duration_since(Instant::now())
        );
        let answered: HashSet<PathBuf> = asked.iter().map(|(p, _)| p.clone()).collect();
        let mut unchecked: Vec<PathBuf> = existing
            .iter()
            .filter(|p| !answered.contains(*p))
            .cloned()
            .collect();
        v.checked = asked.len();
        for (path, a) in asked {
            let c = self.compare(&path, a, &baselines, &ask.session, ask.severity, true);
            absorb(v, c);
        }
        // Then the importers of what changed, waited for until the deadline.
        let changed = changed(self.root(), written, &before);
        if !matches!(&changed, Some(c) if c.names.is_empty()) {
            let job = Job {
                session: ask.session.clone(),
                written: written.to_vec(),
                from: v.files.clone(),
                before,
                changed,
                kept,
                write_tick,
                now,
                severity: ask.severity,
            };
            unchecked.extend(self.importers_until(job, deadline, v).await);
        }
        v.unchecked = unchecked.len();
        // Importers left behind by choice (`behind`) are not among them.
        v.timed_out = v.unchecked > 0;
        v.unchecked_files = unchecked
            .iter()
            .take(MAX_LISTED)
            .map(|p| self.root().relative(p))
            .collect();
        for list in [&mut v.introduced, &mut v.present] {
            sort_findings(list);
        }
    }

    /// What the written files held before: the pre-edit hook's text, else the event's (its
    /// paths confined as the written files' are; outside the root, left out); and the hovers
    /// the pre-edit hook saw.
    fn befores(
        &self,
        ask: &HookAsk,
        written: &[PathBuf],
    ) -> (Vec<(PathBuf, Before)>, Option<Arc<Signatures>>) {
        let mut before: Vec<(PathBuf, Before)> = ask
            .before
            .iter()
            .take(MAX_FILES)
            .filter_map(|(p, b)| Some((self.root().confine(p).ok()?, b.clone())))
            .collect();
        let mut signatures = None;
        let mut kept = Vec::new();
        for f in written {
            if let Some(k) = self.held.take(&ask.session, f) {
                let was = match k.text {
                    Some(t) => Before::Text(t.to_string()),
                    None => Before::Absent,
                };
                kept.push((f.clone(), was));
                signatures = Some(k.signatures);
            }
        }
        if !kept.is_empty() {
            let kept_paths: HashSet<PathBuf> = kept.iter().map(|(p, _)| p.clone()).collect();
            before.retain(|(p, _)| !kept_paths.contains(p));
            before.extend(kept);
        }
        (before, signatures)
    }

    /// Starts the importers' check and waits for it until `deadline`; then it goes on alone,
    /// its findings for the session's next answer. The importers not answered by then.
    async fn importers_until(
        &self,
        job: Job,
        deadline: Instant,
        v: &mut HookVerdict,
    ) -> Vec<PathBuf> {
        let relay = Arc::new(Mutex::new(Relay::default()));
        let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
        let (plan_tx, plan_rx) = tokio::sync::oneshot::channel::<bool>();
        let engine = Engine::session(self.shared().clone(), self.options().clone());
        let shared = relay.clone();
        let session = job.session.clone();
        let from = job.from.clone();
        tokio::spawn(async move {
            let session = job.session.clone();
            let work = engine.importers(job, &shared, plan_tx);
            if tokio::time::timeout(BACKGROUND, work).await.is_err() {
                tracing::info!("hook: {session}: importers not all checked in {BACKGROUND:?}");
            }
            drop(done_tx);
        });
        // Until the importers are checked (the sender is dropped when the task ends, however
        // it ends), unless the plan is not to wait for them.
        let waited = async move {
            if plan_rx.await != Ok(false) {
                let _ = done_rx.await;
            }
        };
        let _ = tokio::time::timeout_at(deadline, waited).await;
        let Ok(mut r) = relay.lock() else {
            return Vec::new();
        };
        r.handed_off = true;
        v.behind = std::mem::take(&mut r.behind);
        v.checked += r.checked;
        v.unknown += r.unknown;
        v.introduced.append(&mut r.found);
        v.notes.append(&mut r.notes);
        let left: Vec<PathBuf> = r.left.iter().cloned().collect();
        if !left.is_empty() || !r.planned {
            let names = left.iter().map(|p| self.root().relative(p)).collect();
            self.ledger.tell_later(&session, &from, Vec::new(), names);
            if !r.planned && v.behind.is_empty() {
                v.notes
                    .push("the files that import the written ones are still being found".into());
            }
        }
        if !v.behind.is_empty() {
            // Left behind by choice, and said so (`behind`): not cut by the budget.
            return Vec::new();
        }
        left
    }

    /// The importers' check: the files that import the written ones and mention a name the
    /// write changed, unless every such name shows importers the same as before; each asked
    /// and compared, its findings to the hook while it waits, else to the session's ledger.
    async fn importers(
        &self,
        job: Job,
        relay: &Mutex<Relay>,
        plan: tokio::sync::oneshot::Sender<bool>,
    ) {
        let began = Instant::now();
        let deps = self.importers_to_ask(&job, relay, plan).await;
        let handed_off = {
            let Ok(mut r) = relay.lock() else { return };
            r.left = deps.iter().cloned().collect();
            r.planned = true;
            r.handed_off
        };
        if handed_off {
            let names = deps.iter().map(|p| self.root().relative(p)).collect();
            self.ledger
                .tell_later(&job.session, &job.from, Vec::new(), names);
        }
        tracing::debug!(
            "hook: {}: {} importers to ask, found in {:?}",
            job.session,
            deps.len(),
            began.elapsed()
        );
        if deps.is_empty() {
            return;
        }
        // Baselines from what is known, however old (an importer's own text did not change);
        // the old text shown to the server only for those with none.
        let rebuilt = self
            .rebuild_missing(
                &job.before,
                &deps,
                &job.written,
                &Contents::new(),
                job.write_tick,
                true,
                Instant::now() + BACKGROUND / 2,
            )
            .await;
        let baselines = self.baselines(&deps, &Contents::new(), job.write_tick, &rebuilt);
        tracing::debug!(
            "hook: {}: importers' baselines ready at {:?}",
            job.session,
            began.elapsed()
        );
        let each = |_: usize, path: &Path, asked: Asked| {
            let c = self.compare(path, asked, &baselines, &job.session, job.severity, false);
            tracing::debug!(
                "hook: {}: {} answered at {:?}",
                job.session,
                self.root().relative(path),
                began.elapsed()
            );
            let Ok(mut r) = relay.lock() else { return };
            r.left.remove(path);
            if r.handed_off {
                let file = self.root().relative(path);
                self.ledger.checked_later(&job.session, &file);
                if !c.introduced.is_empty() {
                    self.ledger
                        .tell_later(&job.session, &job.from, c.introduced, Vec::new());
                }
            } else {
                r.checked += 1;
                r.unknown += c.unknown;
                r.found.extend(c.introduced);
                r.notes.extend(c.notes);
            }
        };
        self.ask_each(&deps, Stage::PostEdit, job.now, each).await;
    }

    /// The importers the write may break, the densest users of its changed names first: none
    /// when every changed name shows importers the same as before. Sends `plan` whether the
    /// hook waits for them (not when only what is inferred changed).
    async fn importers_to_ask(
        &self,
        job: &Job,
        relay: &Mutex<Relay>,
        plan: tokio::sync::oneshot::Sender<bool>,
    ) -> Vec<PathBuf> {
        // Whether importers see the names the same, and who imports them, found side by side:
        // the hovers wait for the server, the import walk for the disk.
        let decided = async {
            let same = match (&job.changed, job.written.as_slice()) {
                (Some(c), [f]) if !c.names.is_empty() => {
                    self.look_the_same(f, &c.names, &job.before, job.kept.as_deref())
                        .await
                }
                _ => false,
            };
            // Hovers that differ while every changed name's header is the same: its body
            // changed what is inferred of it. Its importers are checked behind the answer
            // (most such edits break none; a changed declaration or a name gone is waited
            // for).
            let behind = !same && self.only_inferred(job);
            if behind && let (Ok(mut r), Some(c)) = (relay.lock(), job.changed.as_ref()) {
                r.behind = c.names.iter().cloned().collect();
            }
            let _ = plan.send(!behind);
            same
        };
        // The import walk beside the hovers; which importers use the names only once needed.
        let (same, all) = tokio::join!(decided, self.importers_of(&job.written));
        if same {
            Vec::new()
        } else {
            let reach = job.changed.as_ref().map(|c| c.reaching.clone());
            self.mentioning(all, reach)
                .await
                .into_iter()
                .filter(|p| self.served(p) && !job.written.contains(p))
                .collect()
        }
    }

    /// Each target's baseline per server: asked when nothing else had changed since (exact),
    /// else rebuilt from the old text when it could be, else what was known, however old.
    /// A written file's baselines are never of its written content (`written`).
    fn baselines(
        &self,
        targets: &[PathBuf],
        written: &Contents,
        write_tick: u64,
        rebuilt: &before::Rebuilt,
    ) -> Baselines {
        let mut out = Baselines::new();
        for p in targets {
            let content = written.get(p).copied();
            for name in self.registry.by_language(&self.languages().detect(p)) {
                let key = (p.clone(), name);
                let held = self.held.before(p, &key.1, write_tick, content);
                let exact = held.clone().filter(|(_, t)| t + 1 >= write_tick);
                let known = exact
                    .map(|(s, _)| s)
                    .or_else(|| rebuilt.get(&key).cloned())
                    .or(held.map(|(s, _)| s));
                out.insert(key, known);
            }
        }
        out
    }

    /// `path`'s answers against their baselines: what is new; for a written file with no
    /// baseline, all that is present; otherwise a count of the unknown. Each baseline used is
    /// the session's for the turn-end gate, if it had none.
    pub(super) fn compare(
        &self,
        path: &Path,
        asked: Asked,
        baselines: &Baselines,
        session: &str,
        severity: Severity,
        written: bool,
    ) -> Compared {
        let file = self.root().relative(path);
        let mut c = Compared {
            notes: asked.notes,
            ..Default::default()
        };
        for answer in asked.answers {
            let key = (path.to_path_buf(), answer.server.clone());
            let before = baselines.get(&key).cloned().flatten();
            let found: Vec<(Diag, Said)> = answer
                .found
                .into_iter()
                .filter(|(d, _)| d.severity <= severity)
                .collect();
            let finding = |d: Diag| Finding {
                file: file.clone(),
                server: answer.server.clone(),
                diag: d,
            };
            match before {
                Some(before) => {
                    self.ledger
                        .baseline(session, path, &answer.server, before.clone());
                    c.introduced
                        .extend(new_ones(found, &before).into_iter().map(finding));
                }
                None if written => c.present.extend(found.into_iter().map(|(d, _)| finding(d))),
                None => c.unknown += 1,
            }
        }
        c
    }

    /// Whether the write (of one file) changed only what is inferred of the names it changed:
    /// each a function whose header (decorators, parameters, return type) stands as before.
    fn only_inferred(&self, job: &Job) -> bool {
        let (Some(c), [f]) = (&job.changed, job.written.as_slice()) else {
            return false;
        };
        let Some(family) = imports::Family::of(f) else {
            return false;
        };
        let Some((_, Before::Text(old))) = job.before.iter().find(|(p, _)| p == f) else {
            return false;
        };
        let Ok(Some(new)) = text_in_root(self.root(), f) else {
            return false;
        };
        surface::headers_unchanged(family, old, &new, &c.names)
    }

    /// Whether every one of `names` (changed in `f`) shows importers the same as before the
    /// write: `kept` (the pre-edit hook's hovers), else the old text's hovers asked now.
    async fn look_the_same(
        &self,
        f: &Path,
        names: &BTreeSet<String>,
        before: &[(PathBuf, Before)],
        kept: Option<&Signatures>,
    ) -> bool {
        let old = match kept {
            Some(k) => k.clone(),
            None => match before.iter().find(|(p, _)| p == f) {
                Some((_, Before::Text(t))) => self.signatures(f, Some(t), Some(names)).await,
                _ => return false,
            },
        };
        let new = self.signatures(f, None, Some(names)).await;
        let same = super::signatures::unchanged(names, &old, &new);
        tracing::debug!("hook: {names:?} in {} show the same: {same}", f.display());
        same
    }

    /// Baselines, from the event's old contents, for the (target, server) pairs lspgate knew
    /// nothing of before the write (`rebuild`): known only from before other changes counts
    /// as nothing unless `any_age`; never one of a written file's content now (`contents`).
    #[allow(clippy::too_many_arguments)] // the write's facts, each one of its own
    pub(super) async fn rebuild_missing(
        &self,
        before: &[(PathBuf, Before)],
        targets: &[PathBuf],
        written: &[PathBuf],
        contents: &Contents,
        write_tick: u64,
        any_age: bool,
        deadline: Instant,
    ) -> before::Rebuilt {
        if before.is_empty() {
            return before::Rebuilt::new();
        }
        let missing: Vec<(PathBuf, Vec<String>)> = targets
            .iter()
            .filter_map(|p| {
                let names = self.registry.by_language(&self.languages().detect(p));
                let now = contents.get(p).copied();
                let lacking: Vec<String> = names
                    .into_iter()
                    .filter(|n| {
                        // Missing unless asked when nothing else had changed.
                        self.held
                            .before(p, n, write_tick, now)
                            .is_none_or(|(_, t)| !any_age && t + 1 < write_tick)
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

    /// The files that import the written ones (`Imports`) and, when `names` says which
    /// top-level names the write changed, mention one of them (those mentioning them most
    /// first): from a walk of the root on the blocking pool.
    pub(super) async fn dependents(
        &self,
        written: &[PathBuf],
        names: Option<BTreeSet<String>>,
    ) -> Vec<PathBuf> {
        let all = self.importers_of(written).await;
        self.mentioning(all, names).await
    }

    /// The files that import the written ones, or a file re-exporting them (`Imports`), in
    /// path order. Blocking work on the blocking pool.
    async fn importers_of(&self, written: &[PathBuf]) -> Vec<PathBuf> {
        let ws = self.shared().clone();
        let written = written.to_vec();
        tokio::task::spawn_blocking(move || {
            let tree = ws.registry.tree();
            ws.imports
                .dependents(ws.registry.root().path(), &tree, &written)
        })
        .await
        .unwrap_or_default()
    }

    /// Those of `files` whose code (comments aside) mentions one of `names` or an alias a
    /// re-exporting file gives one, those mentioning them most for their size first; all of
    /// them, as they are, when the names are not known.
    async fn mentioning(
        &self,
        files: Vec<PathBuf>,
        names: Option<BTreeSet<String>>,
    ) -> Vec<PathBuf> {
        let Some(names) = names else {
            return files;
        };
        let ws = self.shared().clone();
        tokio::task::spawn_blocking(move || {
            // Their code without comments: a name in a comment reaches nothing.
            let texts: Vec<String> = files
                .iter()
                .map(|d| {
                    let text = text_in_root(ws.registry.root(), d)
                        .ok()
                        .flatten()
                        .unwrap_or_default();
                    match imports::Family::of(d).and_then(imports::Family::lang) {
                        Some(lang) => crate::lexer::lex(lang, &text).uncommented,
                        None => text,
                    }
                })
                .collect();
            // A re-exporting importer may give a name another (`total as sum`).
            let names = with_aliases(&names, &texts);
            // Those that use the names most for their size first: a server checks a file in
            // about the time its size takes, so within a budget, most of what broke.
            let mut found: Vec<(u64, PathBuf)> = files
                .into_iter()
                .zip(texts)
                .filter_map(|(d, t)| {
                    let n = surface::mention_count(&t, &names) as u64;
                    (n > 0).then(|| (n * 1_000_000 / (t.len() as u64).max(1), d))
                })
                .collect();
            found.sort_by_key(|(density, _)| std::cmp::Reverse(*density));
            found.into_iter().map(|(_, d)| d).collect()
        })
        .await
        .unwrap_or_default()
    }
}

/// Adds one file's comparison to a verdict.
pub(super) fn absorb(v: &mut HookVerdict, c: Compared) {
    v.introduced.extend(c.introduced);
    v.present.extend(c.present);
    v.unknown += c.unknown;
    v.notes.extend(c.notes);
}

/// Findings merged as every answer's diagnostics are (`diagnostics::merge_by`): by file,
/// line, column, then severity, without repeats.
pub(super) fn sort_findings(list: &mut Vec<Finding>) {
    *list = crate::ops::merge_by(
        std::mem::take(list),
        |a, b| {
            (&a.file, a.diag.line, a.diag.column, a.diag.severity).cmp(&(
                &b.file,
                b.diag.line,
                b.diag.column,
                b.diag.severity,
            ))
        },
        // The same finding from two servers is one.
        |a, b| a.file == b.file && a.diag == b.diag,
    );
}

/// The top-level names the write changed in the written files (`surface`), from what they
/// held before; `None` when that cannot be told for one of them (then every importer may be
/// affected).
pub(super) fn changed(
    root: &Root,
    written: &[PathBuf],
    before: &[(PathBuf, Before)],
) -> Option<Changed> {
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
        let new = text_in_root(root, f).ok()??;
        let names = surface::changed_names(family, old, &new)?;
        out.reaching.extend(surface::reaching(family, &new, &names));
        out.reaching.extend(surface::reaching(family, old, &names));
        out.names.extend(names);
    }
    Some(out)
}

/// The top-level names a write changed, and those an importer may reach them through.
#[derive(Debug, Clone, Default)]
pub(super) struct Changed {
    pub names: BTreeSet<String>,
    pub reaching: BTreeSet<String>,
}

/// `names` and the names the files in `texts` import them as (`total as sum`).
fn with_aliases(names: &BTreeSet<String>, texts: &[String]) -> BTreeSet<String> {
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
pub(super) fn new_ones(now: Vec<(Diag, Said)>, before: &[Said]) -> Vec<Diag> {
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
