//! The gates: `check` (in `check`), `run_task`, `explain_failure` (the first error and its
//! culprit), `shrink` (delta debugging of a failing file in an overlay, the server as the
//! oracle) and `execute_command`.

mod affected;
mod batch;
mod check;
pub(super) use lspgate_analysis::declarations;
mod report;

pub(crate) use affected::Answers;
mod scope;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use super::types::*;
use super::{Engine, diags, read_in_root, text_in_root};
use crate::error::{Code, ToolError};
use crate::gates::{self, Task};
use crate::lsp::Cap;
use crate::lsp::wire::WireSymbol;
use crate::registry::Server;
use crate::text::LineIndex;

impl Engine {
    /// The task `name`: from lspgate.toml (`untrusted_config` while that file is not
    /// trusted), else a preset whose markers the workspace holds.
    async fn task(&self, name: &str) -> Result<Task, ToolError> {
        if let Some(t) = self.opts.tasks.iter().find(|t| t.name == name) {
            t.runnable()?;
            return Ok(t.clone());
        }
        let root = self.root().path().to_path_buf();
        let path = self.registry().path().map(|p| p.to_os_string());
        let presets = tokio::task::spawn_blocking(move || gates::presets(&root, path.as_deref()))
            .await
            .unwrap_or_default();
        let known: Vec<&str> = self
            .opts
            .tasks
            .iter()
            .chain(&presets)
            .map(|t| t.name.as_str())
            .collect();
        let message = format!(
            "no task `{name}`; known: {}",
            if known.is_empty() {
                "(none)".into()
            } else {
                known.join(", ")
            }
        );
        presets
            .iter()
            .find(|t| t.name == name)
            .cloned()
            .ok_or_else(|| ToolError::invalid(message))
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
        let task = self.task(&p.name).await?;
        let timeout = match p.timeout {
            Some(s) => Duration::try_from_secs_f64(s)
                .map_err(|_| ToolError::invalid("`timeout` must be positive seconds"))?,
            None => Duration::from_secs(600),
        };
        let run = gates::run(
            &task,
            &p.args.unwrap_or_default(),
            self.root().path(),
            self.opts.env.as_deref(),
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

    /// A file's first error: a short verdict, its enclosing symbol and the lines around it.
    pub async fn explain_failure(&self, p: ExplainParams) -> Result<ExplainResult, ToolError> {
        let d = self
            .all_diagnostics(DiagnosticsParams {
                file: Some(p.file.clone()),
                source: None,
                limit: None,
                cursor: None,
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
        let text = text_in_root(self.root(), &path)
            .ok()
            .flatten()
            .unwrap_or_default();
        let symbol = self.enclosing_symbol(&path, first.line).await;
        let errors = list
            .iter()
            .filter(|x| x.severity == Severity::Error)
            .count();
        Ok(ExplainResult {
            ok: false,
            verdict: verdict(&file, &first, symbol.as_ref(), errors),
            culprit: Some(Culprit {
                lines: lines_around(&text, first.line),
                file,
                line: first.line,
                symbol: symbol.map(|s| s.0),
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

    /// The file reduced, in an overlay, to the fewest lines that still show its first error.
    pub async fn shrink(&self, p: ShrinkParams) -> Result<ShrinkResult, ToolError> {
        let path = self.resolve(&p.file)?;
        let language = self.languages().detect(&path);
        let original = self.shrink_source(&p.file, &path)?;
        let bound = Bound {
            max_steps: super::positive(p.max_steps, "max_steps")?.unwrap_or(200) as usize,
            deadline: Instant::now()
                + Duration::from_secs(
                    super::positive(p.max_seconds, "max_seconds")?.unwrap_or(90) as u64
                ),
        };
        let servers: Vec<Arc<Server>> = self.registry.started_for(&path, &language).await;
        let server = servers
            .first()
            .cloned()
            .ok_or_else(|| self.registry.no_server(&language, &path))?;
        let probe = Probe {
            engine: self,
            server,
            path,
            language,
        };
        let first = probe
            .errors_of(&original)
            .await?
            .ok_or_else(|| probe.stale(&p.file))?
            .into_iter()
            .min_by_key(|d| (d.line, d.column))
            .ok_or_else(|| ToolError::invalid(format!("{} has no error to keep", p.file)))?;
        let same = |d: &Diag| d.code == first.code && d.message == first.message;
        let lines: Vec<String> = original.split_inclusive('\n').map(str::to_string).collect();
        let top = self
            .top_level_ranges(&probe.server, &probe.path, &probe.language)
            .await;
        let reduced = probe
            .reduce(&lines, units_of(&lines, &top), &same, bound)
            .await?;
        let minimal = render(&lines, &reduced.units);
        // The error is reported as kept only if the answer for the minimal file has it.
        let kept = probe
            .errors_of(&minimal)
            .await?
            .ok_or_else(|| probe.stale("the reduced file"))?
            .into_iter()
            .find(|d| same(d))
            .ok_or_else(|| {
                ToolError::new(
                    Code::ServerError,
                    format!(
                        "{} no longer reports `{}` for the reduced file, though it did for each step: its answers vary; nothing to report",
                        probe.server.name, first.message
                    ),
                )
            })?;
        Ok(ShrinkResult {
            original_lines: lines.len(),
            minimal_lines: minimal.lines().count(),
            minimal_source: minimal,
            kept_error: kept,
            steps: reduced.steps,
            partial: reduced.bounded,
        })
    }

    /// The text of the file `shrink` reduces (`file` as the agent named it, `path` resolved).
    fn shrink_source(&self, file: &str, path: &std::path::Path) -> Result<String, ToolError> {
        match read_in_root(self.root(), path)? {
            Some(bytes) => String::from_utf8(bytes).map_err(|_| {
                ToolError::invalid(format!("{file} is not UTF-8 text; nothing to shrink"))
            }),
            None => Err(ToolError::new(
                Code::FileNotFound,
                format!("no file `{file}` in the workspace"),
            )),
        }
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
        let running = |reg: &crate::registry::Registry| {
            reg.running().into_iter().find(|s| s.name == p.server)
        };
        let server = match running(&self.registry) {
            Some(s) => s,
            None => {
                // Not started yet (a command line call is a new process): started at the
                // workspace root, as a file of its language would start it.
                let Some(spec) = self.registry.get(&p.server).await else {
                    return Err(ToolError::invalid(format!(
                        "no server `{}`; see `servers`",
                        p.server
                    )));
                };
                let language = spec.languages.first().cloned().unwrap_or_default();
                // The servers of a language start in `by_language`'s order: this one's
                // failure to start is its answer.
                let names = self.registry.by_language(&language);
                let started = self
                    .registry
                    .servers_for(self.root().path(), &language)
                    .await;
                for (name, started) in names.iter().zip(started) {
                    if let Err(e) = started
                        && name == &p.server
                    {
                        return Err(e.into());
                    }
                }
                running(&self.registry).ok_or_else(|| {
                    ToolError::invalid(format!(
                        "server `{}` is not running; see `servers`",
                        p.server
                    ))
                })?
            }
        };
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

/// How far `shrink` may go: candidates tried, and a deadline.
struct Bound {
    max_steps: usize,
    deadline: Instant,
}

/// What `shrink` reduced a file to: the units kept, candidates tried, whether a bound stopped it.
struct Reduced {
    units: Vec<Vec<usize>>,
    steps: usize,
    bounded: bool,
}

/// `shrink`'s oracle: one server asked about candidate contents of one file, in an overlay.
struct Probe<'a> {
    engine: &'a Engine,
    server: Arc<Server>,
    path: std::path::PathBuf,
    language: String,
}

impl Probe<'_> {
    /// A candidate's errors, judged only on an answer for its own content: a stale one (a
    /// push for the previous candidate) is no answer (`None`).
    async fn errors_of(&self, text: &str) -> Result<Option<Vec<Diag>>, ToolError> {
        // Asked twice at most: a server may drop one answer.
        let mut answer = None;
        for _ in 0..2 {
            let lease = self
                .server
                .docs
                .lease(&self.path, &self.language, Some(text))
                .await?;
            let d = self.engine.file_diagnostics(&self.server, &lease).await?;
            if d.fresh {
                answer = Some((lease.snap.clone(), d.diagnostics));
                break;
            }
        }
        let Some((snap, diagnostics)) = answer else {
            return Ok(None);
        };
        Ok(Some(
            diags(&snap, diagnostics)
                .into_iter()
                .filter(|x| x.severity == Severity::Error)
                .collect(),
        ))
    }

    /// The error for a candidate (`what`) the server sent nothing fresh for.
    fn stale(&self, what: &str) -> ToolError {
        ToolError::new(
            Code::Timeout,
            format!(
                "{} sent no diagnostics for {what} within {}s",
                self.server.name,
                self.engine.opts.diagnostics_timeout.as_secs()
            ),
        )
    }

    /// Delta debugging: drops chunks of `units` (then of single lines) while the error `same`
    /// matches survives, within `bound`.
    async fn reduce(
        &self,
        lines: &[String],
        mut units: Vec<Vec<usize>>,
        same: &impl Fn(&Diag) -> bool,
        bound: Bound,
    ) -> Result<Reduced, ToolError> {
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
                    if steps >= bound.max_steps || Instant::now() >= bound.deadline {
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
                    // Not answered for this candidate: not taken (the error is not known to
                    // survive without these lines).
                    let kept = self.errors_of(&render(lines, &rest)).await?;
                    if kept.is_some_and(|e| e.iter().any(same)) {
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
        Ok(Reduced {
            units,
            steps,
            bounded,
        })
    }
}

/// `shrink`'s units: top-level symbols (0-based line ranges `top`) as blocks, every other line
/// alone.
fn units_of(lines: &[String], top: &[(u32, u32)]) -> Vec<Vec<usize>> {
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
    units
}

/// The text of the lines `units` keep, in order.
fn render(lines: &[String], units: &[Vec<usize>]) -> String {
    units
        .iter()
        .flatten()
        .map(|&n| lines[n].as_str())
        .collect::<String>()
}

/// `explain_failure`'s verdict: the first error, its symbol, code, detail, how many more.
fn verdict(
    file: &str,
    first: &Diag,
    symbol: Option<&(String, String, u32, u32)>,
    errors: usize,
) -> String {
    let mut verdict = vec![format!(
        "{file}:{}:{}: {}",
        first.line,
        first.column,
        first.message.lines().next().unwrap_or("")
    )];
    if let Some((name, kind, start, end)) = symbol {
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
    verdict.join("\n")
}

/// The source lines around 1-based `line` (±3), numbered, the line itself marked `>`.
fn lines_around(text: &str, line: u32) -> Vec<String> {
    let index = LineIndex::new(text);
    let lo = line.saturating_sub(3).max(1);
    let hi = (line + 3).min(index.line_count() as u32);
    (lo..=hi)
        .filter_map(|n| {
            index
                .line(text, n as usize - 1)
                .map(|l| format!("{n:>4}{} {l}", if n == line { ">" } else { "|" }))
        })
        .collect()
}
