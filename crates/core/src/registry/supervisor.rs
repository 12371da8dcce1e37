//! Supervision of one server: restarts its process after a crash (by policy, with backoff
//! doubling within a streak of crashes), kills it past its memory cap, and gives it up with the
//! reason when the policy says so.
//!
//! Backoff doubles from the `backoff` option (500 ms by default) up to `MAX_BACKOFF` (30 s) within
//! a streak of crashes less than `STREAK_WINDOW` (a minute) apart. Restarts and give-ups reach MCP
//! clients as `notifications/message`; a failure is kept on its instance and reported with a fix,
//! never affecting other servers.

use std::path::PathBuf;
use std::time::Duration;

use super::RestartPolicy;
use super::feed::{Feed, RegistryEvent};
use super::server::{MAX_BACKOFF, STREAK_WINDOW, Server, ServerEvent};
use crate::lsp::{ClientOptions, Connect, LspClient};

/// Watches one server: restarts its process after a crash (by policy, with backoff), kills it
/// past its memory cap, and gives it up when the policy says so.
pub(super) struct Supervisor {
    pub(super) server: std::sync::Weak<Server>,
    pub(super) connect: Connect,
    pub(super) root: PathBuf,
    pub(super) opts: ClientOptions,
    pub(super) policy: RestartPolicy,
    pub(super) backoff: Duration,
    pub(super) max_memory: Option<u64>,
    pub(super) events: tokio::sync::broadcast::Sender<ServerEvent>,
    /// The durable event log's feed (restarts and give-ups are events in any case).
    pub(super) feed: std::sync::Arc<Feed>,
}

impl Supervisor {
    fn event(&self, level: &'static str, name: &str, message: String) {
        match level {
            "error" => tracing::error!(server = %name, "{message}"),
            "warning" => tracing::warn!(server = %name, "{message}"),
            _ => tracing::info!(server = %name, "{message}"),
        }
        let _ = self.events.send(ServerEvent {
            level,
            server: name.to_string(),
            message,
        });
    }

    pub(super) async fn run(self) {
        loop {
            let Some(client) = self.server.upgrade().map(|s| s.client()) else {
                return;
            };
            let why = self.watch(&client).await;
            if client.is_stopping() {
                return;
            }
            let served = client.answered() > 1;
            drop(client);
            if !self.recover(why, served).await {
                return;
            }
        }
    }

    /// Waits for the process to end, killing it if it goes over its memory cap.
    async fn watch(&self, client: &LspClient) -> String {
        let Some(cap) = self.max_memory else {
            return client.wait_closed().await;
        };
        let closed = client.wait_closed();
        tokio::pin!(closed);
        let mut tick = tokio::time::interval(Duration::from_millis(250));
        loop {
            tokio::select! {
                why = &mut closed => return why,
                _ = tick.tick() => {
                    if let Some(rss) = client.pid().and_then(resident_bytes) && rss > cap {
                        client.kill_because(format!(
                            "used {} MiB, over its max_memory of {} MiB",
                            rss >> 20,
                            cap >> 20
                        ));
                    }
                }
            }
        }
    }

    /// Restarts after a crash; false when the server is given up (or gone).
    async fn recover(&self, mut why: String, mut served: bool) -> bool {
        // Why the process ended, as the restart's event says it.
        let crashed = why.clone();
        loop {
            let Some(server) = self.server.upgrade() else {
                return false;
            };
            let delay = match self.judge(&server, &why, served) {
                Some(Verdict::Restart(delay)) => delay,
                Some(Verdict::GiveUp) => {
                    self.give_up(&server);
                    return false;
                }
                None => return false,
            };
            self.event(
                "warning",
                &server.name,
                format!(
                    "{} crashed ({why}); restarting in {} ms",
                    server.name,
                    delay.as_millis()
                ),
            );
            let name = server.name.clone();
            drop(server);
            tokio::time::sleep(delay).await;
            match LspClient::start(&self.connect, &self.root, self.opts.clone()).await {
                Ok(client) => return self.restarted(client, &name, &crashed).await,
                Err(e) => {
                    why = format!("restart failed: {e}");
                    served = false;
                }
            }
        }
    }

    /// Records a crash of `server` for `why` in its state, and what the policy makes of it:
    /// a restart after the backoff (the shortest if the process `served` requests), or giving
    /// it up; `None` when its state cannot be had.
    fn judge(&self, server: &Server, why: &str, served: bool) -> Option<Verdict> {
        let now = std::time::Instant::now();
        let Ok(mut st) = server.sup.lock() else {
            return None;
        };
        if st
            .last_crash
            .is_none_or(|t| now.duration_since(t) > STREAK_WINDOW)
        {
            st.streak = 0;
        }
        st.streak += 1;
        st.last_crash = Some(now);
        st.last_error = Some(why.to_string());
        let give_up = match self.policy {
            RestartPolicy::Never => Some("restarts are off (--restart never)".to_string()),
            RestartPolicy::Always => None,
            RestartPolicy::Limit(n) if st.streak > n => Some(format!(
                "{} crashes less than a minute apart (--restart {n})",
                st.streak
            )),
            RestartPolicy::Limit(_) => None,
        };
        // A process that served requests before crashing earns the shortest delay.
        let exp = if served {
            0
        } else {
            st.streak.saturating_sub(1).min(16)
        };
        let delay = (self.backoff * 2u32.pow(exp)).min(MAX_BACKOFF);
        if let Some(g) = &give_up {
            st.given_up = Some(format!(
                "{} was given up after {g}; last crash: {why}",
                server.name
            ));
            Some(Verdict::GiveUp)
        } else {
            st.restarting = true;
            Some(Verdict::Restart(delay))
        }
    }

    /// Gives `server` up (its state says why): tells the feed and the events, and wakes what
    /// waits for its next generation.
    fn give_up(&self, server: &Server) {
        let msg = server.given_up().unwrap_or_default();
        self.feed.send(RegistryEvent::Failed {
            server: server.name.clone(),
            root: self.root.clone(),
            reason: msg.clone(),
        });
        self.event("error", &server.name, msg);
        server.generation.send_modify(|g| *g += 1);
    }

    /// Puts the restarted process `client` of server `name` (which `crashed` so) in place, its
    /// documents reopened, and says so; false (the process shut down) when the server is gone.
    async fn restarted(
        &self,
        client: std::sync::Arc<LspClient>,
        name: &str,
        crashed: &str,
    ) -> bool {
        let Some(server) = self.server.upgrade() else {
            client.shutdown().await;
            return false;
        };
        server.docs.replace_client(client);
        server.rearm();
        if let Ok(mut st) = server.sup.lock() {
            st.restarting = false;
            st.restarts += 1;
        }
        server.generation.send_modify(|g| *g += 1);
        self.feed.send(RegistryEvent::Restarted {
            server: name.to_string(),
            root: self.root.clone(),
            reason: crashed.to_string(),
        });
        self.event(
            "info",
            name,
            format!("{name} restarted; its documents were reopened"),
        );
        true
    }
}

/// What the restart policy makes of a crash.
enum Verdict {
    /// Restart after this delay.
    Restart(Duration),
    /// Give the server up.
    GiveUp,
}

pub use crate::procfs::resident_bytes;
