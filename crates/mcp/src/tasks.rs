//! Activities as MCP tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663), through
//! rmcp's `TaskManager`: when a client that declared the extension calls a tool with
//! `background: true`, the activity is started as for any client and the call answers with a
//! task that ends when the activity ends. `tasks/get` reports it (its status message names the
//! activity and its progress; its result is the foreground call's `CallToolResult`), and
//! `tasks/cancel` cancels the activity. The activity stays reachable through `activity` too.
//!
//! A task ends with its session (the activity goes on) and lives `TTL` (30 minutes) from its
//! creation, rmcp's rule; a finished task's result is kept as long again.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, CreateTaskResult};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use serde_json::Value;

use crate::error::ToolError;
use crate::ops::Engine;
use crate::ops::activity::ActivityResult;

/// How often a task's status message follows its activity's progress.
const STATUS_EVERY: Duration = Duration::from_secs(1);

/// How long a task lasts: rmcp's TTL counts from the task's creation (a task still working
/// then is marked failed, though its activity goes on, reachable through `activity`), and a
/// finished task's result is kept as long again after it ends, then dropped.
pub const TTL: Duration = Duration::from_secs(30 * 60);

/// Makes the task that follows activity `id`, until the activity ends or `ended` completes
/// (the session is gone: nobody is left to ask; the activity itself goes on).
pub fn follow(
    tasks: &TaskManager,
    engine: Arc<Engine>,
    id: String,
    ended: impl std::future::Future<Output = ()> + Send + 'static,
) -> CreateTaskResult {
    let options = TaskOptions::new()
        .with_ttl_ms(TTL.as_millis() as u64)
        .with_status_message(format!("activity {id}"));
    let task = tasks.spawn(options, move |ctx| {
        Box::pin(async move {
            let status = async {
                let mut tick = tokio::time::interval(STATUS_EVERY);
                loop {
                    tick.tick().await;
                    if let Some(p) = engine.activity_progress(&id) {
                        let m = p.message.unwrap_or_else(|| match p.total {
                            Some(t) => format!("{}/{t}", p.done),
                            None => format!("{} done", p.done),
                        });
                        ctx.set_status_message(format!("activity {id}: {m}"));
                    }
                }
            };
            tokio::select! {
                end = engine.activity_end(&id) => outcome(end),
                _ = ctx.cancelled() => {
                    if let Err(e) = engine.activity(&id, true).await {
                        tracing::warn!("cancelling {id}: {e}");
                    }
                    Err(TaskExit::Cancelled)
                }
                () = status => Err(TaskExit::Cancelled),
                () = ended => Err(TaskExit::Cancelled),
            }
        })
    });
    CreateTaskResult::new(task)
}

/// The task's end: the activity's final result as the foreground call would have returned it.
fn outcome(end: Result<ActivityResult, ToolError>) -> Result<CallToolResult, TaskExit> {
    let a = match end {
        Ok(a) => a,
        Err(e) => return Ok(super::error_result(&e)),
    };
    match a.state.as_str() {
        "succeeded" => {
            let mut r =
                CallToolResult::success(vec![ContentBlock::text(a.text.unwrap_or_default())]);
            r.structured_content = a.result.map(Value::Object);
            Ok(r)
        }
        "cancelled" => Err(TaskExit::Cancelled),
        _ => {
            let error = a.error.map(Value::Object).unwrap_or_default();
            let text = format!(
                "{}: {}",
                error["code"].as_str().unwrap_or("internal"),
                error["message"].as_str().unwrap_or("the activity failed")
            );
            let mut r = CallToolResult::error(vec![ContentBlock::text(text)]);
            r.structured_content = Some(serde_json::json!({"error": error}));
            Ok(r)
        }
    }
}
