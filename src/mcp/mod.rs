//! The MCP front end: an rmcp `ServerHandler` that lists the tools the servers can serve and
//! calls the operations layer, behind our stdio framing guard (`stdio`) or our Streamable HTTP
//! front end (`http`, with its request guard in `guard`). Thin: no logic of its own.

pub mod guard;
pub mod http;
pub mod stdio;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ReadResourceResult, Resource, ResourceContents, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::error::{Code, ToolError};
use crate::ops::Engine;
use crate::ops::tools;

/// The resource listing the servers (SPEC §3).
pub const SERVERS_URI: &str = "lspgate://servers";

/// The MCP server over one engine.
#[derive(Clone)]
pub struct McpServer {
    engine: Arc<Engine>,
    /// Least severity of `notifications/message` the client wants (0 debug … 3 error).
    log_level: Arc<std::sync::atomic::AtomicU8>,
    /// The largest message the transport accepts, told to clients in `initialize`.
    max_frame: usize,
    /// Held for the session's life (the HTTP front end counts its sessions with it).
    _held: Option<Arc<dyn std::any::Any + Send + Sync>>,
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
            max_frame,
            _held: None,
        }
    }

    /// Keeps `held` alive as long as the session (any of its clones) is.
    pub fn holding(mut self, held: Arc<dyn std::any::Any + Send + Sync>) -> McpServer {
        self._held = Some(held);
        self
    }

    /// lspgate's limits, as `initialize` reports them under `capabilities.experimental.lspgate`
    /// (SPEC §2).
    fn limits(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("max_frame".into(), Value::from(self.max_frame));
        m.insert(
            "max_output".into(),
            Value::from(self.engine.options().max_output),
        );
        m
    }

    fn tool_list(&self) -> Vec<Tool> {
        tools::tools()
            .iter()
            .filter(|d| tools::offered(&self.engine, d))
            .map(tool)
            .collect()
    }
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

fn error_result(e: &ToolError) -> CallToolResult {
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
            .enable_logging()
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
    #[allow(deprecated)] // rmcp marks MCP logging deprecated (SEP-2577); SPEC §3 uses it.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
        let mut events = self.engine.registry().events();
        let peer = context.peer;
        let min = self.log_level.clone();
        tokio::spawn(async move {
            loop {
                let e = match events.recv().await {
                    Ok(e) => e,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => return,
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
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new(SERVERS_URI, "servers")
                .with_description(
                    "The workspace's language servers and their state (as the `servers` tool)",
                )
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        if request.uri != SERVERS_URI {
            return Err(McpError::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            ));
        }
        let out = tools::call(&self.engine, "servers", serde_json::json!({}))
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
        let text = serde_json::to_string_pretty(&out.structured).unwrap_or_default();
        let contents = match ResourceContents::text(text, SERVERS_URI) {
            ResourceContents::TextResourceContents {
                uri, text, meta, ..
            } => ResourceContents::TextResourceContents {
                uri,
                mime_type: Some("application/json".into()),
                text,
                meta,
            },
            other => other,
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !tools::tools().iter().any(|d| d.name == name) {
            return Err(McpError::invalid_params(
                format!("unknown tool `{name}`"),
                None,
            ));
        }
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let engine = self.engine.clone();
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
    let transport = stdio::guard(input, output, max_frame);
    let running = McpServer::new(engine, max_frame).serve(transport).await?;
    running.waiting().await?;
    Ok(())
}
