//! The error every operation returns: a SPEC §2 code, a message for people, and data for agents.

use serde::Serialize;
use serde_json::Value;

use crate::lsp::LspError;

/// SPEC §2 error codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Code {
    InvalidParams,
    OutsideRoot,
    FileNotFound,
    SymbolNotFound,
    NoServer,
    NotSupported,
    ServerFailed,
    ServerError,
    Timeout,
    RevisionConflict,
    Busy,
    ActivityMissing,
    Cancelled,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidParams => "invalid_params",
            Code::OutsideRoot => "outside_root",
            Code::FileNotFound => "file_not_found",
            Code::SymbolNotFound => "symbol_not_found",
            Code::NoServer => "no_server",
            Code::NotSupported => "not_supported",
            Code::ServerFailed => "server_failed",
            Code::ServerError => "server_error",
            Code::Timeout => "timeout",
            Code::RevisionConflict => "revision_conflict",
            Code::Busy => "busy",
            Code::ActivityMissing => "activity_missing",
            Code::Cancelled => "cancelled",
        }
    }
}

/// A failed operation, as agents see it: `CODE: message` plus structured data.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}: {message}", code.as_str())]
pub struct ToolError {
    pub code: Code,
    pub message: String,
    pub data: Option<Value>,
}

impl ToolError {
    pub fn new(code: Code, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> ToolError {
        self.data = Some(data);
        self
    }

    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError::new(Code::InvalidParams, message)
    }

    /// The `{"error": {...}}` object of SPEC §2.
    pub fn to_json(&self) -> Value {
        serde_json::json!({"error": {
            "code": self.code.as_str(),
            "message": self.message,
            "data": self.data.clone().unwrap_or(Value::Null),
        }})
    }
}

impl From<LspError> for ToolError {
    fn from(e: LspError) -> ToolError {
        match &e {
            LspError::Timeout { method, after } => ToolError::new(Code::Timeout, e.to_string())
                .with_data(
                    serde_json::json!({"method": method, "after_ms": after.as_millis() as u64}),
                ),
            LspError::Server { code, message } => ToolError::new(Code::ServerError, e.to_string())
                .with_data(serde_json::json!({"lsp_code": code, "lsp_message": message})),
            LspError::StreamClosed { reason, stderr } => ToolError::new(
                Code::ServerFailed,
                format!("language server stopped: {reason}"),
            )
            .with_data(serde_json::json!({"stderr_tail": stderr})),
            LspError::Spawn { command, reason } => {
                ToolError::new(Code::ServerFailed, e.to_string())
                    .with_data(serde_json::json!({"command": command, "reason": reason}))
            }
            LspError::Protocol(_) => ToolError::new(Code::ServerError, e.to_string()),
        }
    }
}
