//! Starting a server instance: installing a missing preset with `--install`, the process (or
//! TCP connection) with the session's PATH, the `initialize` handshake, its supervisor, and
//! errors that say how to fix what failed.
//! An untrusted workspace's restricted preset (`ServerSpec::restricted`) starts restricted, and is
//! lifted to its full spec once the workspace is trusted.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::json;

use super::server::Server;
use super::supervisor::Supervisor;
use super::{Entry, Registry, RegistryEvent};
use crate::documents::Documents;
use crate::error::{CoreError, Kind};
use crate::lsp::{ClientOptions, Connect, LspClient, LspError};
use crate::workspace::install::{Spinner, install};
use crate::workspace::presets::{Launch, Origin, Preset, Readiness, ServerSpec};

impl Registry {
    pub(super) async fn start(&self, entry: &Entry, root: &Path) -> Result<Arc<Server>, CoreError> {
        let mut spec = entry.spec.lock().await;
        if let Launch::Missing(p) = spec.launch {
            if !self.opts.install {
                return Err(missing(p));
            }
            self.install_missing(p, entry, &mut spec).await?;
        }
        self.refuse_if_blocked(&spec).await?;
        let connect = self.connect_for(&spec)?;
        let opts = self.client_options(&spec);
        // Watching starts before the first server reads the disk.
        self.ensure_watcher().await;
        let client = match LspClient::start(&connect, root, opts.clone()).await {
            Ok(c) => c,
            Err(e) => {
                let err = start_failure(&spec, e);
                self.report(RegistryEvent::Failed {
                    server: spec.name.clone(),
                    root: root.to_path_buf(),
                    reason: err.message.clone(),
                });
                return Err(err);
            }
        };
        self.report(RegistryEvent::Started {
            server: spec.name.clone(),
            root: root.to_path_buf(),
        });
        Ok(self.supervise(&spec, client, connect, root, opts))
    }

    /// Installs the missing `preset` (`--install`) and makes `spec` the installed one's, keeping
    /// its languages; the entry's command line and status note follow.
    async fn install_missing(
        &self,
        preset: &'static Preset,
        entry: &Entry,
        spec: &mut ServerSpec,
    ) -> Result<(), CoreError> {
        tracing::info!(
            "installing {} into {}",
            preset.name,
            crate::workspace::data_dir().display()
        );
        let exe = tokio::task::spawn_blocking(move || {
            let spinner = Spinner::on_stderr();
            install(preset, &|what| spinner.step(what))
        })
        .await
        .map_err(|e| CoreError::new(Kind::NoServer, e.to_string()))?
        .map_err(|e| {
            CoreError::new(
                Kind::NoServer,
                format!("installing {} failed: {e}", preset.name),
            )
            .with_data(json!({"server": preset.name, "install": preset.install_hint()}))
        })?;
        let languages = std::mem::take(&mut spec.languages);
        *spec = preset.spec_for(Some(&exe), self.workspace.get());
        spec.languages = languages.clone();
        if let Some(r) = spec.restricted.as_mut() {
            r.full.languages = languages;
        }
        if let Ok(mut c) = entry.command.lock() {
            *c = spec.command_line();
        }
        if let Ok(mut n) = entry.note.lock() {
            *n = spec
                .restricted
                .as_ref()
                .map(|r| (r.status_note(), r.untrusted.clone()));
        }
        Ok(())
    }

    /// Refuses a restricted preset that would run the repository's programs whatever it is told
    /// (rust-analyzer beside a .cargo/config.toml): not at all until the workspace is trusted.
    async fn refuse_if_blocked(&self, spec: &ServerSpec) -> Result<(), CoreError> {
        if let Some(r) = spec.restricted.clone()
            && !r.blockers.is_empty()
        {
            let found = tokio::task::spawn_blocking(move || r.blocker().map(|p| (p, r)))
                .await
                .ok()
                .flatten();
            if let Some((path, r)) = found {
                let runs = format!(
                    "the workspace holds {}, with which it would run programs of the repository's choosing even with build scripts and proc macros off",
                    self.root.relative(&path)
                );
                return Err(r
                    .untrusted
                    .refuse(&format!("server `{}`", spec.name), &runs));
            }
        }
        Ok(())
    }

    /// How to reach the server `spec` launches: its process, with the session's environment (or
    /// PATH), or its TCP address; an error for a server missing or refused in this workspace.
    fn connect_for(&self, spec: &ServerSpec) -> Result<Connect, CoreError> {
        Ok(match &spec.launch {
            Launch::Stdio(s) => {
                let mut s = s.clone();
                if let Some(env) = &self.opts.env {
                    // The session's environment, whole; the server's own `env` on top.
                    let own = std::mem::take(&mut s.env);
                    s.env = env.vars().map(|(k, v)| (k.clone(), v.clone())).collect();
                    s.env.extend(own);
                    s.clear_env = true;
                } else if let Some(path) = self.opts.path.as_ref().and_then(|p| p.to_str())
                    && !s.env.iter().any(|(k, _)| k == "PATH")
                {
                    s.env.push(("PATH".into(), path.to_string()));
                }
                Connect::Spawn(s)
            }
            Launch::Tcp(address) => Connect::Tcp {
                name: spec.name.clone(),
                address: address.clone(),
            },
            Launch::Missing(p) => return Err(missing(p)),
            Launch::Untrusted(_, u) => return Err(spec.untrusted_error(u)),
        })
    }

    /// The client's options for `spec`: the session's timeouts with the server's settings,
    /// initialization options, readiness marker and dialect, confined to the workspace.
    fn client_options(&self, spec: &ServerSpec) -> ClientOptions {
        let defaults = ClientOptions::default();
        ClientOptions {
            init_timeout: self
                .opts
                .timeouts
                .get("initialize")
                .copied()
                .unwrap_or(defaults.init_timeout),
            request_timeout: self.opts.request_timeout,
            timeouts: self.opts.timeouts.clone(),
            settings: spec.settings.clone(),
            initialization: spec.initialization.clone(),
            ready_marker: spec.ready_marker.clone(),
            dialect: spec.dialect,
            inside: {
                let root = self.root.clone();
                crate::lsp::Inside::new(move |p| root.confine(p).is_ok())
            },
        }
    }

    /// The started server over its first `client`, with its supervisor running and (for servers
    /// that need their projects) their loading begun.
    fn supervise(
        &self,
        spec: &ServerSpec,
        client: Arc<LspClient>,
        connect: Connect,
        root: &Path,
        opts: ClientOptions,
    ) -> Arc<Server> {
        let server = Arc::new(Server {
            name: spec.name.clone(),
            root: root.to_path_buf(),
            docs: Documents::new(
                client.clone(),
                self.opts.open_documents,
                self.batch_room.clone(),
            ),
            allow: spec.allow.clone(),
            languages: spec.languages.clone(),
            on_change: spec.on_change,
            readiness: spec.readiness,
            projects: tokio::sync::Mutex::new(None),
            last_used: Mutex::new(std::time::Instant::now()),
            first: client,
            sup: Mutex::default(),
            generation: tokio::sync::watch::channel(0).0,
        });
        let sup = Supervisor {
            server: Arc::downgrade(&server),
            connect,
            root: root.to_path_buf(),
            opts,
            policy: self.opts.restart,
            backoff: self.opts.backoff,
            max_memory: spec.max_memory,
            events: self.events.clone(),
            feed: self.feed.clone(),
        };
        tokio::spawn(sup.run());
        if server.readiness == Readiness::Projects {
            // Loading its projects takes tsserver seconds on a real repository: begun now, it
            // overlaps with whatever the first call does before it asks.
            let (s, languages) = (server.clone(), self.languages.clone());
            tokio::spawn(async move {
                s.prepare(&languages).await;
            });
        }
        server
    }
}

pub(super) fn missing(p: &Preset) -> CoreError {
    CoreError::new(
        Kind::NoServer,
        format!(
            "{} is not installed (it serves {}); install it with `{}`, or run with --install",
            p.command,
            p.languages.join(", "),
            p.install_hint()
        ),
    )
    .with_data(json!({"server": p.name, "command": p.command, "install": p.install_hint()}))
}

fn start_failure(spec: &ServerSpec, e: LspError) -> CoreError {
    let (reason, stderr) = match &e {
        LspError::StreamClosed { reason, stderr } => (reason.clone(), stderr.clone()),
        other => (other.to_string(), String::new()),
    };
    let fix = match (&e, spec.origin) {
        (LspError::Spawn { .. }, Origin::Config) => {
            "install the server, or fix `command` of this [[server]] in lspgate.toml".to_string()
        }
        (LspError::Spawn { .. }, _) => "install the server or put it on PATH".to_string(),
        (LspError::Timeout { .. }, _) => {
            "the server did not answer `initialize`; check it runs by hand".to_string()
        }
        _ => "the server stopped during `initialize`; see stderr_tail".to_string(),
    };
    CoreError::new(
        Kind::ServerFailed,
        format!("{} could not start: {reason}", spec.name),
    )
    .with_data(json!({
        "server": spec.name,
        "command": spec.command_line(),
        "reason": reason,
        "stderr_tail": stderr,
        "fix": fix,
    }))
}
