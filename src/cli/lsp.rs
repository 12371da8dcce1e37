//! `lspgate lsp`: a language server on stdio for an editor or a harness's LSP client. Without
//! `--root`, the root is the client's (`rootUri`, its first workspace folder, `rootPath`),
//! read from its `initialize` here, before the session is sent; then this process hands its
//! stdin and stdout to the per-user daemon (`lspface` there) and waits, or relays them when
//! they cannot be handed (not pipes or sockets), or, standalone or with no daemon to be had,
//! serves it itself.
//! A refused root answers that `initialize` with `-32602` and ends; the relay is `Request::Lsp`.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, BufReader};

use super::{Cli, context, standalone};
use crate::lsp::framing::{encode, read_frame};
use crate::lspface::Only;

/// The largest `initialize` read here (the face bounds what follows).
const MAX_INITIALIZE: usize = 16 << 20;

pub(super) async fn serve(cli: &Cli, server: &[String], only: Only) -> i32 {
    let (input, output) = crate::mcp::stdio::client_io();
    let mut input = BufReader::new(input);
    let mut session = context::session(cli, server);
    // The client's first message, read here only when the root is to come from it.
    let mut first = None;
    if cli.root.is_none() {
        match read_frame(&mut input, MAX_INITIALIZE).await {
            Ok(body) => {
                if let Some(root) = client_root(&body) {
                    session.root = root;
                }
                first = Some(body);
            }
            Err(e) => {
                tracing::warn!("the LSP client's first message cannot be read: {e}");
                return 1;
            }
        }
    }
    // A root that is no project's folder (`/`, the home folder, a system folder): the
    // client's `initialize` gets the refusal, and nothing is started.
    if let Err(e) = session.root() {
        if first.is_none() {
            first = read_frame(&mut input, MAX_INITIALIZE).await.ok();
        }
        refuse(first.as_deref().unwrap_or_default(), &e, output).await;
        return 2;
    }
    let first = first.map(|body| encode(&body)).unwrap_or_default();
    if !standalone(cli) {
        // The daemon reads and writes the client itself, with what was read ahead of it here.
        let mut ahead = first.clone();
        ahead.extend_from_slice(input.buffer());
        use crate::daemon::lsp_session::{NotHanded, handed};
        match handed(session.clone(), only.clone(), &ahead).await {
            Ok(code) => return code,
            Err(NotHanded::NoDaemon(why)) => {
                tracing::warn!("no daemon ({why}); serving in this process");
                let input = std::io::Cursor::new(first).chain(input);
                return in_process(session, only, Box::new(input), output).await;
            }
            Err(why) => tracing::info!("the client's connection is relayed: {why:?}"),
        }
    }
    let input = std::io::Cursor::new(first).chain(input);
    if standalone(cli) {
        return in_process(session, only, Box::new(input), output).await;
    }
    match crate::daemon::lsp_session::relayed(session.clone(), only.clone(), input, output).await {
        Ok(code) => code,
        Err((why, input, output)) => {
            tracing::warn!("no daemon ({why}); serving in this process");
            in_process(session, only, Box::new(input), output).await
        }
    }
}

/// The face served from this process.
async fn in_process(
    session: crate::ops::session::SessionSpec,
    only: Only,
    input: Box<dyn AsyncRead + Unpin + Send>,
    output: Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
) -> i32 {
    let engine = match session.engine(None) {
        Ok(e) => Arc::new(e),
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    crate::lspface::serve(engine, BufReader::new(input), output, only).await;
    0
}

/// Answers the client's first request (its `initialize`) with `e` as an `invalid params`
/// error, the protocol's code in its `data`; and says it on stderr.
async fn refuse(
    first: &[u8],
    e: &crate::error::ToolError,
    mut output: Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
) {
    use tokio::io::AsyncWriteExt;
    eprintln!("{e}");
    let id = serde_json::from_slice::<Value>(first)
        .ok()
        .and_then(|m| m.get("id").cloned())
        .filter(|id| id.is_string() || id.is_number());
    let Some(id) = id else { return };
    let answer = serde_json::json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": -32602, "message": e.to_string(), "data": e.to_json()["error"]},
    });
    let body = serde_json::to_vec(&answer).unwrap_or_default();
    let _ = output.write_all(&encode(&body)).await;
    let _ = output.flush().await;
}

/// The root an `initialize` names: `rootUri`, else the first workspace folder, else
/// `rootPath`.
fn client_root(body: &[u8]) -> Option<PathBuf> {
    let message: Value = serde_json::from_slice(body).ok()?;
    let params = message.get("params")?;
    let uri = params.get("rootUri").and_then(Value::as_str).or_else(|| {
        params
            .pointer("/workspaceFolders/0/uri")
            .and_then(Value::as_str)
    });
    if let Some(uri) = uri {
        return url::Url::parse(uri).ok()?.to_file_path().ok();
    }
    params
        .get("rootPath")
        .and_then(Value::as_str)
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_is_the_clients() {
        let init = |params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{params}}}"#)
        };
        assert_eq!(
            client_root(init(r#"{"rootUri":"file:///w/a%20b"}"#).as_bytes()),
            Some(PathBuf::from("/w/a b"))
        );
        assert_eq!(
            client_root(
                init(r#"{"rootUri":null,"workspaceFolders":[{"uri":"file:///w/x","name":"x"}]}"#)
                    .as_bytes()
            ),
            Some(PathBuf::from("/w/x"))
        );
        assert_eq!(
            client_root(init(r#"{"rootPath":"/w/y"}"#).as_bytes()),
            Some(PathBuf::from("/w/y"))
        );
        assert_eq!(client_root(init("{}").as_bytes()), None);
    }
}
