//! Text renderings of tool results: a compact default and a minimal `terse` form, both capped.
//! Locations are grouped per file so a reference costs a few characters, not a path each.

use std::fmt::Write;

use serde_json::Value;

use super::types::*;

/// A tool's answer: the structured result and its (capped) text.
pub struct ToolOutput {
    pub structured: Value,
    pub text: String,
}

/// A result that has a text form.
pub trait Render {
    fn render(&self, terse: bool) -> String;
}

/// Cuts `text` to at most `max` characters at a line boundary, saying what was cut and how to
/// get the rest.
pub fn cap(text: String, max: usize) -> String {
    if text.chars().count() <= max {
        return text;
    }
    let mut end = text
        .char_indices()
        .nth(max.saturating_sub(120))
        .map_or(text.len(), |(i, _)| i);
    if let Some(nl) = text[..end].rfind('\n') {
        end = nl;
    }
    let kept = &text[..end];
    let cut_lines = text[end..].lines().filter(|l| !l.is_empty()).count();
    format!(
        "{kept}\n… output cut: {cut_lines} more lines not shown (structuredContent has every \
         item; pass `limit`/`cursor` to page, or narrow the query)"
    )
}

/// Locations grouped by file: `file` then `  line:col text` (terse: `file line:col …`).
fn render_locs(out: &mut String, locs: &[Loc], terse: bool) {
    let mut i = 0;
    while i < locs.len() {
        let file = &locs[i].file;
        let mut j = i;
        while j < locs.len() && locs[j].file == *file {
            j += 1;
        }
        if terse {
            let _ = write!(out, "{file}");
            for l in &locs[i..j] {
                let _ = write!(out, " {}:{}", l.line, l.column);
            }
            out.push('\n');
        } else {
            let _ = writeln!(out, "{file}");
            for l in &locs[i..j] {
                let _ = writeln!(out, "  {}:{} {}", l.line, l.column, line_text(l));
            }
        }
        i = j;
    }
}

/// A location's source line as shown (cut to 60 characters), or why lspgate did not read it.
fn line_text(l: &Loc) -> Cow<'_, str> {
    match l.text_omitted {
        Some(why) => Cow::Borrowed(why.says()),
        None => short(&l.text, 60),
    }
}

fn short(s: &str, max: usize) -> Cow<'_, str> {
    if s.chars().count() <= max {
        Cow::Borrowed(s)
    } else {
        let cut: String = s.chars().take(max - 1).collect();
        Cow::Owned(format!("{cut}…"))
    }
}
use std::borrow::Cow;

fn partial_note(out: &mut String, partial: bool, reason: &Option<String>) {
    if partial {
        let _ = writeln!(
            out,
            "partial: {}",
            reason.as_deref().unwrap_or("the server was not ready")
        );
    }
}

fn more_note(out: &mut String, shown: usize, total: usize, next: &Option<String>) {
    if let Some(c) = next {
        let _ = writeln!(out, "… {shown} of {total} shown; cursor \"{c}\" for more");
    }
}

impl Render for HoverResult {
    fn render(&self, _terse: bool) -> String {
        let mut out = match self.contents.trim() {
            "" => "no hover information at this position".to_string(),
            text => text.to_string(),
        };
        if let Some(h) = &self.hints {
            let _ = write!(out, "\n\nhints: {}", h.trim());
        }
        out
    }
}

impl Render for LocationsResult {
    fn render(&self, terse: bool) -> String {
        if self.locations.is_empty() {
            return "no locations".into();
        }
        let mut out = String::new();
        render_locs(&mut out, &self.locations, terse);
        out.trim_end().to_string()
    }
}

impl Render for ReferencesResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        partial_note(&mut out, self.partial, &self.reason);
        if !terse {
            let files = {
                let mut f: Vec<&str> = self.locations.iter().map(|l| l.file.as_str()).collect();
                f.dedup();
                f.len()
            };
            let _ = writeln!(out, "{} references in {} files", self.total, files);
        }
        render_locs(&mut out, &self.locations, terse);
        more_note(
            &mut out,
            self.locations.len(),
            self.total,
            &self.next_cursor,
        );
        out.trim_end().to_string()
    }
}

fn render_symbols(out: &mut String, syms: &[Symbol], depth: usize, terse: bool) {
    for s in syms {
        let indent = "  ".repeat(depth);
        if terse {
            let _ = writeln!(out, "{indent}{} {} {}", s.line, s.kind, s.name);
        } else {
            let detail = s
                .detail
                .as_deref()
                .map(|d| format!(" — {}", short(d, 60)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{indent}{} {} {}-{}{}",
                s.kind, s.name, s.line, s.end_line, detail
            );
        }
        render_symbols(out, &s.children, depth + 1, terse);
    }
}

impl Render for DocumentSymbolsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        if self.source == SymbolSource::Fallback {
            out.push_str("(fallback: the server has no document symbols; lspgate's text scan)\n");
        }
        if self.symbols.is_empty() {
            out.push_str("no symbols");
        }
        render_symbols(&mut out, &self.symbols, 0, terse);
        if let Some(c) = &self.next_cursor {
            let _ = writeln!(
                out,
                "… {} symbols in all; cursor \"{c}\" for more",
                self.total
            );
        }
        out.trim_end().to_string()
    }
}

impl Render for WorkspaceSymbolsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        partial_note(&mut out, self.partial, &self.reason);
        if self.symbols.is_empty() {
            out.push_str("no symbols\n");
        }
        for s in &self.symbols {
            if terse {
                let _ = writeln!(
                    out,
                    "{}:{}:{} {}",
                    s.loc.file, s.loc.line, s.loc.column, s.name
                );
            } else {
                let container = s
                    .container
                    .as_deref()
                    .map(|c| format!(" in {c}"))
                    .unwrap_or_default();
                let _ = writeln!(
                    out,
                    "{} {}{} {}:{}:{}",
                    s.kind, s.name, container, s.loc.file, s.loc.line, s.loc.column
                );
            }
        }
        more_note(&mut out, self.symbols.len(), self.total, &self.next_cursor);
        out.trim_end().to_string()
    }
}

impl Render for SignatureHelpResult {
    fn render(&self, _terse: bool) -> String {
        if self.signatures.is_empty() {
            return "no signature here".into();
        }
        let mut out = String::new();
        for s in &self.signatures {
            let active = s
                .active_parameter
                .and_then(|i| s.parameters.get(i as usize))
                .map(|p| format!("  (at: {p})"))
                .unwrap_or_default();
            let _ = writeln!(out, "{}{active}", s.label);
        }
        out.trim_end().to_string()
    }
}

impl Render for CompletionsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        for i in &self.items {
            match (&i.detail, terse) {
                (Some(d), false) => {
                    let _ = writeln!(out, "{} ({}) {}", i.label, i.kind, short(d, 60));
                }
                _ => {
                    let _ = writeln!(out, "{} ({})", i.label, i.kind);
                }
            }
        }
        if self.total > self.items.len() {
            let _ = writeln!(out, "… {} of {} shown", self.items.len(), self.total);
        }
        if out.is_empty() {
            out.push_str("no completions");
        }
        out.trim_end().to_string()
    }
}

impl Render for CallHierarchyResult {
    fn render(&self, terse: bool) -> String {
        if self.calls.is_empty() {
            return "no calls".into();
        }
        let mut out = String::new();
        for c in &self.calls {
            let _ = writeln!(
                out,
                "{} {} {}:{}:{}",
                c.kind, c.name, c.loc.file, c.loc.line, c.loc.column
            );
            if !terse {
                for s in &c.call_sites {
                    let _ = writeln!(out, "  {}:{}:{} {}", s.file, s.line, s.column, line_text(s));
                }
            }
        }
        more_note(&mut out, self.calls.len(), self.total, &self.next_cursor);
        out.trim_end().to_string()
    }
}

impl Render for DiagnosticsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        partial_note(&mut out, self.partial, &self.reason);
        let mut shown = 0;
        for f in &self.files {
            for d in &f.diagnostics {
                shown += 1;
                if terse {
                    let _ = writeln!(out, "{}:{}:{} {}", f.file, d.line, d.column, d.message);
                } else {
                    let code = d
                        .code
                        .as_deref()
                        .map(|c| format!(" [{c}]"))
                        .unwrap_or_default();
                    let sev = serde_json::to_value(d.severity)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "{}:{}:{} {sev}{code}: {}",
                        f.file, d.line, d.column, d.message
                    );
                }
            }
        }
        if shown == 0 {
            let n = self.files.len();
            let _ = write!(
                out,
                "no problems in {n} file{}",
                if n == 1 { "" } else { "s" }
            );
        }
        let page = self.files.iter().map(|f| f.diagnostics.len()).sum();
        more_note(&mut out, page, self.total, &self.next_cursor);
        out.trim_end().to_string()
    }
}

impl Render for ServersResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        if let Some(w) = &self.watcher {
            let _ = writeln!(out, "file watcher: {w}");
        }
        for s in &self.servers {
            let pid = s.pid.map(|p| format!(" pid {p}")).unwrap_or_default();
            let _ = write!(
                out,
                "{} [{}] {} root {}{pid}",
                s.name,
                s.languages.join(","),
                s.state,
                s.root
            );
            if s.restarts > 0 {
                let _ = write!(out, " restarts {}", s.restarts);
            }
            if let Some(e) = &s.last_error {
                let _ = write!(out, " — {e}");
            }
            out.push('\n');
            if !terse {
                if let Some(v) = &s.version {
                    let _ = writeln!(out, "  version: {v}");
                }
                let _ = writeln!(out, "  command: {}", s.command);
                if !s.capabilities.is_empty() {
                    let _ = writeln!(out, "  capabilities: {}", s.capabilities.join(", "));
                }
                if !s.commands.is_empty() {
                    let _ = writeln!(out, "  commands: {}", s.commands.join(", "));
                }
            }
        }
        if out.is_empty() {
            out.push_str("no servers configured");
        }
        out.trim_end().to_string()
    }
}

fn render_diags(out: &mut String, label: &str, list: &Option<Vec<FileDiag>>, terse: bool) {
    let Some(list) = list else { return };
    let shown: Vec<&FileDiag> = list
        .iter()
        .filter(|d| !terse || d.diag.severity <= crate::lsp::wire::Severity::Warning)
        .collect();
    if shown.is_empty() {
        let _ = writeln!(out, "{label}: none");
        return;
    }
    let _ = writeln!(out, "{label}:");
    for d in shown {
        let _ = writeln!(
            out,
            "  {}:{}:{} {}",
            d.file, d.diag.line, d.diag.column, d.diag.message
        );
    }
}

impl Render for EditResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        if !self.changed {
            return self
                .message
                .clone()
                .unwrap_or_else(|| "nothing to change".into());
        }
        if let Some(m) = &self.message {
            let _ = writeln!(out, "{m}");
        }
        for f in &self.files {
            let what = if f.created {
                " (new)"
            } else if f.deleted {
                " (deleted)"
            } else {
                ""
            };
            let _ = writeln!(out, "{}{what} +{} -{}", f.file, f.added, f.removed);
        }
        partial_note(&mut out, self.partial, &self.reason);
        render_diags(&mut out, "introduced", &self.introduced, terse);
        render_diags(&mut out, "resolved", &self.resolved, terse);
        if !self.applied || !terse {
            out.push_str(&self.diff);
        }
        out.trim_end().to_string()
    }
}

impl Render for CodeActionsResult {
    fn render(&self, terse: bool) -> String {
        if let Some(applied) = &self.applied {
            return applied.render(terse);
        }
        if self.actions.is_empty() {
            return "no code actions here".into();
        }
        let mut out = String::new();
        for a in &self.actions {
            let kind = a
                .kind
                .as_deref()
                .map(|k| format!(" [{k}]"))
                .unwrap_or_default();
            let star = if a.preferred { " *" } else { "" };
            let disabled = a
                .disabled
                .as_deref()
                .map(|d| format!(" (disabled: {d})"))
                .unwrap_or_default();
            let _ = writeln!(out, "{}. {}{kind}{star}{disabled}", a.index, a.title);
        }
        out.trim_end().to_string()
    }
}

impl Render for WhatIfResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        partial_note(&mut out, self.partial, &self.reason);
        render_diags(
            &mut out,
            "introduced",
            &Some(self.introduced.clone()),
            terse,
        );
        render_diags(&mut out, "resolved", &Some(self.resolved.clone()), terse);
        if let Some(h) = &self.hover_at_probe {
            let _ = writeln!(out, "hover at probe:\n{}", h.trim());
        }
        out.trim_end().to_string()
    }
}

impl Render for CheckReport {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        // How files were checked, first: a long list of issues is cut from the end.
        for n in &self.notes {
            let _ = writeln!(out, "note: {n}");
        }
        for i in &self.issues {
            if terse {
                let _ = writeln!(
                    out,
                    "{}:{}:{} {}",
                    i.file,
                    i.diag.line,
                    i.diag.column,
                    i.diag.message.lines().next().unwrap_or("")
                );
            } else {
                let sev = serde_json::to_value(i.diag.severity)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default();
                let code = i
                    .diag
                    .code
                    .as_deref()
                    .map(|c| format!(" [{c}]"))
                    .unwrap_or_default();
                let origin = if i.origin == "lsp" {
                    String::new()
                } else {
                    format!(" ({})", i.origin)
                };
                let _ = writeln!(
                    out,
                    "{}:{}:{} {sev}{code}: {}{origin}",
                    i.file,
                    i.diag.line,
                    i.diag.column,
                    i.diag.message.lines().next().unwrap_or("")
                );
            }
        }
        // What could not be checked, one line per server (or task) and cause, instead of
        // the partial note.
        for u in &self.unchecked {
            let _ = writeln!(out, "not checked: {}", u.reason);
            if !terse && !u.examples.is_empty() {
                let more = u.files.unwrap_or(0).saturating_sub(u.examples.len());
                let _ = writeln!(
                    out,
                    "  e.g. {}{}",
                    u.examples.join(", "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                );
            }
        }
        let status = if !self.unchecked.is_empty() {
            "COULD NOT CHECK"
        } else if self.ok {
            "ok"
        } else {
            "FAILED"
        };
        let _ = write!(
            out,
            "{status}: {} files, {} errors, {} warnings",
            self.summary.files, self.summary.errors, self.summary.warnings
        );
        if self.summary.unchecked > 0 {
            let _ = write!(out, ", {} files not checked", self.summary.unchecked);
        }
        if let Some(c) = &self.next_cursor {
            let _ = write!(
                out,
                "\n… {} of {} issues shown; cursor \"{c}\" for more",
                self.issues.len(),
                self.total
            );
        }
        out
    }
}

impl Render for RunTaskResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        let code = self.exit_code.map_or("none".to_string(), |c| c.to_string());
        let _ = writeln!(
            out,
            "{} — exit {code}{}",
            self.command,
            if self.timed_out { " (timed out)" } else { "" }
        );
        for d in &self.diagnostics {
            let _ = writeln!(
                out,
                "{}:{}:{} {}",
                d.file, d.diag.line, d.diag.column, d.diag.message
            );
        }
        if !terse {
            if !self.stdout.trim().is_empty() {
                let _ = writeln!(out, "stdout:\n{}", self.stdout.trim_end());
            }
            if !self.stderr.trim().is_empty() {
                let _ = writeln!(out, "stderr:\n{}", self.stderr.trim_end());
            }
        }
        out.trim_end().to_string()
    }
}

impl Render for ExplainResult {
    fn render(&self, terse: bool) -> String {
        let mut out = self.verdict.clone();
        if let (Some(c), false) = (&self.culprit, terse) {
            out.push('\n');
            out.push_str(&c.lines.join("\n"));
        }
        out
    }
}

impl Render for ShrinkResult {
    fn render(&self, _terse: bool) -> String {
        format!(
            "{} → {} lines in {} steps{}, still: {}\n{}",
            self.original_lines,
            self.minimal_lines,
            self.steps,
            if self.partial {
                " (bound hit: best so far)"
            } else {
                ""
            },
            self.kept_error.message.lines().next().unwrap_or(""),
            self.minimal_source.trim_end()
        )
    }
}

impl Render for ExecuteCommandResult {
    fn render(&self, terse: bool) -> String {
        let mut out = serde_json::to_string_pretty(&self.result).unwrap_or_default();
        if let Some(a) = &self.applied {
            out.push('\n');
            out.push_str(&a.render(terse));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(file: &str, line: u32) -> Loc {
        Loc {
            file: file.into(),
            line,
            column: 5,
            end_line: line,
            end_column: 12,
            text: "total = compute(x, y)".into(),
            text_omitted: None,
        }
    }

    #[test]
    fn a_location_outside_the_root_says_why_it_has_no_text() {
        let outside = Loc {
            file: "/usr/include/stdio.h".into(),
            text: String::new(),
            text_omitted: Some(TextOmitted::OutsideRoot),
            ..loc("", 3)
        };
        let r = LocationsResult {
            locations: vec![loc("a.c", 1), outside],
            partial: false,
            reason: None,
        };
        let full = r.render(false);
        assert!(
            full.contains("/usr/include/stdio.h\n  3:5 (not read: outside the workspace root)"),
            "{full}"
        );
        assert!(full.contains("  1:5 total = compute(x, y)"), "{full}");
        assert_eq!(r.render(true), "a.c 1:5\n/usr/include/stdio.h 3:5");
        let json = serde_json::to_value(&r).unwrap_or_default();
        assert_eq!(json["files"][1]["text_omitted"], "outside_root");
        assert_eq!(json["files"][1]["at"], serde_json::json!([[3, 5]]));
        assert!(json["files"][0].get("text_omitted").is_none(), "{json}");
    }

    #[test]
    fn references_group_by_file_and_stay_short() {
        let locs: Vec<Loc> = (1..=3)
            .flat_map(|f| (1..=3).map(move |l| loc(&format!("pkg/mod{f}.py"), l * 10)))
            .collect();
        let r = ReferencesResult {
            total: locs.len(),
            locations: locs,
            next_cursor: None,
            partial: false,
            reason: None,
        };
        let terse = r.render(true);
        assert_eq!(terse.lines().next(), Some("pkg/mod1.py 10:5 20:5 30:5"));
        assert!(terse.chars().count() / 9 <= 12, "{terse}");
        let full = r.render(false);
        assert!(full.contains("  10:5 total = compute(x, y)"));
        assert!(full.chars().count() / 9 <= 40, "{full}");
    }

    #[test]
    fn an_empty_hover_says_so() {
        let h = HoverResult {
            contents: " \n".into(),
            range: None,
            hints: None,
        };
        assert_eq!(h.render(false), "no hover information at this position");
    }

    #[test]
    fn cap_cuts_at_a_line_and_says_so() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let capped = cap(text, 500);
        assert!(capped.chars().count() <= 700);
        assert!(capped.contains("output cut"));
        assert!(
            capped
                .lines()
                .rev()
                .nth(1)
                .is_some_and(|l| l.starts_with("line "))
        );
        assert_eq!(cap("short".into(), 500), "short");
    }
}
