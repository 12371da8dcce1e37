//! Tests of the editing operations: an applied edit whose caller is dropped mid-apply.

mod dropped {
    use std::time::Duration;

    use serde_json::json;

    use crate::ops::activity::dropped::engine;
    use crate::ops::tools;

    /// The call that applies an edit is dropped once the files are written, before it hears
    /// so (a client's cancel): the edit is still logged as lspgate's.
    #[tokio::test]
    async fn an_edit_whose_caller_is_dropped_is_still_logged_as_lspgates() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "here\n").unwrap();
        let engine = engine(dir.path());
        let args = json!({"file": "a.txt", "edits": [{"old_text": "here", "new_text": "there"}], "apply": true});
        let mut call = Box::pin(tools::call(&engine, "edit", args));
        let mut dropped_written = false;
        for _ in 0..5_000 {
            // Looked at before the call is polled again: it has not heard of the write yet.
            if std::fs::read_to_string(&file).unwrap() == "there\n" {
                dropped_written = true;
                break;
            }
            if futures::poll!(&mut call).is_ready() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        drop(call);
        assert!(
            dropped_written,
            "the call answered before it could be dropped"
        );
        let mut kinds = Vec::new();
        for _ in 0..500 {
            let page = engine
                .shared()
                .events()
                .read(0, 100, Vec::new())
                .await
                .unwrap();
            kinds = page.events.iter().map(|e| e.kind.clone()).collect();
            if kinds.iter().any(|k| k == "edit_applied") {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("no edit_applied in the log: {kinds:?}");
    }
}
