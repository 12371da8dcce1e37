//! `lspgate hook pre-edit|post-edit|start|stop`: reads a harness's hook event on stdin
//! (`event.rs`), asks the warm daemon what the write introduced, warms the workspace when a
//! session starts, or gates the turn's end (`ops::hook`), and answers in the harness's own
//! shape (`answer.rs`). Never fails the harness and never outlasts its budget: no daemon, no
//! server, a bad event or the budget spent prints nothing (or what it has) and exits 0, with
//! why on stderr.
//!
//! It is sent as `Request::Hook` to the daemon, never run standalone. Its work is linear and
//! bounded: `MAX_EVENT` (16 MiB) of event read at most (past it, no more is read and the answer
//! says so), the first `MAX_FILES` distinct files checked (`ops::hook::distinct_bounded`; a note
//! says how many were left out), all within `--budget` counted from the start.

mod answer;
pub(crate) mod before;
mod event;
pub(crate) mod fields;

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use tokio::io::AsyncReadExt;

use super::Cli;
use crate::cli::harnesses::{self, Format};
use crate::daemon::protocol::CallLine;
use crate::lsp::wire::Severity;
use crate::ops::hook::GATE_BUDGET;
use crate::ops::hook::{HookAsk, HookVerdict, Stage};
use crate::ops::session::SessionSpec;
use fields::Tool;

/// The largest hook event read (a `Write` carries the whole file): of a larger one, no more
/// than this is read, and nothing is checked (`oversize`).
const MAX_EVENT: usize = 16 << 20;
/// What the daemon's answer may take of the budget at most: the rest is for this process.
const MARGIN: Duration = Duration::from_millis(300);

#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    /// Before the harness's tool runs (records what is known), after (reports what it
    /// introduced), when a session starts (warms the workspace, answers at once) or when the
    /// agent's turn ends (blocks it while errors the session's edits introduced remain).
    pub stage: StageArg,
    /// The harness whose event and answer these are (default: told from the event).
    #[arg(long, default_value = "auto", value_parser = harnesses::format_parser())]
    pub(crate) format: Format,
    /// Answer with the harness's block form when the edit introduced a diagnostic this severe.
    #[arg(long, value_enum, default_value = "never")]
    pub block_on: BlockOn,
    /// Report diagnostics this severe and worse (default: warning; at the turn's end, error).
    #[arg(long, value_enum)]
    pub severity: Option<SeverityArg>,
    /// Answer within this many seconds, with what is known by then (default: 5; at the
    /// turn's end, 120).
    #[arg(long, value_name = "SECS")]
    pub budget: Option<f64>,
    /// Findings listed at most.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub max_lines: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StageArg {
    PreEdit,
    PostEdit,
    Start,
    Stop,
}

impl StageArg {
    fn stage(self) -> Stage {
        match self {
            StageArg::PreEdit => Stage::PreEdit,
            StageArg::PostEdit => Stage::PostEdit,
            StageArg::Start => Stage::Start,
            StageArg::Stop => Stage::Stop,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BlockOn {
    Never,
    Error,
    Warning,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SeverityArg {
    Error,
    Warning,
    Info,
    Hint,
}

impl SeverityArg {
    fn severity(self) -> Severity {
        match self {
            SeverityArg::Error => Severity::Error,
            SeverityArg::Warning => Severity::Warning,
            SeverityArg::Info => Severity::Info,
            SeverityArg::Hint => Severity::Hint,
        }
    }
}

/// Runs the hook; always exit code 0 (a hook must never break the harness).
pub(super) async fn run(cli: &Cli, args: &HookArgs) -> i32 {
    let default = if args.stage == StageArg::Stop {
        GATE_BUDGET
    } else {
        5.0
    };
    let secs = match args.budget {
        Some(b) if b.is_finite() => b.clamp(0.2, 1800.0),
        _ => default,
    };
    let budget = Duration::from_secs_f64(secs);
    let started = std::time::Instant::now();
    match tokio::time::timeout(budget, hook(cli, args, budget, started)).await {
        Ok(Ok(Some(out))) => say!("{out}"),
        Ok(Ok(None)) => {}
        Ok(Err(why)) => complain!("lspgate hook: {why}"),
        Err(_) => complain!(
            "lspgate hook: no answer within {} s; nothing reported",
            budget.as_secs_f64()
        ),
    }
    0
}

/// The hook's answer on stdout, if any.
async fn hook(
    cli: &Cli,
    args: &HookArgs,
    budget: Duration,
    started: std::time::Instant,
) -> Result<Option<String>, String> {
    if super::standalone(cli) {
        return Err(
            "hooks answer through the per-user daemon; standalone, nothing is reported".into(),
        );
    }
    // One byte past the bound tells a larger event, of which no more is read.
    let mut raw = Vec::new();
    tokio::io::stdin()
        .take(MAX_EVENT as u64 + 1)
        .read_to_end(&mut raw)
        .await
        .map_err(|e| format!("reading the event: {e}"))?;
    if raw.len() > MAX_EVENT {
        return oversize(args, &raw);
    }
    let value: serde_json::Value =
        serde_json::from_slice(&raw).map_err(|e| format!("the hook event is not JSON: {e}"))?;
    drop(raw);
    let event = event::read(&value, args.format.0, &super::context::var)?;
    let stage = args.stage.stage();
    if event.stage.is_some_and(|s| s != stage) {
        tracing::warn!(
            "a {} event given to `hook {}`: answering as {}",
            event.name,
            stage_name(stage),
            stage_name(stage)
        );
    }
    if stage == Stage::Stop && !event.turn_completed {
        // Cursor's turn was aborted or failed: nothing to gate.
        return Ok(None);
    }
    let Some(written) = Written::of(stage, &event, &value) else {
        return Ok(None);
    };
    let mut session = super::context::session(cli, &[]);
    if cli.root.is_none()
        && let Some(root) = &event.root
    {
        session.root = super::context::absolute(root);
    }
    // `/`, the home folder, a system folder: refused here, before any daemon is asked.
    session.root().map_err(|e| e.to_string())?;
    let named = written.files.len();
    let ask = written.ask(args, stage, &event, budget, started);
    let mut verdict = verdict(session, ask).await?;
    if named > 0 && verdict.files.is_empty() {
        return Err(
            "no language server serves the files written (or they are outside the root): \
                    nothing checked"
                .into(),
        );
    }
    if event.named > named {
        verdict
            .notes
            .insert(0, crate::ops::hook::left_out(event.named));
    }
    match stage {
        Stage::PreEdit | Stage::Start => Ok(None),
        Stage::Stop => Ok(gate(args, budget, &event, &verdict)),
        Stage::PostEdit => Ok(say(args, budget, &event, &verdict)),
    }
}

/// What an event's tool wrote, as the daemon is asked about it.
struct Written {
    files: Vec<PathBuf>,
    /// It ran a shell command: the files are those seen changing.
    shell: bool,
    /// What the files held before (after the write only, told from the event).
    before: Vec<(PathBuf, crate::ops::hook::Before)>,
}

impl Written {
    /// What `event`'s tool wrote, for `stage`; `None` when it is nothing lspgate checks.
    fn of(stage: Stage, event: &event::Event, value: &serde_json::Value) -> Option<Written> {
        let (files, shell) = match (stage, &event.tool) {
            (Stage::Start | Stage::Stop, _) => (Vec::new(), false),
            (_, Tool::Other) => return None,
            (_, Tool::Shell) => (Vec::new(), true),
            (_, Tool::Wrote(files)) => (files.clone(), false),
        };
        // What they held before: only after the write is it told from the file now.
        let before = match (stage, &event.harness.hooks) {
            (Stage::PostEdit, Some(hooks)) => (hooks.before)(
                &fields::Fields::of(value, &super::context::var),
                &files,
                &mut before::Work::new(),
            ),
            _ => Vec::new(),
        };
        Some(Written {
            files,
            shell,
            before,
        })
    }

    /// The daemon's request: these files, the event's session, what is left of `budget`.
    fn ask(
        self,
        args: &HookArgs,
        stage: Stage,
        event: &event::Event,
        budget: Duration,
        started: std::time::Instant,
    ) -> HookAsk {
        let left = budget.saturating_sub(started.elapsed());
        HookAsk {
            stage,
            session: event.session.clone(),
            files: self.files,
            shell: self.shell,
            before: self.before,
            severity: args
                .severity
                .unwrap_or(if stage == Stage::Stop {
                    SeverityArg::Error
                } else {
                    SeverityArg::Warning
                })
                .severity(),
            stop_hook_active: event.stop_hook_active,
            // What is left of the budget once this process has read the event.
            budget_ms: left.saturating_sub(MARGIN).as_millis() as u64,
            deadline_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .ok()
                .map(|now| (now + left - MARGIN.min(budget)).as_millis() as u64),
        }
    }
}

/// The daemon's verdict on `ask`.
async fn verdict(session: SessionSpec, ask: HookAsk) -> Result<HookVerdict, String> {
    match crate::daemon::client::hook(session, ask).await {
        Ok(CallLine::Done { structured, .. }) => serde_json::from_value(structured)
            .map_err(|e| format!("the daemon's verdict is not understood: {e}")),
        Ok(CallLine::Unopened { error } | CallLine::Failed { error }) => Err(error.message),
        Ok(CallLine::Progress { .. }) => Err("the daemon sent no verdict".into()),
        Err(why) => Err(format!("no daemon ({why})")),
    }
}

/// The style of the report for `args`.
fn style(args: &HookArgs, budget: Duration) -> answer::Style {
    answer::Style {
        max_lines: args.max_lines,
        block_on: match args.block_on {
            BlockOn::Never => None,
            BlockOn::Error => Some(Severity::Error),
            BlockOn::Warning => Some(Severity::Warning),
        },
        budget_secs: budget.as_secs_f64(),
    }
}

/// The turn-end gate's answer: the harness's form that keeps the turn going, naming what the
/// session's edits introduced; nothing when the turn may end.
fn gate(
    args: &HookArgs,
    budget: Duration,
    event: &event::Event,
    verdict: &HookVerdict,
) -> Option<String> {
    if verdict.named_before > 0 {
        complain!(
            "lspgate hook: {} error(s) the session introduced remain, named before: not \
             blocking again for them",
            verdict.named_before
        );
    }
    let report = answer::gate(verdict, &style(args, budget))?;
    tracing::info!("blocking the turn's end:\n{report}");
    let hooks = event.harness.hooks.as_ref()?;
    Some((hooks.keep_going)(&report).to_string())
}

/// The answer to `event` saying `verdict`, if there is anything to say.
fn say(
    args: &HookArgs,
    budget: Duration,
    event: &event::Event,
    verdict: &HookVerdict,
) -> Option<String> {
    let style = style(args, budget);
    let report = answer::report(verdict, &style)?;
    tracing::info!("reporting:\n{report}");
    let hooks = event.harness.hooks.as_ref()?;
    let name = match event.name.as_str() {
        "" => hooks.after_tool,
        name => name,
    };
    let out = (hooks.answer)(name, &report, answer::blocks(verdict, &style));
    Some(out.to_string())
}

/// An event over `MAX_EVENT`: nothing checked, and after the tool the answer says so (in the
/// shape of the harness told from the fields before the cut, or `--format`).
fn oversize(args: &HookArgs, prefix: &[u8]) -> Result<Option<String>, String> {
    let why = format!(
        "the hook event is over {} MiB, of which lspgate reads no more (`lspgate diagnostics \
         FILE` checks a file)",
        MAX_EVENT >> 20
    );
    let event = event::read(&event::sniff(prefix), args.format.0, &super::context::var)
        .map_err(|e| format!("{why}; {e}"))?;
    if args.stage != StageArg::PostEdit {
        return Err(why);
    }
    complain!("lspgate hook: {why}");
    let verdict = HookVerdict {
        notes: vec![why],
        ..Default::default()
    };
    Ok(say(args, Duration::ZERO, &event, &verdict))
}

fn stage_name(s: Stage) -> &'static str {
    match s {
        Stage::PreEdit => "pre-edit",
        Stage::PostEdit => "post-edit",
        Stage::Start => "start",
        Stage::Stop => "stop",
    }
}
