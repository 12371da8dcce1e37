//! The MCP front end: an rmcp `ServerHandler` that lists the tools the servers can serve and
//! calls the operations layer, behind our stdio framing guard (`stdio`) or our Streamable HTTP
//! front end (`http`, with its request guard in `guard`). Thin: no logic of its own.
//!
//! `tools/list` is the tool table filtered by what the servers support and the session's profile
//! (`tool_list_of`; `tool` makes a row's MCP tool: title, schemas, annotations), `instructions` are
//! `ops::tools::INSTRUCTIONS`, and `tools/call` runs `ops::tools::call_with_progress`: a failure is
//! an `isError` result (`error_result`), and the client's cancellation drops the call, which sends
//! the servers `$/cancelRequest`. Server restarts and give-ups reach the session as
//! `notifications/message`. The tasks a session spawns (log forwarding, subscription followers)
//! select on `McpServer::ended`, which completes when rmcp drops the handler (stdio or daemon
//! connection closed, HTTP session gone), so they end with the session, never at its next event
//! (`tests.rs`).

// Unit tests read their own temporary files directly.
#![cfg_attr(test, allow(clippy::disallowed_methods))]

// The layers below, by the names every module here uses for them.
use lspgate_base::text;
use lspgate_core::{events, workspace};
use lspgate_engine::{error, ops};

pub mod guard;
pub mod http;
pub mod resources;
pub mod status;
pub mod stdio;
pub mod tasks;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::error::{Code, ToolError};
use crate::ops::Engine;
use crate::ops::tools;

/// The resource listing the servers (protocol §3).
pub use resources::SERVERS_URI;

/// What a session tells of each tool called: its name.
pub type Observer = Arc<dyn Fn(&str) + Send + Sync>;

/// The MCP server over one engine.
#[derive(Clone)]
pub struct McpServer {
    engine: Arc<Engine>,
    /// Least severity of `notifications/message` the client wants (0 debug … 3 error).
    log_level: Arc<std::sync::atomic::AtomicU8>,
    /// The session's resource subscriptions.
    subscriptions: Arc<resources::Subscriptions>,
    /// Background calls of clients that declared MCP tasks, as tasks.
    tasks: rmcp::task_manager::TaskManager,
    /// The largest message the transport accepts, told to clients in `initialize`.
    max_frame: usize,
    /// Held for the session's life (the HTTP front end counts its sessions with it, the
    /// daemon lists them).
    _held: Vec<Arc<dyn std::any::Any + Send + Sync>>,
    /// Told the name of each tool called (the daemon's list of sessions).
    observer: Option<Observer>,
    /// Dropped with the session's last handle, which ends the tasks it spawned.
    life: Arc<tokio::sync::watch::Sender<()>>,
    /// Where each listen stream being set up follows the event log from.
    baselines: Arc<Baselines>,
}

/// The seq a listen stream follows the event log from, per stream: taken when its filter is
/// accepted (the acknowledgment goes out before `listen` runs) and claimed by its `listen`. rmcp
/// runs each request in a task of its own, from the filter through `listen`, so the task names
/// the stream.
#[derive(Default)]
struct Baselines(std::sync::Mutex<std::collections::HashMap<tokio::task::Id, i64>>);

impl Baselines {
    /// This stream follows the log from `seq`.
    fn set(&self, seq: i64) {
        if let (Some(id), Ok(mut b)) = (tokio::task::try_id(), self.0.lock()) {
            b.insert(id, seq);
        }
    }

    /// Where this stream follows the log from, if its filter set it.
    fn take(&self) -> Option<i64> {
        let id = tokio::task::try_id()?;
        self.0.lock().ok()?.remove(&id)
    }
}

fn severity(level: &str) -> u8 {
    match level {
        "debug" => 0,
        "info" => 1,
        "warning" => 2,
        _ => 3,
    }
}

impl McpServer {
    /// A session over `engine` whose transport accepts messages of up to `max_frame` bytes.
    pub fn new(engine: Arc<Engine>, max_frame: usize) -> McpServer {
        McpServer {
            engine,
            log_level: Arc::new(std::sync::atomic::AtomicU8::new(1)),
            subscriptions: Arc::default(),
            tasks: rmcp::task_manager::TaskManager::new(),
            max_frame,
            _held: Vec::new(),
            observer: None,
            life: Arc::new(tokio::sync::watch::channel(()).0),
            baselines: Arc::default(),
        }
    }

    /// Completes when the session has ended: rmcp drops the handler (every clone of it) when
    /// its transport closes (stdio, a daemon connection) or its HTTP session goes. The tasks a
    /// session spawns (log forwarding, subscriptions) end with it, not at the next event.
    fn ended(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let mut life = self.life.subscribe();
        async move { while life.changed().await.is_ok() {} }
    }

    /// Keeps `held` alive as long as the session (any of its clones) is.
    pub fn holding(mut self, held: Arc<dyn std::any::Any + Send + Sync>) -> McpServer {
        self._held.push(held);
        self
    }

    /// Tells `observer` the name of every tool this session calls.
    pub fn observed(mut self, observer: Observer) -> McpServer {
        self.observer = Some(observer);
        self
    }

    /// lspgate's limits, as `initialize` reports them under `capabilities.experimental.lspgate`
    /// (protocol §2).
    fn limits(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("max_frame".into(), Value::from(self.max_frame));
        m.insert(
            "max_output".into(),
            Value::from(self.engine.options().max_output),
        );
        m.insert(
            "max_inflight".into(),
            Value::from(self.engine.shared().max_inflight()),
        );
        // The result shapes' version (protocol §1): 2, lists grouped per file.
        m.insert(
            "shapes".into(),
            Value::from(crate::ops::types::compact::SHAPES),
        );
        m
    }

    fn tool_list(&self) -> Vec<Tool> {
        tool_list_of(&self.engine, tools::tools())
    }
}

/// The tools of `table` that `engine`'s session offers, as `tools/list` sends them.
pub fn tool_list_of(engine: &Engine, table: &[tools::ToolDef]) -> Vec<Tool> {
    table
        .iter()
        .filter(|d| tools::offered(engine, d))
        .map(tool)
        .collect()
}

/// A tool as `tools/list` sends it: name, title, description, schemas and annotations, all
/// from the tool table.
pub fn tool(def: &tools::ToolDef) -> Tool {
    let hints = def.effect.hints();
    // The title is the tool's own (`title`), not repeated in the annotations.
    let mut annotations = ToolAnnotations::new()
        .read_only(hints.read_only)
        .open_world(hints.open_world);
    annotations.destructive_hint = hints.destructive;
    annotations.idempotent_hint = hints.idempotent;
    let input = as_object(def.input_schema());
    let output = as_object(def.output_schema());
    Tool::new(def.name, def.description, Arc::new(input))
        .with_title(def.title)
        .with_raw_output_schema(Arc::new(output))
        .with_annotations(annotations)
}

fn as_object(v: &Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m.clone(),
        _ => serde_json::Map::new(),
    }
}

pub(crate) fn error_result(e: &ToolError) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
    r.structured_content = Some(e.to_json());
    r
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // logging: see on_initialized.
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_logging()
            .enable_tasks()
            .build();
        capabilities.experimental = Some([("lspgate".to_string(), self.limits())].into());
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("lspgate", env!("CARGO_PKG_VERSION")))
            .with_instructions(tools::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tool_list()))
    }

    /// Server restarts, give-ups and memory kills go to the client as `notifications/message`.
    #[allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577); protocol §3 uses it.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
        let mut events = self.engine.registry().events();
        let peer = context.peer;
        let min = self.log_level.clone();
        let ended = self.ended();
        tokio::spawn(async move {
            tokio::pin!(ended);
            loop {
                let e = tokio::select! {
                    e = events.recv() => match e {
                        Ok(e) => e,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                        Err(_) => return,
                    },
                    () = &mut ended => return,
                };
                if severity(e.level) < min.load(std::sync::atomic::Ordering::Relaxed) {
                    continue;
                }
                let level = match e.level {
                    "error" => LoggingLevel::Error,
                    "warning" => LoggingLevel::Warning,
                    _ => LoggingLevel::Info,
                };
                let mut param = LoggingMessageNotificationParam::new(
                    level,
                    serde_json::json!({"server": e.server, "message": e.message}),
                );
                param.logger = Some("lspgate".into());
                if peer.notify_logging_message(param).await.is_err() {
                    return;
                }
            }
        });
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        use rmcp::model::LoggingLevel;
        let level = match request.level {
            LoggingLevel::Debug => 0,
            LoggingLevel::Info | LoggingLevel::Notice => 1,
            LoggingLevel::Warning => 2,
            _ => 3,
        };
        self.log_level
            .store(level, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        Ok(ListResourcesResult::with_all_items(resources::list()))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListResourceTemplatesResult, McpError> {
        Ok(rmcp::model::ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        Ok(resources::read(&self.engine, &request.uri).await?.into())
    }

    #[allow(deprecated)] // resources/subscribe: MCP before 2026-07-28 (`listen` below after).
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let since = self
            .subscriptions
            .add(&self.engine, &request.uri, None)
            .await?;
        self.subscriptions.follow_for(
            self.engine.clone(),
            context.peer.clone(),
            since,
            self.ended(),
        );
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.subscriptions.remove(&request.uri).await;
        Ok(())
    }

    /// `subscriptions/listen` (MCP 2026-07-28): resource list changes and any of lspgate's
    /// resources.
    fn accepted_subscription_filter(
        &self,
        requested: &rmcp::model::SubscriptionFilter,
    ) -> Option<rmcp::model::SubscriptionFilter> {
        // The acknowledgment goes out before `listen` runs: a change after it must be heard,
        // so the stream follows the log from here.
        self.baselines.set(self.engine.shared().events().written());
        let mut accepted = rmcp::model::SubscriptionFilter::new();
        accepted.resources_list_changed = requested.resources_list_changed;
        accepted.resource_subscriptions = requested.resource_subscriptions.as_ref().map(|uris| {
            uris.iter()
                .filter(|u| resources::Target::parse(u).is_some())
                .cloned()
                .collect()
        });
        Some(accepted)
    }

    async fn listen(&self, context: rmcp::service::SubscriptionContext) -> Result<(), McpError> {
        let since = self
            .baselines
            .take()
            .unwrap_or_else(|| self.engine.shared().events().written());
        let subs = resources::Subscriptions::default();
        for uri in context
            .accepted()
            .resource_subscriptions
            .clone()
            .unwrap_or_default()
        {
            subs.add(&self.engine, &uri, Some(since)).await?;
        }
        let list = context.accepted().resources_list_changed == Some(true);
        let out = resources::Out::Listen(context.sink().clone());
        tokio::select! {
            () = subs.follow(&self.engine, &out, list, since) => {}
            () = context.cancelled() => {}
        }
        Ok(())
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, McpError> {
        Ok(rmcp::model::GetTaskResult::new(
            self.tasks.get_task(&request.task_id)?,
        ))
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel_task(&request.task_id)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if tools::by_name(&name).is_none() {
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        }
        if let Some(o) = &self.observer {
            o(&name);
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let engine = self.engine.clone();
        // A background call of a client that declared MCP tasks: a task follows the activity.
        let as_task = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
            && args.get("background") == Some(&Value::Bool(true));
        if as_task {
            return Ok(match tools::call(&engine, &name, args).await {
                Ok(out) => match out.structured["activity_id"].as_str() {
                    Some(id) => {
                        tasks::follow(&self.tasks, engine.clone(), id.to_string(), self.ended())
                            .into()
                    }
                    None => CallToolResult::success(vec![ContentBlock::text(out.text)]).into(),
                },
                Err(e) => error_result(&e).into(),
            });
        }
        // Long tools report `notifications/progress` when the client asked with a token.
        // One forwarding task keeps them in order.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, usize)>();
        let mut forwarder = None;
        if let Some(token) = context.meta.get_progress_token() {
            let peer = context.peer.clone();
            forwarder = Some(tokio::spawn(async move {
                while let Some((done, total)) = rx.recv().await {
                    let mut p =
                        rmcp::model::ProgressNotificationParam::new(token.clone(), done as f64);
                    p.total = Some(total as f64);
                    p.message = Some(format!("{done}/{total} files"));
                    if peer.notify_progress(p).await.is_err() {
                        return;
                    }
                }
            }));
        }
        let progress = move |done: usize, total: usize| {
            let _ = tx.send((done, total));
        };
        let outcome = tokio::select! {
            r = tools::call_with_progress(&engine, &name, args, &progress) => r,
            _ = context.ct.cancelled() => Err(ToolError::new(Code::Cancelled, "the client cancelled the call")),
        };
        // Every progress notification goes out before the result does (clients drop late ones).
        drop(progress);
        if let Some(f) = forwarder {
            let _ = f.await;
        }
        let result = match outcome {
            Ok(out) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(out.text)]);
                r.structured_content = Some(out.structured);
                r
            }
            Err(e) => {
                tracing::debug!(tool = %name, "tool failed: {e}");
                error_result(&e)
            }
        };
        Ok(result.into())
    }
}

/// Serves MCP on stdin/stdout until the client closes stdin.
pub async fn serve_stdio(engine: Arc<Engine>, max_frame: usize) -> anyhow::Result<()> {
    let (input, output) = stdio::client_io();
    serve_on(engine, input, output, max_frame).await
}

/// Serves MCP on any byte stream (the daemon's connections) until the client closes it.
pub async fn serve_on<R, W>(
    engine: Arc<Engine>,
    input: R,
    output: W,
    max_frame: usize,
) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    serve_observed(engine, input, output, max_frame, None, false).await
}

/// `serve_on`, telling `observer` (when given) the name of each tool called; with `acks`,
/// each request read is acknowledged first (`stdio::guard_with`), for a relaying `serve`.
pub async fn serve_observed<R, W>(
    engine: Arc<Engine>,
    input: R,
    output: W,
    max_frame: usize,
    observer: Option<Observer>,
    acks: bool,
) -> anyhow::Result<()>
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let transport = stdio::guard_with(input, output, max_frame, acks);
    let mut server = McpServer::new(engine, max_frame);
    if let Some(o) = observer {
        server = server.observed(o);
    }
    let running = server.serve(transport).await?;
    running.waiting().await?;
    Ok(())
}

#[cfg(test)]
mod tests;
