//! Re-checks ask the servers again only about what a change can affect (issue 27), with real
//! servers (typescript-language-server + tsserver, pyright): after a plain write (not through
//! lspgate) of a body-only edit, every other file's earlier answer is taken again
//! (`summary.reused`); a signature change, and an unannotated body change that changes an
//! inferred type, have the importers asked again; creating or deleting a file, or changing the
//! project's config, asks every file; a build info or a log written beside the sources asks
//! none. Every answer equals a from-scratch check (a new lspgate
//! on a copy of the tree) after the same edits, and `diagnostics` without a file says the same.

use crate::common;
use common::*;
use serde_json::{Value, json};
use std::path::Path;

/// A project: `core` imported by `a`, `b`, `c`; `e` imports `a`; `d` imports nothing.
struct Fixture {
    ext: &'static str,
    files: Vec<(&'static str, &'static str)>,
    /// The body-only edit, the signature change, the unannotated body change (in `core`).
    body: (&'static str, &'static str),
    signature: (&'static str, &'static str),
    inferred: (&'static str, &'static str),
    config: &'static str,
}

fn typescript() -> Fixture {
    Fixture {
        ext: "ts",
        files: vec![
            (
                "tsconfig.json",
                "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}, \"include\": [\"src\"]}\n",
            ),
            (
                "src/core.ts",
                "/** Scales. */\nexport function scale(n: number, by: number): number {\n  return n * by;\n}\n\nexport function label(n: number) {\n  return `#${n}`;\n}\n",
            ),
            (
                "src/a.ts",
                "import { scale } from './core';\n\nexport const a: number = scale(1, 2);\n",
            ),
            (
                "src/b.ts",
                "import { label, scale } from './core';\n\nexport const b: string = label(scale(2, 3));\n",
            ),
            (
                "src/c.ts",
                "import { label } from './core';\n\nexport const c: string = label(3);\n",
            ),
            ("src/d.ts", "export const d: number = 4;\n"),
            (
                "src/e.ts",
                "import { a } from './a';\n\nexport const e: number = a + 1;\n",
            ),
        ],
        body: ("return n * by;", "const twice = n * by;\n  return twice;"),
        signature: (
            "scale(n: number, by: number)",
            "scale(n: string, by: number)",
        ),
        inferred: ("return `#${n}`;", "return n;"),
        config: "tsconfig.json",
    }
}

fn python() -> Fixture {
    Fixture {
        ext: "py",
        files: vec![
            ("pyrightconfig.json", "{\"include\": [\"src\"]}\n"),
            (
                "src/core.py",
                "def scale(n: int, by: int) -> int:\n    return n * by\n\n\ndef label(n: int):\n    return f\"#{n}\"\n",
            ),
            (
                "src/a.py",
                "from core import scale\n\na: int = scale(1, 2)\n",
            ),
            (
                "src/b.py",
                "from core import label, scale\n\nb: str = label(scale(2, 3))\n",
            ),
            ("src/c.py", "from core import label\n\nc: str = label(3)\n"),
            ("src/d.py", "d: int = 4\n"),
            ("src/e.py", "from a import a\n\ne: int = a + 1\n"),
        ],
        body: ("return n * by", "twice = n * by\n    return twice"),
        signature: ("scale(n: int, by: int)", "scale(n: str, by: int)"),
        inferred: ("return f\"#{n}\"", "return n"),
        config: "pyrightconfig.json",
    }
}

async fn check(gate: &Gate) -> Value {
    let r = gate.call("check", json!({})).await;
    match r.structured_content.clone() {
        Some(v) => v,
        None => panic!("check failed: {}", text_of(&r)),
    }
}

/// `diagnostics` without a file, as sorted `file:line:col severity message` lines (errors and
/// warnings: what a check lists).
async fn diagnostics(gate: &Gate) -> Vec<String> {
    let r = gate.call("diagnostics", json!({"limit": 1000})).await;
    let v = r.structured_content.unwrap();
    lines(&diags(&v["files"]))
}

fn lines(list: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = list
        .iter()
        .filter(|d| d["severity"] == "error" || d["severity"] == "warning")
        .map(|d| {
            format!(
                "{}:{}:{} {} {}",
                d["file"].as_str().unwrap(),
                d["line"],
                d["column"],
                d["severity"].as_str().unwrap(),
                d["message"].as_str().unwrap()
            )
        })
        .collect();
    out.sort();
    out
}

/// A check's issues in `diagnostics`' form.
fn as_diagnostics(report: &Value) -> Vec<String> {
    lines(&diags(&report["files"]))
}

/// A check's findings without `reused` (which a from-scratch check does not have).
fn comparable(report: &Value) -> (Value, Vec<String>) {
    let (mut summary, issues) = findings(report);
    if let Some(s) = summary.as_object_mut() {
        s.remove("reused");
    }
    (summary, issues)
}

fn reused(report: &Value) -> u64 {
    report["summary"]["reused"].as_u64().unwrap_or(0)
}

/// What a new lspgate on a copy of `root` finds.
async fn from_scratch(root: &Path) -> (Value, Vec<String>) {
    let copy = tempfile::Builder::new()
        .prefix("lspgate-recheck-copy")
        .tempdir()
        .unwrap();
    for (path, bytes) in snapshot(root) {
        let dest = copy.path().join(path.strip_prefix(root).unwrap_or(&path));
        std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
        std::fs::write(dest, bytes).unwrap();
    }
    let gate = Gate::start(copy.path(), &[], &[]).await;
    let report = check(&gate).await;
    comparable(&report)
}

fn edit(root: &Path, file: &str, (old, new): (&str, &str)) {
    let path = root.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(old), "{old} in {file}");
    std::fs::write(&path, text.replacen(old, new, 1)).unwrap();
}

/// Checks after an edit: what was reused, and that it equals a from-scratch check and the
/// `diagnostics` answer.
async fn after(gate: &Gate, root: &Path, what: &str) -> Value {
    let report = check(gate).await;
    let scratch = from_scratch(root).await;
    assert_eq!(
        comparable(&report),
        scratch,
        "{what}: a re-check differs from a check from scratch"
    );
    assert_eq!(
        diagnostics(gate).await,
        as_diagnostics(&report),
        "{what}: diagnostics without a file differ from the check"
    );
    report
}

fn has_error_in(report: &Value, file: &str) -> bool {
    diags(&report["files"])
        .iter()
        .any(|i| i["file"] == file && i["severity"] == "error")
}

async fn scenario(fx: Fixture) {
    let ext = fx.ext;
    let core = format!("src/core.{ext}");
    let ws = workspace(&fx.files);
    let root = ws.path();
    let gate = Gate::start(root, &[], &[]).await;
    let n = fx.files.len() as u64 - 1;

    let first = check(&gate).await;
    assert_eq!(first["summary"]["files"], n, "{first}");
    assert_eq!(first["summary"]["errors"], 0, "{first}");
    // Nothing changed: every answer again.
    let again = check(&gate).await;
    assert_eq!(reused(&again), n, "{again}");

    // (a0) Files no server reads, created and then changed beside the sources, as a user's
    // `tsc --incremental` and test runs leave them: every answer again.
    for round in 0..2 {
        std::fs::write(
            root.join("tsconfig.tsbuildinfo"),
            format!("{{\"r\": {round}}}"),
        )
        .unwrap();
        std::fs::write(root.join("src/run.log"), format!("round {round}\n")).unwrap();
        let r = after(&gate, root, "build info written").await;
        assert_eq!(reused(&r), n, "round {round}: {r}");
    }

    // (a) A body-only edit of an annotated function, by a plain write.
    edit(root, &core, fx.body);
    let r = after(&gate, root, "body-only edit").await;
    assert_eq!(reused(&r), n - 1, "body-only edit: {r}");
    assert_eq!(r["summary"]["errors"], 0, "{r}");

    // (b) A signature change that breaks importers: they (and what imports them) are asked.
    edit(root, &core, fx.signature);
    let r = after(&gate, root, "signature change").await;
    assert_eq!(reused(&r), 1, "only d is unaffected: {r}");
    for f in ["a", "b"] {
        assert!(has_error_in(&r, &format!("src/{f}.{ext}")), "{f}: {r}");
    }

    // (c) An unannotated body change that changes the inferred return type.
    edit(root, &core, (fx.signature.1, fx.signature.0));
    let r = after(&gate, root, "signature restored").await;
    assert_eq!(r["summary"]["errors"], 0, "{r}");
    edit(root, &core, fx.inferred);
    let r = after(&gate, root, "inferred type change").await;
    assert_eq!(reused(&r), 1, "importers are asked again: {r}");
    for f in ["b", "c"] {
        assert!(has_error_in(&r, &format!("src/{f}.{ext}")), "{f}: {r}");
    }

    // (d) A created file, a deleted file, a changed config: every file is asked.
    let created = root.join(format!("src/f.{ext}"));
    std::fs::write(&created, "").unwrap();
    let r = after(&gate, root, "created file").await;
    assert_eq!(reused(&r), 0, "created: {r}");
    let r = check(&gate).await;
    assert_eq!(reused(&r), n + 1, "nothing changed since: {r}");
    std::fs::remove_file(&created).unwrap();
    let r = after(&gate, root, "deleted file").await;
    assert_eq!(reused(&r), 0, "deleted: {r}");
    let config = root.join(fx.config);
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{}\n", text.trim_end())).unwrap();
    let r = after(&gate, root, "config change").await;
    assert_eq!(reused(&r), 0, "config: {r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_rechecks_ask_only_what_a_change_affects() {
    require("typescript-language-server");
    scenario(typescript()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_rechecks_ask_only_what_a_change_affects() {
    require("pyright-langserver");
    scenario(python()).await;
}
