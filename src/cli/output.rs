//! Where the command line's output goes: stdout and stderr, or, while a daemon runs a command
//! for a client (`capture`), buffers sent back to that client.

use std::cell::RefCell;
use std::io::Write as _;

/// What a command printed, when captured.
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Captured {
    pub stdout: String,
    pub stderr: String,
}

tokio::task_local! {
    static CAPTURE: RefCell<Captured>;
}

/// Writes `text` to stdout (or the capture).
pub fn stdout(text: &str) {
    if CAPTURE
        .try_with(|c| c.borrow_mut().stdout.push_str(text))
        .is_err()
    {
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
    }
}

/// Writes `text` to stderr (or the capture).
pub fn stderr(text: &str) {
    if CAPTURE
        .try_with(|c| c.borrow_mut().stderr.push_str(text))
        .is_err()
    {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

/// Whether output is being captured (no terminal to draw progress on).
pub fn captured() -> bool {
    CAPTURE.try_with(|_| ()).is_ok()
}

/// Runs `fut` with its output captured.
pub async fn capture<T>(fut: impl Future<Output = T>) -> (T, Captured) {
    CAPTURE
        .scope(RefCell::new(Captured::default()), async {
            let out = fut.await;
            let captured = CAPTURE.with(|c| c.take());
            (out, captured)
        })
        .await
}
