//! What `servers` reports: one row per server instance (or one `idle` row for a server never
//! started), with its state, process, restarts, last error, capabilities and commands.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use super::Registry;
use crate::lsp::Cap;
use crate::workspace::presets::{Launch, Origin};

/// What `servers` reports about one server (instance).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ServerStatus {
    pub name: String,
    pub languages: Vec<String>,
    /// Root-relative (`.` for the workspace root).
    pub root: String,
    /// idle, starting, indexing, ready, restarting, failed, or untrusted (from a workspace
    /// lspgate.toml not trusted yet, or a preset that would run the repository's code on a
    /// workspace not trusted: `last_error` says how to trust it).
    pub state: String,
    /// What the server goes without because the workspace is not trusted (rust-analyzer: build
    /// scripts, proc macros, check on save), and how to lift that.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    pub restarts: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    pub capabilities: Vec<String>,
    pub commands: Vec<String>,
    pub command: String,
    pub origin: Origin,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

impl Registry {
    /// The state of every server: one row per instance, or one `idle` row if none started.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        let mut out = Vec::new();
        for e in self.entries() {
            let manual = e.restarts.lock().map(|r| *r).unwrap_or(0);
            let command = e.command.lock().map(|c| c.clone()).unwrap_or_default();
            // Until a call lifts it (`Entry::untrusted`), a trusted workspace's note is moot.
            let note = e
                .note
                .lock()
                .ok()
                .and_then(|n| n.clone())
                .filter(|(_, u)| !u.granted())
                .map(|(n, _)| n);
            let base = |root: &Path| ServerStatus {
                name: e.name.clone(),
                languages: e.languages.clone(),
                root: match self.root.relative(root) {
                    r if r.is_empty() => ".".into(),
                    r => r,
                },
                state: "idle".into(),
                note: note.clone(),
                pid: None,
                restarts: manual,
                last_error: None,
                capabilities: Vec::new(),
                commands: Vec::new(),
                command: command.clone(),
                origin: e.origin,
                version: None,
            };
            let insts = e.instances();
            if insts.is_empty() {
                let mut s = base(self.root.path());
                if command.contains(" (not installed)") {
                    s.state = "missing".into();
                    s.last_error = Some("not installed".into());
                }
                if let Ok(spec) = e.spec.try_lock()
                    && let Launch::Untrusted(_, u) = &spec.launch
                {
                    s.state = "untrusted".into();
                    s.last_error = Some(spec.untrusted_error(u).message);
                }
                out.push(s);
            }
            for (root, inst) in insts {
                let mut s = base(&root);
                match inst.cell.get() {
                    None => s.state = "starting".into(),
                    Some(Err(err)) => {
                        s.state = match err.kind {
                            crate::error::Kind::UntrustedConfig => "untrusted".into(),
                            crate::error::Kind::NoServer => "missing".into(),
                            _ => "failed".into(),
                        };
                        s.last_error = Some(err.message.clone());
                    }
                    Some(Ok(server)) => {
                        let c = server.client();
                        s.restarts += server.restart_count();
                        if let Ok(sup) = server.sup.lock() {
                            s.last_error = sup.last_error.clone();
                        }
                        s.pid = c.pid();
                        s.version = c.server_version().map(str::to_string);
                        s.capabilities = Cap::ALL
                            .iter()
                            .filter(|cap| server.supports(**cap) || **cap == Cap::PullDiagnostics)
                            .map(|cap| cap.name().to_string())
                            .collect();
                        s.commands = c.commands();
                        let (restarting, given_up) = server
                            .sup
                            .lock()
                            .map(|g| (g.restarting, g.given_up.clone()))
                            .unwrap_or((false, None));
                        if let Some(why) = given_up {
                            s.state = "failed".into();
                            s.last_error = Some(why);
                        } else if restarting || !c.is_alive() {
                            s.state = "restarting".into();
                        } else if !c.busy().titles.is_empty() {
                            s.state = "indexing".into();
                        } else {
                            s.state = "ready".into();
                        }
                    }
                }
                out.push(s);
            }
        }
        out
    }
}
