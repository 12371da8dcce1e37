//! `raw: true` support: while a tool call runs inside `capture`, every LSP request and every
//! command line lspgate sends is recorded, so the call can show exactly what it did.

use std::cell::RefCell;

use serde_json::Value;

tokio::task_local! {
    static RECORDER: RefCell<Vec<Value>>;
}

/// Records `what` if the current task is capturing; otherwise does nothing.
pub fn record(what: impl FnOnce() -> Value) {
    let _ = RECORDER.try_with(|r| r.borrow_mut().push(what()));
}

/// Runs `fut`, returning its output and what it recorded.
pub async fn capture<T>(fut: impl Future<Output = T>) -> (T, Vec<Value>) {
    RECORDER
        .scope(RefCell::new(Vec::new()), async {
            let out = fut.await;
            let recorded = RECORDER.with(|r| r.take());
            (out, recorded)
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn records_only_inside_capture() {
        record(|| Value::from(0));
        let ((), got) = capture(async {
            record(|| Value::from(1));
            tokio::task::yield_now().await;
            record(|| Value::from(2));
        })
        .await;
        assert_eq!(got, vec![Value::from(1), Value::from(2)]);
    }
}
