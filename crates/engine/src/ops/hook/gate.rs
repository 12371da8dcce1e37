//! A harness session's start and its turn's end. At the start, the workspace is warmed without
//! waiting: its servers started and a baseline pass that asks every served file once, so the
//! first edit meets a warm server and its importers' baselines are known answers. At the
//! turn's end, the gate: every file the session wrote and every importer of a name it changed
//! asked, with no budget cut but the gate's bound, and compared with what they said before the
//! session's first edit; the errors the session introduced that are still present are the
//! verdict (those an earlier gate named already only counted when the harness goes on because
//! of it).
//! The start's pass ends with a `hook` event of stage `start`.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::time::Instant;

use super::after::{self, absorb, sort_findings};
use super::before::Before;
use super::{HookAsk, HookVerdict, MAX_LISTED, Stage};
use crate::ops::Engine;

/// Files a baseline pass asks, at most.
const PASS_FILES: usize = 5_000;

impl Engine {
    /// The session starts: the servers of the workspace's languages started and the baseline
    /// pass begun, in the background.
    pub(super) fn session_starts(&self, ask: &HookAsk) {
        tracing::info!(
            "hook: session {} starts: warming the workspace",
            ask.session
        );
        let engine = Arc::new(Engine::session(
            self.shared().clone(),
            self.options().clone(),
        ));
        engine.warm();
        let session = ask.session.clone();
        tokio::spawn(async move {
            engine.registry.start_watching().await;
            // One pass at a time per workspace: a second session's start finds it running.
            if engine.ledger.passing.swap(true, Ordering::AcqRel) {
                return;
            }
            engine.baseline_pass(&session).await;
            engine.ledger.passing.store(false, Ordering::Release);
        });
    }

    /// Every served file of the workspace asked once (unless asked since its last change), so
    /// the hooks' baselines are answers already known; recorded in the event log when done
    /// (a `hook` event of stage `start`).
    async fn baseline_pass(&self, session: &str) {
        let started = Instant::now();
        let ws = self.shared().clone();
        let files: Vec<PathBuf> = tokio::task::spawn_blocking(move || ws.registry.tree())
            .await
            .unwrap_or_default()
            .iter()
            .filter(|p| self.served(p))
            .take(PASS_FILES)
            .cloned()
            .collect();
        self.registry.sync().await;
        let now = self.registry.tick();
        self.ask_each(&files, Stage::PreEdit, now, |_, _, _| {})
            .await;
        tracing::info!(
            "hook: baseline pass of {} files in {:?}",
            files.len(),
            started.elapsed()
        );
        self.events.emit(
            "hook",
            serde_json::json!({
                "stage": Stage::Start,
                "session": session,
                "baseline_files": files.len(),
                "ms": started.elapsed().as_millis() as u64,
            }),
        );
    }

    /// The turn-end gate (see the module's comment), until `deadline`.
    pub(super) async fn turn_ends(
        &self,
        ask: &HookAsk,
        previous: Option<u64>,
        deadline: Instant,
        v: &mut HookVerdict,
    ) {
        // What background checks had to tell is superseded: everything is asked again now.
        let _ = self.ledger.take_later(&ask.session);
        let (origins, first_tick) = self.ledger.origins(&ask.session);
        let now = self.registry.tick();
        let first_tick = first_tick.or(previous).unwrap_or(now);
        let written: Vec<PathBuf> = origins
            .iter()
            .map(|(p, _)| p.clone())
            .filter(|p| self.served(p))
            .collect();
        if written.is_empty() {
            return;
        }
        v.files = written
            .iter()
            .take(MAX_LISTED)
            .map(|p| self.root().relative(p))
            .collect();
        let is_written: HashSet<PathBuf> = written.iter().cloned().collect();
        let changed = after::changed(self.root(), &written, &origins);
        let deps = match &changed {
            Some(c) if c.names.is_empty() => Vec::new(),
            _ => {
                let reach = changed.map(|c| c.reaching);
                let found = self.dependents(&written, reach);
                tokio::time::timeout_at(deadline, found)
                    .await
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|p| self.served(p) && !is_written.contains(p))
                    .collect()
            }
        };
        let targets: Vec<PathBuf> = written
            .iter()
            .filter(|p| p.is_file())
            .cloned()
            .chain(deps)
            .collect();
        let baselines = self
            .gate_baselines(ask, &targets, &origins, first_tick, deadline)
            .await;
        let asked = self.ask_all(&targets, Stage::PostEdit, now, deadline).await;
        let answered: HashSet<PathBuf> = asked.iter().map(|(p, _)| p.clone()).collect();
        let unchecked: Vec<&PathBuf> = targets.iter().filter(|p| !answered.contains(*p)).collect();
        v.checked = asked.len();
        v.unchecked = unchecked.len();
        v.timed_out = !unchecked.is_empty();
        v.unchecked_files = unchecked
            .iter()
            .take(MAX_LISTED)
            .map(|p| self.root().relative(p))
            .collect();
        for (path, a) in asked {
            let written = is_written.contains(&path);
            let c = self.compare(&path, a, &baselines, &ask.session, ask.severity, written);
            absorb(v, c);
        }
        sort_findings(&mut v.introduced);
        sort_findings(&mut v.present);
        // Named once: a harness that goes on because of this gate is stopped again only for
        // what was not named yet.
        let new = self.ledger.name(&ask.session, &v.introduced);
        if ask.stop_hook_active {
            v.named_before = v.introduced.len() - new.len();
            v.introduced = new;
        }
    }

    /// Each target's baseline per server as it was before the session's first edit: the one
    /// its first hook compared it with, else nothing for a file the session created, else
    /// what was known before that edit, else rebuilt from the written files' first texts
    /// (until half the time left).
    async fn gate_baselines(
        &self,
        ask: &HookAsk,
        targets: &[PathBuf],
        origins: &[(PathBuf, Before)],
        first_tick: u64,
        deadline: Instant,
    ) -> after::Baselines {
        let created: HashSet<&PathBuf> = origins
            .iter()
            .filter(|(_, b)| *b == Before::Absent)
            .map(|(p, _)| p)
            .collect();
        let mut out = after::Baselines::new();
        let mut missing = Vec::new();
        for p in targets {
            let mut lacking = Vec::new();
            for name in self.registry.by_language(&self.languages().detect(p)) {
                let known = self
                    .ledger
                    .first_baseline(&ask.session, p, &name)
                    .or_else(|| created.contains(p).then(Arc::default))
                    .or_else(|| self.held.before(p, &name, first_tick, None).map(|(s, _)| s));
                if known.is_none() {
                    lacking.push(name.clone());
                }
                out.insert((p.clone(), name), known);
            }
            if !lacking.is_empty() {
                missing.push((p.clone(), lacking));
            }
        }
        if !missing.is_empty() {
            let written: Vec<PathBuf> = origins.iter().map(|(p, _)| p.clone()).collect();
            let left = deadline.saturating_duration_since(Instant::now());
            let rebuilt = self
                .rebuild(&written, origins, &missing, Instant::now() + left / 2)
                .await;
            for (key, said) in rebuilt {
                out.insert(key, Some(said));
            }
        }
        out
    }
}
