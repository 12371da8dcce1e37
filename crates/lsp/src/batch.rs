//! Whole-workspace work a server offers for `check`: pyright's workspace diagnostics pass, and
//! tsserver's diagnostics of files nobody opened.
//!
//! pyright, in its `workspace` diagnostic mode, answers `workspace/diagnostic` by checking every
//! file of its workspace the way its own CLI does (measured on Django 5.2: the same CPU time as
//! `pyright` itself, where opening every file and pulling each costs about 10% more), streaming
//! each file's report as a partial result and its remaining count as work-done progress. It
//! never answers the request itself (a later one would end it): the pass is over when that
//! progress ends, and the request is then cancelled. A pass re-checks everything, so it is for a
//! server's first whole-workspace check only; afterwards pyright has every file checked and
//! answers per-file pulls from what it knows (Django: 0.5 s for 883 files).
//!
//! A pass is also bounded by the server's silence (`quiet`), and claimed once per server process
//! (`claim_workspace_pass`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use lsp_types as lt;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use url::Url;

use super::LspError;
use super::client::{Dialect, LspClient};
use super::convert::convert_diag;
use super::wire::WireDiagnostic;

/// Each file's diagnostics from a workspace pass.
pub type WorkspaceReport = HashMap<Url, Vec<WireDiagnostic>>;

impl LspClient {
    /// Whether the server checks its whole workspace on `workspace/diagnostic` (pyright
    /// registers that in its `workspace` diagnostic mode).
    pub fn offers_workspace_diagnostics(&self) -> bool {
        self.state.workspace_diagnostics.load(Ordering::SeqCst)
            || self
                .caps
                .get("diagnosticProvider")
                .and_then(|d| d.get("workspaceDiagnostics"))
                .and_then(Value::as_bool)
                == Some(true)
    }

    /// Claims this process's one workspace pass: true the first time only (a restarted
    /// process is a new client, and may have one again).
    pub fn claim_workspace_pass(&self) -> bool {
        self.offers_workspace_diagnostics()
            && !self.state.workspace_pass.swap(true, Ordering::SeqCst)
    }

    /// Whether the server gives a file's diagnostics without the file being opened in it
    /// (tsserver, for the files of the projects it has loaded: their text is the disk's, or
    /// the open document's that lspgate keeps in step with the disk).
    pub fn diagnoses_unopened(&self) -> bool {
        self.opts.dialect == Dialect::Tsserver
    }

    /// One workspace diagnostics pass: every file's report, the latest for each. Fails with
    /// `Timeout` when the server sends neither a report nor progress for `quiet`, and with the
    /// server's error if it refuses; the caller then checks file by file.
    pub async fn workspace_diagnostics(
        &self,
        quiet: Duration,
    ) -> Result<WorkspaceReport, LspError> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let results = format!("lspgate/workspace-diagnostics/{n}");
        let work = format!("lspgate/workspace-diagnostics/{n}/progress");
        let (tx, mut rx) = mpsc::unbounded_channel();
        let _tokens = Tokens::register(self, [results.clone(), work.clone()], tx);
        let request = self.transport.request(
            "workspace/diagnostic",
            json!({"previousResultIds": [], "partialResultToken": results, "workDoneToken": work}),
            // Bounded by `quiet` below, not by the length of the whole pass.
            Duration::from_secs(24 * 3600),
        );
        tokio::pin!(request);
        // Not a request held in the view: a pass that saw an overlay is not used.
        let mark = self.state.view.get().map(|v| v.mark());
        let mut found = WorkspaceReport::new();
        loop {
            tokio::select! {
                answer = &mut request => {
                    // A server that answers: its items complete what it streamed.
                    add_reports(&mut found, &answer?, &self.opts.inside);
                    return self.unseen(mark, found);
                }
                next = tokio::time::timeout(quiet, rx.recv()) => match next {
                    Err(_) => {
                        return Err(LspError::Timeout {
                            method: "workspace/diagnostic (no progress)".into(),
                            after: quiet,
                        });
                    }
                    Ok(None) => {
                        return Err(LspError::StreamClosed {
                            reason: "the workspace diagnostics pass ended".into(),
                            stderr: self.stderr_tail(),
                        });
                    }
                    Ok(Some((token, value))) if token == results => {
                        add_reports(&mut found, &value, &self.opts.inside)
                    }
                    // The pass's own token: its end is the pass's, begun or not (with one file
                    // to check, pyright reports it and ends without a begin).
                    Ok(Some((_, value))) => {
                        if value.get("kind").and_then(Value::as_str) == Some("end") {
                            return self.unseen(mark, found);
                        }
                    }
                },
            }
        }
    }
}

impl LspClient {
    /// A pass's findings, unless an overlay was shown to the server since `mark` (some were
    /// then computed on it).
    fn unseen(
        &self,
        mark: Option<Option<u64>>,
        found: WorkspaceReport,
    ) -> Result<WorkspaceReport, LspError> {
        match (self.state.view.get(), mark) {
            (Some(view), Some(mark)) if !view.clean_since(mark) => Err(LspError::Protocol(
                "an overlay was shown to the server during the workspace diagnostics pass".into(),
            )),
            _ => Ok(found),
        }
    }
}

/// The `$/progress` tokens of one pass, routed to it while it runs.
struct Tokens<'a> {
    client: &'a LspClient,
    names: [String; 2],
}

impl<'a> Tokens<'a> {
    fn register(
        client: &'a LspClient,
        names: [String; 2],
        tx: mpsc::UnboundedSender<(String, Value)>,
    ) -> Tokens<'a> {
        if let Ok(mut p) = client.state.partials.lock() {
            for name in &names {
                p.insert(name.clone(), tx.clone());
            }
        }
        Tokens { client, names }
    }
}

impl Drop for Tokens<'_> {
    fn drop(&mut self) {
        if let Ok(mut p) = self.client.state.partials.lock() {
            for name in &self.names {
                p.remove(name);
            }
        }
    }
}

/// Adds the `items` of a workspace diagnostic report (full reports; an unchanged one keeps
/// what was found before) to `found`.
fn add_reports(found: &mut WorkspaceReport, report: &Value, inside: &super::Inside) {
    for item in report
        .get("items")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if item.get("kind").and_then(Value::as_str) != Some("full") {
            continue;
        }
        let Some(uri) = item
            .get("uri")
            .and_then(Value::as_str)
            .and_then(|u| Url::parse(u).ok())
        else {
            continue;
        };
        let diags = item
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|d| serde_json::from_value::<lt::Diagnostic>(d.clone()).ok())
            .map(convert_diag)
            .collect();
        found.insert(uri.clone(), super::quotes::confine(&uri, diags, inside));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_keep_the_latest_full_report_per_file() {
        let mut found = WorkspaceReport::new();
        let diag = json!({"range": {"start": {"line": 1, "character": 2}, "end": {"line": 1, "character": 5}},
                          "severity": 1, "message": "bad"});
        add_reports(
            &mut found,
            &json!({"items": [{"uri": "file:///w/a.py", "kind": "full", "version": null, "items": []},
                               {"uri": "file:///w/b.py", "kind": "full", "items": [diag]}]}),
            &crate::Inside::anywhere(),
        );
        add_reports(
            &mut found,
            &json!({"items": [{"uri": "file:///w/a.py", "kind": "full", "items": [diag]},
                               {"uri": "file:///w/b.py", "kind": "unchanged", "resultId": "3"},
                               {"uri": "not a uri", "kind": "full", "items": []}]}),
            &crate::Inside::anywhere(),
        );
        assert_eq!(found.len(), 2);
        let a = Url::parse("file:///w/a.py").unwrap();
        let b = Url::parse("file:///w/b.py").unwrap();
        assert_eq!(found[&a].len(), 1);
        assert_eq!(found[&b][0].message, "bad");
        assert_eq!(found[&b][0].range.start.character, 2);
    }
}
