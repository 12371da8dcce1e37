//! A document's diagnostics as its server has them: pulled where it offers that, else the push
//! for the document's exact version, sent again first when another document's change may have
//! made its latest push stale.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tokio::time::Instant;
use url::Url;

use super::{Doc, DocDiagnostics, Documents, Lease, is_fresh, set_text};
use crate::error::CoreError;
use crate::lsp::Cap;

impl Documents {
    /// Records that the server is told of a change to `uri`, a file it does not have open.
    pub fn changed_outside(&self, uri: &Url) {
        self.slot.changed(uri);
    }

    /// `lease` for asking the document's diagnostics: to a server that only pushes them, and
    /// was sent a change of another document after this document's text (a cross-file effect
    /// its push may not show yet, and a server need not push again for a document whose
    /// diagnostics it finds unchanged), the document is sent again as a new version first,
    /// so the push awaited is computed after every change the server knows of.
    pub async fn lease_current(&self, path: &Path, language_id: &str) -> Result<Lease, CoreError> {
        let doc = self.slot.doc(path);
        let behind =
            |doc: &Doc| !self.client().supports(Cap::PullDiagnostics) && self.slot.behind(doc);
        if let Some(doc) = doc.filter(|d| behind(d)) {
            {
                let mut st = self.held(&doc, doc.state.clone().write_owned()).await?;
                if st.open && is_fresh(&doc.path, &st) && behind(&doc) {
                    let text = st.text.clone();
                    let disk = st.disk.take();
                    set_text(&self.slot, &doc, &mut st, text, disk);
                }
            }
        }
        self.lease(path, language_id, None).await
    }

    /// Diagnostics for the leased document's exact content: pulled where the server offers
    /// it, else the push for this version, bounded by `timeout`; those there only to be
    /// rendered (`WireDiagnostic::rendering_only`) left out.
    pub async fn diagnostics(
        &self,
        lease: &Lease,
        timeout: Duration,
    ) -> Result<DocDiagnostics, CoreError> {
        let mut d = self.diagnostics_as_sent(lease, timeout).await?;
        d.diagnostics.retain(|d| !d.rendering_only());
        Ok(d)
    }

    /// `diagnostics`, every one the server sent (the LSP face's clients render them).
    pub async fn diagnostics_as_sent(
        &self,
        lease: &Lease,
        timeout: Duration,
    ) -> Result<DocDiagnostics, CoreError> {
        let snap = &lease.snap;
        let deadline = Instant::now() + timeout;
        loop {
            let client = self.client();
            if client.supports(Cap::PullDiagnostics) {
                let d = client.pull_diagnostics(&snap.uri).await?;
                return Ok(DocDiagnostics {
                    diagnostics: d,
                    fresh: true,
                });
            }
            if lease.doc.settled.load(Ordering::Acquire) == i64::from(snap.version) {
                // This version's push has arrived; later pushes (cross-file effects) are newer.
                return Ok(DocDiagnostics {
                    diagnostics: client.latest_pushed(&snap.uri),
                    fresh: true,
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            // Waits in slices so a pull registration arriving meanwhile is noticed.
            let (d, fresh) = client
                .wait_pushed(
                    &snap.uri,
                    snap.version,
                    lease.doc.change_seq.load(Ordering::Acquire),
                    left.min(Duration::from_millis(250)),
                    Duration::from_millis(150),
                )
                .await;
            if fresh {
                lease
                    .doc
                    .settled
                    .store(i64::from(snap.version), Ordering::Release);
                return Ok(DocDiagnostics {
                    diagnostics: d,
                    fresh: true,
                });
            }
            if left.is_zero() || !client.is_alive() {
                return Ok(DocDiagnostics {
                    diagnostics: d,
                    fresh: false,
                });
            }
        }
    }
}
