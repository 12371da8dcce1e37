//! Serena's Go cases (oraios/serena, `test/solidlsp/go/` and the Go cases of `test/serena/`)
//! through lspgate with gopls, on a module of our own.

use super::*;
use crate::common::*;
use crate::golang::{go_tool, require_go};
use serde_json::json;

const GREENHOUSE_MOD: &str = "module example.com/greenhouse\n\ngo 1.22\n";

const GREEN_MAIN: &str = r#"package main

import "fmt"

func main() {
	fmt.Println(Water(2))
	var s Speaker = Parrot{}
	fmt.Println(s.Speak("hello"))
	p := &Pot{Soil: 3}
	fmt.Println(p.Depth())
}

// Water returns the litres n plants need.
func Water(n int) int {
	return n * 2
}

// Pot holds soil.
type Pot struct {
	Soil int
}

// Depth is the pot's soil depth.
func (p *Pot) Depth() int {
	return p.Soil
}

func tend() {
	Water(1)
}

// Speaker can speak.
type Speaker interface {
	Speak(word string) string
}

// Parrot repeats words.
type Parrot struct{}

// Speak repeats the word.
func (Parrot) Speak(word string) string {
	return word + " " + word
}
"#;

/// A type used in a const group, a struct field and an interface method.
const KINDS: &str = r#"package main

// Level grades an alarm.
type Level int

const (
	Quiet Level = iota
	Loud
)

// Alarm is raised when something goes wrong.
type Alarm struct {
	Grade Level
	Note  string
}

// IsLoud says whether the alarm is loud.
func (a Alarm) IsLoud() bool {
	return a.Grade == Loud
}

// Ringer rings alarms.
type Ringer interface {
	Ring(grade Level) error
}
"#;

/// Single type, var and const declarations, and a grouped var block.
const BODIES: &str = r#"package main

// Bed is a flower bed.
type Bed struct {
	Rows int
}

// Count is a defined integer type.
type Count int

// Litres is an alias of float64.
type Litres = float64

// Sown counts the seeds sown.
var Sown int = 0

// MaxBeds bounds the beds.
const MaxBeds = 12

var (
	FirstBed  int    = 1
	SecondBed string = "two"
)
"#;

/// Written plainly mid-test: two functions naming what does not exist.
const BROKEN: &str = r#"package main

func brokenSeed() string {
	return missingSeed
}

func brokenGrower() {
	value := brokenSeed()
	_ = value
	_ = missingGrowerValue
}
"#;

/// Serena's Go tests (oraios/serena: `test/solidlsp/go/test_go_basic.py`,
/// `test_go_diagnostics.py`, and the Go cases of `test/serena/test_serena_agent.py` and
/// `test_symbol_editing.py`), through lspgate's tools with gopls on a module of ours.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serena_go_cases_hold_through_lspgate() {
    require_go();
    let ws = go_module(
        "go-peers-serena-",
        &[
            ("go.mod", GREENHOUSE_MOD),
            ("main.go", GREEN_MAIN),
            ("kinds.go", KINDS),
            ("bodies.go", BODIES),
            (
                "tags/on.go",
                "//go:build bloom\n\npackage tags\n\n// XBloom is built with -tags=bloom.\ntype XBloom struct{}\n",
            ),
            (
                "tags/off.go",
                "//go:build !bloom\n\npackage tags\n\n// XNoBloom is built without it.\ntype XNoBloom struct{}\n",
            ),
        ],
    );
    let root = ws.path().to_path_buf();
    let r = root.as_path();
    let (ok, build) = go_tool(r, "go", &["build", "./..."]);
    assert!(ok, "the module builds: {build}");
    let gate = start(r).await;

    // test_find_symbol: the workspace has main, Water and Pot, each where it is declared.
    for (name, needle) in [
        ("main", "func main("),
        ("Water", "func Water("),
        ("Pot", "type Pot struct"),
    ] {
        let (syms, text) = gate.ok("workspace_symbols", json!({"query": name})).await;
        assert!(syms.get("partial").is_none(), "{text}");
        let first = &syms["symbols"][0];
        assert_eq!(
            (
                first["name"].as_str(),
                first["file"].as_str(),
                first["at"][0].as_u64()
            ),
            (
                Some(name),
                Some("main.go"),
                Some(at(r, "main.go", needle, name, 1).1)
            ),
            "{text}"
        );
    }
    // test_find_symbol_matches_go_method_by_bare_name: gopls names methods by their receiver
    // (`(*Pot).Depth` in an outline, `Pot.Depth` in the workspace), which lspgate keeps (Serena
    // rewrites them to `Depth`); asked by its bare name, the method comes first.
    let (doc, text) = gate
        .ok("document_symbols", json!({"file": "main.go"}))
        .await;
    let main_outline = outline(&doc["symbols"]);
    let depth_line = at(r, "main.go", "func (p *Pot) Depth", "Depth", 1).1;
    assert!(
        main_outline.contains(&(
            "(*Pot).Depth".into(),
            "method".into(),
            depth_line,
            depth_line + 2
        )),
        "{text}"
    );
    let (syms, text) = gate
        .ok("workspace_symbols", json!({"query": "Depth"}))
        .await;
    let first = &syms["symbols"][0];
    assert_eq!(
        (
            first["name"].as_str(),
            first["kind"].as_str(),
            first["file"].as_str(),
            first["at"][0].as_u64()
        ),
        (
            Some("Pot.Depth"),
            Some("method"),
            Some("main.go"),
            Some(depth_line)
        ),
        "{text}"
    );

    // test_find_referencing_symbols, and test_serena_agent.py's go_helper_refs: the function's
    // references are in main.go (exactly: main's call and tend's).
    let (found, text) = gate
        .ok(
            "references",
            with(
                pos(r, "main.go", "func Water(", "Water", 1),
                json!({"include_declaration": false}),
            ),
        )
        .await;
    assert_eq!(
        places(&found["files"]),
        sorted(vec![
            at(r, "main.go", "fmt.Println(Water(2))", "Water", 1),
            at(r, "main.go", "\tWater(1)", "Water", 1),
        ]),
        "{text}"
    );

    // test_serena_agent.py's find-defining-symbol cases: a call's definition, and a type named
    // in a variable's declaration (`var s Speaker`).
    for (needle, word, decl) in [
        ("fmt.Println(Water(2))", "Water", "func Water("),
        ("var s Speaker", "Speaker", "type Speaker interface"),
    ] {
        let (d, text) = gate
            .ok("definition", pos(r, "main.go", needle, word, 1))
            .await;
        assert_eq!(
            places(&d["files"]),
            [at(r, "main.go", decl, word, 1)],
            "{text}"
        );
    }

    // test_find_implementations / test_request_implementing_symbols, and the agent's
    // go_greeter_format: the interface method's implementation is Parrot's.
    let (d, text) = gate
        .ok(
            "definition",
            with(
                pos(r, "main.go", "\tSpeak(word string) string", "Speak", 1),
                json!({"kind": "implementation"}),
            ),
        )
        .await;
    assert_eq!(
        places(&d["files"]),
        [at(r, "main.go", "func (Parrot) Speak(", "Speak", 1)],
        "{text}"
    );
    let (t, text) = gate
        .ok(
            "type_hierarchy",
            with(
                pos(r, "main.go", "type Speaker interface", "Speaker", 1),
                json!({"direction": "subtypes"}),
            ),
        )
        .await;
    let below: Vec<(&str, u64)> = t["types"][0]["types"]
        .as_array()
        .unwrap_or_else(|| panic!("no subtypes: {text}"))
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t["at"][0].as_u64().unwrap()))
        .collect();
    assert_eq!(
        below,
        [(
            "Parrot",
            at(r, "main.go", "type Parrot struct", "Parrot", 1).1
        )],
        "{text}"
    );

    // test_request_containing_symbol_* and test_request_referencing_symbols_attributes_containers:
    // the type's references (in a const group, a struct field, an interface method) each lie in
    // the outline's range of the constant, the struct and the interface. lspgate's references
    // give positions, not containers: the outline says which symbol holds each.
    let (found, text) = gate
        .ok(
            "references",
            with(
                pos(r, "kinds.go", "type Level int", "Level", 1),
                json!({"include_declaration": false}),
            ),
        )
        .await;
    let refs = places(&found["files"]);
    assert_eq!(
        refs,
        sorted(vec![
            at(r, "kinds.go", "Quiet Level", "Level", 1),
            at(r, "kinds.go", "Grade Level", "Level", 1),
            at(r, "kinds.go", "Ring(grade Level)", "Level", 1),
        ]),
        "{text}"
    );
    let (doc, text) = gate
        .ok("document_symbols", json!({"file": "kinds.go", "depth": 1}))
        .await;
    let top = outline(&doc["symbols"]);
    let holders: Vec<(String, String)> = refs
        .iter()
        .map(|(_, line, _)| {
            let s = top
                .iter()
                .find(|s| s.2 <= *line && *line <= s.3)
                .unwrap_or_else(|| panic!("nothing holds line {line}: {text}"));
            (s.0.clone(), s.1.clone())
        })
        .collect();
    assert_eq!(
        holders,
        [
            ("Quiet".to_string(), "constant".to_string()),
            ("Alarm".to_string(), "struct".to_string()),
            ("Ringer".to_string(), "interface".to_string()),
        ],
        "{text}"
    );

    // test_type_var_const_body_includes_leading_keyword: the outline has single type, alias,
    // var and const declarations and grouped vars, each on its own line. Serena's bug (gopls's
    // range starts at the name, so a body replaced by range lost or doubled the keyword) cannot
    // happen to lspgate's `edit`, which replaces text, not symbol ranges;
    // test_go_symbol_replacement_no_double_keyword's edit, done so, leaves one keyword.
    let (doc, text) = gate
        .ok("document_symbols", json!({"file": "bodies.go"}))
        .await;
    let bodies: Vec<(String, String, u64)> = outline(&doc["symbols"])
        .into_iter()
        .map(|s| (s.0, s.1, s.2))
        .collect();
    let line = |needle: &str, word: &str| at(r, "bodies.go", needle, word, 1).1;
    for (name, kind, needle) in [
        ("Bed", "struct", "type Bed struct"),
        ("Count", "class", "type Count int"),
        ("Litres", "class", "type Litres = float64"),
        ("Sown", "variable", "var Sown int"),
        ("MaxBeds", "constant", "const MaxBeds"),
        ("FirstBed", "variable", "FirstBed  int"),
        ("SecondBed", "variable", "SecondBed string"),
    ] {
        assert!(
            bodies.contains(&(name.into(), kind.into(), line(needle, name))),
            "{name} {kind}: {text}"
        );
    }
    let (e, text) = gate
        .ok(
            "edit",
            json!({"file": "bodies.go", "edits": [{"old_text": "type Count int\n", "new_text": "type Count int64\n"}], "apply": true}),
        )
        .await;
    assert_eq!(e["applied"], true, "{text}");
    let now = read(r, "bodies.go");
    assert!(
        now.contains("\ntype Count int64\n") && !now.contains("type type"),
        "{now}"
    );
    let (ok, build) = go_tool(r, "go", &["build", "./..."]);
    assert!(ok, "{build}");

    // test_go_diagnostics.py's test_file_diagnostics, and the agent's go_missingGreeting: a
    // file naming two undefined values (written plainly) has an error for each, at its line,
    // inside the function that names it.
    write(r, "broken.go", BROKEN);
    let (d, text) = gate.ok("diagnostics", json!({"file": "broken.go"})).await;
    let errors: Vec<(u64, u64, String)> = diags(&d["files"])
        .iter()
        .filter(|d| d["severity"] == "error")
        .map(|d| {
            (
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let (_, l1, c1) = at(r, "broken.go", "return missingSeed", "missingSeed", 1);
    let (_, l2, c2) = at(
        r,
        "broken.go",
        "_ = missingGrowerValue",
        "missingGrowerValue",
        1,
    );
    assert_eq!(
        errors,
        [
            (l1, c1, "undefined: missingSeed".to_string()),
            (l2, c2, "undefined: missingGrowerValue".to_string()),
        ],
        "{text}"
    );
    let (doc, text) = gate
        .ok("document_symbols", json!({"file": "broken.go"}))
        .await;
    let funcs = outline(&doc["symbols"]);
    for (line, name) in [(l1, "brokenSeed"), (l2, "brokenGrower")] {
        assert!(
            funcs
                .iter()
                .any(|s| s.0 == name && s.2 <= line && line <= s.3),
            "{name} holds {line}: {text}"
        );
    }
    std::fs::remove_file(r.join("broken.go")).unwrap();

    // TestGoBuildTags.test_default_context_contains_xnotfoo: without build tags, the type of
    // the `!bloom` file is there and the `bloom` one's is not.
    let (syms, text) = gate
        .ok("workspace_symbols", json!({"query": "XNoBloom"}))
        .await;
    assert_eq!(syms["symbols"][0]["name"], "XNoBloom", "{text}");
    assert_eq!(syms["symbols"][0]["file"], "tags/off.go", "{text}");
    let (syms, text) = gate
        .ok("workspace_symbols", json!({"query": "XBloom"}))
        .await;
    assert!(
        !syms["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "XBloom"),
        "{text}"
    );
    gate.stop().await;

    // TestGoBuildTags.test_foo_context_contains_xfoo: gopls told `-tags=bloom` (through a
    // trusted lspgate.toml serving Go with those settings) sees the other file's type only.
    let gopls = repo().join(".tools/go/bin/gopls");
    write(
        r,
        "lspgate.toml",
        &format!(
            "[[server]]\nname = \"local/gopls-bloom\"\ncommand = \"{}\"\nlanguages = [\"go\"]\n\
             roots = [\"go.mod\"]\ninitialization = {{ buildFlags = [\"-tags=bloom\"] }}\n\
             settings = {{ gopls = {{ buildFlags = [\"-tags=bloom\"] }} }}\n",
            gopls.display()
        ),
    );
    let home = new_home();
    trust(r, &home);
    let env = crate::golang::go_env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let gate = Gate::start_in(r, &["--ready-timeout", "60"], &[], &env, &home).await;
    let (syms, text) = gate
        .ok("workspace_symbols", json!({"query": "XBloom"}))
        .await;
    assert!(syms.get("partial").is_none(), "{text}");
    assert_eq!(syms["symbols"][0]["name"], "XBloom", "{text}");
    assert_eq!(syms["symbols"][0]["file"], "tags/on.go", "{text}");
    let (syms, text) = gate
        .ok("workspace_symbols", json!({"query": "XNoBloom"}))
        .await;
    assert!(
        !syms["symbols"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "XNoBloom"),
        "{text}"
    );
    let (servers, text) = gate.ok("servers", json!({})).await;
    assert!(text.contains("local/gopls-bloom"), "{servers}");
    gate.stop().await;
}
