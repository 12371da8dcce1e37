//! What `check` asks of a server for many files at once, where the server offers it: pyright's
//! workspace diagnostics pass on a server's first check of the whole workspace, and tsserver's
//! diagnostics of files it knows without their being opened. Also what a check says it did
//! for JavaScript that no project type-checks.
//!
//! Measured (see README, Performance): opening every file in typescript-language-server makes
//! it run its own diagnostics of every open file beside lspgate's (rxjs, 502 files: 8.2 s after
//! the project loaded, against 2.4 s asking tsserver for the same files unopened); pyright's
//! workspace pass costs what its CLI costs, where opening and pulling every file costs about 10%
//! more.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use url::Url;

use super::super::types::Diag;
use crate::lsp::WorkspaceReport;
use crate::lsp::wire::WireDiagnostic;
use crate::registry::Server;
use crate::text::{self, Encoding, LineIndex};

/// A server instance, as a key (the same `Arc<Server>` for every file it serves).
pub(super) fn key(server: &Arc<Server>) -> usize {
    Arc::as_ptr(server) as usize
}

/// A workspace pass in flight, shared by the files waiting for it: every file's diagnostics, or
/// `None` when it could not be had (they are then checked one by one).
pub(super) type Pass = Shared<BoxFuture<'static, Option<Arc<WorkspaceReport>>>>;

/// Starts `server`'s workspace pass when it offers one and this process has not had it yet.
/// `quiet` bounds the wait for each sign of progress.
pub(super) fn start_pass(server: &Arc<Server>, quiet: Duration) -> Option<Pass> {
    let client = server.client();
    if !client.claim_workspace_pass() {
        return None;
    }
    let name = server.name.clone();
    let pass = async move {
        let started = std::time::Instant::now();
        match client.workspace_diagnostics(quiet).await {
            Ok(report) => {
                tracing::info!(
                    server = %name,
                    files = report.len(),
                    secs = started.elapsed().as_secs_f64(),
                    "workspace diagnostics pass"
                );
                Some(Arc::new(report))
            }
            Err(e) => {
                tracing::info!(server = %name, "no workspace diagnostics pass ({e}): file by file");
                None
            }
        }
    };
    Some(pass.boxed().shared())
}

/// Diagnostics of `path` in the server's encoding, as `Diag`s against the file's text on disk
/// (`None` when it cannot be read).
pub(super) fn disk_diags(
    path: &Path,
    encoding: Encoding,
    list: Vec<WireDiagnostic>,
) -> Option<Vec<Diag>> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let index = LineIndex::new(&text);
    Some(
        list.into_iter()
            .map(|d| {
                let (line, column) = text::from_wire(
                    &text,
                    &index,
                    d.range.start.line,
                    d.range.start.character,
                    encoding,
                );
                let (end_line, end_column) = text::from_wire(
                    &text,
                    &index,
                    d.range.end.line,
                    d.range.end.character,
                    encoding,
                );
                Diag {
                    severity: d.severity,
                    line,
                    column,
                    end_line,
                    end_column,
                    code: d.code,
                    source: d.source,
                    message: d.message,
                }
            })
            .collect(),
    )
}

/// What a pass said about `path`, if it said anything.
pub(super) fn from_pass(
    report: &WorkspaceReport,
    path: &Path,
    encoding: Encoding,
) -> Option<Vec<Diag>> {
    let uri = Url::from_file_path(path).ok()?;
    disk_diags(path, encoding, report.get(&uri)?.clone())
}

/// Whether tsserver type-checks a JavaScript file: it does under `// @ts-check`, or in a
/// project (`project`: its tsconfig.json or jsconfig.json) whose config turns `checkJs` on;
/// otherwise (loose files in an inferred project, `checkJs` off) it reports syntax errors and
/// the few errors TypeScript gives for plain JavaScript, not types. A config's `extends` is not
/// followed: `checkJs` set only in a base config reads as off.
pub(super) fn javascript_types_checked(file_text: &str, project: &str) -> bool {
    if file_text.contains("@ts-nocheck") {
        return false;
    }
    if file_text.contains("@ts-check") {
        return true;
    }
    let config = Path::new(project);
    if project.starts_with("/dev/null/") || !config.is_file() {
        return false;
    }
    std::fs::read_to_string(config)
        .is_ok_and(|c| regex::Regex::new(r#""checkJs"\s*:\s*true"#).is_ok_and(|re| re.is_match(&c)))
}

/// The notes of a check: per server, how many JavaScript files it checked for syntax only.
pub(super) fn syntax_only_notes(counts: HashMap<String, Vec<String>>) -> Vec<String> {
    let mut notes: Vec<String> = counts
        .into_iter()
        .map(|(server, mut files)| {
            files.sort();
            let n = files.len();
            let example = files.first().cloned().unwrap_or_default();
            format!(
                "{server}: {} ({example}{}) in no project that type-checks JavaScript (no \
                 tsconfig.json or jsconfig.json with `checkJs`, no `// @ts-check`): syntax and \
                 the few errors TypeScript reports in plain JavaScript were checked, not types",
                if n == 1 {
                    "1 JavaScript file".to_string()
                } else {
                    format!("{n} JavaScript files")
                },
                if n > 1 { ", …" } else { "" },
            )
        })
        .collect();
    notes.sort();
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn javascript_is_type_checked_only_when_asked_to() {
        let dir = tempfile::tempdir().unwrap();
        let on = dir.path().join("jsconfig.json");
        std::fs::write(&on, "{\"compilerOptions\": {\"checkJs\" : true}}").unwrap();
        let off = dir.path().join("tsconfig.json");
        std::fs::write(&off, "{\"compilerOptions\": {\"allowJs\": true}}").unwrap();
        let inferred = "/dev/null/inferredProject1*";
        assert!(!javascript_types_checked("let a = 1;", inferred));
        assert!(javascript_types_checked(
            "// @ts-check\nlet a = 1;",
            inferred
        ));
        assert!(javascript_types_checked(
            "let a = 1;",
            &on.to_string_lossy()
        ));
        assert!(!javascript_types_checked(
            "// @ts-nocheck\n",
            &on.to_string_lossy()
        ));
        assert!(!javascript_types_checked(
            "let a = 1;",
            &off.to_string_lossy()
        ));
        let notes = syntax_only_notes(HashMap::from([(
            "builtin/typescript-language-server".to_string(),
            vec!["b.js".to_string(), "a.js".to_string()],
        )]));
        assert!(
            notes[0].starts_with(
                "builtin/typescript-language-server: 2 JavaScript files (a.js, …) in no project"
            ),
            "{notes:?}"
        );
    }

    #[test]
    fn diagnostics_convert_against_the_disk_text() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.py");
        std::fs::write(&f, "é = 1\nx: str = 1\n").unwrap();
        let d = WireDiagnostic {
            range: crate::lsp::wire::WireRange {
                start: crate::lsp::wire::WirePos {
                    line: 1,
                    character: 9,
                },
                end: crate::lsp::wire::WirePos {
                    line: 1,
                    character: 10,
                },
            },
            severity: crate::lsp::wire::Severity::Error,
            code: None,
            source: None,
            message: "m".into(),
            raw: serde_json::Value::Null,
        };
        let out = disk_diags(&f, Encoding::Utf16, vec![d]).unwrap();
        assert_eq!((out[0].line, out[0].column, out[0].end_column), (2, 10, 11));
        assert!(disk_diags(&dir.path().join("gone.py"), Encoding::Utf16, vec![]).is_none());
    }
}
