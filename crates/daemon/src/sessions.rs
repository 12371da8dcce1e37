//! The daemon's live connections, for `status` and the status page: each one's kind (`mcp-stdio`,
//! `mcp-http`, `lsp`, `cli`), root, since when, how many tools it called and the last one.
//! An entry lives as long as its `Attached` handle; every change bumps a pulse the status
//! page's streams wait on (nobody waits when no page is open: nothing ticks).
//!
//! Entries are kept where the daemon dispatches connections: an MCP session's tool calls through
//! `McpServer::observed`, an LSP client's requests through `lspface::serve_observed`.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// One connection as listed.
struct Conn {
    kind: &'static str,
    root: String,
    since_ms: i64,
    calls: u64,
    last_tool: Option<String>,
}

/// The connections attached now.
pub(super) struct Connections {
    next: AtomicU64,
    live: Mutex<BTreeMap<u64, Conn>>,
    pulse: tokio::sync::watch::Sender<u64>,
}

impl Default for Connections {
    fn default() -> Connections {
        Connections {
            next: AtomicU64::new(1),
            live: Mutex::default(),
            pulse: tokio::sync::watch::channel(0).0,
        }
    }
}

/// A connection's place in the list, taken out when dropped.
pub(super) struct Attached {
    conns: Arc<Connections>,
    id: u64,
}

impl Connections {
    /// Lists a new connection of `kind` on `root`.
    pub(super) fn attach(self: &Arc<Self>, kind: &'static str, root: &std::path::Path) -> Attached {
        let id = self.next.fetch_add(1, Ordering::AcqRel);
        if let Ok(mut l) = self.live.lock() {
            l.insert(
                id,
                Conn {
                    kind,
                    root: root.display().to_string(),
                    since_ms: crate::events::store::now_ms(),
                    calls: 0,
                    last_tool: None,
                },
            );
        }
        self.bump();
        Attached {
            conns: self.clone(),
            id,
        }
    }

    /// Tells the status page's streams that something changed.
    pub(super) fn bump(&self) {
        self.pulse.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// What the status page's streams wait on.
    pub(super) fn pulse(&self) -> tokio::sync::watch::Receiver<u64> {
        self.pulse.subscribe()
    }

    /// Every connection: `[{id, kind, root, since_ms, calls, last_tool}]`, oldest first.
    pub(super) fn list(&self) -> Value {
        let Ok(l) = self.live.lock() else {
            return Value::Array(Vec::new());
        };
        Value::Array(
            l.iter()
                .map(|(id, c)| {
                    json!({
                        "id": id,
                        "kind": c.kind,
                        "root": c.root,
                        "since_ms": c.since_ms,
                        "calls": c.calls,
                        "last_tool": c.last_tool,
                    })
                })
                .collect(),
        )
    }
}

impl Attached {
    /// Notes a tool call.
    pub(super) fn called(&self, tool: &str) {
        called(&self.conns, self.id, tool);
    }

    /// What an MCP session tells of its tool calls.
    pub(super) fn observer(&self) -> crate::mcp::Observer {
        let (conns, id) = (self.conns.clone(), self.id);
        Arc::new(move |tool: &str| called(&conns, id, tool))
    }
}

fn called(conns: &Connections, id: u64, tool: &str) {
    if let Ok(mut l) = conns.live.lock()
        && let Some(c) = l.get_mut(&id)
    {
        c.calls += 1;
        if c.last_tool.as_deref() != Some(tool) {
            c.last_tool = Some(tool.to_string());
        }
    }
    conns.bump();
}

impl Drop for Attached {
    fn drop(&mut self) {
        if let Ok(mut l) = self.conns.live.lock() {
            l.remove(&self.id);
        }
        self.conns.bump();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_are_listed_while_attached() {
        let conns = Arc::new(Connections::default());
        let pulse = conns.pulse();
        let a = conns.attach("cli", std::path::Path::new("/r"));
        a.called("hover");
        a.observer()("definition");
        let list = conns.list();
        assert_eq!(list[0]["kind"], "cli");
        assert_eq!(list[0]["calls"], 2);
        assert_eq!(list[0]["last_tool"], "definition");
        assert!(pulse.has_changed().unwrap());
        drop(a);
        assert_eq!(conns.list(), json!([]));
    }
}
