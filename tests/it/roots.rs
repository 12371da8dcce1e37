//! Roots that would stall the daemon: `/`, the home folder and system folders are refused by
//! every door that takes a root (the CLI, `serve`, a hook, the LSP face's `initialize`), and a
//! root whose tree floods the watcher never stalls another root's answers, `daemon status` or
//! a hook.

use crate::common;
use common::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// A command of the daemon's, run with a bound: how long it took and what it said (`None`
/// past the bound, the process killed).
async fn timed(
    d: &Daemon,
    dir: &Path,
    args: &[&str],
    bound: Duration,
) -> (Duration, Option<(i32, String, String)>) {
    let started = Instant::now();
    let child = tokio::process::Command::new(LSPGATE)
        .current_dir(dir)
        .args(args)
        .env("PATH", test_path())
        .envs(d.env(&[]))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(bound, child).await.ok().map(|o| {
        let o = o.unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    });
    (started.elapsed(), out)
}

/// `lspgate ARGS` as a client of `d` (or standalone) with `home` as its `HOME` and `stdin`
/// on its stdin (then closed, but for `lsp`: a refusal must not wait for its client to go),
/// bounded (30 s): exit code, stdout, stderr, and how long it took.
async fn lspgate(
    d: &Daemon,
    standalone: bool,
    home: &Path,
    args: &[&str],
    stdin: &[u8],
) -> (i32, String, String, Duration) {
    use tokio::io::AsyncWriteExt;
    let started = Instant::now();
    let mut child = tokio::process::Command::new(LSPGATE)
        .current_dir(home)
        .args(args)
        .env("PATH", test_path())
        .envs(d.env(&[]))
        .env("HOME", home)
        .env("LSPGATE_STANDALONE", if standalone { "1" } else { "0" })
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin).await.unwrap();
    let input = (args.first() == Some(&"lsp")).then_some(input);
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("`lspgate {}` did not end within 30 s", args.join(" ")))
        .unwrap();
    drop(input);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        started.elapsed(),
    )
}

/// `initialize` as an LSP client frames it, with `params`.
fn initialize(params: serde_json::Value) -> Vec<u8> {
    let body =
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
            .to_string();
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// The one message an LSP output holds.
fn lsp_message(out: &str) -> serde_json::Value {
    let body = out
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_else(|| panic!("no LSP message: {out:?}"));
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"))
}

/// `/`, the home folder (or a folder holding it) and system folders are no workspace: every
/// door that takes a root refuses them with `invalid_params` before anything starts (no
/// server, no watcher): a command's `--root`, through the daemon and standalone; `serve`;
/// `daemon --http`; the LSP face's `initialize` (`rootUri`, `workspaceFolders`, `rootPath`),
/// answered with `-32602`; a hook, which says nothing, at once, without a daemon. They used
/// to start servers on `/` and watch the whole machine.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_door_refuses_the_machine_the_home_folder_and_system_folders() {
    let d = Daemon::new();
    let home = tempfile::tempdir().unwrap();
    let home = home.path().canonicalize().unwrap();
    let home_s = home.to_str().unwrap();
    let parent = home.parent().unwrap().to_str().unwrap().to_string();
    let refused = |err: &str, root: &str| {
        assert!(
            err.contains(&format!("invalid_params: workspace root {root} is refused")),
            "{root}: {err}"
        );
    };

    // A hook: nothing on stdout, exit 0, at once, and no daemon started for it.
    for root in ["/", home_s] {
        let event = serde_json::json!({"session_id": "s", "cwd": root, "hook_event_name": "PostToolUse",
            "tool_name": "Write", "tool_input": {"file_path": format!("{root}/x.py"), "content": "x = 1\n"}});
        let (code, out, err, took) = lspgate(
            &d,
            false,
            &home,
            &["hook", "post-edit"],
            event.to_string().as_bytes(),
        )
        .await;
        assert_eq!((code, out.as_str()), (0, ""), "{err}");
        refused(&err, root);
        assert!(took < Duration::from_secs(2), "the hook took {took:?}");
    }
    assert!(
        d.status().is_none(),
        "a hook started a daemon for a refused root"
    );

    for standalone in [false, true] {
        // `/proc/self` is `/proc/PID` once resolved, the pid the command's own.
        for root in ["/", "/usr", "/proc/self", home_s, &parent] {
            let why = match root {
                "/proc/self" => "is refused: it is in /proc".to_string(),
                _ => format!("invalid_params: workspace root {root} is refused"),
            };
            // A command.
            let (code, _, err, _) = lspgate(
                &d,
                standalone,
                &home,
                &["hover", "--root", root, "a.py:1:1"],
                b"",
            )
            .await;
            assert_eq!(code, 2, "{root}: {err}");
            assert!(err.contains(&why), "{root}: {err}");
            // An MCP session.
            let (code, _, err, _) =
                lspgate(&d, standalone, &home, &["serve", "--root", root], b"").await;
            assert_eq!(code, 2, "{root}: {err}");
            assert!(err.contains(&why), "{root}: {err}");
        }
        // The LSP face: the client's root, however it names it, or `--root`.
        let uri = |p: &str| url::Url::from_file_path(p).unwrap().to_string();
        for (params, args, root) in [
            (
                serde_json::json!({"rootUri": "file:///", "capabilities": {}}),
                vec![],
                "/",
            ),
            (
                serde_json::json!({"rootUri": null, "workspaceFolders": [{"uri": uri("/usr"), "name": "usr"}], "capabilities": {}}),
                vec![],
                "/usr",
            ),
            (
                serde_json::json!({"rootPath": home_s, "capabilities": {}}),
                vec![],
                home_s,
            ),
            (
                serde_json::json!({"capabilities": {}}),
                vec!["--root", "/"],
                "/",
            ),
        ] {
            let mut argv = vec!["lsp"];
            argv.extend(args);
            argv.extend(["--", FIXTURE]);
            let (code, out, err, _) =
                lspgate(&d, standalone, &home, &argv, &initialize(params)).await;
            assert_eq!(code, 2, "{root}: {err}");
            let answer = lsp_message(&out);
            assert_eq!(answer["id"], 1, "{answer}");
            assert_eq!(answer["error"]["code"], -32602, "{answer}");
            assert_eq!(
                answer["error"]["data"]["code"], "invalid_params",
                "{answer}"
            );
            let message = answer["error"]["message"].as_str().unwrap();
            refused(message, root);
        }
    }
    // Nothing was started anywhere: the daemon (started by the sessions) holds no root.
    if let Some(status) = d.status() {
        assert_eq!(status["roots"], serde_json::json!([]), "{status}");
    }

    // `daemon --http` serving a root of its own (with a runtime folder of its own: it
    // refuses to start beside a running daemon).
    let lone = Daemon::new();
    let (code, _, err, _) = lspgate(
        &lone,
        false,
        &home,
        &["daemon", "--http", "127.0.0.1:0", "--root", "/"],
        b"",
    )
    .await;
    assert_eq!(code, 2, "{err}");
    refused(&err, "/");
}

/// A root with `folders` folders (100 a level) holding `FILES` files each, a Python file at
/// its top.
fn big_tree(folders: usize) -> tempfile::TempDir {
    let ws = workspace(&[
        ("pyproject.toml", "[project]\nname = \"big\"\n"),
        ("a.py", "def f(x: int) -> int:\n    return x\n"),
    ]);
    for i in 0..folders {
        let dir = ws.path().join(format!("d{}/e{}", i / 100, i % 100));
        std::fs::create_dir_all(&dir).unwrap();
        for j in 0..FILES {
            std::fs::write(dir.join(format!("f{j}.txt")), "0").unwrap();
        }
    }
    ws
}

/// A process stopped (`SIGSTOP`) until this is dropped.
struct Held(i32);

impl Held {
    fn new(pid: i32) -> Held {
        assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
        Held(pid)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        unsafe { libc::kill(self.0, libc::SIGCONT) };
    }
}

/// Files in each folder of a big tree.
const FILES: usize = 4;

/// Writes `writes` times into the files of `root`'s folders (`folders` of them, as `big_tree`
/// made them), from `writers` threads at once, each through descriptors it keeps open (a
/// thousand at a time, written in turn), so the kernel's queue fills as fast as the disk
/// takes writes; for at most `bound`: how many writes were made.
fn flood(root: &Path, folders: usize, writes: usize, writers: usize, bound: Duration) -> usize {
    use std::os::unix::fs::FileExt;
    let started = Instant::now();
    let threads: Vec<_> = (0..writers)
        .map(|k| {
            let root = root.to_path_buf();
            std::thread::spawn(move || {
                let mine: Vec<usize> = (k..folders * FILES).step_by(writers).collect();
                let per_file = (writes / writers).div_ceil(mine.len()).max(1);
                let mut done = 0;
                for window in mine.chunks(1000) {
                    let files: Vec<std::fs::File> = window
                        .iter()
                        .map(|n| {
                            let i = n / FILES;
                            let p = format!("d{}/e{}/f{}.txt", i / 100, i % 100, n % FILES);
                            std::fs::OpenOptions::new()
                                .write(true)
                                .open(root.join(p))
                                .unwrap()
                        })
                        .collect();
                    for round in 0..per_file {
                        for f in &files {
                            if done >= writes / writers || started.elapsed() >= bound {
                                return done;
                            }
                            f.write_at(round.to_string().as_bytes(), 0).unwrap();
                            done += 1;
                        }
                    }
                }
                done
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).sum()
}

/// One root's flood of writes (5,000 folders of 4 files, 60,000 writes from 4 threads, the
/// first half while the daemon is held, so the kernel's queue overflows) leaves another root's
/// answers (pyright's hover and diagnostics) and `daemon status` answering within 4 s
/// throughout (within 0.15 s here). They used to wait 10 s and more: the rescan that follows
/// a lost queue compared every pending path with every file of the root, on the daemon's one
/// thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_roots_flood_never_stalls_another_root_or_the_daemon() {
    require("pyright-langserver");
    const FOLDERS: usize = 5_000;
    const WRITES: usize = 60_000;
    let d = Daemon::new();
    let a = big_tree(FOLDERS);
    let b = workspace(&[
        ("pyproject.toml", "[project]\nname = \"b\"\n"),
        ("lib.py", "def compute(x: int) -> int:\n    return x\n"),
        ("app.py", "from lib import compute\n\nprint(compute(1))\n"),
    ]);
    let pyright = ["--", "pyright-langserver", "--stdio"];
    let with = |args: &[&'static str]| -> Vec<&'static str> { [args, &pyright].concat() };
    let bound = Duration::from_secs(60);
    // Both roots have their servers and watchers.
    let (_, out) = timed(&d, a.path(), &with(&["hover", "a.py:1:5"]), bound).await;
    let (code, _, err) = out.expect("root A answers");
    assert_eq!(code, 0, "{err}");
    let hover_b = with(&["hover", "app.py:3:7", "--json"]);
    let (_, out) = timed(&d, b.path(), &hover_b, bound).await;
    let (code, text, err) = out.expect("root B answers");
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("compute"), "{text}");

    // The flood's first half comes while the daemon is held (as a busy machine may leave it,
    // for a moment, behind): the kernel's queue of A's events overflows before it reads again,
    // and it must catch up with the second half coming.
    let daemon = d.pid() as i32;
    let held = Held::new(daemon);
    let first = flood(a.path(), FOLDERS, WRITES / 2, 4, Duration::from_secs(30));
    drop(held);
    let root = a.path().to_path_buf();
    let writer =
        std::thread::spawn(move || flood(&root, FOLDERS, WRITES / 2, 4, Duration::from_secs(60)));
    let diags_b = with(&["diagnostics", "lib.py", "--json"]);
    let status = ["daemon", "status", "--json"];
    let probe = Duration::from_secs(10);
    let mut worst: Vec<(String, Duration)> = Vec::new();
    let mut rounds = 0;
    let flood_started = Instant::now();
    // Probes while the writer runs (and for a few seconds after, while the daemon catches up),
    // at most 40 rounds.
    while rounds < 40
        && (!writer.is_finished() || flood_started.elapsed() < Duration::from_secs(10))
    {
        rounds += 1;
        for (name, dir, args) in [
            ("daemon status", Path::new("/"), &status[..]),
            ("hover on B", b.path(), &hover_b[..]),
            ("diagnostics on B", b.path(), &diags_b[..]),
        ] {
            let (took, out) = timed(&d, dir, args, probe).await;
            if let Some((code, _, err)) = &out {
                assert_eq!(*code, 0, "{name}: {err}");
            }
            eprintln!(
                "round {rounds} at {:?}: {name} took {took:?}",
                flood_started.elapsed()
            );
            worst.push((name.to_string(), took));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let wrote = first + writer.join().unwrap();
    eprintln!(
        "wrote {wrote} times, the second half in {:?}",
        flood_started.elapsed()
    );
    let slow: Vec<_> = worst
        .iter()
        .filter(|(_, t)| *t > Duration::from_secs(4))
        .collect();
    assert!(
        slow.is_empty(),
        "answers past 4 s during the flood: {slow:?}"
    );
    // Root A itself is whole again: a file written after the flood is seen.
    std::fs::write(
        a.path().join("late.py"),
        "def g() -> int:\n    return \"no\"\n",
    )
    .unwrap();
    let (took, out) = timed(
        &d,
        a.path(),
        &with(&["diagnostics", "late.py", "--json"]),
        bound,
    )
    .await;
    let (code, text, err) = out.expect("root A answers after its flood");
    assert_eq!(code, 0, "{err}");
    assert!(
        text.contains("reportReturnType") || text.contains("\"error\""),
        "{text}"
    );
    eprintln!("root A answered after its flood in {took:?}");
}
