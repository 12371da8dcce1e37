//! `lspgate lsp` with the daemon (`Request::Lsp`). It hands its client's connection over
//! (`handed`): its stdin and stdout (pipes or sockets) go over the daemon's socket as
//! `SCM_RIGHTS`, with the bytes it had already read (the client's `initialize`), so the
//! daemon's face reads and writes the client itself and no message crosses this process,
//! which then only waits: the daemon writes `ENDED` once the client has ended the session,
//! and a socket closed without it means the daemon went first (exit 1, said). The daemon ends
//! the session when that process goes (the editor killed it). Other stdio (a terminal, a
//! file) is relayed frame by frame (`relayed`), to see the client's `exit`. `serve` is the
//! daemon's side.

use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};

use rustix::net::{
    RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags,
};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, Interest};
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::client::{Opened, open};
use super::protocol::Request;
use crate::lsp::framing::{encode, read_frame};
use crate::ops::session::SessionSpec;

/// `lspgate lsp` handing its client's connection to the daemon rather than relaying it:
/// `ahead` is what was read of stdin already (the client's `initialize`). The daemon's face
/// then reads and writes the client itself; this process waits for its word that the client
/// ended the session (exit 0), or says the daemon went first (exit 1), as `relayed` does.
/// Err, with nothing of stdin read, when it is not handed over (`NotHanded`): the caller
/// relays it or serves it itself.
pub async fn handed(
    session: SessionSpec,
    only: crate::lspface::Only,
    ahead: &[u8],
) -> Result<i32, NotHanded> {
    if !stdio_can_be_handed() {
        return Err(NotHanded::Unpollable);
    }
    let request = Request::Lsp {
        session,
        only,
        handed: true,
    };
    let Opened {
        mut read,
        mut write,
        answer,
    } = open(&request).await.map_err(NotHanded::NoDaemon)?;
    if !answer.ok {
        // The user's root or config: not a reason to fall back.
        eprintln!("{}", answer.error.unwrap_or_default());
        return Ok(2);
    }
    if let Err(e) = send_stdio(&mut write, ahead).await {
        return Err(NotHanded::Failed(e.to_string()));
    }
    let mut word = Vec::new();
    let _ = read.read_until(b'\n', &mut word).await;
    if word == ENDED {
        return Ok(0);
    }
    eprintln!("{DAEMON_WENT}");
    Ok(1)
}

/// Why a client's connection was not handed over.
#[derive(Debug)]
pub enum NotHanded {
    /// Its stdin or stdout is neither a pipe nor a socket: relay it.
    Unpollable,
    /// No daemon could be had (why): serve it in this process.
    NoDaemon(String),
    /// The handover itself failed (why): relay it.
    Failed(String),
}

/// What `lspgate lsp` says when its daemon goes before its client ends the session.
const DAEMON_WENT: &str = "lspgate lsp: the lspgate daemon stopped under this session, and the \
    documents it had open went with it: restart the language server (`lspgate lsp`) to go on";

/// `lspgate lsp` attached to the daemon, its stdio not handed over: relays the client's LSP connection (`input`,
/// `output`) to the daemon's face for `session` until either end closes; the exit code. Err,
/// with the streams given back, when no daemon can be had (the caller serves them itself).
/// The client's messages are relayed frame by frame, so that its `exit` is seen: when the
/// daemon closes before that (it stopped or died, taking the session's documents with it, so
/// the session cannot be carried to another), this process says so on stderr and exits 1 at
/// once, and the client (an editor) starts it again as it would a crashed server.
#[allow(clippy::type_complexity)]
pub async fn relayed<R, W>(
    session: SessionSpec,
    only: crate::lspface::Only,
    mut input: R,
    mut output: W,
) -> Result<i32, (String, R, W)>
where
    R: tokio::io::AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let Opened {
        mut read,
        mut write,
        answer,
    } = match open(&Request::Lsp {
        session,
        only,
        handed: false,
    })
    .await
    {
        Ok(o) => o,
        Err(e) => return Err((e, input, output)),
    };
    if !answer.ok {
        // The user's root or config: not a reason to fall back.
        eprintln!("{}", answer.error.unwrap_or_default());
        return Ok(2);
    }
    // The client ended the session: it sent `exit`, or closed (or garbled) its input.
    let ended = std::sync::atomic::AtomicBool::new(false);
    let up = async {
        let mut frames = BufReader::new(&mut input);
        loop {
            let Ok(body) = read_frame(&mut frames, crate::lspface::MAX_FRAME).await else {
                // The face would close on it all the same.
                ended.store(true, std::sync::atomic::Ordering::Release);
                break;
            };
            if is_exit(&body) {
                ended.store(true, std::sync::atomic::Ordering::Release);
            }
            if write.write_all(&encode(&body)).await.is_err() {
                break;
            }
        }
        let _ = write.shutdown().await;
        // The daemon closes once the client's last messages are answered.
        std::future::pending::<()>().await;
    };
    tokio::select! {
        () = up => {}
        _ = tokio::io::copy_buf(&mut read, &mut output) => {}
    }
    let _ = output.flush().await;
    if ended.load(std::sync::atomic::Ordering::Acquire) {
        return Ok(0);
    }
    eprintln!("{DAEMON_WENT}");
    Ok(1)
}

/// Whether an LSP message is the `exit` notification.
fn is_exit(body: &[u8]) -> bool {
    // `{"jsonrpc":"2.0","method":"exit"}`, give or take its spaces and `params`.
    body.len() < 1024
        && serde_json::from_slice::<Value>(body).is_ok_and(|m| {
            m.get("method").and_then(Value::as_str) == Some("exit") && m.get("id").is_none()
        })
}

/// The daemon's word to the relay once the client has ended the session.
pub(crate) const ENDED: &[u8] = b"ended\n";

/// The most bytes read ahead by the relay that it may hand over (the client's `initialize`
/// and what followed it in its buffer).
const MAX_PREFIX: u64 = 64 << 20;

/// Whether this process's stdin and stdout are what the daemon can poll (pipes or sockets):
/// only then are they handed over.
pub(crate) fn stdio_can_be_handed() -> bool {
    use crate::mcp::stdio::pollable;
    pollable(std::io::stdin()) && pollable(std::io::stdout())
}

/// Sends this process's stdin and stdout over `socket`, then `prefix` (bytes already read
/// from stdin), for `receive` at the daemon.
pub(crate) async fn send_stdio(write: &mut OwnedWriteHalf, prefix: &[u8]) -> std::io::Result<()> {
    let socket = write.as_ref();
    let len = (prefix.len() as u64).to_le_bytes();
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let fds = [stdin.as_fd(), stdout.as_fd()];
    let sent = socket
        .async_io(Interest::WRITABLE, || {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
            let mut control = SendAncillaryBuffer::new(&mut space);
            if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
                return Err(std::io::Error::other("no room for two descriptors"));
            }
            rustix::net::sendmsg(
                socket,
                &[IoSlice::new(&len)],
                &mut control,
                SendFlags::NOSIGNAL,
            )
            .map_err(std::io::Error::from)
        })
        .await?;
    // The rest of the length (a stream may take part of it), then the prefix.
    let mut rest = len.get(sent..).unwrap_or_default().to_vec();
    rest.extend_from_slice(prefix);
    write.write_all(&rest).await
}

/// What the relay handed over: the bytes it had read, and the client's input and output.
pub(crate) struct Handed {
    pub(crate) prefix: Vec<u8>,
    pub(crate) input: OwnedFd,
    pub(crate) output: OwnedFd,
}

/// Receives what `send_stdio` sent on `socket` (nothing may have been read from it since the
/// hello). Err: why the handover is not usable.
pub(crate) async fn receive(read: &mut OwnedReadHalf) -> std::io::Result<Handed> {
    let socket = read.as_ref();
    let mut len = [0u8; 8];
    let (got, fds) = socket
        .async_io(Interest::READABLE, || {
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
            let mut control = RecvAncillaryBuffer::new(&mut space);
            let got = rustix::net::recvmsg(
                socket,
                &mut [IoSliceMut::new(&mut len)],
                &mut control,
                RecvFlags::CMSG_CLOEXEC,
            )
            .map_err(std::io::Error::from)?;
            let mut fds = Vec::new();
            for message in control.drain() {
                if let RecvAncillaryMessage::ScmRights(rights) = message {
                    fds.extend(rights);
                }
            }
            Ok((got.bytes, fds))
        })
        .await?;
    let [input, output]: [OwnedFd; 2] = fds.try_into().map_err(|fds: Vec<OwnedFd>| {
        std::io::Error::other(format!("{} descriptors handed, not 2", fds.len()))
    })?;
    if got == 0 {
        return Err(std::io::Error::other(
            "the relay closed before its handover",
        ));
    }
    if let Some(rest) = len.get_mut(got..) {
        read.read_exact(rest).await?;
    }
    let n = u64::from_le_bytes(len);
    if n > MAX_PREFIX {
        return Err(std::io::Error::other(format!("a prefix of {n} bytes")));
    }
    let mut prefix = Vec::with_capacity(usize::try_from(n).unwrap_or(0));
    (&mut *read).take(n).read_to_end(&mut prefix).await?;
    if prefix.len() as u64 != n {
        return Err(std::io::Error::other(
            "the relay closed within its handover",
        ));
    }
    Ok(Handed {
        prefix,
        input,
        output,
    })
}

/// The daemon's side: the face served on the client's own input and output, handed over
/// `read`; `ENDED` said on `write` once the client ended the session. The session also ends
/// when the relay goes.
pub(crate) async fn serve(
    engine: std::sync::Arc<crate::ops::Engine>,
    mut read: tokio::io::BufReader<OwnedReadHalf>,
    mut write: OwnedWriteHalf,
    only: crate::lspface::Only,
    observer: crate::lspface::Observer,
) {
    if !read.buffer().is_empty() {
        tracing::warn!("an LSP relay wrote before its handover; ending its session");
        return;
    }
    let handed = match receive(read.get_mut()).await {
        Ok(h) => h,
        Err(e) => {
            tracing::warn!("an LSP relay's handover failed: {e}");
            return;
        }
    };
    let Some((input, output)) = crate::mcp::stdio::polled_io(handed.input, handed.output) else {
        tracing::warn!("an LSP client's handed input or output is neither a pipe nor a socket");
        return;
    };
    let gone = std::sync::Arc::new(Gone::default());
    let input = UntilGone {
        inner: std::io::Cursor::new(handed.prefix).chain(input),
        gone: gone.clone(),
    };
    let served = crate::lspface::serve_observed(
        engine,
        tokio::io::BufReader::new(input),
        output,
        only,
        Some(observer),
    );
    tokio::pin!(served);
    // The relay writes nothing more: a read ends only when it goes.
    let relay_gone = async {
        let mut byte = [0u8; 1];
        while matches!(read.read(&mut byte).await, Ok(n) if n > 0) {}
    };
    tokio::select! {
        () = &mut served => {
            let _ = write.write_all(ENDED).await;
            return;
        }
        () = relay_gone => {}
    }
    // Its editor killed it: the face sees the end of the client's input and ends the session
    // as on any end (its requests cancelled, its documents and buffers let go).
    tracing::debug!("an LSP relay went before its client ended the session");
    gone.set();
    served.await;
}

/// Whether a relay is gone, and who to wake when it goes.
#[derive(Default)]
struct Gone {
    flag: std::sync::atomic::AtomicBool,
    waker: futures::task::AtomicWaker,
}

impl Gone {
    fn set(&self) {
        self.flag.store(true, std::sync::atomic::Ordering::Release);
        self.waker.wake();
    }
}

/// A client's input until its relay goes (`Gone`), then its end.
struct UntilGone<R> {
    inner: R,
    gone: std::sync::Arc<Gone>,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for UntilGone<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        self.gone.waker.register(cx.waker());
        if self.gone.flag.load(std::sync::atomic::Ordering::Acquire) {
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}
