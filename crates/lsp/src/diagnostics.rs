//! The diagnostics store of a client: what the server pushed, per document and version, and
//! waiting for the push of a version (or pulling, where the server offers it).

use std::time::Duration;

use lsp_types as lt;
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;
use url::Url;

use super::LspError;
use super::client::{Dialect, LspClient};
use super::convert::convert_diag;
use super::state::Published;
use super::wire::WireDiagnostic;

impl LspClient {
    /// The publish counter; record it before a change, then wait for a publish after it.
    pub fn publish_seq(&self) -> u64 {
        self.state.publish_seq.lock().map(|s| *s).unwrap_or(0)
    }

    /// Pull diagnostics for one document (computed for its current content when asked).
    pub async fn pull_diagnostics(&self, uri: &Url) -> Result<Vec<WireDiagnostic>, LspError> {
        if self.opts.dialect == Dialect::Tsserver {
            return self.tsserver_diagnostics(uri).await;
        }
        let report: lt::DocumentDiagnosticReportResult = self
            .call(
                "textDocument/diagnostic",
                json!({"textDocument": {"uri": uri}}),
            )
            .await?;
        let items = match report {
            lt::DocumentDiagnosticReportResult::Report(lt::DocumentDiagnosticReport::Full(f)) => {
                f.full_document_diagnostic_report.items
            }
            lt::DocumentDiagnosticReportResult::Report(
                lt::DocumentDiagnosticReport::Unchanged(_),
            ) => Vec::new(),
            lt::DocumentDiagnosticReportResult::Partial(_) => Vec::new(),
        };
        Ok(super::quotes::confine(
            uri,
            items.into_iter().map(convert_diag).collect(),
            &self.opts.inside,
        ))
    }

    /// Waits for the pushed diagnostics of `uri` at `version` (or, for servers that send no
    /// version, the first publish after `after_seq` followed by `quiet` without another one).
    /// Returns the diagnostics and whether they are known to be fresh.
    pub async fn wait_pushed(
        &self,
        uri: &Url,
        version: i32,
        after_seq: u64,
        timeout: Duration,
        quiet: Duration,
    ) -> (Vec<WireDiagnostic>, bool) {
        let deadline = Instant::now() + timeout;
        let mut rx = self.diag_tx.subscribe();
        loop {
            rx.borrow_and_update();
            let current = self.published(uri);
            if let Some(p) = &current {
                match p.version {
                    Some(v) if v >= version => return ((*p.diags).clone(), true),
                    None if p.seq > after_seq => {
                        return self.settle(uri, p.clone(), deadline, quiet, &mut rx).await;
                    }
                    _ => {}
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero()
                || tokio::time::timeout(left, rx.changed()).await.is_err()
                || !self.is_alive()
            {
                let diags = current.map(|p| (*p.diags).clone()).unwrap_or_default();
                return (diags, false);
            }
        }
    }

    async fn settle(
        &self,
        uri: &Url,
        mut last: Published,
        deadline: Instant,
        quiet: Duration,
        rx: &mut watch::Receiver<u64>,
    ) -> (Vec<WireDiagnostic>, bool) {
        loop {
            let left = deadline
                .saturating_duration_since(Instant::now())
                .min(quiet);
            if left.is_zero() || tokio::time::timeout(left, rx.changed()).await.is_err() {
                return ((*last.diags).clone(), true);
            }
            if let Some(p) = self.published(uri) {
                last = p;
            }
        }
    }

    /// The latest diagnostics the server pushed for `uri`, if any.
    pub fn latest_pushed(&self, uri: &Url) -> Vec<WireDiagnostic> {
        self.published(uri)
            .map(|p| (*p.diags).clone())
            .unwrap_or_default()
    }

    /// The latest publish for `uri`: its version (when the server sent one) and its
    /// diagnostics exactly as sent.
    pub fn latest_raw(&self, uri: &Url) -> Option<(Option<i32>, Vec<serde_json::Value>)> {
        let p = self.published(uri)?;
        Some((p.version, p.diags.iter().map(|d| d.raw.clone()).collect()))
    }

    /// The refresh requests the server sends from now on (`workspace/diagnostic/refresh`,
    /// `workspace/inlayHint/refresh`, …), by method: lspgate answers them; a front end passes
    /// them on to clients of its own.
    pub fn refreshes(&self) -> tokio::sync::broadcast::Receiver<String> {
        self.state
            .refreshes
            .get_or_init(|| tokio::sync::broadcast::channel(16).0)
            .subscribe()
    }

    /// The server's `window/logMessage` and `window/showMessage` from now on (method, params):
    /// a front end passes them on to its clients of this server.
    pub fn messages(&self) -> tokio::sync::broadcast::Receiver<(String, serde_json::Value)> {
        self.state
            .messages
            .get_or_init(|| tokio::sync::broadcast::channel(256).0)
            .subscribe()
    }

    /// Wakes on every publish (its value: the publish counter).
    pub fn publishes(&self) -> watch::Receiver<u64> {
        self.diag_tx.subscribe()
    }

    /// The documents whose latest publish came after publish `seq`, with that publish's
    /// version (when the server sent one) and its diagnostics exactly as sent.
    pub fn pushed_after(&self, seq: u64) -> Vec<(Url, Option<i32>, Vec<serde_json::Value>)> {
        let Ok(d) = self.state.diags.lock() else {
            return Vec::new();
        };
        d.iter()
            .filter(|(_, p)| p.seq > seq)
            .map(|(uri, p)| {
                let raw = p.diags.iter().map(|d| d.raw.clone()).collect();
                (uri.clone(), p.version, raw)
            })
            .collect()
    }

    /// Drops what the server pushed for `uri` (its file changed on disk since).
    pub fn forget_pushed(&self, uri: &Url) {
        if let Ok(mut d) = self.state.diags.lock() {
            d.remove(uri);
        }
    }

    /// Every document the server has pushed diagnostics for.
    pub fn pushed_uris(&self) -> Vec<Url> {
        self.state
            .diags
            .lock()
            .map(|d| d.keys().cloned().collect())
            .unwrap_or_default()
    }

    pub(super) fn published(&self, uri: &Url) -> Option<Published> {
        self.state.diags.lock().ok()?.get(uri).cloned()
    }
}
