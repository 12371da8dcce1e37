//! What the servers know beyond one position, through the MCP client against real servers:
//! inlay hints (pyright's derived from its outline and hovers, typescript-language-server's
//! with the preset's preferences, clangd's own request), `hover`'s `hints`, semantic classes
//! with TypeScript's deprecations merged in, and type hierarchies (clangd's extension; pyright's
//! `not_supported`).

use crate::common;
use common::*;
use serde_json::{Value, json};

/// The annotated line `n` of an `inlay_hints` answer.
fn line(answer: &Value, n: u64) -> Value {
    answer["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|l| l["line"] == n)
        .cloned()
        .unwrap_or(Value::Null)
}

/// The classes of an annotated line as `(identifier, kind, modifiers)`.
fn classes(l: &Value) -> Vec<(String, String, String)> {
    l["classes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |i: usize| c[i].as_str().unwrap_or("").to_string();
            (s(1), s(2), s(3))
        })
        .collect()
}

const PYTHON: &str = "def compute(values, scale: int = 2):
    x = [1, 2]
    total = sum(values) * scale
    return total + len(x)


def named(y: int):
    return compute([y], scale=y)


result = compute([3, 4], 5)


def doubled(v: int,
            times=2):
    \"\"\"Double it: the docstring is no part of a hint.\"\"\"
    return v * times
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pyright_hints_are_derived_from_its_outline_and_hovers() {
    require("pyright-langserver");
    let ws = workspace(&[("m.py", PYTHON), ("other.py", "import m\n")]);
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let (h, text) = gate.ok("inlay_hints", json!({"file": "m.py"})).await;
    assert!(
        h["derived"].as_str().unwrap_or("").contains("pyright"),
        "{text}"
    );
    // An unannotated local, its type from hover.
    let x = line(&h, 2);
    assert_eq!(x["text"], "    x: list[int] = [1, 2]", "{text}");
    assert_eq!(x["hints"], json!([[6, ": list[int]", "type"]]), "{text}");
    // An unannotated return type, after the parameter list.
    assert_eq!(
        line(&h, 1)["text"],
        "def compute(values, scale: int = 2) -> int:",
        "{text}"
    );
    // Positional arguments named from the callee's hover; a keyword argument left as it is.
    let call = line(&h, 11);
    assert_eq!(
        call["text"], "result: int = compute(values=[3, 4], scale=5)",
        "{text}"
    );
    assert_eq!(
        line(&h, 8)["text"],
        "    return compute(values=[y], scale=y)",
        "{text}"
    );
    // `sum`'s parameter is positional-only: no `iterable=`, which would not be Python.
    assert_eq!(
        line(&h, 3)["text"],
        "    total: int = sum(values) * scale",
        "{text}"
    );
    assert!(
        text.contains("11  result: int = compute(values=[3, 4], scale=5)"),
        "{text}"
    );
    // A return hint goes after the `)` closing a parameter list that spans lines, on its line.
    assert_eq!(
        line(&h, 15)["text"],
        "            times=2) -> int:",
        "{text}"
    );
    assert!(line(&h, 14).is_null(), "{text}");

    // Pages of source lines.
    let (p, _) = gate
        .ok(
            "inlay_hints",
            json!({"file": "m.py", "line": 2, "end_line": 12, "limit": 4}),
        )
        .await;
    assert_eq!(
        (p["first_line"].as_u64(), p["last_line"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(p["next_cursor"], "6");
    let (rest, _) = gate
        .ok(
            "inlay_hints",
            json!({"file": "m.py", "end_line": 12, "limit": 20, "cursor": "6"}),
        )
        .await;
    assert!(rest["next_cursor"].is_null(), "{rest}");
    assert_eq!(line(&rest, 11)["text"], call["text"]);
    let (code, msg) = gate
        .err("inlay_hints", json!({"file": "m.py", "line": 99}))
        .await;
    assert_eq!(code, "invalid_params", "{msg}");

    // Classes need semantic tokens, which pyright has none of: said, not silently empty.
    let (c, _) = gate
        .ok(
            "inlay_hints",
            json!({"file": "m.py", "line": 2, "end_line": 2, "classes": true}),
        )
        .await;
    assert!(
        c["classes_unavailable"]
            .as_str()
            .unwrap_or("")
            .contains("no semantic tokens"),
        "{c}"
    );

    // `hover` with the hints of its line.
    let (hv, text) = gate
        .ok(
            "hover",
            json!({"file": "m.py", "line": 11, "symbol": "result", "hints": true}),
        )
        .await;
    assert_eq!(hv["hints"], call["text"], "{text}");
    assert!(text.contains("hints: result: int = compute(values=[3, 4], scale=5)"));
    let (hv, _) = gate
        .ok(
            "hover",
            json!({"file": "m.py", "line": 11, "symbol": "result"}),
        )
        .await;
    assert!(hv.get("hints").is_none(), "{hv}");
    // A line without hints of its own gets none, not its neighbour's.
    let (hv, _) = gate
        .ok(
            "hover",
            json!({"file": "m.py", "line": 14, "symbol": "doubled", "hints": true}),
        )
        .await;
    assert!(hv.get("hints").is_none(), "{hv}");

    // Type hierarchy: pyright has none, and says which server and why.
    let (code, msg) = gate
        .err(
            "type_hierarchy",
            json!({"file": "m.py", "line": 1, "symbol": "compute", "direction": "subtypes"}),
        )
        .await;
    assert_eq!(code, "not_supported", "{msg}");
    assert!(
        msg.contains("pyright") && msg.contains("type_hierarchy"),
        "{msg}"
    );
    gate.stop().await;

    // The command line: a bare FILE is the whole file.
    let (status, out, err) = lspgate_cli(ws.path(), &["inlay-hints", "m.py"]);
    assert_eq!(status, 0, "{err}");
    assert!(out.contains("2      x: list[int] = [1, 2]"), "{out}");
}

const TYPESCRIPT: &str = "interface Shape { area(): number }
/** @deprecated use area */
export function oldArea(s: Shape) { return s.area(); }
export function compute(width: number, height: number) { return width * height; }
const total = compute(2, 3);
function measure(shape: Shape): number { return oldArea(shape) + total; }
export { measure };
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_hints_with_the_presets_preferences_and_classes_with_deprecations() {
    require("typescript-language-server");
    let ws = workspace(&[
        ("a.ts", TYPESCRIPT),
        (
            "tsconfig.json",
            r#"{"compilerOptions": {"strict": true, "target": "es2020"}}"#,
        ),
    ]);
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let (h, text) = gate.ok("inlay_hints", json!({"file": "a.ts"})).await;
    assert!(h.get("derived").is_none(), "{text}");
    // Variable types, return types and parameter names: each preference the preset turns on.
    assert_eq!(
        line(&h, 5)["text"],
        "const total: number = compute(width: 2, height: 3);",
        "{text}"
    );
    assert_eq!(
        line(&h, 4)["text"],
        "export function compute(width: number, height: number): number { return width * height; }",
        "{text}"
    );
    let col = col_of(TYPESCRIPT.lines().nth(5).unwrap_or(""), "shape) +");
    assert_eq!(
        line(&h, 6)["hints"],
        json!([[col, "s: ", "parameter"]]),
        "{text}"
    );
    assert!(
        line(&h, 6)["text"]
            .as_str()
            .unwrap_or("")
            .contains("oldArea(s: shape)"),
        "{text}"
    );

    // Semantic classes of one line naming a type, a parameter and a deprecated function.
    let (c, text) = gate
        .ok(
            "inlay_hints",
            json!({"file": "a.ts", "line": 6, "end_line": 6, "classes": true}),
        )
        .await;
    let found = classes(&line(&c, 6));
    let has = |name: &str, kind: &str, modifier: &str| {
        found
            .iter()
            .any(|(n, k, m)| n == name && k == kind && m.split(' ').any(|w| w == modifier))
    };
    assert!(has("Shape", "interface", ""), "{text}");
    assert!(has("shape", "parameter", "declaration"), "{text}");
    assert!(has("measure", "function", "declaration"), "{text}");
    // TypeScript's legend has no `deprecated`: it comes from tsserver's 6387 diagnostic.
    assert!(has("oldArea", "function", "deprecated"), "{text}");
    assert!(!has("total", "variable", "deprecated"), "{text}");
    assert!(text.contains("oldArea function deprecated"), "{text}");

    // `hover` with its line's hints, from the server's own.
    let (hv, text) = gate
        .ok(
            "hover",
            json!({"file": "a.ts", "line": 5, "symbol": "total", "hints": true}),
        )
        .await;
    assert_eq!(
        hv["hints"], "const total: number = compute(width: 2, height: 3);",
        "{text}"
    );

    // typescript-language-server 5 has no type hierarchy.
    let (code, msg) = gate
        .err(
            "type_hierarchy",
            json!({"file": "a.ts", "line": 1, "symbol": "Shape", "direction": "subtypes"}),
        )
        .await;
    assert_eq!(code, "not_supported", "{msg}");
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clangd_type_hierarchy_of_a_class_with_two_subclasses_and_its_hints() {
    require("clangd");
    let ws = workspace(&[
        (
            "shape.h",
            "#pragma once\n\nstruct Shape {\n  virtual ~Shape() = default;\n  virtual int area() const = 0;\n};\n",
        ),
        (
            "circle.h",
            "#pragma once\n#include \"shape.h\"\n\nstruct Circle : Shape {\n  int area() const override { return 3; }\n};\n",
        ),
        (
            "square.h",
            "#pragma once\n#include \"shape.h\"\n\n// A square.\nstruct Square : Shape {\n  int area() const override { return 4; }\n};\n",
        ),
        (
            "main.cpp",
            "#include \"circle.h\"\n#include \"square.h\"\n\nint scale(int by, int times) { return by * times; }\n\nint main() {\n  Circle c;\n  auto n = scale(c.area(), 2);\n  return n;\n}\n",
        ),
    ]);
    let d = ws.path().display();
    std::fs::write(
        ws.path().join("compile_commands.json"),
        format!(
            r#"[{{"directory": "{d}", "file": "main.cpp", "arguments": ["c++", "-std=c++17", "-c", "main.cpp"]}}]"#
        ),
    )
    .unwrap();
    let gate = Gate::start(ws.path(), &[], &[]).await;

    let (sub, text) = gate
        .ok(
            "type_hierarchy",
            json!({"file": "shape.h", "line": 3, "symbol": "Shape", "direction": "subtypes"}),
        )
        .await;
    let root = &sub["types"][0];
    assert_eq!(
        (root["name"].as_str(), root["file"].as_str()),
        (Some("Shape"), Some("shape.h"))
    );
    assert_eq!(root["at"], json!([3, 8]), "{text}");
    let mut below: Vec<(String, String, Value)> = root["types"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            (
                t["name"].as_str().unwrap_or("").to_string(),
                t["file"].as_str().unwrap_or("").to_string(),
                t["at"].clone(),
            )
        })
        .collect();
    below.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        below,
        vec![
            ("Circle".to_string(), "circle.h".to_string(), json!([4, 8])),
            ("Square".to_string(), "square.h".to_string(), json!([5, 8])),
        ],
        "{text}"
    );
    assert_eq!(sub["total"], 2);
    assert!(text.contains("  struct Circle circle.h:4:8"), "{text}");

    let (sup, text) = gate
        .ok(
            "type_hierarchy",
            json!({"file": "square.h", "line": 5, "symbol": "Square", "direction": "supertypes"}),
        )
        .await;
    let up = &sup["types"][0]["types"];
    assert_eq!(up[0]["name"], "Shape", "{text}");
    assert_eq!(
        (up[0]["file"].as_str(), up[0]["at"].clone()),
        (Some("shape.h"), json!([3, 8]))
    );
    assert_eq!(sup["total"], 1, "{text}");

    // clangd 14's hints come through its own `clangd/inlayHints`.
    let (h, text) = gate
        .ok(
            "inlay_hints",
            json!({"file": "main.cpp", "line": 8, "end_line": 8}),
        )
        .await;
    assert_eq!(
        line(&h, 8)["text"],
        "  auto n: int = scale(by: c.area(), times: 2);",
        "{text}"
    );
    gate.stop().await;
}

/// basedpyright, the alternative Python preset, found on a PATH without pyright: its own inlay
/// hints and semantic tokens through the standard paths (nothing derived), the same file and
/// lines pyright's are derived for above.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn basedpyright_gives_its_own_hints_and_classes() {
    let bin = repo().join(".tools/basedpyright/node_modules/.bin/basedpyright-langserver");
    assert!(
        bin.is_file(),
        "{} is missing: run scripts/install-test-servers.sh",
        bin.display()
    );
    // Only basedpyright's server (its package also installs a `pyright-langserver`, which the
    // pyright preset would take first), and node.
    let only = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(&bin, only.path().join("basedpyright-langserver")).unwrap();
    let node = std::env::split_paths(&test_path())
        .find(|d| d.join("node").is_file())
        .expect("node on PATH");
    let path = format!("{}:{}:/usr/bin:/bin", only.path().display(), node.display());
    let ws = workspace(&[("m.py", PYTHON)]);
    let gate = Gate::start_with_env(ws.path(), &[], &[], &[("PATH", &path)]).await;

    let (s, text) = gate.ok("servers", json!({})).await;
    assert!(text.contains("builtin/basedpyright"), "{text}");
    assert!(!text.contains("builtin/pyright"), "{s}");
    let (h, text) = gate
        .ok("inlay_hints", json!({"file": "m.py", "classes": true}))
        .await;
    assert!(h.get("derived").is_none(), "{text}");
    assert!(h.get("classes_unavailable").is_none(), "{text}");
    // The server's own hints: an inferred variable type and return type, a parameter name.
    assert_eq!(line(&h, 2)["text"], "    x: list[int] = [1, 2]", "{text}");
    assert_eq!(
        line(&h, 1)["text"],
        "def compute(values, scale: int = 2) -> int:",
        "{text}"
    );
    let call = line(&h, 11)["text"].as_str().unwrap_or("").to_string();
    assert!(call.contains("values=[3, 4]"), "{text}");
    // Its own semantic classes: a parameter read, a builtin.
    let c = classes(&line(&h, 3));
    assert!(
        c.iter()
            .any(|(id, kind, _)| id == "values" && kind == "parameter"),
        "{c:?}"
    );
    assert!(
        c.iter()
            .any(|(id, kind, m)| id == "sum" && kind == "function" && m.contains("builtin")),
        "{c:?}"
    );
    gate.stop().await;
}
