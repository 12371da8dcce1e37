//! The agent-facing error every operation returns: a protocol §2 code, a message for people,
//! data for agents. The layers below fail with their own errors (`CoreError`, `LspError`), turned
//! into this one here, at the operations boundary.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use lspgate_core::error::{CoreError, Kind};
use lspgate_lsp::LspError;

/// The error codes of protocol §2 (docs/protocol.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
    /// The workspace's lspgate.toml defines commands (servers, tasks) that were not trusted.
    UntrustedConfig,
    /// lspgate's own failure (disk, database), never the language server's.
    Internal,
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
            Code::UntrustedConfig => "untrusted_config",
            Code::Internal => "internal",
        }
    }
}

/// A failed operation, as agents see it: `CODE: message` plus structured data. (Its serde
/// form, `{code, message, data}`, is how it crosses the daemon's socket; agents get
/// `to_json`.)
#[derive(Debug, Clone, thiserror::Error, Serialize, Deserialize)]
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

    /// lspgate's own failure: disk, database, a task that died (`internal`, never
    /// `server_error`, which is the language server's own error).
    pub fn internal(message: impl Into<String>) -> ToolError {
        ToolError::new(Code::Internal, message)
    }

    /// A failed file operation on `file`, by what the disk said (see `CoreError::io`).
    pub fn io(action: &str, file: &str, e: &std::io::Error) -> ToolError {
        CoreError::io(action, file, e).into()
    }

    /// The `{"error": {...}}` object of protocol §2.
    pub fn to_json(&self) -> Value {
        serde_json::json!({"error": {
            "code": self.code.as_str(),
            "message": self.message,
            "data": self.data.clone().unwrap_or(Value::Null),
        }})
    }
}

impl From<Kind> for Code {
    fn from(kind: Kind) -> Code {
        match kind {
            Kind::OutsideRoot => Code::OutsideRoot,
            Kind::FileNotFound => Code::FileNotFound,
            Kind::InvalidParams => Code::InvalidParams,
            Kind::NoServer => Code::NoServer,
            Kind::NotSupported => Code::NotSupported,
            Kind::ServerFailed => Code::ServerFailed,
            Kind::ServerError => Code::ServerError,
            Kind::Timeout => Code::Timeout,
            Kind::RevisionConflict => Code::RevisionConflict,
            Kind::UntrustedConfig => Code::UntrustedConfig,
            Kind::Internal => Code::Internal,
        }
    }
}

/// The operations boundary: what the core failed with, as agents see it.
impl From<CoreError> for ToolError {
    fn from(e: CoreError) -> ToolError {
        ToolError {
            code: e.kind.into(),
            message: e.message,
            data: e.data,
        }
    }
}

/// What talking to a server failed with, by cause (the core's mapping, `CoreError`'s `From`).
impl From<LspError> for ToolError {
    fn from(e: LspError) -> ToolError {
        CoreError::from(e).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    #[test]
    fn io_errors_get_the_code_of_their_cause() {
        let e = ToolError::io("read", "a.py", &Error::from(ErrorKind::NotFound));
        assert_eq!(e.code, Code::FileNotFound);
        let e = ToolError::io("write", "a.py", &Error::from(ErrorKind::PermissionDenied));
        assert_eq!(e.code, Code::InvalidParams);
        assert_eq!(e.data.unwrap()["reason"], "permission_denied");
        let e = ToolError::io("write", "a.py", &Error::from(ErrorKind::StorageFull));
        assert_eq!((e.code, e.code.as_str()), (Code::Internal, "internal"));
        assert!(e.to_string().starts_with("internal: cannot write a.py"));
    }

    #[test]
    fn a_server_that_stopped_is_server_failed_with_its_stderr() {
        let e = ToolError::from(LspError::StreamClosed {
            reason: "EOF".into(),
            stderr: "Traceback".into(),
        });
        assert_eq!(e.code, Code::ServerFailed);
        assert_eq!(e.data.unwrap()["stderr_tail"], "Traceback");
    }
}
