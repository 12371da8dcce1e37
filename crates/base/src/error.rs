//! The error every operation returns: a protocol §2 code, a message for people, data for agents.

use serde::{Deserialize, Serialize};
use serde_json::Value;

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

    /// A failed file operation on `file` (as the agent names it), by what the disk said: a
    /// missing file is `file_not_found`; a folder or anything else that is not a regular file (or
    /// a file where a folder should be),
    /// a name the file system cannot hold,
    /// and a permission the user lacks, are `invalid_params` (the request cannot be served as
    /// asked and retrying will not help; data says `not_a_file` / `permission_denied`);
    /// anything else (disk full, I/O error) is lspgate's own failure, `internal`.
    pub fn io(action: &str, file: &str, e: &std::io::Error) -> ToolError {
        let data = |reason: &str| serde_json::json!({"file": file, "reason": reason, "os_error": e.to_string()});
        match e.kind() {
            std::io::ErrorKind::NotFound => ToolError::new(
                Code::FileNotFound,
                format!("cannot {action} {file}: no such file"),
            )
            .with_data(data("not_found")),
            std::io::ErrorKind::InvalidInput
            | std::io::ErrorKind::IsADirectory
            | std::io::ErrorKind::NotADirectory => {
                ToolError::new(Code::InvalidParams, format!("cannot {action} {file}: {e}"))
                    .with_data(data("not_a_file"))
            }
            // A name the file system cannot hold (too long): no such file can be reached.
            std::io::ErrorKind::InvalidFilename => {
                ToolError::new(Code::InvalidParams, format!("cannot {action} {file}: {e}"))
                    .with_data(data("invalid_name"))
            }
            std::io::ErrorKind::PermissionDenied => ToolError::new(
                Code::InvalidParams,
                format!("permission denied: lspgate cannot {action} {file} ({e})"),
            )
            .with_data(data("permission_denied")),
            _ => ToolError::internal(format!("cannot {action} {file}: {e}"))
                .with_data(data("io_error")),
        }
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
        assert!(e.message.starts_with("permission denied"), "{}", e.message);
        assert_eq!(e.data.unwrap()["reason"], "permission_denied");
        let full = Error::from_raw_os_error(libc::ENOSPC);
        let e = ToolError::io("write", "a.py", &full);
        assert_eq!((e.code, e.code.as_str()), (Code::Internal, "internal"));
        assert!(e.to_string().starts_with("internal: cannot write a.py"));
    }
}
