//! Text renderings of tool results: a compact default and a minimal `terse` form, both capped.
//! Here the trait, the cap and the pieces several tools show (locations grouped per file, so a
//! reference costs a few characters, not a path each; notes; diagnostics of a change), and the
//! text of the results several tools share (`EditResult`, `ServersResult`); each tool's own
//! result is rendered in its file under `ops/tools/`.

use std::borrow::Cow;
use std::fmt::Write;

use serde_json::Value;

use super::types::{EditResult, FileDiag, Loc, ServersResult};

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
pub(crate) fn render_locs(out: &mut String, locs: &[Loc], terse: bool) {
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
pub(crate) fn line_text(l: &Loc) -> Cow<'_, str> {
    match l.text_omitted {
        Some(why) => Cow::Borrowed(why.says()),
        None => short(&l.text, 60),
    }
}

/// `s` cut to `max` characters, an ellipsis saying so.
pub(crate) fn short(s: &str, max: usize) -> Cow<'_, str> {
    if s.chars().count() <= max {
        Cow::Borrowed(s)
    } else {
        let cut: String = s.chars().take(max - 1).collect();
        Cow::Owned(format!("{cut}…"))
    }
}
/// `partial: why` when a server could not finish.
pub(crate) fn partial_note(out: &mut String, partial: bool, reason: &Option<String>) {
    if partial {
        let _ = writeln!(
            out,
            "partial: {}",
            reason.as_deref().unwrap_or("the server was not ready")
        );
    }
}

/// How many of how many items are shown, and the cursor for the rest.
pub(crate) fn more_note(out: &mut String, shown: usize, total: usize, next: &Option<String>) {
    if let Some(c) = next {
        let _ = writeln!(out, "… {shown} of {total} shown; cursor \"{c}\" for more");
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

/// The diagnostics a change introduced or resolved, under `label` (terse: errors and warnings
/// only).
pub(crate) fn render_diags(
    out: &mut String,
    label: &str,
    list: &Option<Vec<FileDiag>>,
    terse: bool,
) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
