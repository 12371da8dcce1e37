//! What the core can fail with: a kind (the subset of protocol §2's codes a workspace, its
//! servers, documents, edits and state can cause), a message for people and data for agents.
//! The operations layer turns it into the agent-facing `ToolError` (`From`, in the engine); no
//! crate below the engine knows that error.

use serde_json::{Value, json};

use crate::lsp::LspError;

/// Why a core operation failed. Each kind becomes the protocol §2 code of the same name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A path leads outside the workspace root (or into a folder lspgate never writes).
    OutsideRoot,
    FileNotFound,
    /// The request cannot be served as asked (a folder for a file, a name the file system
    /// cannot hold, a permission the user lacks, a refused root, an unsealed journal entry).
    InvalidParams,
    NoServer,
    NotSupported,
    /// A language server could not start or stopped.
    ServerFailed,
    /// A language server answered with an error.
    ServerError,
    Timeout,
    /// What was about to be written changed meanwhile.
    RevisionConflict,
    UntrustedConfig,
    /// lspgate's own failure: disk, database, a lock.
    Internal,
}

/// A failed core operation.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct CoreError {
    pub kind: Kind,
    pub message: String,
    pub data: Option<Value>,
}

impl CoreError {
    pub fn new(kind: Kind, message: impl Into<String>) -> CoreError {
        CoreError {
            kind,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> CoreError {
        self.data = Some(data);
        self
    }

    pub fn invalid(message: impl Into<String>) -> CoreError {
        CoreError::new(Kind::InvalidParams, message)
    }

    /// lspgate's own failure: disk, database, a lock (never the language server's).
    pub fn internal(message: impl Into<String>) -> CoreError {
        CoreError::new(Kind::Internal, message)
    }

    /// A failed file operation on `file` (as the agent names it), by what the disk said: a
    /// missing file is `FileNotFound`; a folder or anything else that is not a regular file (or
    /// a file where a folder should be), a name the file system cannot hold, and a permission
    /// the user lacks, are `InvalidParams` (the request cannot be served as asked and retrying
    /// will not help; data says `not_a_file` / `invalid_name` / `permission_denied`); anything
    /// else (disk full, I/O error) is lspgate's own failure, `Internal`.
    pub fn io(action: &str, file: &str, e: &std::io::Error) -> CoreError {
        use std::io::ErrorKind as E;
        let data =
            |reason: &str| json!({"file": file, "reason": reason, "os_error": e.to_string()});
        match e.kind() {
            E::NotFound => CoreError::new(
                Kind::FileNotFound,
                format!("cannot {action} {file}: no such file"),
            )
            .with_data(data("not_found")),
            E::InvalidInput | E::IsADirectory | E::NotADirectory => {
                CoreError::invalid(format!("cannot {action} {file}: {e}"))
                    .with_data(data("not_a_file"))
            }
            // A name the file system cannot hold (too long): no such file can be reached.
            E::InvalidFilename => CoreError::invalid(format!("cannot {action} {file}: {e}"))
                .with_data(data("invalid_name")),
            E::PermissionDenied => CoreError::invalid(format!(
                "permission denied: lspgate cannot {action} {file} ({e})"
            ))
            .with_data(data("permission_denied")),
            _ => CoreError::internal(format!("cannot {action} {file}: {e}"))
                .with_data(data("io_error")),
        }
    }
}

/// What talking to a server failed with, by cause: no answer in time is `Timeout`, an error
/// answer or a malformed one `ServerError`, a server that stopped or never started
/// `ServerFailed`.
impl From<LspError> for CoreError {
    fn from(e: LspError) -> CoreError {
        match &e {
            LspError::Timeout { method, after } => CoreError::new(Kind::Timeout, e.to_string())
                .with_data(json!({"method": method, "after_ms": after.as_millis() as u64})),
            LspError::Server { code, message } => CoreError::new(Kind::ServerError, e.to_string())
                .with_data(json!({"lsp_code": code, "lsp_message": message})),
            LspError::StreamClosed { reason, stderr } => CoreError::new(
                Kind::ServerFailed,
                format!("language server stopped: {reason}"),
            )
            .with_data(json!({"stderr_tail": stderr})),
            LspError::Spawn { command, reason } => {
                CoreError::new(Kind::ServerFailed, e.to_string())
                    .with_data(json!({"command": command, "reason": reason}))
            }
            LspError::Protocol(_) => CoreError::new(Kind::ServerError, e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Error, ErrorKind};

    #[test]
    fn io_errors_get_the_kind_of_their_cause() {
        let e = CoreError::io("read", "a.py", &Error::from(ErrorKind::NotFound));
        assert_eq!(e.kind, Kind::FileNotFound);
        let e = CoreError::io("write", "a.py", &Error::from(ErrorKind::PermissionDenied));
        assert_eq!(e.kind, Kind::InvalidParams);
        assert!(e.message.starts_with("permission denied"), "{}", e.message);
        assert_eq!(
            e.data.as_ref().map(|d| d["reason"].clone()),
            Some(json!("permission_denied"))
        );
        let full = Error::from_raw_os_error(libc::ENOSPC);
        let e = CoreError::io("write", "a.py", &full);
        assert_eq!(e.kind, Kind::Internal);
        assert!(e.message.starts_with("cannot write a.py"), "{e}");
    }
}
