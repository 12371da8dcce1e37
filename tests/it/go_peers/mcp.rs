//! mcp-language-server's Go cases (isaacphi/mcp-language-server, `integrationtests/tests/go/`)
//! through lspgate with gopls, on a module of our own (package `main` calling package `fruit`).

use super::*;
use crate::common::*;
use crate::golang::{go_tool, require_go};
use serde_json::{Value, json};

const GO_MOD: &str = "module example.com/orchard\n\ngo 1.22\n";

const CRATE: &str = r#"package fruit

import "fmt"

// Ripeness counts the days since picking.
type Ripeness int

// Label is another name for string.
type Label = string

// DefaultLabel names an unsorted crate.
const DefaultLabel Label = "unsorted"

// Harvested counts the crates filled so far.
var Harvested = 0

// Crate holds fruit of one kind.
type Crate struct {
	Kind  Label
	Count int
	Age   Ripeness
}

// Weigh returns the crate's weight in grams.
func (c *Crate) Weigh(each int) int {
	return c.Count * each
}

// Describer is anything that says what it holds.
type Describer interface {
	Describe() string
}

// Describe says what the crate holds.
func (c *Crate) Describe() string {
	return fmt.Sprintf("%d of %s", c.Count, c.Kind)
}

// Fill makes a crate of n fruit of one kind.
func Fill(kind Label, n int) *Crate {
	Harvested++
	return &Crate{Kind: kind, Count: n}
}
"#;

const SORTED: &str = r#"package fruit

// Sorted fills a crate under the default label.
func Sorted(n int) *Crate {
	return Fill(DefaultLabel, n)
}
"#;

const MAIN: &str = r#"package main

import (
	"fmt"

	"example.com/orchard/fruit"
)

func main() {
	c := fruit.Fill("apple", 12)
	fmt.Println(c.Weigh(150))
	fmt.Println(report(c, fruit.Sorted(3)))
	if ripe(c) {
		fmt.Println(fruit.Harvested)
	}
}

// ripe says whether a crate has waited long enough.
func ripe(c *fruit.Crate) bool {
	var least fruit.Ripeness = 3
	return c.Age >= least
}
"#;

const REPORT: &str = r#"package main

import "example.com/orchard/fruit"

// report describes two crates, the first through the interface.
func report(first, second *fruit.Crate) string {
	var d fruit.Describer = first
	return d.Describe() + "; " + second.Describe() + " (" + fruit.DefaultLabel + ")"
}
"#;

/// Written plainly mid-test: an unreachable statement, a type error and an unused variable.
const SPOILED: &str = r#"package fruit

// Spoil does not compile.
func Spoil() string {
	return "gone"
	Harvested = 0
	return 3
}

// Rot leaves a variable unused.
func Rot() {
	left := 1
}
"#;

/// The text edits' scratch file (mcp-language-server's text_edit cases, on our own lines).
const SCRATCH: &str = r#"package fruit

import "fmt"

func Pick() {
	fmt.Println("one")
	fmt.Println("two")
	fmt.Println("three")
}

func Pack() {
	fmt.Println("box")
	fmt.Println("lid")
}

func Empty() {
}

func Short() { fmt.Println("short") }
"#;

/// mcp-language-server's Go suite (isaacphi/mcp-language-server, `integrationtests/tests/go/`),
/// case by case, through lspgate's tools with gopls on a module of ours: a root package
/// `main` (main.go, report.go) calling a package `fruit` (crate.go, sorted.go).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_language_server_go_cases_hold_through_lspgate() {
    require_go();
    let ws = go_module(
        "go-peers-mcp-",
        &[
            ("go.mod", GO_MOD),
            ("fruit/crate.go", CRATE),
            ("fruit/sorted.go", SORTED),
            ("main.go", MAIN),
            ("report.go", REPORT),
        ],
    );
    let root = ws.path().to_path_buf();
    let r = root.as_path();
    let (ok, build) = go_tool(r, "go", &["build", "./..."]);
    assert!(ok, "the module builds: {build}");
    let gate = start(r).await;
    let crate_go = "fruit/crate.go";

    // definition/definition_test.go: a symbol by name (their `definition` takes a name; ours is
    // workspace_symbols, exact name first) lands on its declaration line, for a function, a
    // struct, a method, an interface, a defined type, a type alias, a constant, a variable.
    for (name, needle) in [
        ("Fill", "func Fill("),
        ("Crate", "type Crate struct"),
        ("Describer", "type Describer interface"),
        ("Ripeness", "type Ripeness int"),
        ("Label", "type Label = string"),
        ("DefaultLabel", "const DefaultLabel"),
        ("Harvested", "var Harvested"),
    ] {
        let (syms, text) = gate.ok("workspace_symbols", json!({"query": name})).await;
        assert!(syms.get("partial").is_none(), "{text}");
        let first = &syms["symbols"][0];
        assert_eq!(first["name"], name, "{text}");
        assert_eq!(first["file"], crate_go, "{text}");
        assert_eq!(first["at"][0], at(r, crate_go, needle, name, 1).1, "{text}");
    }
    // The method ("TestStruct.Method" there): gopls names it by its receiver's type, and the
    // outline's range is its whole body, as their answer quotes it.
    let (syms, text) = gate
        .ok("workspace_symbols", json!({"query": "Weigh"}))
        .await;
    let weigh = syms["symbols"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().is_some_and(|n| n.ends_with("Weigh")))
        .unwrap_or_else(|| panic!("no Weigh: {text}"));
    assert_eq!(weigh["name"], "Crate.Weigh", "{text}");
    assert_eq!(weigh["file"], crate_go, "{text}");
    let weigh_line = at(r, crate_go, "func (c *Crate) Weigh(", "Weigh", 1).1;
    assert_eq!(weigh["at"][0], weigh_line, "{text}");
    let (doc, text) = gate.ok("document_symbols", json!({"file": crate_go})).await;
    let method = outline(&doc["symbols"])
        .into_iter()
        .find(|s| s.0.ends_with("Weigh"))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!((method.2, method.3), (weigh_line, weigh_line + 2), "{text}");
    // Not found: no symbol of that name.
    let (syms, text) = gate
        .ok("workspace_symbols", json!({"query": "NoSuchHarvest"}))
        .await;
    assert!(
        !syms["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "NoSuchHarvest"),
        "{text}"
    );
    // And from a use in another package, definition lands at the declaration.
    for (file, needle, word, decl) in [
        ("main.go", "fruit.Fill(", "Fill", "func Fill("),
        ("main.go", "c.Weigh(", "Weigh", "func (c *Crate) Weigh("),
        (
            "report.go",
            "fruit.DefaultLabel",
            "DefaultLabel",
            "const DefaultLabel",
        ),
    ] {
        let (d, text) = gate.ok("definition", pos(r, file, needle, word, 1)).await;
        assert_eq!(
            places(&d["files"]),
            [at(r, crate_go, decl, word, 1)],
            "{text}"
        );
    }

    // references/references_test.go (declarations left out, as theirs): a function across
    // files and packages, one in its own file, a struct, a method, an interface, an interface
    // method, a constant, a type; exact positions, so exact counts and files.
    let refs = |file: &str, needle: &str, word: &str| {
        with(
            pos(r, file, needle, word, 1),
            json!({"include_declaration": false}),
        )
    };
    let cases: Vec<(Value, Vec<Place>)> = vec![
        (
            refs(crate_go, "func Fill(", "Fill"),
            vec![
                at(r, "fruit/sorted.go", "return Fill(", "Fill", 1),
                at(r, "main.go", "fruit.Fill(", "Fill", 1),
            ],
        ),
        (
            refs("main.go", "func ripe(", "ripe"),
            vec![at(r, "main.go", "if ripe(c)", "ripe", 1)],
        ),
        (
            refs(crate_go, "type Crate struct", "Crate"),
            vec![
                at(r, crate_go, "func (c *Crate) Weigh", "Crate", 1),
                at(r, crate_go, "func (c *Crate) Describe", "Crate", 1),
                at(r, crate_go, "func Fill(", "Crate", 1),
                at(r, crate_go, "return &Crate{", "Crate", 1),
                at(r, "fruit/sorted.go", "func Sorted(", "Crate", 1),
                at(r, "main.go", "func ripe(", "Crate", 1),
                at(r, "report.go", "func report(", "Crate", 1),
            ],
        ),
        (
            refs(crate_go, "func (c *Crate) Weigh", "Weigh"),
            vec![at(r, "main.go", "c.Weigh(", "Weigh", 1)],
        ),
        (
            refs(crate_go, "type Describer interface", "Describer"),
            vec![at(r, "report.go", "var d fruit.Describer", "Describer", 1)],
        ),
        (
            refs(crate_go, "\tDescribe() string", "Describe"),
            vec![
                at(r, "report.go", "d.Describe()", "Describe", 1),
                at(r, "report.go", "d.Describe()", "Describe", 2),
            ],
        ),
        (
            refs(crate_go, "const DefaultLabel", "DefaultLabel"),
            vec![
                at(r, "fruit/sorted.go", "return Fill(", "DefaultLabel", 1),
                at(r, "report.go", "fruit.DefaultLabel", "DefaultLabel", 1),
            ],
        ),
        (
            refs(crate_go, "type Ripeness int", "Ripeness"),
            vec![
                at(r, crate_go, "Age   Ripeness", "Ripeness", 1),
                at(r, "main.go", "var least fruit.Ripeness", "Ripeness", 1),
            ],
        ),
    ];
    for (args, want) in cases {
        let (found, text) = gate.ok("references", args.clone()).await;
        assert!(found.get("partial").is_none(), "{text}");
        let want = sorted(want);
        let got = places(&found["files"]);
        assert_eq!(got, want, "references {args}: {text}");
        assert_eq!(found["total"], want.len(), "{text}");
        assert_eq!(distinct_files(&got), distinct_files(&want), "{text}");
    }
    // Not found: a name that is not on the line is said so, quoting the line.
    let (code, message) = gate
        .err(
            "references",
            json!({"file": "main.go", "line": 10, "symbol": "NoSuchHarvest"}),
        )
        .await;
    assert_eq!(code, "symbol_not_found", "{message}");
    assert!(message.contains("fruit.Fill"), "{message}");

    // hover/hover_test.go: a struct type, its method, an interface, a constant, the method
    // implementing the interface's; also a variable and the alias. Each hover holds the
    // declaration as Go writes it and its doc comment.
    for (needle, word, want, doc) in [
        (
            "type Crate struct",
            "Crate",
            "type Crate struct {",
            "Crate holds fruit",
        ),
        (
            "func (c *Crate) Weigh",
            "Weigh",
            "func (c *Crate) Weigh(each int) int",
            "weight in grams",
        ),
        (
            "type Describer interface",
            "Describer",
            "type Describer interface {",
            "says what it holds",
        ),
        (
            "const DefaultLabel",
            "DefaultLabel",
            "const DefaultLabel Label = \"unsorted\"",
            "names an unsorted",
        ),
        (
            "func (c *Crate) Describe",
            "Describe",
            "func (c *Crate) Describe() string",
            "Describe says",
        ),
        (
            "var Harvested",
            "Harvested",
            "var Harvested int",
            "counts the crates",
        ),
        (
            "type Label = string",
            "Label",
            "type Label = string",
            "another name",
        ),
    ] {
        let (_, text) = gate.ok("hover", pos(r, crate_go, needle, word, 1)).await;
        assert!(text.contains(want), "{want} not in {text}");
        assert!(text.contains(doc), "{doc} not in {text}");
    }
    // No hover information at the `import` keyword: no declaration offered.
    let (h, text) = gate
        .ok("hover", json!({"file": crate_go, "line": 3, "column": 1}))
        .await;
    assert_eq!(h["contents"], "", "{text}");
    // Outside the file: refused, naming the line.
    let (code, message) = gate
        .err(
            "hover",
            json!({"file": crate_go, "line": 1000, "column": 1}),
        )
        .await;
    assert_eq!(code, "invalid_params", "{message}");
    assert!(message.contains("line 1000 is past the end"), "{message}");

    // diagnostics/diagnostics_test.go: a clean file has none; a file with unreachable code
    // and a type error (written plainly, no editor) has both, at their lines; a change of a
    // function's signature in another file (and package) shows in its caller.
    let (d, text) = gate
        .ok("diagnostics", json!({"file": "fruit/sorted.go"}))
        .await;
    assert_eq!(d["total"], 0, "{text}");
    write(r, "fruit/spoil.go", SPOILED);
    let (d, text) = gate
        .ok("diagnostics", json!({"file": "fruit/spoil.go"}))
        .await;
    let found: Vec<(String, u64, u64, String)> = diags(&d["files"])
        .iter()
        .map(|d| {
            (
                d["severity"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let has = |sev: &str, needle: &str, word: &str, msg: &str| {
        let (_, line, col) = at(r, "fruit/spoil.go", needle, word, 1);
        assert!(
            found
                .iter()
                .any(|f| f.0 == sev && f.1 == line && f.2 == col && f.3.contains(msg)),
            "no {sev} `{msg}` at {line}:{col}: {text}"
        );
    };
    has("warning", "Harvested = 0", "Harvested", "unreachable code");
    has("error", "return 3", "3", "cannot use 3");
    has("error", "left := 1", "left", "declared and not used: left");
    assert_eq!(found.iter().filter(|f| f.0 == "error").count(), 2, "{text}");
    let (ok, build) = go_tool(r, "go", &["build", "./..."]);
    assert!(!ok && build.contains("spoil.go:7:9"), "{build}");
    std::fs::remove_file(r.join("fruit/spoil.go")).unwrap();
    let (d, text) = gate.ok("diagnostics", json!({"file": "main.go"})).await;
    assert_eq!(d["total"], 0, "{text}");
    write(
        r,
        "fruit/sorted.go",
        &SORTED.replace("Sorted(n int)", "Sorted(n int, kind Label)"),
    );
    let (d, text) = gate.ok("diagnostics", json!({"file": "main.go"})).await;
    let found = diags(&d["files"]);
    let (_, line, _) = at(r, "main.go", "fruit.Sorted(3)", "Sorted", 1);
    assert_eq!(found.len(), 1, "{text}");
    assert_eq!(found[0]["line"], line, "{text}");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("not enough arguments in call to fruit.Sorted"),
        "{text}"
    );
    write(r, "fruit/sorted.go", SORTED);
    let (d, text) = gate.ok("diagnostics", json!({"file": "main.go"})).await;
    assert_eq!(d["total"], 0, "{text}");

    // call_hierarchy/incoming_test.go and outgoing_test.go: callers in the same file and in
    // other files and packages; callees in the same file and in another package.
    let (c, text) = gate
        .ok(
            "call_hierarchy",
            with(
                pos(r, "main.go", "func ripe(", "ripe", 1),
                json!({"direction": "incoming"}),
            ),
        )
        .await;
    assert_eq!(call_names(&c), ["main"], "{text}");
    assert_eq!(c["calls"][0]["file"], "main.go", "{text}");
    let (c, text) = gate
        .ok(
            "call_hierarchy",
            with(
                pos(r, crate_go, "func Fill(", "Fill", 1),
                json!({"direction": "incoming"}),
            ),
        )
        .await;
    assert_eq!(call_names(&c), ["Sorted", "main"], "{text}");
    let mut callers: Vec<(String, Vec<Place>)> = c["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["file"].as_str().unwrap().to_string(),
                places(&c["call_sites"]),
            )
        })
        .collect();
    callers.sort();
    assert_eq!(
        callers,
        [
            (
                "fruit/sorted.go".to_string(),
                vec![at(r, "fruit/sorted.go", "return Fill(", "Fill", 1)]
            ),
            (
                "main.go".to_string(),
                vec![at(r, "main.go", "fruit.Fill(", "Fill", 1)]
            ),
        ],
        "{text}"
    );
    let (c, text) = gate
        .ok(
            "call_hierarchy",
            with(
                pos(r, "main.go", "func main(", "main", 1),
                json!({"direction": "outgoing"}),
            ),
        )
        .await;
    assert_eq!(
        call_names(&c),
        ["Fill", "Println", "Sorted", "Weigh", "report", "ripe"],
        "{text}"
    );
    let (c, text) = gate
        .ok(
            "call_hierarchy",
            with(
                pos(r, "report.go", "func report(", "report", 1),
                json!({"direction": "outgoing"}),
            ),
        )
        .await;
    // Through the interface and on the concrete type: the interface's method and the
    // struct's, each with its one call site.
    let mut callees: Vec<(String, u64, Vec<Place>)> = c["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["file"].as_str().unwrap().to_string(),
                c["at"][0].as_u64().unwrap(),
                places(&c["call_sites"]),
            )
        })
        .collect();
    callees.sort();
    assert_eq!(call_names(&c), ["Describe", "Describe"], "{text}");
    assert_eq!(
        callees,
        [
            (
                crate_go.to_string(),
                at(r, crate_go, "\tDescribe() string", "Describe", 1).1,
                vec![at(r, "report.go", "d.Describe()", "Describe", 1)]
            ),
            (
                crate_go.to_string(),
                at(r, crate_go, "func (c *Crate) Describe", "Describe", 1).1,
                vec![at(r, "report.go", "d.Describe()", "Describe", 2)]
            ),
        ],
        "{text}"
    );

    // text_edit/text_edit_test.go: line-range edits (theirs, one by one, each verified) on a
    // scratch file reset before each; the whole file compared, and the module still builds.
    let scratch = "fruit/scratch.go";
    let cases: Vec<(&str, Value, String)> = vec![
        (
            "replace single line",
            json!([{"start_line": 6, "end_line": 6, "new_text": "\tfmt.Println(\"uno\")"}]),
            SCRATCH.replace("\"one\"", "\"uno\""),
        ),
        (
            "replace multiple lines",
            json!([{"start_line": 5, "end_line": 9, "new_text": "func Pick() {\n\tfmt.Println(\"all\")\n}"}]),
            SCRATCH.replace(
                "\tfmt.Println(\"one\")\n\tfmt.Println(\"two\")\n\tfmt.Println(\"three\")\n",
                "\tfmt.Println(\"all\")\n",
            ),
        ),
        (
            "insert by replacing a line with itself and more",
            json!([{"start_line": 7, "end_line": 7, "new_text": "\tfmt.Println(\"two\")\n\tfmt.Println(\"two and a half\")"}]),
            SCRATCH.replace(
                "\"two\")\n",
                "\"two\")\n\tfmt.Println(\"two and a half\")\n",
            ),
        ),
        (
            "delete a line",
            json!([{"start_line": 7, "end_line": 7, "new_text": ""}]),
            SCRATCH.replace("\tfmt.Println(\"two\")\n", ""),
        ),
        (
            "multiple edits in one file",
            json!([
                {"start_line": 6, "end_line": 6, "new_text": "\tfmt.Println(\"first\")"},
                {"start_line": 13, "end_line": 13, "new_text": "\tfmt.Println(\"second\")"}
            ]),
            SCRATCH
                .replace("\"one\"", "\"first\"")
                .replace("\"lid\"", "\"second\""),
        ),
        (
            "fill an empty function",
            json!([{"start_line": 16, "end_line": 17, "new_text": "func Empty() {\n\tfmt.Println(\"full\")\n}"}]),
            SCRATCH.replace(
                "func Empty() {\n}",
                "func Empty() {\n\tfmt.Println(\"full\")\n}",
            ),
        ),
        (
            "split a one-line function",
            json!([{"start_line": 19, "end_line": 19, "new_text": "func Short() {\n\tfmt.Println(\"long\")\n}"}]),
            SCRATCH.replace(
                "func Short() { fmt.Println(\"short\") }",
                "func Short() {\n\tfmt.Println(\"long\")\n}",
            ),
        ),
        (
            "append to the end of the file",
            json!([{"start_line": 19, "end_line": 19, "new_text": "func Short() { fmt.Println(\"short\") }\n\nfunc Last() {}"}]),
            format!("{SCRATCH}\nfunc Last() {{}}\n"),
        ),
    ];
    for (name, edits, want) in cases {
        write(r, scratch, SCRATCH);
        let (e, text) = gate
            .ok(
                "edit",
                json!({"file": scratch, "edits": edits, "apply": true}),
            )
            .await;
        assert_eq!(e["applied"], true, "{name}: {text}");
        assert_eq!(read(r, scratch), want, "{name}: {text}");
        assert!(
            e.get("introduced")
                .is_none_or(|i| i.as_array().is_some_and(Vec::is_empty)),
            "{name}: {text}"
        );
        let (ok, build) = go_tool(r, "go", &["build", "./..."]);
        assert!(ok, "{name}: {build}");
    }
    std::fs::remove_file(r.join(scratch)).unwrap();

    // rename_symbol/rename_symbol_test.go: a constant renamed at every site (its declaration,
    // the doc comment naming it, uses in its own and another package); the module builds and
    // the new name has as many references as the old. Then a rename where no name is.
    let (e, text) = gate
        .ok(
            "rename",
            with(
                pos(r, crate_go, "const DefaultLabel", "DefaultLabel", 1),
                json!({"new_name": "UnsortedLabel", "apply": true}),
            ),
        )
        .await;
    assert_eq!(e["applied"], true, "{text}");
    let mut changed: Vec<String> = e["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["file"].as_str().unwrap().to_string())
        .collect();
    changed.sort();
    assert_eq!(
        changed,
        [crate_go, "fruit/sorted.go", "report.go"],
        "{text}"
    );
    let count = |f: &str, w: &str| read(r, f).matches(w).count();
    assert_eq!(
        (
            count(crate_go, "UnsortedLabel"),
            count("fruit/sorted.go", "UnsortedLabel"),
            count("report.go", "UnsortedLabel")
        ),
        (2, 1, 1),
        "4 occurrences across 3 files, the doc comment's included: {text}"
    );
    for f in [crate_go, "fruit/sorted.go", "report.go", "main.go"] {
        assert_eq!(count(f, "DefaultLabel"), 0, "{f}");
    }
    let (ok, build) = go_tool(r, "go", &["build", "./..."]);
    assert!(ok, "after the rename: {build}");
    let (found, text) = gate
        .ok(
            "references",
            with(
                pos(r, crate_go, "const UnsortedLabel", "UnsortedLabel", 1),
                json!({"include_declaration": false}),
            ),
        )
        .await;
    assert_eq!(found["total"], 2, "{text}");
    let (code, message) = gate
        .err(
            "rename",
            json!({"file": crate_go, "line": 2, "column": 1, "new_name": "Nothing", "apply": true}),
        )
        .await;
    assert_eq!(code, "server_error", "{message}");
    assert!(message.contains("no identifier found"), "{message}");

    // codelens/codelens_test.go (skipped in their suite): lspgate has no code-lens tool, so
    // listing lenses has no equivalent. The lens they execute is gopls's `gopls.tidy`, which
    // execute_command runs: an unused requirement leaves go.mod.
    write(
        r,
        "go.mod",
        &format!("{GO_MOD}\nrequire github.com/spf13/pflag v1.0.5\n"),
    );
    let uri = url::Url::from_file_path(r.join("go.mod"))
        .unwrap()
        .to_string();
    let (t, text) = gate
        .ok(
            "execute_command",
            json!({"server": "builtin/gopls", "command": "gopls.tidy", "arguments": [{"URIs": [uri]}]}),
        )
        .await;
    assert!(t["result"].is_null(), "{text}");
    let module = read(r, "go.mod");
    assert!(!module.contains("pflag"), "{text}\n{module}");
    assert!(module.starts_with("module example.com/orchard"), "{module}");
    gate.stop().await;
}
