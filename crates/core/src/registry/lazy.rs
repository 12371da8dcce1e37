//! What the LSP face asks of the registry so that a client pays only for the languages it
//! uses: the servers of a language as they stand, none started (`routed_now`), and their
//! start with the failures said (`start_for`: a missing server's `no_server` is the client's
//! warning).

use std::path::Path;
use std::sync::Arc;

use super::{Admit, Registry, Server};
use crate::error::CoreError;

/// A server for a file, as it stands.
pub enum Routed {
    /// Running (for the file's server root).
    Running(Arc<Server>),
    /// Not started: its name and the command it would run.
    Idle { name: String, command: String },
    /// It could not start (not installed, untrusted, crashed at start).
    Failed(CoreError),
}

impl Registry {
    /// The servers for a file of `language` that `admit` accepts, in routing order, none
    /// started.
    pub fn routed_now(&self, path: &Path, language: &str, admit: &Admit<'_>) -> Vec<Routed> {
        let mut out = Vec::new();
        for e in self.routed(language) {
            if !admit(&e.name, &e.languages) {
                continue;
            }
            let root = self.server_root_of(path, &e.roots);
            let inst = e.instances.lock().ok().and_then(|m| m.get(&root).cloned());
            match inst.as_ref().and_then(|i| i.cell.get()) {
                Some(Ok(s)) if s.client().is_alive() => out.push(Routed::Running(s.clone())),
                Some(Err(err)) => out.push(Routed::Failed(err.clone())),
                // Restarting, or starting for another task: as good as running soon.
                _ => out.push(Routed::Idle {
                    name: e.name.clone(),
                    command: e.command.lock().map(|c| c.clone()).unwrap_or_default(),
                }),
            }
        }
        out
    }

    /// Starts the servers for a file of `language` that `admit` accepts: those running, and
    /// why each other could not start.
    pub async fn start_for(
        &self,
        path: &Path,
        language: &str,
        admit: &Admit<'_>,
    ) -> (Vec<Arc<Server>>, Vec<CoreError>) {
        let (mut started, mut failed) = (Vec::new(), Vec::new());
        for e in self.routed(language) {
            if !admit(&e.name, &e.languages) {
                continue;
            }
            let root = self.server_root_of(path, &e.roots);
            match self.instance(&e, &root).await {
                Ok(s) => started.push(s),
                Err(err) => failed.push(err),
            }
        }
        (started, failed)
    }

    /// The command line of the server called `name`, as `servers` shows it.
    pub fn command_of(&self, name: &str) -> Option<String> {
        self.entry(name)?.command.lock().ok().map(|c| c.clone())
    }
}
