//! Tests of the editing operations: diagnostic deltas, and an applied edit whose caller is
//! dropped mid-apply.

use super::*;
use crate::lsp::wire::Severity;

fn d(file: &str, line: u32, msg: &str) -> FileDiag {
    FileDiag {
        file: file.into(),
        diag: Diag {
            severity: Severity::Error,
            line,
            column: 1,
            end_line: line,
            end_column: 2,
            code: None,
            source: None,
            message: msg.into(),
        },
    }
}

#[test]
fn deltas_follow_moved_diagnostics() {
    let before = vec![d("a", 3, "x"), d("a", 9, "y")];
    let after = vec![d("a", 4, "x"), d("a", 5, "z")];
    let (intro, res) = delta(&before, &after, None);
    assert_eq!(intro, vec![d("a", 5, "z")]);
    assert_eq!(res, vec![d("a", 9, "y")]);
}

/// After a rename, a finding whose message names the new name where it named the old one is
/// the same finding, not one introduced and one resolved; a name that merely contains the old
/// one is not renamed in it.
#[test]
fn a_renamed_symbol_in_a_message_is_the_same_finding() {
    let before = vec![
        d("a", 3, "\"cached_property\" is not iterable"),
        d("a", 7, "\"has_cached_property\" is unknown"),
    ];
    let after = vec![
        d("a", 3, "\"cached_prop\" is not iterable"),
        d("a", 7, "\"has_cached_property\" is unknown"),
    ];
    let renamed = Some(("cached_property", "cached_prop"));
    assert_eq!(delta(&before, &after, renamed), (vec![], vec![]));
    // Without knowing the rename, both would be news.
    assert_eq!(delta(&before, &after, None).0.len(), 1);
    // A rename that did change a finding still shows it.
    let changed = vec![
        d("a", 3, "\"cached_prop\" is not callable"),
        after[1].clone(),
    ];
    let (intro, res) = delta(&before, &changed, renamed);
    assert_eq!((intro.len(), res.len()), (1, 1));
    assert_eq!(
        replace_word("x.old_x old_x old", "old", "new"),
        "x.old_x old_x new"
    );
    assert_eq!(replace_word("old(old)", "old", "new"), "new(new)");
    assert_eq!(
        renamed_in("rename", "rename Widget to Gadget"),
        Some(("Widget".into(), "Gadget".into()))
    );
    assert_eq!(renamed_in("rename", "rename to Gadget"), None);
    assert_eq!(renamed_in("edit", "rename Widget to Gadget"), None);
}

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
