//! What `check` asks of a server for many files at once, where the server offers it: pyright's
//! workspace diagnostics pass on a server's first check of the whole workspace, and tsserver's
//! diagnostics of files it knows without their being opened. Also what a check says it did
//! for JavaScript that no project type-checks.
//!
//! Measured (docs/gates.md): opening every file in typescript-language-server makes
//! it run its own diagnostics of every open file beside lspgate's (rxjs, 502 files: 8.2 s after
//! the project loaded, against 2.4 s asking tsserver for the same files unopened); pyright's
//! workspace pass costs what its CLI costs, where opening and pulling every file costs about 10%
//! more.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};
use url::Url;

use super::super::types::Diag;
use super::super::{read_in_root, text_in_root};
use crate::lsp::WorkspaceReport;
use crate::lsp::wire::{WireDiagnostic, WirePos};
use crate::registry::Server;
use crate::text::{self, Encoding, LineIndex};
use crate::watch::FileVersion;
use crate::workspace::Root;

/// A server instance, as a key (the same `Arc<Server>` for every file it serves).
pub(super) fn key(server: &Arc<Server>) -> usize {
    Arc::as_ptr(server) as usize
}

/// A workspace pass in flight, shared by the files waiting for it: every file's diagnostics, or
/// `None` when it could not be had (they are then checked one by one).
pub(super) type Pass = Shared<BoxFuture<'static, Option<Arc<PassReport>>>>;

/// What a workspace pass said, and from when: the server reports each file as it was when it
/// reached it, so a file changed since `started` is not covered by the pass.
pub(super) struct PassReport {
    /// No later than the moment every change before the pass was delivered to the server
    /// (the caller syncs after taking it), less `PASS_CLOCK_SLACK`.
    pub started: SystemTime,
    pub files: WorkspaceReport,
}

/// How far a file's timestamps may lag the clock lspgate reads: the kernel stamps files from
/// a coarse clock (one tick, 1–10 ms, behind). A file changed up to this long before a pass
/// started is asked afresh rather than taken from the pass.
pub(super) const PASS_CLOCK_SLACK: Duration = Duration::from_millis(100);

/// When a pass starting now began, for `start_pass`: to be taken before the changes on disk are
/// synced to the servers.
pub(super) fn pass_start() -> SystemTime {
    let now = SystemTime::now();
    now.checked_sub(PASS_CLOCK_SLACK).unwrap_or(now)
}

/// Starts `server`'s workspace pass when it offers one and this process has not had it yet.
/// `quiet` bounds the wait for each sign of progress; `started` is from `pass_start`, taken
/// before what changed on disk was last synced to the server.
pub(super) fn start_pass(
    server: &Arc<Server>,
    quiet: Duration,
    started: SystemTime,
) -> Option<Pass> {
    let client = server.client();
    if !client.claim_workspace_pass() {
        return None;
    }
    let name = server.name.clone();
    let pass = async move {
        let clock = std::time::Instant::now();
        match client.workspace_diagnostics(quiet).await {
            Ok(files) => {
                tracing::info!(
                    server = %name,
                    files = files.len(),
                    secs = clock.elapsed().as_secs_f64(),
                    "workspace diagnostics pass"
                );
                Some(Arc::new(PassReport { started, files }))
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
/// (`None` when it cannot be read, or leads outside `root`: see `ops::read_in_root`).
pub(super) fn disk_diags(
    root: &Root,
    path: &Path,
    encoding: Encoding,
    list: Vec<WireDiagnostic>,
) -> Option<Vec<Diag>> {
    let bytes = read_in_root(root, path).ok()??;
    Some(convert(&bytes, encoding, list))
}

/// Diagnostics in the server's encoding as `Diag`s against `bytes`, a file's text.
fn convert(bytes: &[u8], encoding: Encoding, list: Vec<WireDiagnostic>) -> Vec<Diag> {
    let text = String::from_utf8_lossy(bytes);
    let index = LineIndex::new(&text);
    let at = |p: WirePos| text::from_wire(&text, &index, p.line, p.character, encoding);
    list.into_iter()
        .map(|d| {
            let ((line, column), (end_line, end_column)) = (at(d.range.start), at(d.range.end));
            super::super::diag_at(d, (line, column, end_line, end_column))
        })
        .collect()
}

/// What a pass said about `path`, if it said anything about the file as it is: `None` when
/// the pass did not report it, it cannot be read (or leads outside `root`), or it changed at or
/// after the pass started (the server may have reported it as it was before; it is then opened
/// and asked afresh).
pub(super) fn from_pass(
    root: &Root,
    report: &PassReport,
    path: &Path,
    encoding: Encoding,
) -> Option<Vec<Diag>> {
    let uri = Url::from_file_path(path).ok()?;
    let list = report.files.get(&uri)?;
    // Read, then stat: a change that the text read may hold moved the file's ctime first.
    let bytes = read_in_root(root, path).ok()??;
    let meta = std::fs::metadata(path).ok()?;
    if FileVersion::of(&meta).changed_since(report.started) {
        tracing::debug!(file = %path.display(), "changed since the workspace pass began: asked afresh");
        return None;
    }
    Some(convert(&bytes, encoding, list.clone()))
}

/// Whether tsserver type-checks a JavaScript file: it does under `// @ts-check`, or in a
/// project (`project`: its tsconfig.json or jsconfig.json) whose config turns `checkJs` on;
/// otherwise (loose files in an inferred project, `checkJs` off) it reports syntax errors and
/// the few errors TypeScript gives for plain JavaScript, not types. A config's `extends` is not
/// followed: `checkJs` set only in a base config reads as off, and so does a config outside
/// `root` (tsserver names it; lspgate reads no file outside the root).
pub(super) fn javascript_types_checked(root: &Root, file_text: &str, project: &str) -> bool {
    if file_text.contains("@ts-nocheck") {
        return false;
    }
    if file_text.contains("@ts-check") {
        return true;
    }
    let config = Path::new(project);
    if project.starts_with("/dev/null/") || !config.is_absolute() {
        return false;
    }
    text_in_root(root, config).is_ok_and(|c| {
        c.is_some_and(|c| {
            regex::Regex::new(r#""checkJs"\s*:\s*true"#).is_ok_and(|re| re.is_match(&c))
        })
    })
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
    use std::os::unix::fs::MetadataExt;

    /// An error at characters 9–10 of `line` (0-based), as a server sends it.
    fn error_at(line: u32) -> WireDiagnostic {
        let pos = |character| crate::lsp::wire::WirePos { line, character };
        WireDiagnostic {
            range: crate::lsp::wire::WireRange {
                start: pos(9),
                end: pos(10),
            },
            severity: crate::lsp::wire::Severity::Error,
            code: None,
            source: None,
            message: "m".into(),
            raw: serde_json::Value::Null,
        }
    }

    #[test]
    fn javascript_is_type_checked_only_when_asked_to() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("ws")).unwrap();
        let root = Root::new(&dir.path().join("ws")).unwrap();
        let on = root.path().join("jsconfig.json");
        std::fs::write(&on, "{\"compilerOptions\": {\"checkJs\" : true}}").unwrap();
        let off = root.path().join("tsconfig.json");
        std::fs::write(&off, "{\"compilerOptions\": {\"allowJs\": true}}").unwrap();
        let inferred = "/dev/null/inferredProject1*";
        assert!(!javascript_types_checked(&root, "let a = 1;", inferred));
        assert!(javascript_types_checked(
            &root,
            "// @ts-check\nlet a = 1;",
            inferred
        ));
        assert!(javascript_types_checked(
            &root,
            "let a = 1;",
            &on.to_string_lossy()
        ));
        assert!(!javascript_types_checked(
            &root,
            "// @ts-nocheck\n",
            &on.to_string_lossy()
        ));
        assert!(!javascript_types_checked(
            &root,
            "let a = 1;",
            &off.to_string_lossy()
        ));
        // A config outside the root is not read: as if `checkJs` were off.
        let outside = dir.path().join("tsconfig.json");
        std::fs::write(&outside, "{\"compilerOptions\": {\"checkJs\": true}}").unwrap();
        assert!(!javascript_types_checked(
            &root,
            "let a = 1;",
            &outside.to_string_lossy()
        ));
        let link = root.path().join("linked.json");
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        assert!(!javascript_types_checked(
            &root,
            "let a = 1;",
            &link.to_string_lossy()
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

    /// A pass reports a file as the server found it: a file changed at or after the pass
    /// began is not taken from it (it is opened and asked afresh), one changed before is.
    #[test]
    fn a_file_changed_since_the_pass_began_is_not_taken_from_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let f = root.path().join("a.py");
        std::fs::write(&f, "x: str = 1\n").unwrap();
        let d = error_at(0);
        let uri = Url::from_file_path(&f).unwrap();
        let report = |started| PassReport {
            started,
            files: WorkspaceReport::from([(uri.clone(), vec![d.clone()])]),
        };
        let meta = std::fs::metadata(&f).unwrap();
        let ctime =
            SystemTime::UNIX_EPOCH + Duration::new(meta.ctime() as u64, meta.ctime_nsec() as u32);
        let changed = ctime.max(meta.modified().unwrap());
        // Changed before the pass: covered.
        let out = from_pass(
            &root,
            &report(changed + Duration::from_secs(1)),
            &f,
            Encoding::Utf16,
        );
        assert_eq!(out.map(|o| o.len()), Some(1));
        // Changed at or after: asked afresh.
        assert!(from_pass(&root, &report(changed), &f, Encoding::Utf16).is_none());
        assert!(
            from_pass(
                &root,
                &report(changed - Duration::from_secs(1)),
                &f,
                Encoding::Utf16
            )
            .is_none()
        );
        // A write right after a pass starts, as `check` takes the start.
        let started = pass_start();
        std::fs::write(&f, "\n\nx: str = 1\n").unwrap();
        assert!(from_pass(&root, &report(started), &f, Encoding::Utf16).is_none());
        // A file the pass did not report is not covered either.
        let other = root.path().join("b.py");
        std::fs::write(&other, "y = 1\n").unwrap();
        assert!(
            from_pass(
                &root,
                &report(ctime + Duration::from_secs(60)),
                &other,
                Encoding::Utf16
            )
            .is_none()
        );
    }

    #[test]
    fn diagnostics_convert_against_the_disk_text() {
        let dir = tempfile::tempdir().unwrap();
        let root = Root::new(dir.path()).unwrap();
        let f = root.path().join("a.py");
        std::fs::write(&f, "é = 1\nx: str = 1\n").unwrap();
        let d = error_at(1);
        let out = disk_diags(&root, &f, Encoding::Utf16, vec![d]).unwrap();
        assert_eq!((out[0].line, out[0].column, out[0].end_column), (2, 10, 11));
        assert!(disk_diags(&root, &root.path().join("gone.py"), Encoding::Utf16, vec![]).is_none());
        // Through a symlink leading out of the root: not read.
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("a.py"), "é = 1\nx: str = 1\n").unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        let d = error_at(1);
        assert!(
            disk_diags(
                &root,
                &root.path().join("out/a.py"),
                Encoding::Utf16,
                vec![d]
            )
            .is_none()
        );
    }
}
