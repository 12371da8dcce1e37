//! `lspgate setup HARNESS`, driving the real binary with HOME and --root in temporary folders,
//! for each of the six harnesses: configuration files already holding other entries (other MCP
//! servers and hooks, comments, unusual indentation) keep them byte for byte; the result parses
//! and has the documented shapes; a second run changes nothing; `--dry-run` prints a diff and
//! writes nothing; a file that does not parse is refused with nothing written; `--remove` gives
//! back the original bytes; `--user` writes under HOME. Symbolic links: `setup/links.rs`; npx,
//! uvx and npm launches: `setup/launchers.rs`.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

mod launchers;
mod links;

const BIN: &str = env!("CARGO_BIN_EXE_lspgate");

fn temp() -> tempfile::TempDir {
    tempfile::Builder::new().prefix("setup").tempdir().unwrap()
}

/// A project root, a home folder, and a PATH folder with no lspgate in it.
struct Env {
    root: tempfile::TempDir,
    home: tempfile::TempDir,
    path: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env {
            root: temp(),
            home: temp(),
            path: temp(),
        }
    }

    fn setup(&self, args: &[&str]) -> Output {
        Command::new(BIN)
            .arg("setup")
            .args(args)
            .arg("--root")
            .arg(self.root.path())
            .env("HOME", self.home.path())
            .env("PATH", self.path.path())
            .env_remove("XDG_CONFIG_HOME")
            .current_dir(self.root.path())
            .output()
            .unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let p = self.root.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.root.path().join(rel)).unwrap()
    }
}

/// Every file under `dir`, by relative path, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, base, out);
            } else {
                out.insert(
                    p.strip_prefix(base).unwrap().into(),
                    std::fs::read(&p).unwrap(),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        stdout(&o),
        stderr(&o)
    );
    stdout(&o)
}

/// The command the files name: this binary's path (no lspgate on PATH).
fn cmd() -> String {
    std::fs::canonicalize(BIN)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// `text` without JSONC's comments and trailing commas.
fn strip_jsonc(text: &str) -> String {
    let (b, mut out, mut i) = (text.as_bytes(), Vec::new(), 0);
    while i < b.len() {
        match b[i] {
            b'"' => {
                let start = i;
                i += 1;
                while b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.extend_from_slice(&b[start..i]);
            }
            b'/' if b[i + 1] == b'/' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b[i + 1] == b'*' => {
                i += 2;
                while &b[i..i + 2] != b"*/" {
                    i += 1;
                }
                i += 2;
            }
            b',' => {
                let next = b[i + 1..].iter().find(|c| !c.is_ascii_whitespace());
                if !matches!(next, Some(b'}') | Some(b']')) {
                    out.push(b',');
                }
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

/// A harness file's content as JSON (TOML converted).
fn parse(rel: &str, text: &str) -> Value {
    if rel.ends_with(".toml") {
        let t: toml::Table = toml::from_str(text).unwrap();
        return serde_json::to_value(t).unwrap();
    }
    serde_json::from_str(&strip_jsonc(text)).unwrap_or_else(|e| panic!("{rel}: {e}\n{text}"))
}

/// `v` without lspgate's entries (any member named lspgate, any hook group running
/// `lspgate hook`) and without the objects and arrays that leaves empty.
fn others(v: &Value) -> Value {
    fn lspgate_hook(v: &Value) -> bool {
        let s = v.to_string();
        ["pre-edit", "post-edit", "start", "stop"]
            .iter()
            .any(|w| s.contains(&format!("hook {w} --format")))
    }
    let empty = |v: &Value| {
        v.as_object().is_some_and(|o| o.is_empty()) || v.as_array().is_some_and(|a| a.is_empty())
    };
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| *k != "lspgate")
                .map(|(k, v)| (k.clone(), others(v)))
                .filter(|(_, v)| !empty(v))
                .collect(),
        ),
        Value::Array(a) => Value::Array(
            a.iter()
                .filter(|v| !lspgate_hook(v))
                .map(others)
                .filter(|v| !empty(v))
                .collect(),
        ),
        v => v.clone(),
    }
}

/// One harness's project files: their fixtures (the first file may be absent: `None`), and
/// what the result must hold.
struct Case {
    harness: &'static str,
    files: &'static [(&'static str, Option<&'static str>)],
    broken: &'static str,
    shape: fn(&BTreeMap<&str, Value>, &str),
}

fn the_group<'v>(groups: &'v Value, which: &str, format: &str, cmd: &str) -> &'v Value {
    let command = format!("{cmd} hook {which} --format {format}");
    let found: Vec<&Value> = groups
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| g.to_string().contains(&command))
        .collect();
    assert_eq!(found.len(), 1, "one group runs {command}: {groups:#}");
    found[0]
}

fn nested(group: &Value, which: &str, format: &str, cmd: &str, matcher: &str, timeout: u64) {
    // A session's start and a turn's end are matched by no tool.
    if matcher.is_empty() {
        assert!(group.get("matcher").is_none(), "{group}");
    } else {
        assert_eq!(group["matcher"], matcher);
    }
    let hooks = group["hooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0]["type"], "command");
    assert_eq!(hooks[0]["timeout"], timeout);
    let command = hooks[0]["command"].as_str().unwrap();
    assert_eq!(command, format!("{cmd} hook {which} --format {format}"));
}

const CASES: &[Case] = &[
    Case {
        harness: "claude-code",
        files: &[
            (
                ".mcp.json",
                Some(
                    "{\n    \"mcpServers\": {\n        \"github\": {\n            \"command\": \"gh-mcp\",\n            \"args\": []\n        }\n    }\n}",
                ),
            ),
            (
                ".claude/settings.json",
                Some(
                    "{\n\t\"permissions\": {\"allow\": [\"Bash(ls)\"]},\n\t\"hooks\": {\n\t\t\"PreToolUse\": [\n\t\t\t{\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"guard.sh\"}]}\n\t\t]\n\t}\n}\n",
                ),
            ),
        ],
        broken: "{\"hooks\": {\"PreToolUse\": [}\n",
        shape: |f, cmd| {
            assert_eq!(
                f[".mcp.json"]["mcpServers"]["lspgate"],
                json!({"command": cmd, "args": ["serve"]})
            );
            let hooks = &f[".claude/settings.json"]["hooks"];
            let m = "Write|Edit|MultiEdit|Bash";
            let pre = the_group(&hooks["PreToolUse"], "pre-edit", "claude-code", cmd);
            nested(pre, "pre-edit", "claude-code", cmd, m, 10);
            let post = the_group(&hooks["PostToolUse"], "post-edit", "claude-code", cmd);
            nested(post, "post-edit", "claude-code", cmd, m, 10);
            for g in hooks["PostToolUse"].as_array().unwrap() {
                for h in g["hooks"].as_array().unwrap() {
                    assert!(h["command"].as_str().unwrap().contains("hook post-edit"));
                }
            }
            let start = the_group(&hooks["SessionStart"], "start", "claude-code", cmd);
            nested(start, "start", "claude-code", cmd, "", 10);
            for event in ["Stop", "SubagentStop"] {
                let stop = the_group(&hooks[event], "stop", "claude-code", cmd);
                nested(stop, "stop", "claude-code", cmd, "", 150);
            }
        },
    },
    Case {
        harness: "codex",
        files: &[(
            ".codex/config.toml",
            Some(
                "# my Codex settings\nmodel = \"gpt-5\"  # pinned\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\nargs = [\"--stdio\"]\n\n[[hooks.PostToolUse]]\nmatcher = \"^Bash$\"\n\n[[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = \"review.py\"\n# trailing comment, no newline at the end",
            ),
        )],
        broken: "[mcp_servers\ncommand = 1\n",
        shape: |f, cmd| {
            let c = &f[".codex/config.toml"];
            assert_eq!(
                c["mcp_servers"]["lspgate"],
                json!({"command": cmd, "args": ["serve"]})
            );
            let m = "^(apply_patch|Bash)$";
            let pre = the_group(&c["hooks"]["PreToolUse"], "pre-edit", "codex", cmd);
            nested(pre, "pre-edit", "codex", cmd, m, 10);
            let post = the_group(&c["hooks"]["PostToolUse"], "post-edit", "codex", cmd);
            nested(post, "post-edit", "codex", cmd, m, 10);
            assert_eq!(
                c["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
                "review.py"
            );
            let start = the_group(&c["hooks"]["SessionStart"], "start", "codex", cmd);
            nested(start, "start", "codex", cmd, "", 10);
            let stop = the_group(&c["hooks"]["Stop"], "stop", "codex", cmd);
            nested(stop, "stop", "codex", cmd, "", 150);
        },
    },
    Case {
        harness: "gemini",
        files: &[(
            ".gemini/settings.json",
            Some(
                "{\n   // the theme\n   \"theme\": \"Dracula\",\n   \"mcpServers\": {\n      \"search\": {\"httpUrl\": \"https://example.com/mcp\"} /* remote */\n   },\n   \"hooks\": {\n      \"BeforeTool\": [\n         {\"matcher\": \"run_shell_command\", \"hooks\": [{\"name\": \"audit\", \"type\": \"command\", \"command\": \"audit.sh\"}]}\n      ]\n   }\n}\n",
            ),
        )],
        broken: "{\n  \"theme\": \"Dracula\"\n  \"mcpServers\": {}\n}\n",
        shape: |f, cmd| {
            let s = &f[".gemini/settings.json"];
            assert_eq!(
                s["mcpServers"]["lspgate"],
                json!({"command": cmd, "args": ["serve"]})
            );
            let m = "write_file|replace|run_shell_command";
            for (event, which) in [("BeforeTool", "pre-edit"), ("AfterTool", "post-edit")] {
                let g = the_group(&s["hooks"][event], which, "gemini", cmd);
                nested(g, which, "gemini", cmd, m, 10_000);
                assert_eq!(g["hooks"][0]["name"], format!("lspgate-{which}"));
            }
            let start = the_group(&s["hooks"]["SessionStart"], "start", "gemini", cmd);
            nested(start, "start", "gemini", cmd, "", 10_000);
            let stop = the_group(&s["hooks"]["AfterAgent"], "stop", "gemini", cmd);
            nested(stop, "stop", "gemini", cmd, "", 150_000);
        },
    },
    Case {
        harness: "cursor",
        files: &[
            (
                ".cursor/mcp.json",
                Some("{ \"mcpServers\": { \"db\": { \"command\": \"db-mcp\" } } }\n"),
            ),
            (
                ".cursor/hooks.json",
                Some(
                    "{\n  \"version\": 1,\n  \"hooks\": {\n    \"afterFileEdit\": [{\"command\": \".cursor/hooks/format.sh\"}]\n  }\n}\n",
                ),
            ),
        ],
        broken: "{\"version\": 1, \"hooks\": {\"postToolUse\": [{\"command\": }]}}",
        shape: |f, cmd| {
            assert_eq!(
                f[".cursor/mcp.json"]["mcpServers"]["lspgate"],
                json!({"command": cmd, "args": ["serve"]})
            );
            let h = &f[".cursor/hooks.json"];
            assert_eq!(h["version"], 1);
            let g = the_group(&h["hooks"]["postToolUse"], "post-edit", "cursor", cmd);
            assert_eq!(g["matcher"], "Write|Shell|Delete");
            assert_eq!(g["timeout"], 10);
            assert!(h["hooks"].get("preToolUse").is_none());
            // Cursor's sessionStart is not accepted by every version: none written.
            assert!(h["hooks"].get("sessionStart").is_none());
            let stop = the_group(&h["hooks"]["stop"], "stop", "cursor", cmd);
            assert!(stop.get("matcher").is_none(), "{stop}");
            assert_eq!(stop["timeout"], 150);
        },
    },
    Case {
        harness: "opencode",
        files: &[(
            "opencode.jsonc",
            Some(
                "{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  // servers\n  \"mcp\": {\n    \"web\": {\"type\": \"remote\", \"url\": \"https://example.com\",},\n  },\n  \"lsp\": {\"typescript\": {\"disabled\": true}},\n}\n",
            ),
        )],
        broken: "{\n  \"mcp\": {\n    /* unterminated\n",
        shape: |f, cmd| {
            let o = &f["opencode.jsonc"];
            assert_eq!(
                o["mcp"]["lspgate"],
                json!({"type": "local", "command": [cmd, "serve"], "enabled": true})
            );
            assert_eq!(o["lsp"]["lspgate"]["command"], json!([cmd, "lsp"]));
            let ext = o["lsp"]["lspgate"]["extensions"].as_array().unwrap();
            for e in [
                ".py", ".pyi", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".c", ".h", ".cc",
                ".cpp", ".hpp",
            ] {
                assert!(ext.contains(&json!(e)), "{e}");
            }
            assert_eq!(o["lsp"]["typescript"], json!({"disabled": true}));
        },
    },
    Case {
        harness: "copilot",
        files: &[
            (".github/lsp.json", None),
            (
                ".github/mcp.json",
                Some(
                    "{\n  \"mcpServers\": {\n    \"playwright\": {\"type\": \"local\", \"command\": \"npx\", \"args\": [\"@playwright/mcp@latest\"], \"tools\": [\"*\"]}\n  }\n}\n",
                ),
            ),
        ],
        broken: "{\"mcpServers\": {\"playwright\": 1,, }}",
        shape: |f, cmd| {
            assert_eq!(
                f[".github/mcp.json"]["mcpServers"]["lspgate"],
                json!({"type": "local", "command": cmd, "args": ["serve"], "tools": ["*"]})
            );
            let lsp = &f[".github/lsp.json"]["lspServers"]["lspgate"];
            assert_eq!(lsp["command"], cmd);
            assert_eq!(lsp["args"], json!(["lsp"]));
            assert_eq!(lsp["fileExtensions"][".tsx"], "typescriptreact");
            assert_eq!(lsp["fileExtensions"][".hpp"], "cpp");
            assert_eq!(lsp["fileExtensions"].as_object().unwrap().len(), 11);
        },
    },
];

fn fixture(env: &Env, case: &Case) {
    for (rel, text) in case.files {
        if let Some(text) = text {
            env.write(rel, text);
        }
    }
}

#[test]
fn each_harness_merges_keeps_the_rest_and_removes_exactly() {
    for case in CASES {
        let env = Env::new();
        let h = case.harness;
        fixture(&env, case);
        let original = snapshot(env.root.path());

        // A dry run prints a diff per file and writes nothing.
        let out = ok(env.setup(&[h, "--dry-run"]));
        for (rel, text) in case.files {
            let old = if text.is_some() {
                format!("--- a/{rel}")
            } else {
                "--- /dev/null".into()
            };
            assert!(
                out.contains(&old) && out.contains(&format!("+++ b/{rel}")),
                "{h}: {out}"
            );
        }
        assert!(
            out.lines()
                .any(|l| l.starts_with('+') && l.contains("lspgate")),
            "{h}: {out}"
        );
        assert_eq!(
            snapshot(env.root.path()),
            original,
            "{h}: the dry run wrote"
        );

        let out = ok(env.setup(&[h]));
        let mut files = BTreeMap::new();
        for (rel, before) in case.files {
            assert!(out.contains(&format!("wrote {rel}\n")), "{h}: {out}");
            let text = env.read(rel);
            let value = parse(rel, &text);
            // Everything else is still there, as it was.
            let before = before.map_or(json!({}), |b| parse(rel, b));
            assert_eq!(others(&value), others(&before), "{h} {rel}:\n{text}");
            files.insert(*rel, value);
        }
        (case.shape)(&files, &cmd());
        assert!(
            snapshot(env.home.path()).is_empty(),
            "{h}: wrote under HOME"
        );

        // Twice writes once.
        let written = snapshot(env.root.path());
        let out = ok(env.setup(&[h]));
        assert!(out.contains("already set up"), "{h}: {out}");
        assert_eq!(
            snapshot(env.root.path()),
            written,
            "{h}: the second run wrote"
        );

        // Remove gives back the original bytes (and no file setup made).
        let out = ok(env.setup(&[h, "--remove"]));
        assert!(!out.is_empty());
        assert_eq!(
            snapshot(env.root.path()),
            original,
            "{h}: remove did not restore"
        );
        let out = ok(env.setup(&[h, "--remove"]));
        assert!(out.contains("nothing to remove"), "{h}: {out}");
    }
}

#[test]
fn an_unparsable_file_stops_every_write() {
    for case in CASES {
        let env = Env::new();
        let h = case.harness;
        fixture(&env, case);
        // The last file is broken: any file before it would have been written first.
        let (broken, _) = case.files[case.files.len() - 1];
        env.write(broken, case.broken);
        let original = snapshot(env.root.path());
        for args in [vec![h], vec![h, "--dry-run"], vec![h, "--remove"]] {
            let o = env.setup(&args);
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stdout(&o));
            let err = stderr(&o);
            assert!(err.contains(broken) && err.contains("line"), "{h}: {err}");
            assert!(err.contains("nothing written"), "{h}: {err}");
            assert_eq!(snapshot(env.root.path()), original, "{h}: wrote");
        }
    }
}

#[test]
fn user_level_files_go_under_home() {
    let places: &[(&str, &[&str])] = &[
        ("claude-code", &[".claude.json", ".claude/settings.json"]),
        ("codex", &[".codex/config.toml"]),
        ("gemini", &[".gemini/settings.json"]),
        ("cursor", &[".cursor/mcp.json", ".cursor/hooks.json"]),
        ("opencode", &[".config/opencode/opencode.json"]),
        (
            "copilot",
            &[".copilot/mcp-config.json", ".copilot/lsp-config.json"],
        ),
    ];
    for (h, files) in places {
        let env = Env::new();
        // Claude Code's own state lives in ~/.claude.json: it stays.
        let state = "{\n  \"numStartups\": 3,\n  \"projects\": {}\n}\n";
        std::fs::write(env.home.path().join(".claude.json"), state).unwrap();
        let out = ok(env.setup(&[h, "--user"]));
        for f in *files {
            assert!(out.contains(&format!("wrote ~/{f}\n")), "{h}: {out}");
            let text = std::fs::read_to_string(env.home.path().join(f)).unwrap();
            assert!(text.contains("lspgate"), "{f}");
            parse(f, &text);
        }
        assert!(
            snapshot(env.root.path()).is_empty(),
            "{h}: wrote in the project"
        );
        if *h == "claude-code" {
            let text = std::fs::read_to_string(env.home.path().join(".claude.json")).unwrap();
            let v = parse(".claude.json", &text);
            assert_eq!(v["mcpServers"]["lspgate"]["args"], json!(["serve"]));
            assert_eq!(v["numStartups"], 3);
        }
        ok(env.setup(&[h, "--user", "--remove"]));
        let left = snapshot(env.home.path());
        assert_eq!(left.len(), 1, "{h}: {left:?}");
        assert_eq!(left[Path::new(".claude.json")], state.as_bytes());
    }
}

#[test]
fn the_command_is_lspgate_on_path_or_the_given_one() {
    let env = Env::new();
    std::os::unix::fs::symlink(BIN, env.path.path().join("lspgate")).unwrap();
    ok(env.setup(&["cursor"]));
    let v = parse(".cursor/mcp.json", &env.read(".cursor/mcp.json"));
    assert_eq!(v["mcpServers"]["lspgate"]["command"], "lspgate");
    let hooks = env.read(".cursor/hooks.json");
    assert!(
        hooks.contains("\"lspgate hook post-edit --format cursor\""),
        "{hooks}"
    );

    // Another command leaves lspgate's entries as they are (they may be the user's), saying so.
    let written = snapshot(env.root.path());
    let out = ok(env.setup(&["cursor", "--command", "/opt/my gate/lspgate"]));
    assert!(out.contains("already set up"), "{out}");
    assert!(
        out.contains(
            "note: kept your lspgate entry `mcpServers.lspgate` in .cursor/mcp.json as it is"
        ),
        "{out}"
    );
    assert!(
        out.contains("note: kept your lspgate hook group in `hooks.postToolUse` in .cursor/hooks.json as it is"),
        "{out}"
    );
    assert_eq!(snapshot(env.root.path()), written);
    // A remove for that command leaves them too; one for theirs takes them out.
    let out = ok(env.setup(&["cursor", "--remove", "--command", "/opt/my gate/lspgate"]));
    assert!(out.contains("nothing removed"), "{out}");
    assert!(
        out.contains("note: left your lspgate entry `mcpServers.lspgate` in .cursor/mcp.json"),
        "{out}"
    );
    assert_eq!(snapshot(env.root.path()), written);
    ok(env.setup(&["cursor", "--remove"]));
    assert!(snapshot(env.root.path()).is_empty());

    env.write(
        ".cursor/mcp.json",
        "{\"mcpServers\": {\"a\": {}, \"z\": {}}}",
    );
    ok(env.setup(&["cursor", "--command", "/opt/my gate/lspgate"]));
    let text = env.read(".cursor/mcp.json");
    let expected = "{\"mcpServers\": {\"a\": {}, \"z\": {}, \"lspgate\": {\"command\": \"/opt/my gate/lspgate\", \"args\": [\"serve\"]}}}";
    assert_eq!(text, expected);
    let hooks = parse(".cursor/hooks.json", &env.read(".cursor/hooks.json"));
    let groups = hooks["hooks"]["postToolUse"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "{groups:?}");
    assert_eq!(
        groups[0]["command"],
        "'/opt/my gate/lspgate' hook post-edit --format cursor"
    );
}

#[test]
fn running_setup_again_keeps_the_users_changes_and_remove_leaves_them() {
    let env = Env::new();
    let cmd = cmd();
    ok(env.setup(&["claude-code"]));
    // The user gives the server an environment and makes the post-edit hook block on errors.
    let mcp = env.read(".mcp.json");
    let mcp = mcp.replace(
        "\"args\": [\"serve\"]",
        "\"args\": [\"serve\"],\n      \"env\": {\"X\": \"1\"}",
    );
    env.write(".mcp.json", &mcp);
    let settings = env.read(".claude/settings.json");
    let settings = settings.replace(
        "hook post-edit --format",
        "hook post-edit --block-on error --format",
    );
    env.write(".claude/settings.json", &settings);
    let changed = snapshot(env.root.path());

    let out = ok(env.setup(&["claude-code"]));
    assert_eq!(snapshot(env.root.path()), changed, "setup reverted: {out}");
    assert!(out.contains("already set up"), "{out}");
    assert!(
        out.contains("note: kept your lspgate entry `mcpServers.lspgate` in .mcp.json as it is"),
        "{out}"
    );
    assert!(
        out.contains("note: kept your lspgate hook group in `hooks.PostToolUse` in .claude/settings.json as it is"),
        "{out}"
    );
    let v = parse(".mcp.json", &env.read(".mcp.json"));
    assert_eq!(v["mcpServers"]["lspgate"]["env"], json!({"X": "1"}));

    // Remove takes out the pre-edit hook, as setup wrote it, and nothing the user changed.
    let out = ok(env.setup(&["claude-code", "--remove"]));
    assert!(out.contains("wrote .claude/settings.json"), "{out}");
    assert!(
        out.contains("note: left your lspgate entry `mcpServers.lspgate` in .mcp.json"),
        "{out}"
    );
    assert!(
        out.contains(
            "note: left your lspgate hook group in `hooks.PostToolUse` in .claude/settings.json"
        ),
        "{out}"
    );
    assert_eq!(env.read(".mcp.json"), mcp);
    let v = parse(".claude/settings.json", &env.read(".claude/settings.json"));
    assert!(v["hooks"].get("PreToolUse").is_none(), "{v:#}");
    assert_eq!(
        v["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        format!("{cmd} hook post-edit --block-on error --format claude-code")
    );
}

#[test]
fn remove_leaves_lspgate_entries_the_user_wrote_before_setup() {
    let env = Env::new();
    let mine = "{\n  \"mcpServers\": {\n    \"lspgate\": {\"command\": \"lspgate\", \"args\": [\"serve\"], \"env\": {\"X\": \"1\"}}\n  }\n}\n";
    env.write(".gemini/settings.json", mine);
    let out = ok(env.setup(&["gemini"]));
    assert!(
        out.contains(
            "note: kept your lspgate entry `mcpServers.lspgate` in .gemini/settings.json as it is"
        ),
        "{out}"
    );
    let text = env.read(".gemini/settings.json");
    assert!(
        text.starts_with(mine.trim_end_matches("\n  }\n}\n")),
        "{text}"
    );
    let out = ok(env.setup(&["gemini", "--remove"]));
    assert!(
        out.contains("note: left your lspgate entry `mcpServers.lspgate` in .gemini/settings.json"),
        "{out}"
    );
    assert_eq!(env.read(".gemini/settings.json"), mine);
    let out = ok(env.setup(&["gemini", "--remove"]));
    assert!(out.contains("nothing removed"), "{out}");
    assert!(out.contains("note: left your lspgate entry"), "{out}");
}

#[test]
fn codex_keeps_a_changed_block_and_windows_line_ends() {
    let env = Env::new();
    let original = "model = \"gpt-5\"\r\n\r\n[mcp_servers.docs]\r\ncommand = \"docs-mcp\"\r\n";
    env.write(".codex/config.toml", original);
    ok(env.setup(&["codex"]));
    let text = env.read(".codex/config.toml");
    assert!(text.starts_with(original));
    assert!(text.contains("# >>> lspgate setup"));
    assert_eq!(
        text.matches('\n').count(),
        text.matches("\r\n").count(),
        "{text:?}"
    );
    ok(env.setup(&["codex", "--remove"]));
    assert_eq!(env.read(".codex/config.toml"), original);

    // The user changes lspgate's block: setup and remove leave it, saying so.
    ok(env.setup(&["codex"]));
    let changed = env.read(".codex/config.toml").replace(
        "args = [\"serve\"]\r\n",
        "args = [\"serve\"]\r\nenv = { X = \"1\" }\r\n",
    );
    env.write(".codex/config.toml", &changed);
    let out = ok(env.setup(&["codex"]));
    assert!(
        out.contains("note: kept the lspgate block (`# >>> lspgate setup` to `# <<< lspgate setup`) in .codex/config.toml as it is"),
        "{out}"
    );
    assert_eq!(env.read(".codex/config.toml"), changed);
    let out = ok(env.setup(&["codex", "--remove"]));
    assert!(out.contains("note: left the lspgate block"), "{out}");
    assert_eq!(env.read(".codex/config.toml"), changed);
}
