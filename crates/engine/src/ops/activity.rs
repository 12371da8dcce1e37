//! Heavy calls and background activities (protocol §3, Activities). At most `max_inflight` heavy
//! calls (those a tool's declaration says are: `check`, `shrink`, `run_task`, `rename` with
//! `apply`, `diagnostics` of the whole workspace), foreground or background, run at once per
//! workspace; one more is refused with `busy`, saying what runs and when to retry.
//! `background: true` on the tools declared to take it (`check`, `shrink`, `run_task`) starts
//! the same call as an activity and answers `{activity_id}` at once: it runs in a session of
//! its own on the shared workspace (so it outlives the session that started it), is recorded
//! in the state database when it starts and when it ends (its final result exactly the
//! foreground call's), and can be cancelled: its future is dropped, which kills the task's
//! process group, and it ends `cancelled`. When lspgate stops, running activities end `failed` with reason `interrupted`;
//! if lspgate dies instead, the next one to open the database records that (`events::store`).
//!
//! A heavy call's place is a `Permit`, given back on drop. An activity id is answered only once the
//! activity is durable (its `activity_started` event flushed); a cancelled or interrupted activity
//! leaves no child process.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};

use super::Engine;
use super::render::ToolOutput;
use crate::error::{Code, ToolError};
use crate::events::store::{self, Finish};

/// Heavy calls per root by default.
pub const MAX_INFLIGHT: usize = crate::workspace::config::DEFAULT_MAX_INFLIGHT;

/// How long a busy caller is told to wait before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// How long a cancel waits for an activity to wind down.
const WIND_DOWN: Duration = Duration::from_secs(10);

/// How long lspgate's stop waits for its activities to record their end before it stops the
/// servers anyway (an activity that did not is recorded `interrupted` at the next start).
pub(crate) const INTERRUPT_WAIT: Duration = Duration::from_secs(2);

/// What runs an admitted call of a tool by name, with a progress callback (done, total): the
/// tools' dispatcher, given by the caller so that this layer knows no tool.
pub type Runner = for<'a> fn(
    &'a Engine,
    &'a str,
    Value,
    &'a (dyn Fn(usize, usize) + Sync),
) -> futures::future::BoxFuture<'a, Result<ToolOutput, ToolError>>;

/// A heavy call in flight.
struct Slot {
    key: u64,
    tool: String,
    activity: Option<String>,
    since: Instant,
}

/// Why an activity is told to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// `activity` with `cancel: true`.
    Cancelled,
    /// lspgate is stopping.
    Interrupted,
}

/// An activity running in this process.
struct Live {
    /// The workspace whose session started it (`Workspace::id`): its shutdown interrupts it.
    workspace: u64,
    kind: String,
    /// As the work reports it.
    progress: Mutex<Option<ActivityProgress>>,
    stop: Mutex<Option<oneshot::Sender<Stop>>>,
    /// Set once its end is recorded.
    ended: watch::Sender<bool>,
}

/// The heavy calls in flight on a root and the activities running on it in this process
/// (shared by the root's workspaces, `OnRoot`).
pub struct Activities {
    max: usize,
    slots: Arc<Mutex<Vec<Slot>>>,
    next: AtomicU64,
    live: Arc<Mutex<HashMap<i64, Arc<Live>>>>,
    /// Tests: while true, a starting activity waits just before its id is answered.
    #[cfg(test)]
    hold: watch::Sender<bool>,
}

/// A place among the heavy calls in flight, given back when dropped.
pub struct Permit {
    slots: Arc<Mutex<Vec<Slot>>>,
    key: u64,
}

impl Permit {
    fn label(&self, activity: &str) {
        if let Ok(mut s) = self.slots.lock()
            && let Some(slot) = s.iter_mut().find(|s| s.key == self.key)
        {
            slot.activity = Some(activity.to_string());
        }
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        if let Ok(mut s) = self.slots.lock() {
            s.retain(|s| s.key != self.key);
        }
    }
}

impl Activities {
    pub fn new(max_inflight: usize) -> Activities {
        Activities {
            max: max_inflight.max(1),
            slots: Arc::default(),
            next: AtomicU64::new(1),
            live: Arc::default(),
            #[cfg(test)]
            hold: watch::channel(false).0,
        }
    }

    /// The heavy calls allowed at once.
    pub fn max_inflight(&self) -> usize {
        self.max
    }

    /// Activities running in this process that `workspace` started.
    pub fn running_of(&self, workspace: u64) -> usize {
        self.live
            .lock()
            .map(|l| l.values().filter(|a| a.workspace == workspace).count())
            .unwrap_or(0)
    }

    /// A place for a heavy call of `tool`, or `busy`.
    pub fn admit(&self, tool: &str) -> Result<Permit, ToolError> {
        let Ok(mut slots) = self.slots.lock() else {
            return Err(ToolError::internal("the heavy-call count is poisoned"));
        };
        if slots.len() >= self.max {
            let in_flight: Vec<Value> = slots
                .iter()
                .map(|s| {
                    let mut v = json!({"tool": s.tool, "seconds": s.since.elapsed().as_secs()});
                    if let Some(a) = &s.activity {
                        v["activity_id"] = Value::from(a.as_str());
                    }
                    v
                })
                .collect();
            let names: Vec<String> = slots
                .iter()
                .map(|s| match &s.activity {
                    Some(a) => format!("{} ({a})", s.tool),
                    None => s.tool.clone(),
                })
                .collect();
            return Err(ToolError::new(
                Code::Busy,
                format!(
                    "{} heavy calls already run on this workspace ({}; max_inflight {}): retry in {} s or once one ends (`activity` shows background ones)",
                    slots.len(),
                    names.join(", "),
                    self.max,
                    RETRY_AFTER.as_secs()
                ),
            )
            .with_data(json!({
                "running": slots.len(),
                "max_inflight": self.max,
                "in_flight": in_flight,
                "retry_after_ms": RETRY_AFTER.as_millis() as u64,
            })));
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        slots.push(Slot {
            key,
            tool: tool.to_string(),
            activity: None,
            since: Instant::now(),
        });
        Ok(Permit {
            slots: self.slots.clone(),
            key,
        })
    }

    fn live(&self, n: i64) -> Option<Arc<Live>> {
        self.live.lock().ok().and_then(|l| l.get(&n).cloned())
    }
}

/// An activity as `activity` reports it.
#[derive(Debug, Clone, serde::Serialize, schemars::JsonSchema)]
pub struct ActivityResult {
    pub id: String,
    pub kind: String,
    /// running, succeeded, failed or cancelled.
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress: Option<ActivityProgress>,
    /// The final result: exactly what the call in the foreground returns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<serde_json::Map<String, Value>>,
    /// `{code, message, data}` of a failed call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<serde_json::Map<String, Value>>,
    /// Why it did not succeed: `cancelled`, `interrupted` (lspgate stopped), or the error's code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The final result's text, as the foreground call renders it (not in structured output).
    #[serde(skip)]
    pub text: Option<String>,
}

#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct ActivityProgress {
    pub done: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

fn object(v: Option<Value>) -> Option<serde_json::Map<String, Value>> {
    match v {
        Some(Value::Object(m)) => Some(m),
        _ => None,
    }
}

impl Engine {
    /// A place among the heavy calls for a call of tool `name`, if it is `heavy` (its
    /// declaration says: `ToolDef::is_heavy`).
    pub(crate) fn admit_heavy(&self, name: &str, heavy: bool) -> Result<Option<Permit>, ToolError> {
        if !heavy {
            return Ok(None);
        }
        self.activities.admit(name).map(Some)
    }

    /// Starts `name` (admitted, `background` taken out) as an activity run by `runner`;
    /// answers `{activity_id}` once its start is recorded.
    ///
    /// Everything from recording the start on happens in the activity's own task, so a caller
    /// dropped meanwhile (a cancelled call, a closed connection) leaves no activity half made:
    /// one whose id never reached its caller ends at once, `cancelled`.
    pub(crate) async fn start_activity(
        &self,
        name: &str,
        args: Value,
        runner: Runner,
    ) -> Result<ToolOutput, ToolError> {
        let permit = self.activities.admit(name)?;
        let task = Task {
            kind: name.to_string(),
            // A session of its own on the shared workspace: it outlives the caller's.
            session: Arc::new(Engine::session(self.shared().clone(), self.opts.clone())),
            all: self.activities.live.clone(),
            args,
            runner,
            permit,
        };
        let (told, answer) = oneshot::channel::<Result<i64, ToolError>>();
        tokio::spawn(task.run(told));
        let n = answer
            .await
            .map_err(|_| ToolError::internal("the activity stopped before it started"))??;
        let id = store::activity_id(n);
        let started = json!({"activity_id": id});
        Ok(ToolOutput {
            text: format!(
                "started {name} in the background as {id}; poll it with `activity` (id \"{id}\"), or cancel it there"
            ),
            structured: started,
        })
    }

    /// `activity`: an activity's state, progress and final result; with `cancel`, stops it
    /// first (its child processes killed) and reports it `cancelled`.
    pub async fn activity(&self, id: &str, cancel: bool) -> Result<ActivityResult, ToolError> {
        let missing = || {
            ToolError::new(
                Code::ActivityMissing,
                format!("no activity `{id}` on this workspace"),
            )
            .with_data(json!({"id": id}))
        };
        let n = store::activity_number(id).ok_or_else(missing)?;
        let mut ours = false;
        if let Some(live) = self.activities.live(n) {
            if !cancel {
                return Ok(running(id, &live));
            }
            ours = true;
            self.stop(&live, Stop::Cancelled).await;
        }
        let row = self
            .state
            .run(move |c| store::get_activity(c, n))
            .await?
            .ok_or_else(missing)?;
        if row.state == "running" && cancel && (ours || row.owner == store::process_token()) {
            return Err(ToolError::new(
                Code::Timeout,
                format!(
                    "{id} was told to stop but is still winding down after {} s; it will end `cancelled`: poll it with `activity`",
                    WIND_DOWN.as_secs()
                ),
            )
            .with_data(json!({"id": id, "state": "running"})));
        }
        if row.state == "running" && cancel {
            return Err(ToolError::new(
                Code::ActivityMissing,
                format!(
                    "{id} runs in another lspgate process ({}); cancel it there",
                    row.owner
                        .split(':')
                        .next()
                        .map(|p| format!("pid {p}"))
                        .unwrap_or_default()
                ),
            )
            .with_data(json!({"id": id, "owner": row.owner})));
        }
        Ok(ActivityResult {
            id: id.to_string(),
            kind: row.kind,
            state: row.state,
            progress: row.progress.and_then(|p| serde_json::from_value(p).ok()),
            result: object(row.result),
            error: object(row.error),
            reason: row.reason,
            text: row.text,
        })
    }

    /// Waits for an activity of this process to end (for MCP tasks); its end as `activity`
    /// reports it.
    pub async fn activity_end(&self, id: &str) -> Result<ActivityResult, ToolError> {
        if let Some(live) = store::activity_number(id).and_then(|n| self.activities.live(n)) {
            let mut ended = live.ended.subscribe();
            let _ = ended.wait_for(|e| *e).await;
        }
        self.activity(id, false).await
    }

    /// Progress of an activity of this process, as it is now.
    pub fn activity_progress(&self, id: &str) -> Option<ActivityProgress> {
        let live = store::activity_number(id).and_then(|n| self.activities.live(n))?;
        live.progress.lock().ok().and_then(|p| p.clone())
    }

    /// Tells `live` to stop and waits (bounded) until its end is recorded.
    async fn stop(&self, live: &Live, why: Stop) {
        let mut ended = live.ended.subscribe();
        if let Some(tx) = live.stop.lock().ok().and_then(|mut s| s.take()) {
            let _ = tx.send(why);
        }
        let _ = tokio::time::timeout(WIND_DOWN, ended.wait_for(|e| *e)).await;
    }
}

impl super::Workspace {
    /// This workspace is stopping: every activity it started ends `failed` (reason
    /// `interrupted`); those of the other workspaces on its root go on.
    pub(crate) async fn interrupt_activities(&self) {
        let all: Vec<Arc<Live>> = self
            .activities
            .live
            .lock()
            .map(|l| {
                l.values()
                    .filter(|a| a.workspace == self.id)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let waits = all.iter().map(|live| async move {
            let mut ended = live.ended.subscribe();
            if let Some(tx) = live.stop.lock().ok().and_then(|mut s| s.take()) {
                let _ = tx.send(Stop::Interrupted);
            }
            let _ = ended.wait_for(|e| *e).await;
        });
        futures::future::join_all(waits).await;
    }
}

/// An activity of this process, running.
fn running(id: &str, live: &Live) -> ActivityResult {
    let progress = live.progress.lock().ok().and_then(|p| p.clone());
    ActivityResult {
        id: id.to_string(),
        kind: live.kind.clone(),
        state: "running".into(),
        progress,
        result: None,
        error: None,
        reason: None,
        text: None,
    }
}

/// An admitted activity, to be run in a task of its own (`Task::run`).
struct Task {
    /// Its own session on the shared workspace.
    session: Arc<Engine>,
    kind: String,
    args: Value,
    runner: Runner,
    /// Its place among the heavy calls, held while it runs.
    permit: Permit,
    /// The activities running in this process (`Activities::live`).
    all: Arc<Mutex<HashMap<i64, Arc<Live>>>>,
}

impl Task {
    /// Records the activity's start, hands its number to `told` (or why it could not start),
    /// runs it unless nobody is there to learn the number, and records its end.
    async fn run(self, told: oneshot::Sender<Result<i64, ToolError>>) {
        let Task {
            session,
            kind,
            args,
            runner,
            permit,
            all,
        } = self;
        let (k, params, owner) = (kind.clone(), args.clone(), store::process_token());
        let begun = session
            .state
            .run(move |c| store::begin_activity(c, &k, &params, &owner))
            .await;
        let n = match begun {
            Ok(n) => n,
            Err(e) => {
                let _ = told.send(Err(e.into()));
                return;
            }
        };
        permit.label(&store::activity_id(n));
        let (stop_tx, stop_rx) = oneshot::channel();
        let live = Arc::new(Live {
            workspace: session.id,
            kind: kind.clone(),
            progress: Mutex::new(None),
            stop: Mutex::new(Some(stop_tx)),
            ended: watch::channel(false).0,
        });
        if let Ok(mut l) = all.lock() {
            l.insert(n, live.clone());
        }
        session.events.emit(
            "activity_started",
            store::activity_data(n, &kind, "running", None),
        );
        // Recorded before the id is handed out: lspgate may die right after.
        session.events.flush().await;
        #[cfg(test)]
        let _ = session.activities.hold.subscribe().wait_for(|h| !*h).await;
        let stopped = if told.send(Ok(n)).is_ok() {
            run(&session, runner, &kind, args, &live, stop_rx).await
        } else {
            // Nobody learnt its id: nobody could follow or cancel it.
            Err(Stop::Cancelled)
        };
        drop(permit);
        record_end(&session, n, &kind, finish_of(stopped, &live)).await;
        if let Ok(mut l) = all.lock() {
            l.remove(&n);
        }
        live.ended.send_replace(true);
    }
}

/// How an activity that `stopped` so ends: its state, result or error, and its last progress.
fn finish_of(stopped: Result<Result<ToolOutput, ToolError>, Stop>, live: &Live) -> Finish {
    let mut finish = match stopped {
        Ok(Ok(out)) => Finish {
            state: "succeeded",
            result: Some(out.structured),
            text: Some(out.text),
            ..Finish::default()
        },
        Ok(Err(e)) => Finish {
            state: "failed",
            reason: Some(e.code.as_str().to_string()),
            error: e.to_json().get("error").cloned(),
            ..Finish::default()
        },
        Err(Stop::Cancelled) => Finish {
            state: "cancelled",
            reason: Some("cancelled".into()),
            ..Finish::default()
        },
        Err(Stop::Interrupted) => Finish {
            state: "failed",
            error: Some(json!({
                "code": "internal",
                "message": "interrupted: lspgate stopped before this finished",
                "data": {"reason": "interrupted"},
            })),
            reason: Some("interrupted".into()),
            ..Finish::default()
        },
    };
    finish.progress = live
        .progress
        .lock()
        .ok()
        .and_then(|p| p.clone())
        .and_then(|p| serde_json::to_value(p).ok());
    finish
}

/// Records activity `n`'s end (logging if it cannot) and tells the session's events.
async fn record_end(session: &Engine, n: i64, kind: &str, finish: Finish) {
    let (state, reason) = (finish.state, finish.reason.clone());
    let recorded = session
        .state
        .run(move |c| {
            let tx = store::write_transaction(c)?;
            store::finish_activity(&tx, n, &finish, store::now_ms())?;
            tx.commit()
        })
        .await;
    if let Err(e) = recorded {
        tracing::error!(
            "activity {}: cannot record its end: {e}",
            store::activity_id(n)
        );
    }
    session.events.emit(
        "activity_finished",
        store::activity_data(n, kind, state, reason.as_deref()),
    );
}

/// Runs the call until it ends or is told to stop; the work's future is dropped on a stop,
/// which kills what it started (a task's process group, the server requests it sent).
async fn run(
    session: &Engine,
    runner: Runner,
    name: &str,
    args: Value,
    live: &Live,
    stop: oneshot::Receiver<Stop>,
) -> Result<Result<ToolOutput, ToolError>, Stop> {
    let progress = |done: usize, total: usize| {
        if let Ok(mut p) = live.progress.lock() {
            *p = Some(ActivityProgress {
                done,
                total: Some(total),
                message: Some(format!("{done}/{total} files")),
            });
        }
    };
    tokio::select! {
        out = runner(session, name, args, &progress) => Ok(out),
        why = stop => Err(why.unwrap_or(Stop::Interrupted)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_past_max_inflight_is_busy_and_says_what_runs() {
        let a = Activities::new(2);
        let one = a.admit("check").unwrap();
        one.label("act-1");
        let _two = a.admit("run_task").unwrap();
        let e = a.admit("shrink").err().unwrap();
        assert_eq!(e.code, Code::Busy);
        let data = e.data.unwrap();
        assert_eq!(data["running"], 2);
        assert_eq!(data["max_inflight"], 2);
        assert_eq!(data["in_flight"][0]["activity_id"], "act-1");
        assert!(data["retry_after_ms"].as_u64().unwrap() > 0);
        drop(one);
        assert!(a.admit("shrink").is_ok());
    }
}

/// Engines whose activities can be made to hang, for tests of this crate and the ones above
/// (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
#[allow(clippy::unwrap_used, clippy::expect_used)]
pub mod dropped {
    use std::sync::Arc;
    #[cfg(test)]
    use std::time::Duration;

    #[cfg(test)]
    use serde_json::json;

    use crate::ops::{Engine, EngineOptions};
    use crate::registry::{Registry, RegistryOptions};
    use crate::workspace::Root;
    use crate::workspace::config::Config;

    /// An engine on `dir` with no server at all (none configured, none found), and its state
    /// in `dir/.lspgate`.
    pub fn engine(dir: &std::path::Path) -> Arc<Engine> {
        engine_with(dir, EngineOptions::default()).1
    }

    /// `engine` with `opts` (its `state_dir` set to `dir/.lspgate`), and its registry.
    pub fn engine_with(dir: &std::path::Path, opts: EngineOptions) -> (Arc<Registry>, Arc<Engine>) {
        let root = Root::new(dir).unwrap();
        let registry = Registry::with_config_using(
            root,
            &Config::default(),
            RegistryOptions::default(),
            |_| None,
        );
        let opts = EngineOptions {
            state_dir: dir.join(".lspgate"),
            ..opts
        };
        let engine = Arc::new(Engine::new(registry.clone(), opts));
        (registry, engine)
    }

    /// An activity of this process that never ends, even when told to stop (its end cannot be
    /// recorded, say).
    pub fn stuck(engine: &Engine, n: i64) {
        let live = Arc::new(super::Live {
            workspace: engine.id,
            kind: "check".into(),
            progress: std::sync::Mutex::new(None),
            stop: std::sync::Mutex::new(None),
            ended: tokio::sync::watch::channel(false).0,
        });
        engine.activities.live.lock().unwrap().insert(n, live);
    }

    #[tokio::test(start_paused = true)]
    async fn a_workspace_stops_its_servers_soon_whatever_its_activities_do() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path());
        stuck(&engine, 1);
        let t0 = tokio::time::Instant::now();
        engine.shared().shutdown().await;
        // The daemon used to give a workspace's whole stop 5 s, after up to 10 s of waiting for
        // activities: the servers were never stopped.
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "the servers waited {:?} for a stuck activity",
            t0.elapsed()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_cancel_that_outlasts_the_wind_down_says_it_is_still_stopping_here() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path());
        let owner = super::store::process_token();
        let n = engine
            .state
            .run(move |c| super::store::begin_activity(c, "check", &json!({}), &owner))
            .await
            .unwrap();
        stuck(&engine, n);
        let e = engine
            .activity(&super::store::activity_id(n), true)
            .await
            .unwrap_err();
        assert!(
            !e.message.contains("another lspgate process"),
            "{}",
            e.message
        );
        assert!(e.message.contains("still winding down"), "{}", e.message);
        // Its record is this process's, found by owner once it is no longer live.
        engine.activities.live.lock().unwrap().clear();
        let e = engine
            .activity(&super::store::activity_id(n), true)
            .await
            .unwrap_err();
        assert!(e.message.contains("still winding down"), "{}", e.message);
    }

    /// The call that starts an activity is dropped once the activity is live, before it
    /// answers (a client's cancel, a closed connection): the activity still ends, and the
    /// workspace is not left busy.
    #[tokio::test]
    async fn a_caller_dropped_while_its_activity_starts_leaves_nothing_running() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path());
        // Held live and unanswered (a hook in this process; the call used to be pending there
        // anyway, awaiting the log's flush).
        engine.activities.hold.send_replace(true);
        let mut call = Box::pin(engine.start_activity(
            "run_task",
            json!({"name": "nothing"}),
            crate::ops::tools::run_boxed,
        ));
        let mut dropped_live = false;
        for _ in 0..2_000 {
            if futures::poll!(&mut call).is_ready() {
                break;
            }
            if engine.activities.running_of(engine.id) > 0 {
                dropped_live = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop(call);
        engine.activities.hold.send_replace(false);
        assert!(
            dropped_live,
            "the activity never went live before its call answered"
        );
        for _ in 0..500 {
            if !engine.shared().busy() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            !engine.shared().busy(),
            "the activity is still running in this process"
        );
        let a = engine.activity("act-1", false).await.unwrap();
        assert_ne!(a.state, "running", "{a:?}");
    }
}
