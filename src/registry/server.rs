//! One running server instance (surviving restarts of its process), its open documents, and
//! the request wrapper that retries once in a restarted process; `SupState` is what its
//! supervisor knows of its crashes.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::documents::{Documents, Lease};
use crate::lsp::{Cap, LspClient, LspError};

pub(super) const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// Crashes further apart than this start a new streak.
pub(super) const STREAK_WINDOW: Duration = Duration::from_secs(60);

/// Something the MCP client should hear about (sent as `notifications/message`).
#[derive(Debug, Clone)]
pub struct ServerEvent {
    /// info, warning or error.
    pub level: &'static str,
    pub server: String,
    pub message: String,
}

#[derive(Default)]
pub(super) struct SupState {
    pub(super) restarting: bool,
    pub(super) given_up: Option<String>,
    pub(super) restarts: u32,
    pub(super) streak: u32,
    pub(super) last_crash: Option<std::time::Instant>,
    pub(super) last_error: Option<String>,
}

/// A running server instance (surviving restarts of its process) and its open documents.
pub struct Server {
    pub name: String,
    pub root: PathBuf,
    pub docs: Documents,
    pub(super) allow: Vec<String>,
    /// The first process: its capabilities (and so the tool set) stay in force after restarts.
    pub(super) first: Arc<LspClient>,
    pub(super) sup: Mutex<SupState>,
    /// Bumped when a restart completes or the server is given up.
    pub(super) generation: tokio::sync::watch::Sender<u64>,
}

impl Server {
    /// The current process.
    pub fn client(&self) -> Arc<LspClient> {
        self.docs.client()
    }

    /// Whether the server offers `cap` and the config allows lspgate to use it.
    pub fn supports(&self, cap: Cap) -> bool {
        (self.allow.is_empty() || self.allow.iter().any(|a| a == cap.name()))
            && self.first.supports(cap)
    }

    /// Why the server was given up, if it was.
    pub fn given_up(&self) -> Option<String> {
        self.sup.lock().ok().and_then(|s| s.given_up.clone())
    }

    /// The restart generation (bumped when a restart completes or the server is given up).
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// After `dead` (the process of generation `since`) ended: waits, bounded, for its
    /// replacement. Err says why there is none (given up, or not in time).
    pub async fn await_restart(&self, since: u64, dead: &Arc<LspClient>) -> Result<(), String> {
        let mut generation = self.generation.subscribe();
        let wait = async {
            loop {
                if let Some(why) = self.given_up() {
                    return Err(why);
                }
                if *generation.borrow_and_update() != since || !Arc::ptr_eq(&self.client(), dead) {
                    return Ok(());
                }
                if generation.changed().await.is_err() {
                    return Err(format!("{} is gone", self.name));
                }
            }
        };
        tokio::time::timeout(MAX_BACKOFF + Duration::from_secs(60), wait)
            .await
            .unwrap_or_else(|_| Err(format!("{} crashed and no restart came in time", self.name)))
    }

    /// Runs `f` against the current process; if that process dies under it, waits for the
    /// restart, reopens the leased document there, and runs `f` once more.
    pub async fn request<T, F, Fut>(&self, lease: Option<&Lease>, f: F) -> Result<T, LspError>
    where
        F: Fn(Arc<LspClient>) -> Fut,
        Fut: Future<Output = Result<T, LspError>>,
    {
        let since = self.generation();
        let client = self.client();
        let first = f(client.clone()).await;
        let Err(LspError::StreamClosed { stderr, .. }) = first else {
            return first;
        };
        match self.await_restart(since, &client).await {
            Ok(()) => {
                if let Some(lease) = lease {
                    lease.reopen();
                }
                f(self.client()).await
            }
            Err(why) => Err(LspError::StreamClosed {
                reason: why,
                stderr,
            }),
        }
    }

    pub(super) fn restart_count(&self) -> u32 {
        self.sup.lock().map(|s| s.restarts).unwrap_or(0)
    }
}
