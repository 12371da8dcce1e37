//! Emacs's eglot (Debian's elpa-eglot 1.9 on Emacs 28, `tests/lsp_face/eglot_client.el`)
//! through `lspgate lsp --server pyright` gets what it gets from pyright directly: the type
//! error, the hover, the definition, the references, and formatting refused alike (`-32601`:
//! pyright formats nothing).

use crate::common;
use common::*;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

const APP: &str = "from lib import compute\n\ny: str = compute(1)\nprint(compute(2))\n";

/// Runs eglot on `app.py` of `root` with `server` as its command; what it observed.
fn eglot(server: &[&str], root: &Path, home: &Path) -> Vec<Value> {
    require("emacs");
    let out = tempfile::tempdir().unwrap();
    let lines = out.path().join("out.jsonl");
    let mut child = Command::new("emacs")
        .args(["--batch", "-Q", "-l"])
        .arg(repo().join("tests/lsp_face/eglot_client.el"))
        .current_dir(root)
        .env("PATH", test_path())
        .env("LSPGATE_STANDALONE", "1")
        .env("LSPGATE_HOME", home)
        .env("LSPF_CMD", serde_json::to_string(server).unwrap())
        .env("LSPF_ROOT", root)
        .env("LSPF_OUT", &lines)
        .env("LSPF_FILE", "app.py")
        .env("LSPF_MATCH", "is not assignable to declared type")
        .env("LSPF_LINE", "4")
        .env("LSPF_SYMBOL", "compute")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(240);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("eglot did not finish in 240 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(&lines)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn answer<'a>(events: &'a [Value], label: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["event"] == "answer" && e["label"] == label)
        .unwrap_or_else(|| panic!("no {label} answer: {events:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eglot_gets_through_lspgate_lsp_what_pyright_gives_directly() {
    require("pyright-langserver");
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"face\"\n"),
        ("lib.py", "def compute(x: int) -> int:\n    return x\n"),
        ("app.py", APP),
    ]);
    let root = ws.path().canonicalize().unwrap();
    let home = new_home();
    let run = |server: Vec<&str>| {
        let root = root.clone();
        let home = home.clone();
        let server: Vec<String> = server.into_iter().map(str::to_string).collect();
        tokio::task::spawn_blocking(move || {
            let server: Vec<&str> = server.iter().map(String::as_str).collect();
            eglot(&server, &root, &home)
        })
    };
    let direct = run(vec!["pyright-langserver", "--stdio"]).await.unwrap();
    let face = run(vec![LSPGATE, "lsp", "--server", "pyright"])
        .await
        .unwrap();
    for events in [&direct, &face] {
        assert!(!events.iter().any(|e| e["event"] == "error"), "{events:?}");
        assert!(events.iter().any(|e| e["event"] == "done"), "{events:?}");
        let init = events
            .iter()
            .find(|e| e["event"] == "initialized")
            .unwrap_or_else(|| panic!("{events:?}"));
        assert_eq!(init["hover"], true, "{events:?}");
        assert_eq!(
            init["formatting"], false,
            "pyright formats nothing: {events:?}"
        );
        assert!(
            answer(events, "hover")["result"]
                .as_str()
                .is_some_and(|h| h.contains("def compute(x: int) -> int")),
            "{events:?}"
        );
        assert_eq!(answer(events, "formatting")["error"], -32601, "{events:?}");
    }
    for label in ["definition", "references"] {
        assert_eq!(
            answer(&face, label)["result"],
            answer(&direct, label)["result"],
            "{label}"
        );
    }
    let refs = answer(&face, "references")["result"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(refs, 4, "{face:?}");
    let diagnostics = |events: &[Value]| -> Vec<Value> {
        events
            .iter()
            .filter(|e| {
                e["event"] == "diagnostics" && e["uri"].as_str().unwrap_or("").ends_with("/app.py")
            })
            .map(|e| e["messages"].clone())
            .filter(|m| m.as_array().is_some_and(|a| !a.is_empty()))
            .collect()
    };
    assert_eq!(diagnostics(&face).last(), diagnostics(&direct).last());
}
