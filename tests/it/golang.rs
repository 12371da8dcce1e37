//! gopls (v0.23.0, from scripts/install-test-servers.sh) through lspgate over MCP stdio on a
//! real module fetched by name (cobra 1.8.1, from the Go module proxy): every tool, each
//! checked in the same run against Go's own tools (`go build`, `go vet`, `gofmt`, `go doc`, and
//! gopls's own command line, which loads the module afresh in its own process).

mod install_and_hooks;

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;

/// The Go environment of the tests: the module cache the install script filled, served as
/// the module proxy (offline; its modules were verified when first downloaded), the Go on
/// PATH, no toolchain switch.
pub(crate) fn go_env() -> Vec<(&'static str, String)> {
    let tools = repo().join(".tools/go");
    let proxy = format!("file://{}", tools.join("pkg/mod/cache/download").display());
    vec![
        ("GOPATH", tools.display().to_string()),
        ("GOFLAGS", "-modcacherw".into()),
        ("GOPROXY", proxy),
        ("GOSUMDB", "off".into()),
        ("GOTOOLCHAIN", "local".into()),
        (
            "PATH",
            format!("{}:{}", tools.join("bin").display(), test_path()),
        ),
    ]
}

/// Fails loudly (never skips) when Go or the pinned gopls is missing.
pub(crate) fn require_go() {
    let gopls = repo().join(".tools/go/bin/gopls");
    assert!(
        gopls.is_file(),
        "{} is missing: run scripts/install-test-servers.sh",
        gopls.display()
    );
    require("go");
}

/// Runs a Go tool (`go …`, `gofmt …`, `gopls …`) in `dir` with the test's Go environment:
/// whether it succeeded, and its stdout and stderr together.
pub(crate) fn go_tool(dir: &Path, program: &str, args: &[&str]) -> (bool, String) {
    let program = if program == "gopls" {
        repo().join(".tools/go/bin/gopls").display().to_string()
    } else {
        program.to_string()
    };
    let out = std::process::Command::new(&program)
        .current_dir(dir)
        .args(args)
        .envs(go_env())
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The 1-based number of the first line of `file` (in `dir`) that contains `needle`.
fn line_of(dir: &Path, file: &str, needle: &str) -> u64 {
    let text = std::fs::read_to_string(dir.join(file)).unwrap();
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{needle} is not in {file}")) as u64
        + 1
}

/// `PATH:LINE:COL` spans as gopls's command line prints them (absolute paths, byte columns),
/// as `(file relative to root, line, code-point column)`.
fn spans(root: &Path, text: &str) -> Vec<(String, u64, u64)> {
    let re = regex::Regex::new(r"(/[^\s:]+\.go):(\d+):(\d+)").unwrap();
    let root = root.canonicalize().unwrap();
    let mut out: Vec<(String, u64, u64)> = re
        .captures_iter(text)
        .map(|c| {
            let path = Path::new(&c[1]);
            let line: u64 = c[2].parse().unwrap();
            let byte: usize = c[3].parse().unwrap();
            let source = std::fs::read_to_string(path).unwrap();
            let l = source.lines().nth(line as usize - 1).unwrap();
            let column = l[..byte - 1].chars().count() as u64 + 1;
            let rel = path
                .strip_prefix(&root)
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| path.display().to_string());
            (rel, line, column)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// lspgate's Positions as `(file, line, column)`, sorted.
fn positions(files: &Value) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = locs(files)
        .iter()
        .map(|l| {
            (
                l["file"].as_str().unwrap().to_string(),
                l["line"].as_u64().unwrap(),
                l["column"].as_u64().unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The files `go build`/`go vet` output names (`./a.go:1:2: …`, `vet: ./a.go:…`, absolute
/// paths too), relative to `root`, sorted.
fn files_named(root: &Path, output: &str) -> Vec<String> {
    let re = regex::Regex::new(r"(?m)^(?:vet: )?([^\s:#][^:\n]*\.go):\d+:").unwrap();
    let root = root.canonicalize().unwrap();
    let mut out: Vec<String> = re
        .captures_iter(output)
        .map(|c| {
            let p = Path::new(&c[1]);
            let p = p.strip_prefix(&root).unwrap_or(p);
            p.display().to_string().trim_start_matches("./").to_string()
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gopls_on_cobra_against_gos_own_tools() {
    require_go();
    let ws = real_project("cobra-1.8.1");
    let root = ws.path().to_path_buf();
    let env = go_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let gate = Gate::start_in(&root, &["--ready-timeout", "60"], &[], &env, &new_home()).await;

    // Readiness: the first workspace-wide answer, asked at once, is complete (gopls had loaded
    // its packages), exact name first, where gopls's own command line puts it.
    let started = std::time::Instant::now();
    let (syms, text) = gate
        .ok("workspace_symbols", json!({"query": "Command"}))
        .await;
    eprintln!("first workspace_symbols: {:?}", started.elapsed());
    assert!(syms.get("partial").is_none(), "{text}");
    let (ok, cli) = go_tool(
        &root,
        "gopls",
        &["workspace_symbol", "-matcher=exact", "Command"],
    );
    assert!(ok, "{cli}");
    let truth = spans(&root, cli.lines().next().unwrap());
    let first = &syms["symbols"][0];
    assert_eq!(first["name"], "Command", "{text}");
    assert_eq!(
        (
            first["file"].as_str().unwrap(),
            first["at"][0].as_u64().unwrap()
        ),
        (truth[0].0.as_str(), truth[0].1),
        "{text}\ngopls: {cli}"
    );

    // The servers row names gopls by its version, not its 2 KB build information.
    let (servers, text) = gate.ok("servers", json!({})).await;
    assert!(text.contains("v0.23.0"), "{text}");
    assert!(!text.contains("GoVersion"), "{text}");
    assert!(servers["servers"].is_array());

    // Hover: the signature `go doc` gives.
    let (ok, doc) = go_tool(&root, "go", &["doc", ".", "Command.ExecuteC"]);
    assert!(ok, "{doc}");
    let signature = doc
        .lines()
        .find(|l| l.starts_with("func "))
        .unwrap()
        .trim()
        .to_string();
    let line = line_of(&root, "command.go", "c.ExecuteC()");
    let (_, text) = gate
        .ok(
            "hover",
            json!({"file": "command.go", "line": line, "symbol": "ExecuteC"}),
        )
        .await;
    assert!(text.contains(&signature), "{signature} not in {text}");

    // Definition across files: command.go's call of legacyArgs, defined in args.go.
    let line = line_of(&root, "command.go", "legacyArgs(commandFound");
    let (d, text) = gate
        .ok(
            "definition",
            json!({"file": "command.go", "line": line, "symbol": "legacyArgs"}),
        )
        .await;
    let source = std::fs::read_to_string(root.join("command.go")).unwrap();
    let l = source.lines().nth(line as usize - 1).unwrap();
    let byte = l.find("legacyArgs").unwrap() + 1;
    let (ok, cli) = go_tool(
        &root,
        "gopls",
        &["definition", &format!("command.go:{line}:{byte}")],
    );
    assert!(ok, "{cli}");
    let truth = spans(&root, cli.lines().next().unwrap());
    let got = positions(&d["files"]);
    assert_eq!(got, truth, "{text}\ngopls: {cli}");
    assert_eq!(got[0].0, "args.go");

    // References: the same set as `gopls references -d` (declaration included).
    let line = line_of(&root, "command.go", "func stripFlags(");
    let (refs, text) = gate
        .ok(
            "references",
            json!({"file": "command.go", "line": line, "symbol": "stripFlags", "limit": 1000}),
        )
        .await;
    assert!(refs.get("partial").is_none(), "{text}");
    let (ok, cli) = go_tool(
        &root,
        "gopls",
        &["references", "-d", &format!("command.go:{line}:6")],
    );
    assert!(ok, "{cli}");
    let truth = spans(&root, &cli);
    assert!(truth.len() >= 3, "{cli}");
    assert_eq!(positions(&refs["files"]), truth, "{text}\ngopls: {cli}");

    // Document symbols: the top level of `gopls symbols`.
    let (outline, text) = gate
        .ok(
            "document_symbols",
            json!({"file": "command.go", "depth": 1, "limit": 1000}),
        )
        .await;
    let mut ours: Vec<String> = outline["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect();
    let (ok, cli) = go_tool(&root, "gopls", &["symbols", "command.go"]);
    assert!(ok, "{cli}");
    let mut theirs: Vec<String> = cli
        .lines()
        .filter(|l| !l.starts_with('\t') && !l.trim().is_empty())
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs, "{text}");

    // Call hierarchy: legacyArgs's callers, as `gopls call_hierarchy` names them.
    let line = line_of(&root, "args.go", "func legacyArgs(");
    let (calls, text) = gate
        .ok(
            "call_hierarchy",
            json!({"file": "args.go", "line": line, "symbol": "legacyArgs", "direction": "incoming"}),
        )
        .await;
    let (ok, cli) = go_tool(
        &root,
        "gopls",
        &["call_hierarchy", &format!("args.go:{line}:6")],
    );
    assert!(ok, "{cli}");
    let callers: Vec<String> = cli
        .lines()
        .filter(|l| l.starts_with("caller["))
        .map(|l| {
            let name = l.split("function ").nth(1).unwrap();
            name.split(" in ").next().unwrap().to_string()
        })
        .collect();
    let mut ours: Vec<String> = calls["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    ours.sort();
    assert!(!callers.is_empty(), "{cli}");
    for c in &callers {
        assert!(
            ours.iter().any(|o| o == c || o.ends_with(&format!(".{c}"))),
            "{c} not among {ours:?}: {text}"
        );
    }
    assert_eq!(ours.len(), callers.len(), "{text}\ngopls: {cli}");

    // Inlay hints from gopls itself (not derived): the parameter name `go doc` gives
    // fmt.Sprintf's first parameter, at a call of it in command.go (whose argument is not
    // named so: gopls leaves such hints out); semantic classes as `gopls semtok` classifies
    // the same line, kind and modifiers.
    let (ok, doc) = go_tool(&root, "go", &["doc", "fmt.Sprintf"]);
    assert!(ok, "{doc}");
    let sig = doc
        .lines()
        .find(|l| l.starts_with("func Sprintf("))
        .unwrap();
    let param = sig["func Sprintf(".len()..].split(' ').next().unwrap();
    let line = line_of(
        &root,
        "command.go",
        "completions = append(completions, fmt.Sprintf(",
    );
    let (hints, text) = gate
        .ok(
            "inlay_hints",
            json!({"file": "command.go", "line": line, "end_line": line, "classes": true}),
        )
        .await;
    assert!(hints.get("derived").is_none(), "{text}");
    assert!(hints.get("classes_unavailable").is_none(), "{text}");
    let row = &hints["lines"][0];
    assert_eq!(row["line"], line, "{text}");
    let labels: Vec<&str> = row["hints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h[1].as_str().unwrap())
        .collect();
    assert!(
        labels
            .iter()
            .any(|l| l.trim_end_matches([':', ' ']) == param),
        "{param} not among {labels:?}: {text}"
    );
    let (ok, semtok) = go_tool(&root, "gopls", &["semtok", "command.go"]);
    assert!(ok, "{semtok}");
    let annotated = semtok.lines().nth(line as usize - 1).unwrap();
    let tok = regex::Regex::new(r"/\*⇒\d+,(\w+),\[([^\]]*)\]\*/(\w+)").unwrap();
    let theirs: Vec<(String, String, String)> = tok
        .captures_iter(annotated)
        .filter(|c| {
            !matches!(
                &c[1],
                "keyword" | "operator" | "string" | "number" | "comment"
            )
        })
        .map(|c| (c[3].to_string(), c[1].to_string(), c[2].to_string()))
        .collect();
    let word = regex::Regex::new(r"^\w+$").unwrap();
    let ours: Vec<(String, String, String)> = row["classes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| word.is_match(c[1].as_str().unwrap()))
        .map(|c| {
            (
                c[1].as_str().unwrap().to_string(),
                c[2].as_str().unwrap().to_string(),
                c.get(3).and_then(Value::as_str).unwrap_or("").to_string(),
            )
        })
        .collect();
    assert!(!theirs.is_empty(), "{annotated}");
    assert_eq!(ours, theirs, "{text}\ngopls semtok: {annotated}");

    // Type hierarchy through the standard path (gopls announces it): an interface of the
    // workspace and the types that implement it, as `gopls implementation` finds them.
    std::fs::write(
        root.join("namer.go"),
        "package cobra\n\n// Namer is anything with a name.\ntype Namer interface {\n\tName() string\n}\n",
    )
    .unwrap();
    let (types, text) = gate
        .ok(
            "type_hierarchy",
            json!({"file": "namer.go", "line": 4, "symbol": "Namer", "direction": "subtypes"}),
        )
        .await;
    let (ok, cli) = go_tool(&root, "gopls", &["implementation", "namer.go:4:6"]);
    assert!(ok, "{cli}");
    let truth = spans(&root, &cli);
    let below: Vec<(String, u64)> = types["types"][0]["types"]
        .as_array()
        .unwrap_or_else(|| panic!("no subtypes: {text}"))
        .iter()
        .map(|t| {
            (
                t["file"].as_str().unwrap().to_string(),
                t["at"][0].as_u64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, u64)> = truth.iter().map(|(f, l, _)| (f.clone(), *l)).collect();
    let mut below_sorted = below.clone();
    below_sorted.sort();
    assert_eq!(below_sorted, want, "{text}\ngopls: {cli}");
    std::fs::remove_file(root.join("namer.go")).unwrap();

    // Fresh diagnostics after a plain write (no editor, no didChange): where `go build` says.
    let original = std::fs::read_to_string(root.join("args.go")).unwrap();
    let broken = original.replacen(
        "func legacyArgs(cmd *Command, args []string) error {",
        "func legacyArgs(cmd *Command, args []string) error {\n\tvar unused int = \"s\"",
        1,
    );
    assert_ne!(broken, original);
    std::fs::write(root.join("args.go"), &broken).unwrap();
    let (ok, build) = go_tool(&root, "go", &["build", "./..."]);
    assert!(!ok, "{build}");
    let re = regex::Regex::new(r"(?m)^\./args\.go:(\d+):(\d+): (.*)$").unwrap();
    let mut truth: Vec<(u64, u64)> = re
        .captures_iter(&build)
        .map(|c| (c[1].parse().unwrap(), c[2].parse().unwrap()))
        .collect();
    truth.sort();
    assert!(!truth.is_empty(), "{build}");
    let (d, text) = gate.ok("diagnostics", json!({"file": "args.go"})).await;
    let mut ours: Vec<(u64, u64)> = diags(&d["files"])
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| (d["line"].as_u64().unwrap(), d["column"].as_u64().unwrap()))
        .collect();
    ours.sort();
    assert_eq!(ours, truth, "{text}\ngo build: {build}");

    // check with the `go` task: every file `go build ./...` and `go vet ./...` name is in the
    // report, each finding said once (gopls says the compiler's errors too: one entry each).
    // First the build error in args.go; then, args.go fixed, a vet finding in doc/ (doc
    // imports the package that did not build, so vet could not look at it before).
    let (_, build) = go_tool(&root, "go", &["build", "./..."]);
    let (_, vet) = go_tool(&root, "go", &["vet", "./..."]);
    let named = files_named(&root, &format!("{build}\n{vet}"));
    assert_eq!(named, ["args.go"], "{build}{vet}");
    let (report, text) = gate.ok("check", json!({"tasks": ["go"]})).await;
    let found: Vec<Value> = diags(&report["files"])
        .into_iter()
        .filter(|d| d["severity"] == "error")
        .collect();
    let mut files: Vec<String> = found
        .iter()
        .map(|d| d["file"].as_str().unwrap().to_string())
        .collect();
    files.dedup();
    assert_eq!(files, named, "{text}");
    let mut at: Vec<(u64, u64)> = found
        .iter()
        .map(|d| (d["line"].as_u64().unwrap(), d["column"].as_u64().unwrap()))
        .collect();
    at.sort();
    assert_eq!(at, truth, "each said once: {text}");
    assert_eq!(report["ok"], false);
    assert!(report.get("unchecked").is_none(), "{text}");

    std::fs::write(root.join("args.go"), &original).unwrap();
    std::fs::write(
        root.join("doc/vetme.go"),
        "package doc\n\nimport \"fmt\"\n\nfunc vetMe() string {\n\treturn fmt.Sprintf(\"%d\", \"x\")\n}\n",
    )
    .unwrap();
    let (ok, build) = go_tool(&root, "go", &["build", "./..."]);
    assert!(ok, "{build}");
    let (ok, vet) = go_tool(&root, "go", &["vet", "./..."]);
    assert!(!ok, "{vet}");
    let named = files_named(&root, &vet);
    assert_eq!(named, ["doc/vetme.go"], "{vet}");
    let (report, text) = gate.ok("check", json!({"tasks": ["go"]})).await;
    // (gopls's own analyzers warn elsewhere in cobra: errors are what go vet failed on.)
    let found: Vec<Value> = diags(&report["files"])
        .into_iter()
        .filter(|d| d["severity"] == "error")
        .collect();
    let mut files: Vec<String> = found
        .iter()
        .map(|d| d["file"].as_str().unwrap().to_string())
        .collect();
    files.dedup();
    assert_eq!(
        files, named,
        "go vet failed on it: an error, whoever else said it: {text}"
    );
    assert_eq!(report["ok"], false, "{text}");
    assert!(report.get("unchecked").is_none(), "{text}");
    std::fs::remove_file(root.join("doc/vetme.go")).unwrap();
    let (ok, vet) = go_tool(&root, "go", &["vet", "./..."]);
    assert!(ok, "{vet}");
    let (r, text) = gate.ok("run_task", json!({"name": "go"})).await;
    assert_eq!(r["ok"], true, "{text}");
    assert!(
        !root.join("cobra").exists(),
        "the go task writes no executable"
    );

    // Rename across files, applied: `go vet ./...` (tests too) still passes, and gopls finds
    // as many references to the new name as there were to the old.
    let line = line_of(&root, "command.go", "func stripFlags(");
    let before = positions(
        &gate
            .ok(
                "references",
                json!({"file": "command.go", "line": line, "symbol": "stripFlags", "limit": 1000}),
            )
            .await
            .0["files"],
    );
    let (r, text) = gate
        .ok(
            "rename",
            json!({"file": "command.go", "line": line, "symbol": "stripFlags", "new_name": "stripFlagArgs", "apply": true}),
        )
        .await;
    assert_eq!(r["applied"], true, "{text}");
    let mut changed: Vec<String> = r["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    changed.sort();
    let mut expected: Vec<String> = before.iter().map(|p| p.0.clone()).collect();
    expected.dedup();
    assert_eq!(changed, expected, "{text}");
    let (ok, vet) = go_tool(&root, "go", &["vet", "./..."]);
    assert!(ok, "after the rename: {vet}");
    let (ok, build) = go_tool(&root, "go", &["build", "./..."]);
    assert!(ok, "after the rename: {build}");
    let after = positions(
        &gate
            .ok(
                "references",
                json!({"file": "command.go", "line": line, "symbol": "stripFlagArgs", "limit": 1000}),
            )
            .await
            .0["files"],
    );
    assert_eq!(after.len(), before.len());

    // Organize imports: an unused import written plainly; the action gives what `gopls imports`
    // gives.
    let args = std::fs::read_to_string(root.join("args.go")).unwrap();
    let messy = args.replacen("import (", "import (\n\t\"os\"", 1);
    assert_ne!(messy, args);
    std::fs::write(root.join("args.go"), &messy).unwrap();
    let (ok, imports) = go_tool(&root, "gopls", &["imports", "args.go"]);
    assert!(ok, "{imports}");
    let import_line = line_of(&root, "args.go", "\"os\"");
    let (actions, text) = gate
        .ok(
            "code_actions",
            json!({"file": "args.go", "line": import_line, "kind": "source.organizeImports"}),
        )
        .await;
    let index = actions["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "source.organizeImports")
        .unwrap_or_else(|| panic!("no organize imports: {text}"))["index"]
        .clone();
    let (_, text) = gate
        .ok(
            "code_actions",
            json!({"file": "args.go", "line": import_line, "kind": "source.organizeImports", "apply": index}),
        )
        .await;
    let now = std::fs::read_to_string(root.join("args.go")).unwrap();
    assert_eq!(now.trim_end(), imports.trim_end(), "{text}");

    // Fill struct: an empty cobra.Command literal in a new file gets its fields, and builds.
    std::fs::write(
        root.join("fill.go"),
        "package cobra\n\nvar filled = Command{}\n",
    )
    .unwrap();
    let (actions, text) = gate
        .ok("code_actions", json!({"file": "fill.go", "line": 3}))
        .await;
    let fill = actions["actions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| {
            a["kind"]
                .as_str()
                .is_some_and(|k| k.starts_with("refactor.rewrite.fillStruct"))
        })
        .unwrap_or_else(|| panic!("no fill struct: {text}"))["title"]
        .clone();
    // Named by title, as a careful agent would: gopls's list for a file it has just seen can
    // change between two asks (lspgate then applies the action shown at an index: unit-tested
    // in ops/edit/actions.rs).
    let listed = text;
    let (_, text) = gate
        .ok(
            "code_actions",
            json!({"file": "fill.go", "line": 3, "apply": fill}),
        )
        .await;
    let text = format!("{text}\nlisted before: {listed}");
    let filled = std::fs::read_to_string(root.join("fill.go")).unwrap();
    assert!(
        filled.contains("Use:") && filled.contains("Short:"),
        "{text}\n{filled}"
    );
    // gopls fills the unexported fields too (in the package) and leaves their imports
    // (bytes, pflag) to organize imports, which finds them.
    let (ok, build) = go_tool(&root, "go", &["build", "./..."]);
    assert!(!ok && build.contains("undefined: pflag"), "{build}");
    let (_, text) = gate
        .ok(
            "code_actions",
            json!({"file": "fill.go", "line": 1, "kind": "source.organizeImports", "apply": "Organize Imports"}),
        )
        .await;
    let filled = std::fs::read_to_string(root.join("fill.go")).unwrap();
    assert!(
        filled.contains("\"github.com/spf13/pflag\""),
        "{text}\n{filled}"
    );
    let (ok, build) = go_tool(&root, "go", &["build", "./..."]);
    assert!(ok, "{build}\n{filled}");
    std::fs::remove_file(root.join("fill.go")).unwrap();

    // Format: what gofmt makes of the file.
    let messy = "package cobra\n\nfunc  badlyFormatted( a int,b int)int{\nreturn a+b}\n";
    std::fs::write(root.join("fmt_me.go"), messy).unwrap();
    let (ok, gofmt) = go_tool(&root, "gofmt", &["fmt_me.go"]);
    assert!(ok, "{gofmt}");
    let (_, text) = gate
        .ok("format", json!({"file": "fmt_me.go", "apply": true}))
        .await;
    assert_eq!(
        std::fs::read_to_string(root.join("fmt_me.go")).unwrap(),
        gofmt,
        "{text}"
    );
    gate.stop().await;
}

/// A first workspace-wide answer asked with no time to wait says it is partial, naming gopls,
/// rather than passing for the whole truth.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_answer_before_gopls_loads_says_partial() {
    require_go();
    let ws = real_project("cobra-1.8.1");
    let env = go_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let gate = Gate::start_in(
        ws.path(),
        &["--ready-timeout", "0.01"],
        &[],
        &env,
        &new_home(),
    )
    .await;
    let (syms, text) = gate
        .ok("workspace_symbols", json!({"query": "Command"}))
        .await;
    let reason = syms["reason"].as_str().unwrap_or("");
    assert_eq!(syms["partial"], true, "{text}");
    assert!(reason.contains("builtin/gopls"), "{text}");
    gate.stop().await;
}
