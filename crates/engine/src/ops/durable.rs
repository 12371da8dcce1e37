//! The `events` and `activity` tools: their parameters, results and text renderings, over the
//! workspace's durable event log (`crate::events`) and its activities (`activity`); and what
//! the operations tell the log (fresh diagnostic counts of files on disk).
//! Those counts come from fresh diagnostics of disk content, never an overlay's.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Engine;
use super::activity::ActivityResult;
use super::render::Render;
use super::types::Num;
use crate::error::ToolError;
use crate::events::{Event, KINDS};

/// Events one call returns by default, and at most.
const DEFAULT_LIMIT: i64 = 100;
const MAX_LIMIT: i64 = 1_000;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct EventsParams {
    /// Events after this seq: the `next` of the previous call (default 0: from the oldest).
    #[serde(default)]
    pub after: Option<Num>,
    // At most this many (default 100, at most 1,000).
    #[serde(default)]
    pub limit: Option<Num>,
    // Only these kinds.
    #[serde(default)]
    #[schemars(schema_with = "kinds_schema")]
    pub kinds: Option<Vec<String>>,
    #[serde(default)]
    pub terse: Option<bool>,
}

/// `kinds`: a list of event kinds, named in the schema.
fn kinds_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "array", "items": {"enum": KINDS}})
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EventsResult {
    pub events: Vec<Event>,
    /// Pass as `after` to continue.
    pub next: i64,
    /// More events follow `next` already.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub more: bool,
    /// Events after `after` and before this seq were pruned (the log keeps the newest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pruned_before: Option<i64>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct ActivityParams {
    // The `activity_id` a background call returned.
    pub id: String,
    /// Stop it: its work ends and its child processes are killed.
    #[serde(default)]
    pub cancel: Option<bool>,
    #[serde(default)]
    pub terse: Option<bool>,
}

impl Engine {
    /// Fresh diagnostics of a file's content on disk (not an overlay's) go to the event log,
    /// which records `diagnostics_changed` when the file's counts differ from the last seen.
    /// The hooks keep them too, stamped with `tick`, the registry's change clock when they
    /// were asked for (`hook::Held`; none when a change was delivered meanwhile).
    pub(super) fn saw_diagnostics(
        &self,
        server: &crate::registry::Server,
        lease: &crate::documents::Lease,
        found: &Result<crate::documents::DocDiagnostics, ToolError>,
        tick: Option<u64>,
    ) {
        let Ok(d) = found else { return };
        if !d.fresh || lease.is_overlay() {
            return;
        }
        let Ok(path) = lease.snap.uri.to_file_path() else {
            return;
        };
        let snap = &lease.snap;
        let said = super::diags(snap, d.diagnostics.clone())
            .iter()
            .map(|x| super::hook::Said::of(x, snap.line(x.line)))
            .collect();
        let content = super::hook::content_hash(&snap.text);
        if let Some(tick) = tick {
            self.held.record(&path, &server.name, tick, content, said);
        }
        let count = |s: crate::lsp::wire::Severity| {
            d.diagnostics.iter().filter(|x| x.severity == s).count() as u32
        };
        self.events.saw_diagnostics(
            self.root().relative(&path),
            &server.name,
            count(crate::lsp::wire::Severity::Error),
            count(crate::lsp::wire::Severity::Warning),
        );
    }

    pub async fn events(&self, p: EventsParams) -> Result<EventsResult, ToolError> {
        let after = match p.after {
            None => 0,
            Some(Num(n)) if n >= 0 => n,
            Some(Num(n)) => {
                return Err(ToolError::invalid(format!(
                    "`after` is a seq (0 or more), got {n}"
                )));
            }
        };
        let limit = match p.limit {
            None => DEFAULT_LIMIT,
            Some(Num(n)) if (1..=MAX_LIMIT).contains(&n) => n,
            Some(Num(n)) => {
                return Err(ToolError::invalid(format!(
                    "`limit` must be 1 to {MAX_LIMIT}, got {n}"
                )));
            }
        };
        let kinds = p.kinds.unwrap_or_default();
        if let Some(bad) = kinds.iter().find(|k| !KINDS.contains(&k.as_str())) {
            return Err(ToolError::invalid(format!(
                "`{bad}` is not an event kind; kinds: {}",
                KINDS.join(", ")
            ))
            .with_data(serde_json::json!({"kinds": KINDS})));
        }
        let page = self.events.read(after, limit as usize, kinds).await?;
        Ok(EventsResult {
            events: page.events,
            next: page.next,
            more: page.more,
            pruned_before: page.pruned_before,
        })
    }
}

impl Render for EventsResult {
    fn render(&self, terse: bool) -> String {
        let mut out = String::new();
        if let Some(p) = self.pruned_before {
            let _ = writeln!(
                out,
                "events before {p} were pruned; the log starts there now"
            );
        }
        for e in &self.events {
            let data = serde_json::Value::Object(e.data.clone());
            if terse {
                let _ = writeln!(out, "{} {} {data}", e.seq, e.kind);
            } else {
                let _ = writeln!(out, "{} {} {} {data}", e.seq, e.time, e.kind);
            }
        }
        if self.events.is_empty() {
            out.push_str("no new events\n");
        }
        let _ = write!(
            out,
            "next: {}{}",
            self.next,
            if self.more {
                " (more follow: call again with this `after`)"
            } else {
                ""
            }
        );
        out
    }
}

impl Render for ActivityResult {
    fn render(&self, _terse: bool) -> String {
        let mut out = format!("{} ({}): {}", self.id, self.kind, self.state);
        if let Some(p) = &self.progress {
            match (p.total, &p.message) {
                (_, Some(m)) => {
                    let _ = write!(out, ", {m}");
                }
                (Some(t), None) => {
                    let _ = write!(out, ", {}/{t}", p.done);
                }
                (None, None) => {
                    let _ = write!(out, ", {} done", p.done);
                }
            }
        }
        if let Some(r) = &self.reason {
            let _ = write!(out, " ({r})");
        }
        if let Some(e) = &self.error {
            let code = e.get("code").and_then(|c| c.as_str()).unwrap_or("");
            let message = e.get("message").and_then(|c| c.as_str()).unwrap_or("");
            let _ = write!(out, "\n{code}: {message}");
        }
        // The final result's text, as the call rendered it (terse if it was asked so).
        if let Some(t) = &self.text {
            let _ = write!(out, "\n{t}");
        }
        out
    }
}
