//! A check's report: the servers' and tasks' findings merged, listed at the asked severity and
//! paged (CheckReport v2), its exit code and SARIF, and the reasons it gives for what failed.

use std::collections::HashSet;

use serde_json::Value;

use super::super::paginate;
use super::super::types::*;
use crate::error::ToolError;
use crate::gates;

impl CheckReport {
    /// `lspgate check`'s exit code: 2 when anything could not be checked (whatever was found
    /// besides), else 1 when something was found at the asked severity, else 0.
    pub fn exit_code(&self) -> i32 {
        if !self.unchecked.is_empty() {
            2
        } else if !self.ok {
            1
        } else {
            0
        }
    }

    /// The report as SARIF 2.1.0: findings in one run per origin; what could not be checked
    /// as `toolExecutionNotifications` of lspgate's own run, whose invocation is
    /// `executionSuccessful: false` then (and every run's with it).
    pub fn sarif(&self) -> Value {
        let findings: Vec<gates::sarif::Finding> = self
            .issues
            .iter()
            .map(|i| gates::sarif::Finding {
                file: &i.file,
                line: i.diag.line,
                column: i.diag.column,
                end_line: i.diag.end_line,
                end_column: i.diag.end_column,
                level: match i.diag.severity {
                    Severity::Error => "error",
                    Severity::Warning => "warning",
                    _ => "note",
                },
                rule: i.diag.code.as_deref(),
                message: &i.diag.message,
                origin: i.diag.source.as_deref().unwrap_or(&i.origin),
            })
            .collect();
        let notifications = self
            .unchecked
            .iter()
            .map(|u| gates::sarif::Notification {
                id: &u.cause,
                message: &u.reason,
                file: u.file.as_deref(),
                properties: serde_json::to_value(u).unwrap_or(Value::Null),
            })
            .collect();
        gates::sarif::log(
            &findings,
            &gates::sarif::Execution {
                successful: self.unchecked.is_empty(),
                exit_code: self.exit_code(),
                notifications,
            },
        )
    }
}

/// What the servers' part of a check counted, for its report.
pub(super) struct Tally {
    pub(super) checked: usize,
    pub(super) not_checked: usize,
    pub(super) reused: usize,
    pub(super) notes: Vec<String>,
}

/// The servers' diagnostics as check issues of origin `lsp`.
pub(super) fn lsp_issues(files: Vec<FileDiagnostics>) -> Vec<CheckIssue> {
    files
        .into_iter()
        .flat_map(|f| {
            let file = f.file;
            f.diagnostics.into_iter().map(move |diag| CheckIssue {
                file: file.clone(),
                diag,
                origin: "lsp".into(),
            })
        })
        .collect()
}

/// Merges issues (the same finding from two origins once, at its most severe: gopls's printf
/// analyzer warns where `go vet` fails) and sorts them by file and position.
pub(super) fn merge_issues(issues: &mut Vec<CheckIssue>) {
    issues.sort_by_key(|i| i.diag.severity);
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
}

/// The report of a check: summary, verdict at the asked severity, one page of the issues.
pub(super) fn check_report(
    p: &CheckParams,
    issues: Vec<CheckIssue>,
    unchecked: Vec<Unchecked>,
    tally: Tally,
) -> Result<CheckReport, ToolError> {
    let fail_at = p.severity.unwrap_or(Severity::Error);
    let count = |s: Severity| issues.iter().filter(|i| i.diag.severity == s).count();
    let summary = CheckSummary {
        files: tally.checked,
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        unchecked: tally.not_checked,
        reused: tally.reused,
    };
    let found_any = issues.iter().any(|i| i.diag.severity <= fail_at);
    // Listed (text and structured alike): errors and warnings, and lesser findings only when
    // the asked severity reaches them (215 deprecation hints are not a check's news).
    let listed = fail_at.max(Severity::Warning);
    let issues: Vec<CheckIssue> = issues
        .into_iter()
        .filter(|i| i.diag.severity <= listed)
        .collect();
    let reason = (!unchecked.is_empty()).then(|| reasons(&unchecked));
    let (issues, total, next_cursor) = paginate(issues, p.limit, p.cursor.as_deref(), 200)?;
    Ok(CheckReport {
        version: 2,
        ok: !found_any && unchecked.is_empty(),
        summary,
        issues,
        total,
        next_cursor,
        notes: tally.notes,
        partial: !unchecked.is_empty(),
        reason,
        unchecked,
    })
}

/// Why a task failed that printed no error its parser recognises: how it ended, its output's end.
pub(super) fn task_failure(task: &gates::Task, run: &gates::TaskRun) -> String {
    let how = match run.exit_code {
        Some(c) => format!("exited with {c}"),
        None => "was killed by a signal".into(),
    };
    let parser = match &task.parser {
        Some(p) => format!("its parser `{p}` recognises"),
        None => "(it has no parser)".into(),
    };
    let tail = tail(if run.stderr.trim().is_empty() {
        &run.stdout
    } else {
        &run.stderr
    });
    format!(
        "task `{}` {how} and printed no error {parser}{}",
        task.name,
        if tail.is_empty() {
            String::new()
        } else {
            format!("; its output ends: {tail}")
        }
    )
}

/// `unchecked` entries' reasons as one `reason`.
pub(super) fn reasons(unchecked: &[Unchecked]) -> String {
    unchecked
        .iter()
        .map(|u| u.reason.as_str())
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn files_phrase(n: usize) -> String {
    if n == 1 {
        "1 file".into()
    } else {
        format!("{n} files")
    }
}

/// The last lines of a task's output, for a reason (at most 3 lines, 300 characters).
pub(super) fn tail(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let last = lines[lines.len().saturating_sub(3)..].join(" | ");
    let extra = last.chars().count().saturating_sub(300);
    match last.char_indices().nth(extra) {
        Some((i, _)) if extra > 0 => format!("…{}", &last[i..]),
        _ => last,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_reason_quotes_the_end_of_its_output() {
        assert_eq!(tail("a\n\nb\nc\nd\n"), "b | c | d");
        assert_eq!(tail(""), "");
        let long = "x".repeat(400);
        let t = tail(&long);
        assert!(t.starts_with('…') && t.chars().count() == 301, "{t}");
    }

    #[test]
    fn one_finding_from_two_origins_is_kept_once_at_its_most_severe() {
        let issue = |severity, origin: &str, line| CheckIssue {
            file: "doc/vet.go".into(),
            diag: crate::ops::types::Diag {
                severity,
                line,
                column: 9,
                end_line: line,
                end_column: 12,
                code: None,
                source: None,
                message: "Sprintf format %d has arg of wrong type".into(),
            },
            origin: origin.into(),
        };
        let mut issues = vec![
            issue(Severity::Warning, "lsp", 6),
            issue(Severity::Warning, "lsp", 2),
            issue(Severity::Error, "go", 6),
        ];
        merge_issues(&mut issues);
        let kept: Vec<(u32, &str)> = issues
            .iter()
            .map(|i| (i.diag.line, i.origin.as_str()))
            .collect();
        assert_eq!(kept, [(2, "lsp"), (6, "go")]);
    }
}
