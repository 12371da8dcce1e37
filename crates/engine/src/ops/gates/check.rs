//! `check`: every file in scope (`scope.rs`) through every server that serves it, and tasks;
//! honest: `ok` only when every file in scope was checked by servers that answered, every task
//! ran and passed, and nothing was found at the asked severity. What could not be checked is
//! listed in `unchecked`, aggregated per server (or task) and cause, and makes `lspgate check`
//! exit 2; the report itself (CheckReport v2, SARIF) is `report.rs`. Earlier fresh answers are
//! taken again where nothing a file depends on changed (`affected.rs`). The servers' part
//! (`check_files`) is also `diagnostics` without a file (`workspace_findings`): the same scope
//! and findings.
//!
//! Each file's servers are resolved once and files run in parallel, each through every server of
//! its language: taken from the server's workspace pass when one ran (`batch.rs`; a file changed
//! since the pass began, by its ctime, is not), asked unopened where the server knows the file
//! (tsserver, once the projects it began loading are loaded), else leased and asked as the
//! `diagnostics` tool does, under a registry `Batch` that keeps the files it opened open until it
//! ends. Files no pass covers go first, so they keep servers busy meanwhile.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt;

use super::super::types::*;
use super::super::{Engine, MAX_PUSHED_FILES, diags, paginate, text_in_root};
use super::affected::Survey;
use super::batch::{self, Pass};
use super::report::{Tally, check_report, files_phrase, lsp_issues, merge_issues, task_failure};
use super::scope;
use crate::error::ToolError;
use crate::gates;
use crate::registry::Server;
use std::sync::Arc;

/// How many files a check has in flight at once (`LSPGATE_CHECK_PARALLEL` overrides): enough
/// to keep a server's queue full while lspgate syncs the next files.
fn check_parallel() -> usize {
    std::env::var("LSPGATE_CHECK_PARALLEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(32)
}

/// A check of fewer files than this (not the whole workspace) neither takes nor keeps earlier
/// answers.
const SURVEY_MIN: usize = 32;

/// Files an `unchecked` entry names as examples, at most.
const EXAMPLES: usize = 5;

/// How long a task may run within a check.
const TASK_TIMEOUT: Duration = Duration::from_secs(600);

/// Why one server (or none) could not check one file.
struct Problem {
    server: Option<String>,
    /// An error code, or `not_fresh`.
    cause: String,
    message: String,
}

/// One file's check: its diagnostics from the servers that answered, and what failed.
struct FileCheck {
    path: PathBuf,
    language: String,
    diags: Vec<Diag>,
    problems: Vec<Problem>,
    /// Servers that checked this JavaScript file's syntax only (see `batch`).
    syntax_only: Vec<String>,
    /// Every server's answer was an earlier fresh one, nothing it depends on having changed.
    reused: bool,
}

/// What the servers found in a set of files (`check` without its tasks; `diagnostics` without a
/// file).
pub(crate) struct Findings {
    /// Every file in scope with its diagnostics from the servers that answered (in line
    /// order), in the order the files were done.
    pub files: Vec<FileDiagnostics>,
    /// Files every server of which answered, fresh.
    pub checked: usize,
    /// Files some server (or none) could not check.
    pub not_checked: usize,
    /// Files whose earlier fresh answers were taken because nothing they depend on changed.
    pub reused: usize,
    /// What could not be checked, one entry per (server, cause); scope notes first.
    pub unchecked: Vec<Unchecked>,
    /// What was checked in a lesser way (JavaScript checked for syntax only).
    pub notes: Vec<String>,
}

/// A file in scope with its language and the servers that serve it, resolved once.
struct Planned {
    path: PathBuf,
    language: String,
    servers: Vec<Result<Arc<Server>, ToolError>>,
}

impl Problem {
    fn of(server: Option<String>, e: &ToolError) -> Problem {
        Problem {
            server,
            cause: e.code.as_str().to_string(),
            message: e.message.clone(),
        }
    }
}

impl Engine {
    pub async fn check(&self, p: CheckParams) -> Result<CheckReport, ToolError> {
        self.check_with_progress(p, &|_, _| {}).await
    }

    /// `check`, calling `progress(done, total)` as files finish.
    pub async fn check_with_progress(
        &self,
        p: CheckParams,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<CheckReport, ToolError> {
        // Bad paging arguments fail before any work.
        let (_, _, _) = paginate(Vec::<()>::new(), p.limit, p.cursor.as_deref(), 200)?;
        let (files, mut unchecked) = self.check_scope(&p).await?;
        let tasks = self.check_tasks(&p).await?;
        let found = self
            .check_files(files, self.covers_workspace(&p), progress)
            .await;
        unchecked.extend(found.unchecked);
        let mut issues = lsp_issues(found.files);
        for task in &tasks {
            let (found, problem) = self.check_task(task).await?;
            issues.extend(found);
            unchecked.extend(problem);
        }
        merge_issues(&mut issues);
        let tally = Tally {
            checked: found.checked,
            not_checked: found.not_checked,
            reused: found.reused,
            notes: [found.notes, self.waiting_notes()].concat(),
        };
        check_report(&p, issues, unchecked, tally)
    }

    /// The tasks a check asks for, looked up first: an unknown or untrusted one fails the call
    /// before any work is done.
    async fn check_tasks(&self, p: &CheckParams) -> Result<Vec<gates::Task>, ToolError> {
        let mut tasks = Vec::new();
        for name in p.tasks.clone().unwrap_or_default() {
            tasks.push(self.task(&name).await?);
        }
        Ok(tasks)
    }

    /// What the servers report for the whole workspace, as a check of it finds it (`diagnostics`
    /// without a file): every file in the check's scope, and besides every document open in a
    /// running server and every file a server reported problems in (a file in an ignored
    /// folder the agent works on; at most `MAX_PUSHED_FILES` of those per server), through the
    /// same passes, unopened asks and leases. What makes the scope incomplete and what could
    /// not be checked are `unchecked` entries.
    pub(crate) async fn workspace_findings(
        &self,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<Findings, ToolError> {
        let whole = CheckParams {
            paths: None,
            changed: None,
            severity: None,
            tasks: None,
            limit: None,
            cursor: None,
            terse: None,
        };
        let (mut files, mut notes) = self.check_scope(&whole).await?;
        // Nothing in scope is no problem here: there is nothing with problems.
        notes.retain(|n| n.cause != "no_files");
        let mut known: HashSet<PathBuf> = files.iter().cloned().collect();
        for server in self.registry.running() {
            for (path, _) in server.docs.open_paths() {
                if known.insert(path.clone()) {
                    files.push(path);
                }
            }
            let client = server.client();
            let pushed: Vec<PathBuf> = client
                .pushed_uris()
                .into_iter()
                .filter(|uri| {
                    client
                        .latest_pushed(uri)
                        .iter()
                        .any(|d| !d.rendering_only())
                })
                .filter_map(|uri| uri.to_file_path().ok())
                // Confined: a file through a symlink leading out is not opened (read) at all.
                .filter_map(|p| self.root().confine(&p).ok())
                .filter(|p| !known.contains(p) && p.is_file())
                .collect();
            if pushed.len() > MAX_PUSHED_FILES {
                notes.push(scope::note(
                    "too_many_files",
                    format!(
                        "{} reported on {} files outside the workspace's scope; the first {MAX_PUSHED_FILES} were checked",
                        server.name,
                        pushed.len()
                    ),
                ));
            }
            for path in pushed.into_iter().take(MAX_PUSHED_FILES) {
                if known.insert(path.clone()) {
                    files.push(path);
                }
            }
        }
        files.sort();
        let mut found = self.check_files(files, true, progress).await;
        found.unchecked.splice(0..0, notes);
        Ok(found)
    }

    /// Every file of `files` through every server that serves it (`whole`: the files are the
    /// whole workspace, so a server's first workspace pass may answer for them), calling
    /// `progress(done, total)` as files finish.
    async fn check_files(
        &self,
        files: Vec<PathBuf>,
        whole: bool,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Findings {
        let total = files.len();
        // The size of the work, at once: a whole-workspace pass reports its files only when it
        // ends, and a server may take a while to load before the first file is done.
        progress(0, total);
        let _batch = self.registry.batch(total);
        let mut plan = self.plan_files(files).await;
        let overlaid_before = self.overlaid();
        let survey = self.survey(&plan, whole).await;
        let passes = self.start_passes(&plan, whole).await;
        // Files no pass covers first, so they keep the servers busy while the passes run.
        plan.sort_by_key(|f| {
            f.servers
                .iter()
                .flatten()
                .any(|s| passes.contains_key(&batch::key(s)))
        });
        let done = std::sync::atomic::AtomicUsize::new(0);
        let (passes, survey) = (&passes, &survey);
        let results: Vec<FileCheck> = futures::stream::iter(plan)
            .map(|file| {
                let done = &done;
                async move {
                    let r = self.check_file(file, passes, survey).await;
                    progress(
                        done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                        total,
                    );
                    r
                }
            })
            .buffer_unordered(check_parallel())
            .collect()
            .await;
        // What changed during the check is delivered now: its answers are kept only when
        // nothing was, and no client's unsaved buffer stood in a server for a file (an
        // importer's answer may have been computed on it).
        self.registry.sync().await;
        if overlaid_before || self.overlaid() {
            tracing::debug!("an overlay was in place during the check: its answers are not kept");
        } else {
            survey.keep(&self.registry);
        }
        self.findings(results)
    }

    /// Whether a running server holds a document at a client's unsaved text (an overlay).
    fn overlaid(&self) -> bool {
        self.registry.running().iter().any(|s| {
            s.docs
                .open_paths()
                .iter()
                .any(|(p, _)| !s.docs.shows_disk(p, None))
        })
    }

    /// What this check knows of the workspace's source files, to reuse earlier answers
    /// (`affected`): surveyed once every change before it was delivered. None with
    /// `LSPGATE_RECHECK=all`, nor for a check of a few files (`SURVEY_MIN`): the survey reads
    /// every source file of the workspace, more than asking them costs.
    async fn survey(&self, plan: &[Planned], whole: bool) -> Survey {
        self.registry.sync().await;
        let tick = self.registry.tick();
        let answers = self.answers.clone();
        let sources = plan.iter().any(|f| {
            matches!(
                crate::ops::hook::Family::of(&f.path),
                Some(crate::ops::hook::Family::Python | crate::ops::hook::Family::Script)
            )
        });
        // LSPGATE_RECHECK=all asks every file every time (to measure what reuse saves).
        let every = std::env::var_os("LSPGATE_RECHECK").is_some_and(|v| v == "all");
        if !sources || every || (!whole && plan.len() < SURVEY_MIN) {
            return Survey::none(&answers, tick);
        }
        let root = self.root().clone();
        let fallback = answers.clone();
        let registry = self.registry.clone();
        tokio::task::spawn_blocking(move || answers.survey(&root, &registry.tree(), tick))
            .await
            .unwrap_or_else(|_| Survey::none(&fallback, tick))
    }

    /// Each file with its language and the servers that serve it.
    async fn plan_files(&self, files: Vec<PathBuf>) -> Vec<Planned> {
        let mut plan = Vec::with_capacity(files.len());
        for path in files {
            let language = self.languages().detect(&path);
            let servers = self.registry.servers_for(&path, &language).await;
            let servers = servers
                .into_iter()
                .map(|s| s.map_err(ToolError::from))
                .collect();
            plan.push(Planned {
                path,
                language,
                servers,
            });
        }
        plan
    }

    /// Readies the servers a plan uses: waits for tsserver's projects, and (`whole`) starts a
    /// workspace pass in every other server that offers one, keyed by server.
    async fn start_passes(&self, plan: &[Planned], whole: bool) -> HashMap<usize, Pass> {
        // Every server the check uses, once each; tsserver apart (it answers for files
        // nobody opened; the others may have a workspace pass).
        let mut used: Vec<&Arc<Server>> = Vec::new();
        for server in plan.iter().flat_map(|f| f.servers.iter().flatten()) {
            if !used.iter().any(|s| Arc::ptr_eq(s, server)) {
                used.push(server);
            }
        }
        let (unopened, servers): (Vec<&Arc<Server>>, Vec<&Arc<Server>>) = used
            .into_iter()
            .partition(|s| s.client().diagnoses_unopened());
        // tsserver answers for a file nobody opened only once the file's project is loaded
        // (before, "No Project", and the file would be opened instead: measured on rxjs, the
        // first 32 files in flight were, and typescript-language-server then ran its own
        // diagnostics of each). Its projects began loading when it started; wait for them.
        let (bound, languages) = (self.opts.ready_timeout, self.languages());
        futures::future::join_all(unopened.iter().map(|s| s.workspace_ready(bound, languages)))
            .await;
        // A first check of the whole workspace is one pass in servers that offer it.
        let mut passes: HashMap<usize, Pass> = HashMap::new();
        if !whole {
            return passes;
        }
        // A server says what it offers once it has read its settings (pyright: before it
        // lists its files, its ready marker; servers with no marker at once).
        futures::future::join_all(servers.iter().map(|s| async move {
            let _ = s.client().wait_loaded(bound).await;
        }))
        .await;
        let quiet = self.opts.diagnostics_timeout.max(Duration::from_secs(30));
        // A pass reports each file as it was when the server reached it: a file changed
        // after this moment is asked afresh (`batch::from_pass`), and every change before
        // it reaches the servers before their pass is asked for.
        let started = batch::pass_start();
        if !servers.is_empty() {
            self.registry.sync().await;
        }
        for server in servers {
            if let Some(pass) = batch::start_pass(server, quiet, started) {
                passes.insert(batch::key(server), pass);
            }
        }
        passes
    }

    /// The files' checks as findings: counts, `unchecked` aggregated, syntax-only notes.
    fn findings(&self, results: Vec<FileCheck>) -> Findings {
        let checked = results.iter().filter(|r| r.problems.is_empty()).count();
        let reused = results.iter().filter(|r| r.reused).count();
        let unchecked = self.aggregate(&results);
        let mut syntax_only: HashMap<String, Vec<String>> = HashMap::new();
        for r in &results {
            for server in &r.syntax_only {
                syntax_only
                    .entry(server.clone())
                    .or_default()
                    .push(self.root().relative(&r.path));
            }
        }
        let files: Vec<FileDiagnostics> = results
            .into_iter()
            .map(|r| FileDiagnostics {
                file: self.root().relative(&r.path),
                diagnostics: r.diags,
            })
            .collect();
        Findings {
            not_checked: files.len() - checked,
            checked,
            reused,
            files,
            unchecked,
            notes: batch::syntax_only_notes(syntax_only),
        }
    }

    /// One file through every server of its language: the fresh diagnostics of those that
    /// answered, and a problem for each that could not (not installed, untrusted, failed to
    /// start, failed on the file, or sent nothing fresh within the bound). Stale diagnostics
    /// are not reported as findings. A server's workspace pass answers for the files it
    /// reported; tsserver is asked about files without their being opened where it knows
    /// them; every other file is leased (opened) and its diagnostics pulled or awaited.
    /// An earlier fresh answer of a server is taken again when nothing the file depends on
    /// changed since (`survey`); every fresh answer is offered to it.
    async fn check_file(
        &self,
        file: Planned,
        passes: &HashMap<usize, Pass>,
        survey: &Survey,
    ) -> FileCheck {
        let Planned {
            path,
            language,
            servers,
        } = file;
        let names = self.registry.by_language(&language);
        let mut r = FileCheck {
            path,
            language,
            diags: Vec::new(),
            problems: Vec::new(),
            syntax_only: Vec::new(),
            reused: false,
        };
        if servers.is_empty() {
            let e = ToolError::from(self.registry.no_server(&r.language, &r.path));
            r.problems.push(Problem::of(None, &e));
            return r;
        }
        let (mut asked, mut taken) = (0, 0);
        for (i, server) in servers.into_iter().enumerate() {
            let server = match server {
                Ok(s) => s,
                Err(e) => {
                    r.problems.push(Problem::of(names.get(i).cloned(), &e));
                    continue;
                }
            };
            asked += 1;
            let generation = server.generation();
            let found = if let Some(known) = survey.reuse(&self.registry, &server, &r.path) {
                taken += 1;
                Ok(known)
            } else {
                let found = match self.server_side(&server, &r.path, passes).await {
                    Some(found) => Ok(found),
                    None => self.leased(&server, &r.path, &r.language).await,
                };
                if let Ok(list) = &found {
                    survey.fresh(&server, generation, &r.path, list);
                }
                found
            };
            match found {
                Ok(list) => {
                    r.diags.extend(list);
                    if self.syntax_only(&server, &r.path, &r.language).await {
                        r.syntax_only.push(server.name.clone());
                    }
                }
                Err(problem) => r.problems.push(problem),
            }
        }
        r.reused = asked > 0 && taken == asked;
        r.diags = crate::ops::diagnostics::merge(std::mem::take(&mut r.diags));
        r
    }

    /// A file's diagnostics from the server without opening it: from the server's workspace
    /// pass, or asked of tsserver directly. `None`: the file is to be opened and asked.
    async fn server_side(
        &self,
        server: &Arc<Server>,
        path: &Path,
        passes: &HashMap<usize, Pass>,
    ) -> Option<Vec<Diag>> {
        let client = server.client();
        if let Some(pass) = passes.get(&batch::key(server)) {
            let report = pass.clone().await?;
            return batch::from_pass(self.root(), &report, path, client.encoding());
        }
        if !client.diagnoses_unopened() {
            return None;
        }
        let uri = url::Url::from_file_path(path).ok()?;
        // A file of no project it has loaded ("No Project") is opened instead.
        let mut list = client.pull_diagnostics(&uri).await.ok()?;
        list.retain(|d| !d.rendering_only());
        batch::disk_diags(self.root(), path, client.encoding(), list)
    }

    /// A file's diagnostics from the server with the file opened in it (leased), or why there
    /// are none.
    async fn leased(
        &self,
        server: &Arc<Server>,
        path: &Path,
        language: &str,
    ) -> Result<Vec<Diag>, Problem> {
        let name = Some(server.name.clone());
        let lease = server
            .docs
            .lease_current(path, language)
            .await
            .map_err(|e| Problem::of(name.clone(), &e.into()))?;
        match self.file_diagnostics(server, &lease).await {
            Ok(d) if d.fresh => Ok(diags(&lease.snap, d.diagnostics)),
            Ok(_) => Err(Problem {
                server: name,
                cause: "not_fresh".into(),
                message: String::new(),
            }),
            Err(e) => Err(Problem::of(name, &e)),
        }
    }

    /// Whether `server` checked this JavaScript file's syntax only (tsserver, with no project
    /// that type-checks it; see `batch::javascript_types_checked`).
    async fn syntax_only(&self, server: &Server, path: &Path, language: &str) -> bool {
        let client = server.client();
        if !client.diagnoses_unopened() || !matches!(language, "javascript" | "javascriptreact") {
            return false;
        }
        let Ok(project) = client.tsserver_project_of(path).await else {
            return false;
        };
        let text = text_in_root(self.root(), path)
            .ok()
            .flatten()
            .unwrap_or_default();
        !batch::javascript_types_checked(self.root(), &text, &project)
    }

    /// The files' problems as `unchecked` entries, one per (server, cause): how many files,
    /// a few of them, and the first file's message for the reason.
    fn aggregate(&self, results: &[FileCheck]) -> Vec<Unchecked> {
        struct Group<'a> {
            message: &'a str,
            languages: BTreeSet<&'a str>,
            files: Vec<String>,
        }
        let mut groups: BTreeMap<(Option<&str>, &str), Group> = BTreeMap::new();
        for r in results {
            for p in &r.problems {
                let g = groups
                    .entry((p.server.as_deref(), p.cause.as_str()))
                    .or_insert_with(|| Group {
                        message: &p.message,
                        languages: BTreeSet::new(),
                        files: Vec::new(),
                    });
                g.languages.insert(&r.language);
                g.files.push(self.root().relative(&r.path));
            }
        }
        let secs = self.opts.diagnostics_timeout.as_secs_f64();
        groups
            .into_iter()
            .map(|((server, cause), mut g)| {
                g.files.sort();
                let n = g.files.len();
                let language = g.languages.into_iter().collect::<Vec<_>>().join(", ");
                let who = server.unwrap_or(&language);
                let reason = if cause == "not_fresh" {
                    format!(
                        "{who}: {} sent no diagnostics within {secs} s",
                        files_phrase(n)
                    )
                } else {
                    format!("{who}: {} not checked: {}", files_phrase(n), g.message)
                };
                Unchecked {
                    file: (n == 1).then(|| g.files[0].clone()),
                    language: Some(language.clone()),
                    server: server.map(str::to_string),
                    task: None,
                    cause: cause.to_string(),
                    reason,
                    files: (n > 1).then_some(n),
                    examples: if n > 1 {
                        g.files.into_iter().take(EXAMPLES).collect()
                    } else {
                        Vec::new()
                    },
                }
            })
            .collect()
    }

    /// Runs a task for a check: its findings, and an `unchecked` entry when it could not run,
    /// timed out, or exited non-zero without an error its parser recognised (a failure the
    /// report could not show is never a pass).
    async fn check_task(
        &self,
        task: &gates::Task,
    ) -> Result<(Vec<CheckIssue>, Option<Unchecked>), ToolError> {
        let entry = |cause: &str, reason: String| Unchecked {
            file: None,
            language: None,
            server: None,
            task: Some(task.name.clone()),
            cause: cause.to_string(),
            reason,
            files: None,
            examples: Vec::new(),
        };
        let mut run = match gates::run(
            task,
            &[],
            self.root().path(),
            self.opts.env.as_deref(),
            TASK_TIMEOUT,
        )
        .await
        {
            Ok(run) => run,
            Err(e) if e.code == crate::error::Code::UntrustedConfig => return Err(e),
            // Its message names the task and why it could not run.
            Err(e) => return Ok((Vec::new(), Some(entry("task_not_run", e.message)))),
        };
        if run.timed_out {
            let why = format!(
                "task `{}` timed out after {} s",
                task.name,
                TASK_TIMEOUT.as_secs()
            );
            return Ok((Vec::new(), Some(entry("task_timed_out", why))));
        }
        let found = self.task_issues(&task.name, std::mem::take(&mut run.diagnostics));
        let shown = found.iter().any(|i| i.diag.severity == Severity::Error);
        if run.exit_code == Some(0) || shown {
            return Ok((found, None));
        }
        let why = task_failure(task, &run);
        Ok((found, Some(entry("task_failed", why))))
    }
}
