//! The gates: `check` (every file in scope, every server, plus tasks, as CheckReport v1),
//! `run_task`, `explain_failure` (the first error and its culprit), `shrink` (delta debugging
//! of a failing file in an overlay, the server as the oracle) and `execute_command`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::json;

use super::types::*;
use super::{Engine, WALK_LIMIT, diags};
use crate::error::{Code, ToolError};
use crate::gates::{self, Task};
use crate::lsp::Cap;
use crate::lsp::wire::WireSymbol;
use crate::registry::Server;
use crate::text::LineIndex;

/// How many files a check has in flight at once (`LSPGATE_CHECK_PARALLEL` overrides): enough
/// to keep a server's queue full while lspgate syncs the next files.
fn check_parallel() -> usize {
    std::env::var("LSPGATE_CHECK_PARALLEL")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(32)
}

impl Engine {
    fn task(&self, name: &str) -> Result<Task, ToolError> {
        self.opts
            .tasks
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .or_else(|| {
                gates::presets(self.root().path())
                    .into_iter()
                    .find(|t| t.name == name)
            })
            .ok_or_else(|| {
                let known: Vec<String> = self
                    .opts
                    .tasks
                    .iter()
                    .cloned()
                    .chain(gates::presets(self.root().path()))
                    .map(|t| t.name)
                    .collect();
                ToolError::invalid(format!(
                    "no task `{name}`; known: {}",
                    if known.is_empty() {
                        "(none)".into()
                    } else {
                        known.join(", ")
                    }
                ))
            })
    }

    /// The files a check covers.
    async fn check_scope(&self, p: &CheckParams) -> Result<Vec<PathBuf>, ToolError> {
        let root = self.root().path();
        let mut files: Vec<PathBuf> =
            if p.changed.unwrap_or(false) {
                git_changed(self.root()).await?
            } else {
                match &p.paths {
                    None => walk_off_thread(root).await,
                    Some(paths) if paths.is_empty() => walk_off_thread(root).await,
                    Some(paths) => {
                        let mut out = Vec::new();
                        for given in paths {
                            if given.contains(['*', '?', '[']) {
                                let glob = globset::Glob::new(given)
                                    .map_err(|e| {
                                        ToolError::invalid(format!("bad glob `{given}`: {e}"))
                                    })?
                                    .compile_matcher();
                                out.extend(walk_off_thread(root).await.into_iter().filter(|f| {
                                    f.strip_prefix(root).is_ok_and(|r| glob.is_match(r))
                                }));
                                continue;
                            }
                            let path = self.resolve(given)?;
                            if path.is_dir() {
                                out.extend(walk_off_thread(&path).await);
                            } else {
                                out.push(path);
                            }
                        }
                        out
                    }
                }
            };
        files.sort();
        files.dedup();
        // Only what some server serves.
        files.retain(|f| self.registry.can_serve(&self.languages().detect(f)));
        Ok(files)
    }

    pub async fn check(&self, p: CheckParams) -> Result<CheckReport, ToolError> {
        self.check_with_progress(p, &|_, _| {}).await
    }

    /// `check`, calling `progress(done, total)` as files finish.
    pub async fn check_with_progress(
        &self,
        p: CheckParams,
        progress: &(dyn Fn(usize, usize) + Sync),
    ) -> Result<CheckReport, ToolError> {
        let files = self.check_scope(&p).await?;
        let total = files.len();
        let _batch = self.registry.batch(total);
        let fail_at = p.severity.unwrap_or(Severity::Error);
        let done = std::sync::atomic::AtomicUsize::new(0);
        let results: Vec<(PathBuf, Result<DiagnosticsResult, ToolError>)> =
            futures::stream::iter(files.iter().cloned())
                .map(|file| {
                    let done = &done;
                    async move {
                        let r = self
                            .diagnostics(DiagnosticsParams {
                                file: Some(file.to_string_lossy().into_owned()),
                                source: None,
                                terse: None,
                            })
                            .await;
                        progress(
                            done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1,
                            total,
                        );
                        (file, r)
                    }
                })
                .buffer_unordered(check_parallel())
                .collect()
                .await;
        let mut issues = Vec::new();
        let mut reasons = Vec::new();
        for (file, r) in results {
            match r {
                Ok(d) => {
                    if let Some(reason) = d.reason {
                        reasons.push(reason);
                    }
                    for f in d.files {
                        for diag in f.diagnostics {
                            issues.push(CheckIssue {
                                file: f.file.clone(),
                                diag,
                                origin: "lsp".into(),
                            });
                        }
                    }
                }
                Err(e) => reasons.push(format!("{}: {}", self.root().relative(&file), e.message)),
            }
        }
        for name in p.tasks.clone().unwrap_or_default() {
            let task = self.task(&name)?;
            let run = gates::run(&task, &[], self.root().path(), Duration::from_secs(600)).await?;
            if run.timed_out {
                reasons.push(format!("task {name} timed out"));
            }
            issues.extend(self.task_issues(&name, run.diagnostics));
        }
        // Merge: the same finding from two origins once.
        let mut seen = HashSet::new();
        issues.retain(|i| {
            seen.insert((
                i.file.clone(),
                i.diag.line,
                i.diag.column,
                i.diag.message.clone(),
            ))
        });
        issues.sort_by(|a, b| {
            (&a.file, a.diag.line, a.diag.column).cmp(&(&b.file, b.diag.line, b.diag.column))
        });
        let summary = CheckSummary {
            files: total,
            errors: issues
                .iter()
                .filter(|i| i.diag.severity == Severity::Error)
                .count(),
            warnings: issues
                .iter()
                .filter(|i| i.diag.severity == Severity::Warning)
                .count(),
        };
        let ok = !issues.iter().any(|i| i.diag.severity <= fail_at);
        Ok(CheckReport {
            version: 1,
            ok,
            summary,
            issues,
            partial: !reasons.is_empty(),
            reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        })
    }

    fn task_issues(&self, origin: &str, list: Vec<gates::TaskDiag>) -> Vec<CheckIssue> {
        list.into_iter()
            .map(|d| {
                let path = std::path::Path::new(&d.file);
                let file = if path.is_absolute() {
                    self.root().relative(path)
                } else {
                    d.file.trim_start_matches("./").to_string()
                };
                CheckIssue {
                    file,
                    diag: Diag {
                        severity: d.severity,
                        line: d.line,
                        column: d.column,
                        end_line: d.line,
                        end_column: d.column,
                        code: d.code,
                        source: Some(origin.to_string()),
                        message: d.message,
                    },
                    origin: origin.to_string(),
                }
            })
            .collect()
    }

    pub async fn run_task(&self, p: RunTaskParams) -> Result<RunTaskResult, ToolError> {
        let task = self.task(&p.name)?;
        let timeout = match p.timeout {
            Some(s) => Duration::try_from_secs_f64(s)
                .map_err(|_| ToolError::invalid("`timeout` must be positive seconds"))?,
            None => Duration::from_secs(600),
        };
        let run = gates::run(
            &task,
            &p.args.unwrap_or_default(),
            self.root().path(),
            timeout,
        )
        .await?;
        let diagnostics = self.task_issues(&task.name, run.diagnostics);
        Ok(RunTaskResult {
            ok: run.exit_code == Some(0)
                && !diagnostics
                    .iter()
                    .any(|d| d.diag.severity == Severity::Error),
            exit_code: run.exit_code,
            stdout: run.stdout,
            stderr: run.stderr,
            diagnostics,
            command: run.command_line,
            timed_out: run.timed_out,
        })
    }

    pub async fn explain_failure(&self, p: ExplainParams) -> Result<ExplainResult, ToolError> {
        let d = self
            .diagnostics(DiagnosticsParams {
                file: Some(p.file.clone()),
                source: None,
                terse: None,
            })
            .await?;
        let file = d
            .files
            .first()
            .map(|f| f.file.clone())
            .unwrap_or(p.file.clone());
        let list: Vec<Diag> = d.files.into_iter().flat_map(|f| f.diagnostics).collect();
        let Some(first) = list
            .iter()
            .filter(|x| x.severity == Severity::Error)
            .min_by_key(|x| (x.line, x.column))
            .cloned()
        else {
            let warnings = list
                .iter()
                .filter(|x| x.severity == Severity::Warning)
                .count();
            return Ok(ExplainResult {
                ok: true,
                verdict: format!("{file}: no errors ({warnings} warnings)"),
                culprit: None,
                diagnostics: list,
            });
        };
        let path = self.resolve(&p.file)?;
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let index = LineIndex::new(&text);
        let symbol = self.enclosing_symbol(&path, first.line).await;
        let lo = first.line.saturating_sub(3).max(1);
        let hi = (first.line + 3).min(index.line_count() as u32);
        let lines: Vec<String> = (lo..=hi)
            .filter_map(|n| {
                index
                    .line(&text, n as usize - 1)
                    .map(|l| format!("{n:>4}{} {l}", if n == first.line { ">" } else { "|" }))
            })
            .collect();
        let errors = list
            .iter()
            .filter(|x| x.severity == Severity::Error)
            .count();
        let mut verdict = vec![format!(
            "{file}:{}:{}: {}",
            first.line,
            first.column,
            first.message.lines().next().unwrap_or("")
        )];
        if let Some((name, kind, start, end)) = &symbol {
            verdict.push(format!("in {kind} `{name}` (lines {start}-{end})"));
        }
        if let Some(code) = &first.code {
            verdict.push(format!(
                "code {code}{}",
                first
                    .source
                    .as_deref()
                    .map(|s| format!(" from {s}"))
                    .unwrap_or_default()
            ));
        }
        if let Some(detail) = first.message.lines().nth(1) {
            verdict.push(detail.trim().to_string());
        }
        if errors > 1 {
            verdict.push(format!(
                "{} more error{} in this file",
                errors - 1,
                if errors > 2 { "s" } else { "" }
            ));
        }
        verdict.truncate(5);
        Ok(ExplainResult {
            ok: false,
            verdict: verdict.join("\n"),
            culprit: Some(Culprit {
                file,
                line: first.line,
                symbol: symbol.map(|s| s.0),
                lines,
            }),
            diagnostics: list,
        })
    }

    /// The smallest symbol (from document_symbols) enclosing 1-based `line`: name, kind, lines.
    async fn enclosing_symbol(
        &self,
        path: &std::path::Path,
        line: u32,
    ) -> Option<(String, String, u32, u32)> {
        let language = self.languages().detect(path);
        let server = self
            .registry
            .first_supporting(path, &language, Cap::DocumentSymbols, "document_symbols")
            .await
            .ok()?;
        let syms = symbols_of(&server, path, &language).await?;
        fn walk(syms: &[WireSymbol], line0: u32, best: &mut Option<(String, String, u32, u32)>) {
            for s in syms {
                if s.range.start.line <= line0 && line0 <= s.range.end.line {
                    let span = s.range.end.line - s.range.start.line;
                    let better = best.as_ref().is_none_or(|b| span < b.3 - b.2);
                    let callable = matches!(
                        s.kind,
                        "function" | "method" | "constructor" | "class" | "struct" | "interface"
                    );
                    if better && callable {
                        *best = Some((
                            s.name.clone(),
                            s.kind.to_string(),
                            s.range.start.line + 1,
                            s.range.end.line + 1,
                        ));
                    }
                    walk(&s.children, line0, best);
                }
            }
        }
        let mut best = None;
        walk(&syms, line - 1, &mut best);
        best
    }

    pub async fn shrink(&self, p: ShrinkParams) -> Result<ShrinkResult, ToolError> {
        let path = self.resolve(&p.file)?;
        let language = self.languages().detect(&path);
        let original =
            std::fs::read_to_string(&path).map_err(|e| ToolError::io("read", &p.file, &e))?;
        let max_steps = super::positive(p.max_steps, "max_steps")?.unwrap_or(200) as usize;
        let deadline = Instant::now()
            + Duration::from_secs(
                super::positive(p.max_seconds, "max_seconds")?.unwrap_or(90) as u64
            );
        let servers: Vec<Arc<Server>> = self.registry.started_for(&path, &language).await;
        let server = servers
            .first()
            .cloned()
            .ok_or_else(|| self.registry.no_server(&language, &path))?;
        let errors_of = |text: String| {
            let server = server.clone();
            let (path, language) = (path.clone(), language.clone());
            async move {
                let lease = server.docs.lease(&path, &language, Some(&text)).await?;
                let d = self.file_diagnostics(&server, &lease).await?;
                Ok::<Vec<Diag>, ToolError>(
                    diags(&lease.snap, d.diagnostics)
                        .into_iter()
                        .filter(|x| x.severity == Severity::Error)
                        .collect(),
                )
            }
        };
        let first = errors_of(original.clone())
            .await?
            .into_iter()
            .min_by_key(|d| (d.line, d.column))
            .ok_or_else(|| ToolError::invalid(format!("{} has no error to keep", p.file)))?;
        let same = |d: &Diag| d.code == first.code && d.message == first.message;

        // Units: top-level symbols as blocks, every other line alone; then single lines.
        let lines: Vec<String> = original.split_inclusive('\n').map(str::to_string).collect();
        let top: Vec<(u32, u32)> = self.top_level_ranges(&server, &path, &language).await;
        let mut units: Vec<Vec<usize>> = Vec::new();
        let mut i = 0;
        while i < lines.len() {
            if let Some((s, e)) = top.iter().find(|(s, _)| *s as usize == i) {
                let end = (*e as usize).min(lines.len() - 1);
                units.push((*s as usize..=end).collect());
                i = end + 1;
            } else {
                units.push(vec![i]);
                i += 1;
            }
        }
        let render = |units: &[Vec<usize>]| {
            units
                .iter()
                .flatten()
                .map(|&n| lines[n].as_str())
                .collect::<String>()
        };
        let mut steps = 0usize;
        let mut bounded = false;
        for pass in 0..2 {
            if pass == 1 {
                units = units.into_iter().flatten().map(|n| vec![n]).collect();
            }
            let mut n = 2usize;
            'outer: while units.len() >= 2 {
                let size = units.len().div_ceil(n);
                let mut start = 0;
                while start < units.len() {
                    if steps >= max_steps || Instant::now() >= deadline {
                        bounded = true;
                        break 'outer;
                    }
                    let end = (start + size).min(units.len());
                    let rest: Vec<Vec<usize>> = units[..start]
                        .iter()
                        .chain(&units[end..])
                        .cloned()
                        .collect();
                    steps += 1;
                    if errors_of(render(&rest)).await?.iter().any(same) {
                        units = rest;
                        n = (n - 1).max(2);
                        continue 'outer;
                    }
                    start = end;
                }
                if n >= units.len() {
                    break;
                }
                n = (n * 2).min(units.len());
            }
            if bounded {
                break;
            }
        }
        let minimal = render(&units);
        let kept = errors_of(minimal.clone())
            .await?
            .into_iter()
            .find(|d| same(d))
            .unwrap_or(first);
        Ok(ShrinkResult {
            original_lines: lines.len(),
            minimal_lines: minimal.lines().count(),
            minimal_source: minimal,
            kept_error: kept,
            steps,
            partial: bounded,
        })
    }

    /// 0-based line ranges of the file's top-level symbols (empty without a server answer).
    async fn top_level_ranges(
        &self,
        server: &Server,
        path: &std::path::Path,
        language: &str,
    ) -> Vec<(u32, u32)> {
        if !server.supports(Cap::DocumentSymbols) {
            return Vec::new();
        }
        let syms = symbols_of(server, path, language).await.unwrap_or_default();
        let mut r: Vec<(u32, u32)> = syms
            .iter()
            .map(|s| (s.range.start.line, s.range.end.line))
            .collect();
        r.sort();
        r
    }

    pub async fn execute_command(
        &self,
        p: ExecuteCommandParams,
    ) -> Result<ExecuteCommandResult, ToolError> {
        let server = self
            .registry
            .running()
            .into_iter()
            .find(|s| s.name == p.server)
            .ok_or_else(|| {
                ToolError::invalid(format!(
                    "server `{}` is not running; see `servers`",
                    p.server
                ))
            })?;
        let offered = server.client().commands();
        if !offered.iter().any(|c| c == &p.command) {
            return Err(ToolError::new(
                Code::NotSupported,
                format!("{} does not offer `{}`", p.server, p.command),
            )
            .with_data(json!({"commands": offered})));
        }
        let (result, applied) = self
            .run_server_command(
                &server,
                &p.command,
                p.arguments.unwrap_or_default(),
                &p.command,
            )
            .await?;
        Ok(ExecuteCommandResult { result, applied })
    }
}

/// A file's document symbols from `server`, or `None` when it gives none.
async fn symbols_of(
    server: &Server,
    path: &std::path::Path,
    language: &str,
) -> Option<Vec<WireSymbol>> {
    let lease = server.docs.lease(path, language, None).await.ok()?;
    let uri = &lease.snap.uri;
    server
        .request(
            Some(&lease),
            |c| async move { c.document_symbols(uri).await },
        )
        .await
        .ok()
}

/// The files under `dir` (see `workspace::walk`), walked on the blocking pool so the runtime's
/// one thread keeps serving other calls meanwhile.
async fn walk_off_thread(dir: &std::path::Path) -> Vec<PathBuf> {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || crate::workspace::walk(&dir, WALK_LIMIT))
        .await
        .unwrap_or_default()
}

/// Files git reports as modified, added or untracked (not deleted), under `root` (git runs as
/// a child process the runtime waits for, so a slow `git status` holds up nothing).
async fn git_changed(root: &crate::workspace::Root) -> Result<Vec<PathBuf>, ToolError> {
    let (workspace, root) = (root, root.path());
    let out = tokio::process::Command::new("git")
        .args([
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            ".",
        ])
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .map_err(|e| ToolError::invalid(format!("`changed` needs git: {e}")))?;
    if !out.status.success() {
        return Err(ToolError::invalid(format!(
            "`changed` needs a git work tree: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let top = tokio::process::Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .ok()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .unwrap_or_else(|| root.to_path_buf());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut files = Vec::new();
    let mut entries = text.split('\0');
    while let Some(e) = entries.next() {
        if e.len() < 4 {
            continue;
        }
        let (status, path) = e.split_at(3);
        if status.starts_with('R') || status.starts_with('C') {
            entries.next(); // the old name
        }
        if status.contains('D') {
            continue;
        }
        // Confined like every other path: what git names may be a symlink leading out.
        if let Ok(p) = workspace.confine(&top.join(path))
            && p.is_file()
        {
            files.push(p);
        }
    }
    Ok(files)
}
