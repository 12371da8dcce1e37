//! Whose command this is: lspgate's own process, or a client the daemon runs it for (its working
//! folder and environment), and where a command's engine gets its workspace (its own, or the
//! daemon's shared one for the same root, config and environment).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::ops::Workspace;

/// A client's working folder and environment, as its command line was given there.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Client {
    pub cwd: PathBuf,
    pub env: HashMap<String, String>,
}

impl Client {
    /// This process's own folder and whole environment: the daemon runs the session's servers
    /// and tasks with it, as the session's shell would.
    pub fn this_process() -> Client {
        Client {
            cwd: std::env::current_dir().unwrap_or_default(),
            env: crate::workspace::env::Env::of_process()
                .vars()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        }
    }
}

/// Hands out the workspace for a key, making it with `make` when there is none yet.
pub type Provider =
    Arc<dyn Fn(&str, &mut dyn FnMut() -> Arc<Workspace>) -> Arc<Workspace> + Send + Sync>;

tokio::task_local! {
    static CLIENT: Client;
    static PROVIDER: Provider;
}

/// Runs `fut` as the daemon does for a client: paths and variables are the client's, and
/// engines take their workspace from `provider`.
pub async fn for_client<T>(client: Client, provider: Provider, fut: impl Future<Output = T>) -> T {
    CLIENT.scope(client, PROVIDER.scope(provider, fut)).await
}

/// The client's working folder (this process's outside the daemon).
pub fn cwd() -> PathBuf {
    CLIENT
        .try_with(|c| c.cwd.clone())
        .unwrap_or_else(|_| std::env::current_dir().unwrap_or_default())
}

/// An environment variable of the client (this process's outside the daemon).
pub fn var(name: &str) -> Option<String> {
    match CLIENT.try_with(|c| c.env.get(name).cloned()) {
        Ok(v) => v,
        Err(_) => std::env::var(name).ok(),
    }
}

/// The client's whole environment (this process's outside the daemon).
pub fn env() -> crate::workspace::env::Env {
    match CLIENT.try_with(|c| crate::workspace::env::Env::from_map(c.env.clone())) {
        Ok(env) => env,
        Err(_) => crate::workspace::env::Env::of_process(),
    }
}

/// `path` made absolute against the client's working folder.
pub fn absolute(path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd().join(path)
    }
}

/// The daemon's provider, when running for a client.
pub fn provider() -> Option<Provider> {
    PROVIDER.try_with(|p| p.clone()).ok()
}
