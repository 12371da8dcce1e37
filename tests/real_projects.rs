//! lspgate on real code nobody here wrote, fetched by package name by the test setup (pinned,
//! not committed): Django 5.2's source from its PyPI wheel.

mod common;
use common::*;
use serde_json::{Value, json};

/// These tests each keep both cores busy for seconds: one at a time, with bounds generous
/// enough for a loaded machine (their speed is the bench's business, their answers are theirs).
static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
const BOUNDS: &[&str] = &["--ready-timeout", "120", "--diagnostics-timeout", "120"];

/// A widely imported module changed from a shell between two checks: the second report is the
/// one a freshly started lspgate gives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn django_check_around_a_shell_edit_equals_a_fresh_check() {
    require("pyright-langserver");
    let _heavy = HEAVY.lock().await;
    let ws = real_project("django-5.2");
    let root = ws.path();
    let scope = json!({"paths": ["django/db"]});
    let gate = Gate::start(root, BOUNDS, &[]).await;
    let (before, text) = gate.ok("check", scope.clone()).await;
    assert_eq!(before["summary"]["files"], 122, "{text}");
    assert_ne!(before["partial"], true, "{text}");

    // `cached_property` (django/utils/functional.py, used by 32 modules of django/db) now
    // wants a second argument: every `@cached_property` there is a call missing one.
    let module = root.join("django/utils/functional.py");
    let text = std::fs::read_to_string(&module).unwrap();
    let edited = text.replacen(
        "    def __init__(self, func):",
        "    def __init__(self, func, owner_hint):",
        1,
    );
    assert_ne!(edited, text);
    std::fs::write(&module, edited).unwrap();
    let (after, after_text) = gate.ok("check", scope.clone()).await;
    gate.stop().await;
    let missing = |r: &Value| {
        r["issues"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["message"].as_str().unwrap().contains("owner_hint"))
            .count()
    };
    assert_eq!(missing(&before), 0);
    assert!(missing(&after) > 20, "{after_text}");

    let fresh = Gate::start(root, BOUNDS, &[]).await;
    let (want, want_text) = fresh.ok("check", scope).await;
    fresh.stop().await;
    assert_eq!(
        findings(&after),
        findings(&want),
        "{after_text}\n--- fresh ---\n{want_text}"
    );
}

/// The symbols of a `workspace_symbols` answer: `name kind file`.
fn symbols(r: &Value) -> Vec<String> {
    r["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            format!(
                "{} {} {}",
                s["name"].as_str().unwrap(),
                s["kind"].as_str().unwrap(),
                s["file"].as_str().unwrap()
            )
        })
        .collect()
}

/// tsserver knows no project until a file of it is open, and searches only the projects of the
/// file it is asked about: the first call of a fresh session must still find the class.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rxjs_first_workspace_symbols_call_finds_the_class() {
    require("typescript-language-server");
    let _heavy = HEAVY.lock().await;
    let ws = real_project("rxjs-7.8.2");
    let gate = Gate::start(ws.path(), BOUNDS, &[]).await;
    let (r, text) = gate
        .ok(
            "workspace_symbols",
            json!({"query": "Subject", "limit": 500}),
        )
        .await;
    assert_ne!(r["partial"], true, "{text}");
    assert!(
        symbols(&r).contains(&"Subject class src/internal/Subject.ts".to_string()),
        "{text}"
    );
    gate.stop().await;
}

/// pyright's symbol search is complete once it has listed its files, long before its
/// background checking of Django ends; Django's JavaScript (under no jsconfig.json) is searched
/// by tsserver from the files lspgate opened.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn django_first_workspace_symbols_call_finds_the_class() {
    require("pyright-langserver");
    let _heavy = HEAVY.lock().await;
    let ws = real_project("django-5.2");
    let gate = Gate::start(ws.path(), BOUNDS, &[]).await;
    let (r, text) = gate
        .ok(
            "workspace_symbols",
            json!({"query": "QuerySet", "limit": 500}),
        )
        .await;
    assert_ne!(r["partial"], true, "{text}");
    assert!(
        symbols(&r).contains(&"QuerySet class django/db/models/query.py".to_string()),
        "{text}"
    );
    let (r, text) = gate
        .ok(
            "workspace_symbols",
            json!({"query": "DateTimeShortcuts", "limit": 500}),
        )
        .await;
    assert!(
        symbols(&r)
            .iter()
            .any(|s| s.ends_with("django/contrib/admin/static/admin/js/admin/DateTimeShortcuts.js")),
        "the JavaScript is searched too: {text}"
    );
    gate.stop().await;
}
