//! A hook's answer: the verdict as a short report (one line per finding, `file:line:col
//! severity message`, at most `max_lines` of them), put in the harness's own output shape
//! (additional context, or its block answer), or nothing at all when nothing broke.

use crate::lsp::wire::Severity;
use crate::ops::hook::{Finding, HookVerdict};

/// How the report is written.
pub(super) struct Style {
    pub max_lines: usize,
    /// Block when the write introduced a finding at least this severe.
    pub block_on: Option<Severity>,
    /// The budget, in seconds, as the report names it.
    pub budget_secs: f64,
}

/// The report, or `None` when there is nothing to say.
pub(super) fn report(v: &HookVerdict, style: &Style) -> Option<String> {
    let later = v.later.as_ref().filter(|l| !l.is_empty());
    if v.introduced.is_empty()
        && v.present.is_empty()
        && v.unchecked == 0
        && v.notes.is_empty()
        && v.behind.is_empty()
        && later.is_none()
    {
        return None;
    }
    let mut out = Vec::new();
    let mut room = style.max_lines.max(1);
    if !v.introduced.is_empty() {
        out.push(format!(
            "lspgate: this edit introduced {}:",
            counts(&v.introduced)
        ));
        list(&mut out, &v.introduced, &mut room);
    }
    if !v.present.is_empty() {
        let files = distinct_files(&v.present);
        out.push(format!(
            "lspgate: {} after the edit ({} no earlier diagnostics to compare with):",
            counts(&v.present),
            if files.len() == 1 {
                format!("{} had", files[0])
            } else {
                "these files had".to_string()
            }
        ));
        list(&mut out, &v.present, &mut room);
    }
    if v.unchecked > 0 {
        out.push(format!(
            "lspgate: {} not checked yet within {} s: {}; checking goes on, and what it finds \
             comes with the next answer",
            plural(v.unchecked, "file"),
            style.budget_secs,
            names(&v.unchecked_files, v.unchecked)
        ));
    }
    if !v.behind.is_empty() {
        out.push(format!(
            "lspgate: the edit changed what is inferred of {}, not {}: the files that use {} \
             are being checked behind this answer, and what they show comes with the next answer",
            names(&v.behind, v.behind.len()),
            if v.behind.len() == 1 {
                "its declaration"
            } else {
                "their declarations"
            },
            if v.behind.len() == 1 { "it" } else { "them" },
        ));
    }
    if let Some(l) = later {
        out.push(format!(
            "lspgate: since your edit of {}, {}:",
            names(&l.from, l.from.len()),
            counts(&l.introduced)
        ));
        list(&mut out, &l.introduced, &mut room);
        if !l.unchecked.is_empty() {
            out.push(format!(
                "lspgate: still being checked: {}",
                names(&l.unchecked, l.unchecked.len())
            ));
        }
    }
    for n in v.notes.iter().take(3) {
        out.push(format!("lspgate: not checked: {n}"));
    }
    Some(out.join("\n"))
}

/// The turn-end gate's report, or `None` when the turn may end: every error the session's
/// edits introduced that is still present and not named before, one per line.
pub(super) fn gate(v: &HookVerdict, style: &Style) -> Option<String> {
    if v.introduced.is_empty() {
        return None;
    }
    let mut out = vec![format!(
        "lspgate: your edits this session introduced {} that {} still present; fix {} before \
         you finish:",
        counts(&v.introduced),
        if v.introduced.len() == 1 { "is" } else { "are" },
        if v.introduced.len() == 1 {
            "it"
        } else {
            "them"
        },
    )];
    let mut room = style.max_lines.max(1);
    list(&mut out, &v.introduced, &mut room);
    if v.unchecked > 0 {
        out.push(format!(
            "lspgate: {} not checked within {} s: {}",
            plural(v.unchecked, "file"),
            style.budget_secs,
            names(&v.unchecked_files, v.unchecked)
        ));
    }
    Some(out.join("\n"))
}

/// `3 files`, `1 file`.
fn plural(n: usize, one: &str) -> String {
    format!("{n} {one}{}", if n == 1 { "" } else { "s" })
}

/// Up to five of `files`, and how many more of `all`.
fn names(files: &[String], all: usize) -> String {
    let shown: Vec<&str> = files.iter().take(5).map(String::as_str).collect();
    let more = all.saturating_sub(shown.len());
    match (shown.is_empty(), more) {
        (true, _) => "the files that import the written ones".into(),
        (false, 0) => shown.join(", "),
        (false, n) => format!("{} and {n} more", shown.join(", ")),
    }
}

/// `2 errors and 1 warning`.
fn counts(list: &[Finding]) -> String {
    let mut parts = Vec::new();
    for (sev, one) in [
        (Severity::Error, "error"),
        (Severity::Warning, "warning"),
        (Severity::Info, "information"),
        (Severity::Hint, "hint"),
    ] {
        let n = list.iter().filter(|f| f.diag.severity == sev).count();
        match n {
            0 => {}
            1 => parts.push(format!("1 {one}")),
            n if sev == Severity::Info => parts.push(format!("{n} {one}")),
            n => parts.push(format!("{n} {one}s")),
        }
    }
    match parts.len() {
        0 => "nothing".into(),
        1 => parts.remove(0),
        _ => {
            let last = parts.pop().unwrap_or_default();
            format!("{} and {last}", parts.join(", "))
        }
    }
}

fn distinct_files(list: &[Finding]) -> Vec<&str> {
    let mut files: Vec<&str> = list.iter().map(|f| f.file.as_str()).collect();
    files.dedup();
    files
}

/// One line per finding while `room` lasts, then how many more.
fn list(out: &mut Vec<String>, findings: &[Finding], room: &mut usize) {
    for (i, f) in findings.iter().enumerate() {
        if *room == 0 {
            out.push(format!("… {} more", findings.len() - i));
            return;
        }
        *room -= 1;
        let d = &f.diag;
        let message = d.message.lines().next().unwrap_or("");
        let code = d
            .code
            .as_deref()
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default();
        out.push(format!(
            "{}:{}:{} {} {}{code}",
            f.file,
            d.line,
            d.column,
            severity(d.severity),
            crop(message, 300)
        ));
    }
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "info",
        Severity::Hint => "hint",
    }
}

fn crop(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Whether the verdict asks for the harness's block answer.
pub(super) fn blocks(v: &HookVerdict, style: &Style) -> bool {
    style
        .block_on
        .is_some_and(|at| v.introduced.iter().any(|f| f.diag.severity <= at))
}

/// The harness's answer carrying `report` (`event`: the event's name as the harness sent it).
#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::types::Diag;

    fn finding(file: &str, line: u32, severity: Severity, message: &str) -> Finding {
        Finding {
            file: file.into(),
            server: "pyright".into(),
            diag: Diag {
                severity,
                line,
                column: 5,
                end_line: line,
                end_column: 9,
                code: Some("reportX".into()),
                source: None,
                message: message.into(),
            },
        }
    }

    fn style(max_lines: usize) -> Style {
        Style {
            max_lines,
            block_on: Some(Severity::Error),
            budget_secs: 5.0,
        }
    }

    #[test]
    fn nothing_broke_says_nothing_and_a_report_is_bounded() {
        assert!(report(&HookVerdict::default(), &style(20)).is_none());
        let v = HookVerdict {
            introduced: vec![
                finding("a.py", 3, Severity::Error, "bad\nsecond line"),
                finding("b.py", 7, Severity::Warning, "meh"),
                finding("b.py", 9, Severity::Error, "worse"),
            ],
            ..Default::default()
        };
        let text = report(&v, &style(2)).unwrap();
        assert_eq!(
            text,
            "lspgate: this edit introduced 2 errors and 1 warning:\n\
             a.py:3:5 error bad [reportX]\nb.py:7:5 warning meh [reportX]\n… 1 more"
        );
        assert!(blocks(&v, &style(2)));
        let warn_only = HookVerdict {
            introduced: vec![finding("b.py", 7, Severity::Warning, "meh")],
            ..Default::default()
        };
        assert!(!blocks(&warn_only, &style(2)));
    }

    #[test]
    fn each_harness_gets_its_own_shape() {
        let answer = |h: &str, event: &str, report: &str, block: bool| {
            let def = crate::cli::harnesses::by_name(h).unwrap();
            (def.hooks.as_ref().unwrap().answer)(event, report, block)
        };
        let a = answer("claude-code", "PostToolUse", "r", false);
        assert_eq!(a["hookSpecificOutput"]["additionalContext"], "r");
        assert_eq!(a["hookSpecificOutput"]["hookEventName"], "PostToolUse");
        assert_eq!(
            answer("codex", "PostToolUse", "r", true)["decision"],
            "block"
        );
        assert_eq!(answer("gemini", "AfterTool", "r", true)["decision"], "deny");
        let c = answer("cursor", "afterFileEdit", "r", true);
        let said = c["additional_context"].as_str().unwrap();
        assert!(said.starts_with("r\n") && said.contains("no answer that blocks"));
    }
}
