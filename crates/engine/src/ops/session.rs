//! What a session is, said once where it was asked for and opened alike everywhere: its root,
//! config, state folder and explicit server (absolute paths), its environment, its tool
//! profile and settings (`SessionSpec`). A front end builds one from its command line in its
//! own process; the daemon (or that process, standalone) opens it into an `Engine`, on a
//! workspace of its own or one shared through a `Provider` for the same root, config,
//! environment and settings.
//!
//! `SessionSpec::engine` opens it (the shared workspace is chosen by root, config digest, explicit
//! command, the values of the variables its servers read, `workspace::env`, and settings);
//! `agent_engine`, for an agent's session, also starts an explicit server at once, or every server
//! with `--warm`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::tools::Profile;
use super::{Engine, EngineOptions, Workspace};
use crate::error::ToolError;
use crate::registry::{Registry, RegistryOptions, RestartPolicy};
use crate::watch::WatchOptions;
use crate::workspace::config::Config;
use crate::workspace::env::{Env, Keys, SharedEnv, preset_keys};
use crate::workspace::presets::ServerSpec;
use crate::workspace::{Languages, Root};

/// A session, resolved: every path absolute, the environment its client had.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SessionSpec {
    /// The workspace root.
    pub root: PathBuf,
    /// `--config`: a config file named (trusted by being named); else the root's own.
    #[serde(default)]
    pub config: Option<PathBuf>,
    /// `--state`: lspgate's state folder; else the root's own in lspgate's data folder.
    #[serde(default)]
    pub state: Option<PathBuf>,
    /// A server command given explicitly: served alone, without config servers.
    #[serde(default)]
    pub server: Vec<String>,
    /// The client's whole environment: its servers and tasks run with it.
    pub env: BTreeMap<String, String>,
    pub tools: Tools,
    /// Start the workspace's servers at once (`serve --warm`).
    #[serde(default)]
    pub warm: bool,
    pub settings: Settings,
}

/// The tools a session offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tools {
    /// Every tool (a command runs the tool it names).
    All,
    /// An agent session: the config's `tools`, else every tool.
    Configured,
    /// `--tools`: these groups and tools.
    Named(Vec<String>),
}

/// How a session's servers run and its answers are bounded (the command line's server
/// options, defaults filled in).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Settings {
    pub install: bool,
    pub max_output: usize,
    /// Seconds, as given (checked when the session opens).
    pub timeout: f64,
    pub ready_timeout: f64,
    pub diagnostics_timeout: f64,
    pub restart: RestartPolicy,
    pub restart_backoff_ms: u64,
    pub open_documents: usize,
}

/// Hands out the workspace for a key, making it with `make` when there is none yet.
pub type Provider =
    Arc<dyn Fn(&str, &mut dyn FnMut() -> Arc<Workspace>) -> Arc<Workspace> + Send + Sync>;

impl SessionSpec {
    /// A variable of the client's environment.
    pub fn var(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }

    /// The session's root, refused when it is no project's folder (`Root::new_for`, the
    /// client's home folder among those).
    pub fn root(&self) -> Result<Root, ToolError> {
        let home = self.var("HOME").map(PathBuf::from);
        Ok(Root::new_for(&self.root, home.as_deref())?)
    }

    /// The engine of a command: a workspace of its own (no provider), or a session on the
    /// provider's shared workspace for the same root, config, environment and settings.
    pub fn engine(&self, provider: Option<&Provider>) -> Result<Engine, ToolError> {
        let root = self.root()?;
        let config = Config::for_workspace(root.path(), self.config.as_deref())
            .map_err(|e| ToolError::invalid(format!("invalid config {e}")))?;
        let env: SharedEnv = Arc::new(Env::from_map(self.env.clone()));
        let identity = env.identity(&identity_keys(&config, &self.server));
        let opts = self.engine_options(&root, &config, &env)?;
        let reg_opts = self.registry_options(&config, &env, &opts, identity.clone())?;
        let make = || {
            let root = root.clone();
            let registry = match ServerSpec::explicit(&self.server) {
                Some(spec) => {
                    let languages = Languages::new(root.path(), &config.languages);
                    let r = Registry::new(root, languages, reg_opts.clone());
                    r.register(spec);
                    r
                }
                None => Registry::with_config(root, &config, reg_opts.clone()),
            };
            Workspace::new(registry, opts.clone())
        };
        let Some(provider) = provider else {
            return Ok(Engine::session_owning(make(), opts));
        };
        // Sessions share a workspace only when everything that shapes its servers is the same.
        let key = format!(
            "{:?}",
            (
                root.path(),
                &self.config,
                config_digest(root.path(), self.config.as_deref()),
                &self.server,
                &identity,
                (
                    reg_opts.open_documents,
                    reg_opts.request_timeout,
                    &reg_opts.timeouts
                ),
                (reg_opts.install, reg_opts.restart, reg_opts.backoff),
                (
                    &opts.state_dir,
                    opts.ready_timeout,
                    opts.diagnostics_timeout
                ),
            )
        );
        let mut make = make;
        Ok(Engine::session(provider(&key, &mut make), opts))
    }

    /// The engine of an agent session (MCP over stdio or HTTP): an explicit server started at
    /// once (its capabilities decide the tool list), or the workspace's servers warmed when
    /// asked.
    pub async fn agent_engine(
        &self,
        provider: Option<&Provider>,
    ) -> Result<Arc<Engine>, ToolError> {
        let engine = Arc::new(self.engine(provider)?);
        if !self.server.is_empty() {
            for r in engine.registry().start_all().await {
                r?;
            }
        } else if self.warm {
            engine.warm();
        }
        Ok(engine)
    }

    fn engine_options(
        &self,
        root: &Root,
        config: &Config,
        env: &SharedEnv,
    ) -> Result<EngineOptions, ToolError> {
        let tools = match &self.tools {
            Tools::All => Profile::all(),
            Tools::Named(names) => {
                Profile::parse(names).map_err(|e| ToolError::invalid(format!("--tools: {e}")))?
            }
            Tools::Configured => match &config.tools {
                Some(names) => Profile::parse(names).map_err(|e| {
                    ToolError::invalid(format!("invalid config {}", config.tools_error(e)))
                })?,
                None => Profile::all(),
            },
        };
        Ok(EngineOptions {
            env: Some(env.clone()),
            tools,
            tasks: config
                .tasks
                .iter()
                .map(|t| crate::gates::Task::from_config(t, config.untrusted.as_ref()))
                .collect(),
            state_dir: self
                .state
                .clone()
                .unwrap_or_else(|| crate::edits::journal::default_dir(root.path())),
            max_output: self.settings.max_output,
            ready_timeout: secs(self.settings.ready_timeout, "ready-timeout")?,
            diagnostics_timeout: secs(self.settings.diagnostics_timeout, "diagnostics-timeout")?,
            max_inflight: config.max_inflight.unwrap_or(super::activity::MAX_INFLIGHT),
            terse: env
                .get("LSPGATE_TERSE")
                .is_some_and(|v| matches!(v, "1" | "true" | "yes")),
        })
    }

    fn registry_options(
        &self,
        config: &Config,
        env: &SharedEnv,
        opts: &EngineOptions,
        identity: BTreeMap<String, String>,
    ) -> Result<RegistryOptions, ToolError> {
        let mut timeouts = std::collections::HashMap::new();
        for (kind, v) in &config.timeouts {
            timeouts.insert(kind.clone(), secs(*v, kind)?);
        }
        let s = &self.settings;
        Ok(RegistryOptions {
            open_documents: s.open_documents,
            request_timeout: secs(s.timeout, "timeout")?,
            timeouts,
            install: s.install,
            restart: s.restart,
            backoff: Duration::from_millis(s.restart_backoff_ms),
            watch: WatchOptions::from_env(vec![opts.state_dir.clone()]),
            path: env.get("PATH").map(Into::into),
            env: Some(env.clone()),
            identity,
        })
    }
}

/// `v` seconds as a duration, or an error naming the option.
fn secs(v: f64, what: &str) -> Result<Duration, ToolError> {
    Duration::try_from_secs_f64(v)
        .map_err(|_| ToolError::invalid(format!("--{what} must be a number of seconds, got {v}")))
}

/// The variables that make a workspace's servers what they are (`workspace::env`): every one
/// but the per-session ones for an explicit command or a configured server that names none,
/// else those its presets and configured servers read.
fn identity_keys(config: &Config, explicit: &[String]) -> Keys {
    if !explicit.is_empty() {
        return Keys::AllBut;
    }
    let presets = crate::workspace::presets::PRESETS
        .iter()
        .map(|p| preset_keys(p.name))
        .fold(Keys::Only(Vec::new()), Keys::union);
    config.servers.iter().fold(presets, |keys, s| {
        keys.union(match &s.env_keys {
            Some(names) => Keys::Only(
                std::iter::once("PATH".to_string())
                    .chain(names.iter().cloned())
                    .collect(),
            ),
            None => Keys::AllBut,
        })
    })
}

/// The digest of the config file a workspace would load (and so of its trust): a regular file
/// only (a FIFO named lspgate.toml would block the daemon's thread), as the loading reads it.
fn config_digest(root: &Path, named: Option<&Path>) -> Option<String> {
    let path = match named {
        Some(p) => p.to_path_buf(),
        None => root.join("lspgate.toml"),
    };
    lspgate_base::regular::read(&path, true)
        .ok()
        .map(|b| crate::text::digest(&b))
}
