//! lspgate on real code nobody here wrote, fetched by package name by the test setup (pinned,
//! not committed): Django 5.2's source from its PyPI wheel, rxjs 7.8.2's npm package.

use crate::common;
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
    // Every issue in one answer (a page holds 200 by default).
    let scope = json!({"paths": ["django/db"], "limit": 100000});
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
        diags(&r["files"])
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
    let found = symbols(&r);
    // Ranked for the asker: the class named exactly so first, before the re-export of it
    // and the dozen `const subject = …` inside functions, which come last.
    assert_eq!(found[0], "Subject class src/internal/Subject.ts", "{text}");
    let first_local = found
        .iter()
        .position(|s| s.starts_with("subject "))
        .unwrap();
    let last_class = found.iter().rposition(|s| s.contains(" class ")).unwrap();
    assert!(first_local > last_class, "{text}");
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
    let found = symbols(&r);
    // The class first; then `queryset` methods and attributes (the same name, another case)
    // before the local variables and parameters named `queryset`.
    assert_eq!(
        found[0], "QuerySet class django/db/models/query.py",
        "{text}"
    );
    let local = r["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s["name"] == "queryset" && s["container"] == "get_object_or_404")
        .unwrap();
    let method = r["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .position(|s| s["name"] == "queryset" && s["kind"] == "method")
        .unwrap();
    assert!(method < local, "{text}");
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

/// Every symbol of an outline, in the order an agent reads it (parents before children), as
/// `depth name kind line`.
fn outline(symbols: &Value) -> Vec<(usize, String, String, u64)> {
    fn walk(list: &Value, depth: usize, out: &mut Vec<(usize, String, String, u64)>) {
        for s in list.as_array().into_iter().flatten() {
            out.push((
                depth,
                s["name"].as_str().unwrap().to_string(),
                s["kind"].as_str().unwrap().to_string(),
                s["at"][0].as_u64().unwrap(),
            ));
            walk(&s["children"], depth + 1, out);
        }
    }
    let mut out = Vec::new();
    walk(symbols, 0, &mut out);
    out
}

/// Django's largest module: its outline is in line order at every level, holds no variable of
/// a function or method unless `locals: true`, and pages (every page together is the whole
/// outline, each symbol once, ancestors repeated only to place a page's first symbols).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn django_outline_is_ordered_without_locals_and_pages() {
    let _heavy = HEAVY.lock().await;
    require("pyright-langserver");
    let ws = real_project("django-5.2");
    let gate = Gate::start(ws.path(), BOUNDS, &[]).await;
    let file = "django/db/models/query.py";
    let (r, text) = gate
        .ok("document_symbols", json!({"file": file, "limit": 100000}))
        .await;
    let all = outline(&r["symbols"]);
    assert_eq!(r["total"].as_u64(), Some(all.len() as u64), "{text}");
    assert!(r.get("next_cursor").is_none());
    // Line order at every level: each symbol after its previous sibling.
    fn ordered(list: &Value) -> bool {
        let lines: Vec<u64> = list
            .as_array()
            .into_iter()
            .flatten()
            .map(|s| s["at"][0].as_u64().unwrap())
            .collect();
        lines.windows(2).all(|w| w[0] <= w[1])
            && list
                .as_array()
                .into_iter()
                .flatten()
                .all(|s| ordered(&s["children"]))
    }
    assert!(ordered(&r["symbols"]), "{text}");
    // `QuerySet` holds its instance attributes (set in `__init__`) in line order among its
    // methods, and no method holds a variable.
    let queryset = r["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "QuerySet")
        .unwrap();
    let members: Vec<&str> = queryset["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    let at = |n: &str| members.iter().position(|m| *m == n).unwrap();
    assert!(
        at("__init__") < at("_for_write") && at("_for_write") < at("query"),
        "{members:?}"
    );
    fn locals(list: &Value, in_function: bool) -> usize {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|s| {
                let kind = s["kind"].as_str().unwrap();
                let here = usize::from(in_function && matches!(kind, "variable" | "constant"));
                here + locals(&s["children"], matches!(kind, "function" | "method"))
            })
            .sum()
    }
    assert_eq!(locals(&r["symbols"], false), 0, "{text}");
    let (with, _) = gate
        .ok(
            "document_symbols",
            json!({"file": file, "locals": true, "limit": 100000}),
        )
        .await;
    // pyright lists hundreds of them (parameters included).
    assert!(locals(&with["symbols"], false) > 300, "{with}");
    let (top, _) = gate
        .ok(
            "document_symbols",
            json!({"file": file, "depth": 1, "limit": 100000}),
        )
        .await;
    assert!(outline(&top["symbols"]).iter().all(|(d, ..)| *d == 0));
    assert!(
        outline(&top["symbols"])
            .iter()
            .any(|(_, n, ..)| n == "QuerySet")
    );

    // Pages of 40: each begins where the last ended; a page that starts inside a class repeats
    // the class first (not counted again).
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"file": file, "limit": 40});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (page, text) = gate.ok("document_symbols", args).await;
        assert_eq!(page["total"], r["total"], "{text}");
        let mut seen = outline(&page["symbols"]);
        // Leading ancestors already on an earlier page.
        while let Some(first) = seen.first()
            && paged.contains(first)
        {
            seen.remove(0);
        }
        assert!(seen.len() <= 40, "{text}");
        paged.extend(seen);
        pages += 1;
        cursor = page["next_cursor"].as_str().map(str::to_string);
        if cursor.is_none() {
            break;
        }
    }
    assert!(pages >= all.len() / 40, "{pages} pages for {}", all.len());
    assert_eq!(paged, all);
    gate.stop().await;
}

/// Django's JavaScript is under no jsconfig.json (checkJs off): tsserver's own diagnostics
/// requests answer for each file at once, so the check needs no wait at all (a bound of one
/// second on waiting for pushed diagnostics changes nothing) and says that it checked syntax,
/// not types.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn django_javascript_is_checked_without_waiting_and_says_how() {
    let _heavy = HEAVY.lock().await;
    require("typescript-language-server");
    let ws = real_project("django-5.2");
    let gate = Gate::start(
        ws.path(),
        &["--ready-timeout", "120", "--diagnostics-timeout", "1"],
        &[],
    )
    .await;
    let scope = "django/contrib/admin/static";
    let (r, text) = gate
        .ok("check", json!({"paths": [scope], "limit": 100000}))
        .await;
    gate.stop().await;
    let js = walk_count(&ws.path().join(scope), "js");
    assert!(js > 50, "{js} JavaScript files");
    assert_eq!(r["summary"]["files"].as_u64(), Some(js as u64), "{text}");
    assert!(r.get("unchecked").is_none(), "{text}");
    assert_eq!(r["ok"], true, "{text}");
    let notes = r["notes"].as_array().unwrap();
    assert_eq!(notes.len(), 1, "{text}");
    let note = notes[0].as_str().unwrap();
    assert!(
        note.starts_with(&format!(
            "builtin/typescript-language-server: {js} JavaScript files"
        )),
        "{note}"
    );
    assert!(note.contains("not types"), "{note}");
    assert!(
        text.contains("note: builtin/typescript-language-server"),
        "{text}"
    );
}

/// Files under `dir` whose name ends with `.EXT`.
fn walk_count(dir: &std::path::Path, ext: &str) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            n += walk_count(&p, ext);
        } else if p.extension().is_some_and(|x| x == ext) {
            n += 1;
        }
    }
    n
}
