//! The harnesses lspgate works with, one file each: everything lspgate knows of a harness is
//! its `HarnessDef` there — what `setup` writes (files, entries, hook groups, notes), how its
//! hook events read (which harness wrote one, its root, session and tool), what a file held
//! before its write, and the shapes of its answers (context, block, the turn-end gate's). A
//! new harness is one file and one line in `ALL`.

pub(crate) mod claude_code;
pub(crate) mod codex;
pub(crate) mod copilot;
pub(crate) mod cursor;
pub(crate) mod gemini;
pub(crate) mod opencode;

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use serde_json::{Value, json};

use super::harness::table::{File, HookLine, J};
use super::hook::before::Work;
use super::hook::fields::{Fields, Tool};
use crate::ops::hook::Before;

/// One harness.
pub(crate) struct HarnessDef {
    /// Its name on the command line (`setup NAME`, `hook --format NAME`) and in session ids.
    pub(crate) name: &'static str,
    /// The files `setup` writes, with what each receives.
    pub(crate) files: &'static [File],
    /// What `setup` says of it.
    pub(crate) notes: &'static [&'static str],
    /// Its hook events, when lspgate reads them.
    pub(crate) hooks: Option<Hooks>,
}

impl std::fmt::Debug for HarnessDef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl PartialEq for HarnessDef {
    fn eq(&self, other: &HarnessDef) -> bool {
        self.name == other.name
    }
}

/// What a harness's reader tells of an event: its root, session id and what its tool did.
pub(crate) type Read = fn(&Fields) -> (Option<PathBuf>, Option<String>, Tool);

/// What each written file held before the write, as far as an event tells.
pub(crate) type OldText = fn(&Fields, &[PathBuf], &mut Work) -> Vec<(PathBuf, Before)>;

/// How a harness's hook events read and are answered.
pub(crate) struct Hooks {
    /// Whether an event is this harness's, from the fields only it writes (asked in
    /// `DETECTED`'s order).
    pub(crate) detects: fn(&Value, &str) -> bool,
    /// An event's root, session id and what its tool did.
    pub(crate) read: Read,
    /// What each written file held before the write, as far as the event tells.
    pub(crate) before: OldText,
    /// The answer after a tool: the report as context, or (`block`) the block answer.
    pub(crate) answer: fn(event: &str, report: &str, block: bool) -> Value,
    /// The turn-end gate's answer that keeps the turn going.
    pub(crate) keep_going: fn(report: &str) -> Value,
    /// The name of its event after a tool, for an event that names none (cut short).
    pub(crate) after_tool: &'static str,
}

/// Every harness, in the order `setup` lists them.
pub(crate) static ALL: [&HarnessDef; 6] = [
    &claude_code::DEF,
    &codex::DEF,
    &gemini::DEF,
    &cursor::DEF,
    &opencode::DEF,
    &copilot::DEF,
];

/// The harnesses whose events lspgate reads, in the order an event is told apart: the one
/// whose fields are most its own first (Codex's events are Claude Code's with more).
static DETECTED: [&HarnessDef; 4] = [&cursor::DEF, &gemini::DEF, &codex::DEF, &claude_code::DEF];

/// The harness named `name`.
pub(crate) fn by_name(name: &str) -> Option<&'static HarnessDef> {
    ALL.iter().copied().find(|h| h.name == name)
}

/// The harness whose event `v` is, from the fields only it writes.
pub(crate) fn detect(v: &Value) -> Option<&'static HarnessDef> {
    let name = v
        .get("hook_event_name")
        .and_then(Value::as_str)
        .unwrap_or("");
    DETECTED
        .iter()
        .copied()
        .find(|h| h.hooks.as_ref().is_some_and(|k| (k.detects)(v, name)))
}

/// `setup HARNESS`: one of `ALL`'s names.
pub(crate) fn setup_parser() -> impl TypedValueParser<Value = &'static HarnessDef> {
    PossibleValuesParser::new(ALL.map(|h| h.name))
        // The parser admits only `ALL`'s names: the fallback is never taken.
        .map(|name| by_name(&name).unwrap_or(ALL[0]))
}

/// `hook --format`: `auto` (told from the event) or a harness whose events lspgate reads.
pub(crate) fn format_parser() -> impl TypedValueParser<Value = Format> {
    let auto = PossibleValue::new("auto").help("Told from the event itself");
    let names =
        std::iter::once(auto).chain(DETECTED_LISTED.iter().map(|h| PossibleValue::new(h.name)));
    PossibleValuesParser::new(names).map(|name| Format(by_name(&name)))
}

/// The harnesses with hooks, in `ALL`'s order (as `--format` lists them).
static DETECTED_LISTED: [&HarnessDef; 4] =
    [&claude_code::DEF, &codex::DEF, &gemini::DEF, &cursor::DEF];

/// `hook --format`: the harness named, or none (`auto`: told from the event).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Format(pub(crate) Option<&'static HarnessDef>);

/// The answer after a tool of Claude Code and Codex: the report as the tool's additional
/// context, or their block form.
fn context_or_block(event: &str, report: &str, block: bool) -> Value {
    if block {
        json!({"decision": "block", "reason": report})
    } else {
        json!({"hookSpecificOutput": {"hookEventName": event, "additionalContext": report}})
    }
}

/// Claude Code's and Codex's answer that keeps a turn going.
fn block(report: &str) -> Value {
    json!({"decision": "block", "reason": report})
}

/// A hook group of `{"matcher", "hooks": [{type, command, timeout}]}` (Claude Code, Codex).
fn matched_group(h: &HookLine, format: &str, matcher: &str) -> J {
    use super::harness::table::handler;
    h.matched(
        matcher,
        vec![("hooks", handler(h.command(format), None, h.secs))],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_harness_is_listed_once_and_found_by_its_name() {
        for h in ALL {
            assert_eq!(by_name(h.name), Some(h));
            assert_eq!(ALL.iter().filter(|o| o.name == h.name).count(), 1);
        }
        let with_hooks: Vec<&str> = ALL
            .iter()
            .filter(|h| h.hooks.is_some())
            .map(|h| h.name)
            .collect();
        let mut detected: Vec<&str> = DETECTED.iter().map(|h| h.name).collect();
        let listed: Vec<&str> = DETECTED_LISTED.iter().map(|h| h.name).collect();
        assert_eq!(listed, with_hooks);
        detected.sort();
        let mut with_hooks = with_hooks;
        with_hooks.sort();
        assert_eq!(detected, with_hooks);
    }
}
