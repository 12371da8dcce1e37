//! Nothing outside the workspace root is read for an answer (issue 22): a location a server
//! names outside the root — `/etc/passwd`, a file through an in-root symlink leading out, a
//! header clangd jumps to — keeps its file and position but carries no `text`, and says why
//! (`text_omitted: outside_root`); locations inside the root (through an in-root symlink that
//! stays inside too) keep their source line. Nor do servers' messages quote such a file (issue
//! 36): clangd's errors in an included `../home/.env`, its notes into a header outside.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::PathBuf;

/// What no answer may hold: the first line of `/etc/passwd`, and the secret outside the root.
const SECRET: &str = "TOPSECRET-d41d8cd9 do not show";

fn passwd_first_line() -> String {
    let text = std::fs::read_to_string("/etc/passwd").expect("/etc/passwd is readable");
    let first = text.lines().next().unwrap_or_default().to_string();
    assert!(
        first.len() > 5,
        "an /etc/passwd with a first line: {first:?}"
    );
    first
}

/// Fails if anything of what lies outside the root is in an answer (structured or text).
fn assert_nothing_outside(what: &str, structured: &Value, text: &str) {
    let json = structured.to_string();
    let passwd = passwd_first_line();
    for (name, s) in [("structured", json.as_str()), ("text", text)] {
        assert!(!s.contains(SECRET), "{what} ({name}) shows the secret: {s}");
        assert!(
            !s.contains(&passwd),
            "{what} ({name}) shows /etc/passwd: {s}"
        );
        assert!(
            !s.contains("root:x:"),
            "{what} ({name}) shows /etc/passwd: {s}"
        );
    }
}

/// The locations of an answer whose `file` ends with `suffix`.
fn at<'a>(locs: &'a [Value], suffix: &str) -> Vec<&'a Value> {
    locs.iter()
        .filter(|l| l["file"].as_str().is_some_and(|f| f.ends_with(suffix)))
        .collect()
}

/// A location outside the root (flattened by `locs`): no text, the marker, the server's
/// position + 1.
fn assert_omitted(what: &str, l: &Value) {
    assert_eq!(l["text"], "", "{what}: {l}");
    assert_eq!(l["text_omitted"], "outside_root", "{what}: {l}");
    assert_eq!(
        (l["line"].as_u64(), l["column"].as_u64()),
        (Some(1), Some(1)),
        "{what}: {l}"
    );
}

/// `file`'s group in a v2 location list (`files`): one, its one position without text, and
/// the marker.
fn assert_omitted_group(what: &str, files: &Value, file: &str) {
    let groups: Vec<&Value> = files
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g["file"] == file)
        .collect();
    assert_eq!(groups.len(), 1, "{what}: {file} in {files}");
    assert_eq!(groups[0]["at"], json!([[1, 1]]), "{what}: {file}");
    assert_eq!(groups[0]["text_omitted"], "outside_root", "{what}: {file}");
}

/// A workspace `ws` (`a.py`; `out`, a symlink to the folder `outside` beside it, which holds
/// `secret.txt`; `in`, a symlink to its own `sub` holding `inside.txt`).
struct Setup {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(ws.join("a.py"), "alpha here\nalpha again\n").unwrap();
    std::fs::write(ws.join("sub/inside.txt"), "inner line stays\n").unwrap();
    std::fs::write(outside.join("secret.txt"), format!("{SECRET}\n")).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("out")).unwrap();
    std::os::unix::fs::symlink(ws.join("sub"), ws.join("in")).unwrap();
    Setup {
        ws: ws.canonicalize().unwrap(),
        outside: outside.canonicalize().unwrap(),
        _dir: dir,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locations_outside_the_root_carry_no_text_and_say_why() {
    let s = setup();
    let through_link = s.ws.join("out/secret.txt").display().to_string();
    let outside = s.outside.join("secret.txt").display().to_string();
    let inside = s.ws.join("in/inside.txt").display().to_string();
    let server = [
        FIXTURE,
        "--elsewhere",
        "file:///etc/passwd",
        "--elsewhere",
        &through_link,
        "--elsewhere",
        &outside,
        "--elsewhere",
        &inside,
    ];
    let gate = Gate::start(&s.ws, &[], &server).await;
    let at_alpha = json!({"file": "a.py", "line": 1, "symbol": "alpha"});

    for terse in [false, true] {
        let mut args = at_alpha.clone();
        args["terse"] = json!(terse);
        for tool in ["definition", "references"] {
            let (r, text) = gate.ok(tool, args.clone()).await;
            let what = format!("{tool} (terse {terse})");
            assert_nothing_outside(&what, &r, &text);
            let list = locs(&r["files"]);
            let own = at(&list, "a.py");
            assert!(!own.is_empty(), "{what}: {r}");
            for l in own {
                assert!(
                    l["text"].as_str().unwrap().starts_with("alpha"),
                    "{what}: {l}"
                );
                assert!(l.get("text_omitted").is_none(), "{what}: {l}");
            }
            // Outside: its path as given (absolute outside, root-relative through the link).
            for (file, n) in [
                ("/etc/passwd", 1),
                ("out/secret.txt", 1),
                (outside.as_str(), 1),
            ] {
                let found: Vec<_> = list.iter().filter(|l| l["file"] == file).collect();
                assert_eq!(found.len(), n, "{what}: {file} in {r}");
                assert_omitted(&format!("{what}: {file}"), found[0]);
                assert_omitted_group(&what, &r["files"], file);
            }
            // Through an in-root symlink that stays inside: read.
            let inner = at(&list, "in/inside.txt");
            assert_eq!(inner.len(), 1, "{what}: {r}");
            assert_eq!(inner[0]["text"], "inner line stays", "{what}");
            assert!(inner[0].get("text_omitted").is_none(), "{what}");
            if !terse {
                assert!(
                    text.contains("/etc/passwd\n  1:1 (not read: outside the workspace root)"),
                    "{what}: {text}"
                );
                assert!(text.contains("1:1 inner line stays"), "{what}: {text}");
            }
        }
        let (r, text) = gate
            .ok(
                "workspace_symbols",
                json!({"query": "alpha", "terse": terse}),
            )
            .await;
        assert_nothing_outside("workspace_symbols", &r, &text);
        let syms = r["symbols"].as_array().unwrap();
        // A workspace symbol (shapes v2) is `{name, kind, container?, file, at}`: its file and
        // position are kept; no source text at all, so none to omit.
        for file in ["/etc/passwd", "out/secret.txt", outside.as_str()] {
            let found: Vec<_> = syms.iter().filter(|l| l["file"] == file).collect();
            assert_eq!(found.len(), 1, "workspace_symbols: {file} in {r}");
            assert_eq!(found[0]["at"], json!([1, 1]), "workspace_symbols: {file}");
        }
        assert!(
            syms.iter().any(|l| l["file"] == "a.py"),
            "workspace_symbols: {r}"
        );
        for l in syms {
            let mut keys: Vec<&str> = l
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "container")
                .collect();
            keys.sort();
            assert_eq!(
                keys,
                ["at", "file", "kind", "name"],
                "workspace_symbols: {l}"
            );
        }
    }
    gate.stop().await;
}

/// clangd jumps to what a line includes: `#include "/etc/passwd"` in an overlay, or a system
/// header. The location is kept (file, line, column); the file is not read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd_jumping_out_of_the_root_reads_nothing_there() {
    require("clangd");
    let ws = workspace(&[(
        "main.c",
        "#include <stdio.h>\nint main(void) { printf(\"hi\\n\"); return 0; }\n",
    )]);
    let gate = Gate::start(ws.path(), &[], &[]).await;
    let overlay = "#include \"/etc/passwd\"\nint main(void) { return 0; }\n";
    let (r, text) = gate
        .ok(
            "definition",
            json!({"file": "main.c", "line": 1, "column": 14, "source": overlay}),
        )
        .await;
    assert_nothing_outside("definition of an include of /etc/passwd", &r, &text);
    assert_eq!(r["files"].as_array().unwrap().len(), 1, "{r}");
    assert_eq!(r["files"][0]["file"], "/etc/passwd", "{r}");
    assert_eq!(r["files"][0]["text_omitted"], "outside_root", "{r}");
    // Positions without text.
    let group = r["files"][0]["at"].as_array().unwrap();
    assert!(
        group.iter().all(|p| p.as_array().unwrap().len() == 2),
        "{r}"
    );
    let list = locs(&r["files"]);
    assert_eq!(list.len(), 1, "{r}");
    assert_eq!(list[0]["file"], "/etc/passwd", "{r}");
    assert_eq!(list[0]["text"], "", "{r}");
    assert_eq!(list[0]["text_omitted"], "outside_root", "{r}");
    assert_eq!(list[0]["line"], 1, "{r}");
    assert!(
        text.contains("not read: outside the workspace root"),
        "{text}"
    );

    // A system header: outside the root too, so no text; file and line are kept.
    let (r, text) = gate
        .ok(
            "definition",
            json!({"file": "main.c", "line": 2, "symbol": "printf", "kind": "declaration"}),
        )
        .await;
    for g in r["files"].as_array().unwrap() {
        assert_eq!(g["text_omitted"], "outside_root", "{r}");
        assert!(
            g["at"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p.as_array().unwrap().len() == 2),
            "{r}"
        );
    }
    let list = locs(&r["files"]);
    assert!(!list.is_empty(), "{text}");
    for l in &list {
        let file = l["file"].as_str().unwrap();
        assert!(file.starts_with("/usr/include/"), "{r}");
        assert_eq!(l["text"], "", "{r}");
        assert_eq!(l["text_omitted"], "outside_root", "{r}");
        assert!(l["line"].as_u64().is_some_and(|n| n > 1), "{r}");
    }
    gate.stop().await;
}

/// What `home/.env`, beside the workspace, holds: no answer may show any of it.
const TOKEN: &str = "ghp_d41d8cd98f00b204e9800998ecf8427e";
/// A parameter's name in `home/api.h`, beside the workspace: quoted only by a note.
const PARAM: &str = "ghp_param_5f4dcc3b5aa765d61d8327deb882cf99";

/// A C workspace `ws` whose `main.c` includes `../home/.env` (a token, which clangd reads as C
/// and quotes in `use of undeclared identifier`) and `../home/api.h` (whose parameter's name a
/// note quotes when main.c passes it an `int`).
fn c_beside_a_secret() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join(".env"), format!("GITHUB_TOKEN={TOKEN}\n")).unwrap();
    std::fs::write(
        home.join("api.h"),
        format!("void send_token(const char *{PARAM});\n"),
    )
    .unwrap();
    std::fs::write(
        ws.join("main.c"),
        "#include \"../home/.env\"\n#include \"../home/api.h\"\n\
         int main(void) { send_token(42); return GITHUB_TOKEN; }\n",
    )
    .unwrap();
    let ws = ws.canonicalize().unwrap();
    (dir, ws)
}

/// Fails if `s` (what) holds anything of the files outside the root.
fn assert_no_secret(what: &str, s: &str) {
    assert!(
        !s.contains("ghp_") && !s.contains("GITHUB_TOKEN="),
        "{what} quotes a file outside the root: {s}"
    );
}

/// clangd's messages quote what it read (issue 36): an error inside an included file outside
/// the root is reported at the `#include` line, its message the included file's words; a note
/// points into an outside header. Every answer keeps the facts (an error at line 1, in an
/// included file, where it is; the type error at line 3 with its note's place) without the
/// words: `diagnostics` (with `raw`), the workspace's, `check` (structured, text and SARIF),
/// `code_actions`, hovers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd_messages_quote_nothing_outside_the_root() {
    require("clangd");
    let (_dir, ws) = c_beside_a_secret();
    let gate = Gate::start(&ws, &[], &[]).await;

    for raw in [false, true] {
        let (r, text) = gate
            .ok("diagnostics", json!({"file": "main.c", "raw": raw}))
            .await;
        assert_no_secret("diagnostics", &r.to_string());
        assert_no_secret("diagnostics (text)", &text);
        let found = diags(&r["files"]);
        let included = found
            .iter()
            .find(|d| d["line"] == 1)
            .unwrap_or_else(|| panic!("no diagnostic at the #include: {r}"));
        assert_eq!(included["severity"], "error", "{r}");
        let message = included["message"].as_str().unwrap();
        assert!(
            message.starts_with("In included file: error at ")
                && message.contains("home/.env:1:14")
                && message.ends_with("(text omitted: outside_root)"),
            "{message}"
        );
        // A warning in clang 14, an error from clang 16.
        let typed = found
            .iter()
            .find(|d| d["line"] == 3 && d["column"] == 29)
            .unwrap_or_else(|| panic!("no type error at 3:29: {r}"));
        let message = typed["message"].as_str().unwrap();
        assert!(
            message.starts_with("Incompatible integer to pointer conversion")
                && message.contains("home/api.h:1:29:\nnote: ")
                && message.ends_with("note: (text omitted: outside_root)"),
            "{message}"
        );
    }

    let (r, text) = gate.ok("diagnostics", json!({})).await;
    assert_no_secret("workspace diagnostics", &r.to_string());
    assert_no_secret("workspace diagnostics (text)", &text);
    assert!(text.contains("text omitted: outside_root"), "{text}");

    let (r, text) = gate.ok("check", json!({})).await;
    assert_no_secret("check", &r.to_string());
    assert_no_secret("check (text)", &text);
    assert_eq!(r["ok"], false, "{text}");
    assert!(text.contains("In included file: error at"), "{text}");

    let (r, text) = gate
        .ok(
            "code_actions",
            json!({"file": "main.c", "line": 1, "end_line": 3}),
        )
        .await;
    assert_no_secret("code_actions", &r.to_string());
    assert_no_secret("code_actions (text)", &text);

    // The includes (their paths), and the token's name (clangd's declaration, without the
    // value it could not read as C). A hover on `send_token` shows its declaration, as one on
    // `printf` shows stdio.h's: hovers are not confined.
    let line3 = "int main(void) { send_token(42); return GITHUB_TOKEN; }";
    for (line, column) in [(1, 12), (2, 12), (3, col_of(line3, "GITHUB_TOKEN"))] {
        let (r, text) = gate
            .ok(
                "hover",
                json!({"file": "main.c", "line": line, "column": column}),
            )
            .await;
        assert_no_secret(&format!("hover at {line}:{column}"), &r.to_string());
        assert_no_secret(&format!("hover at {line}:{column} (text)"), &text);
    }
    gate.stop().await;

    let (code, out, err) = lspgate_cli(&ws, &["check", "--sarif"]);
    assert_eq!(code, 1, "{out}{err}");
    assert_no_secret("check --sarif", &out);
    let sarif: Value = serde_json::from_str(&out).unwrap();
    assert_valid_sarif(&sarif);
    assert!(out.contains("text omitted: outside_root"), "{out}");
    let (_, out, _) = lspgate_cli(&ws, &["check"]);
    assert_no_secret("check (command line)", &out);
}

/// A client of the LSP face that opens a FIFO of the root gets its answers: the face compares
/// its buffer with the disk through the confined read, which refuses what is not a regular
/// file. (A plain read opened the FIFO and waited for a writer for good, on the one thread the
/// face, its daemon and every other session run on.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_lsp_client_opening_a_fifo_of_the_root_blocks_nothing() {
    use common::lsp_raw::{Client, uri};
    use std::time::Duration;
    let dir = workspace(&[("good.txt", "alpha beta\n")]);
    let root = dir.path().canonicalize().unwrap();
    let fifo = root.join("trap.txt");
    // One without an extension too: its language is told from its first line, read (never
    // from a FIFO) when it is opened.
    let bare = root.join("trap");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .arg(&bare)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    let mut c = Client::start(&root, &["--", FIXTURE]);
    c.initialize(&root, &["utf-16"]).await;
    // The client's buffer of the FIFO, as an editor sends it (it never reads the disk here).
    // One FIFO after the other: two unsaved buffers at once on one push-only server stall each
    // other's diagnostics (a known limit of overlays, not of reads).
    for f in [&fifo, &bare] {
        c.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(f), "languageId": "plaintext", "version": 1,
                                    "text": "alpha beta\n"}}),
        )
        .await;
        for file in [f, &root.join("good.txt")] {
            let hover = tokio::time::timeout(
                Duration::from_secs(20),
                c.request(
                    "textDocument/hover",
                    json!({"textDocument": {"uri": uri(file)},
                           "position": {"line": 0, "character": 1}}),
                ),
            )
            .await
            .unwrap_or_else(|_| panic!("no answer for {} within 20 s", file.display()));
            assert!(hover.get("result").is_some(), "{hover}");
        }
        // Past the face's diagnostics refresh of the FIFO's buffer, it still answers.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let symbols = tokio::time::timeout(
            Duration::from_secs(20),
            c.request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri(&root.join("good.txt"))}}),
            ),
        )
        .await
        .unwrap_or_else(|_| panic!("no answer after the refresh of {}", f.display()));
        assert!(symbols.get("id").is_some(), "{symbols}");
    }
}

/// A repository whose lspgate.toml is a FIFO gets its answers: the config is read (and digested
/// for trust) only as a regular file. (Its digest used to open the FIFO and wait for a writer,
/// for good, in the process that serves every session.)
#[test]
fn a_fifo_for_a_config_file_blocks_nothing() {
    use std::time::{Duration, Instant};
    let dir = workspace(&[("a.py", "x = 1\n")]);
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("lspgate.toml"))
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    // Through the per-user daemon, whose sessions' workspaces are keyed by the config's digest;
    // twice (the second finds the daemon running), each bounded.
    let daemon = Daemon::new();
    let servers = || {
        let mut child = std::process::Command::new(LSPGATE)
            .current_dir(dir.path())
            .args(["servers", "--json"])
            .env("PATH", test_path())
            .envs(daemon.env(&[]))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                break Some(status);
            }
            if started.elapsed() > Duration::from_secs(30) {
                let _ = child.kill();
                break None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    for round in 1..=2 {
        let status = servers();
        assert!(
            status.is_some_and(|s| s.success()),
            "round {round}: `lspgate servers` {status:?} (None: still waiting after 30 s)"
        );
    }
    let _ = daemon.cli(dir.path(), &["daemon", "stop"]);
}
