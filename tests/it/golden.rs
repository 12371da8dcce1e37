//! Published schemas, kept as golden files: the JSON Schema of lspgate.toml and the tool list
//! agents see (names, titles, descriptions, input and output schemas, annotations). A change to
//! either must be made on purpose: rerun with `UPDATE_GOLDEN=1` and commit the new file. Also
//! the tool list's size budget, with the figures printed (`-- --nocapture`).

use crate::common;

use std::path::Path;

use lspgate::ops::tools::{self, Effect};
use serde_json::{Value, json};

fn check(path: &str, value: Value) {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    let text = serde_json::to_string_pretty(&value).unwrap() + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&file, &text).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        on_disk == text,
        "{path} is out of date: rerun with UPDATE_GOLDEN=1 if the change is meant"
    );
}

/// Every tool as `tools/list` sends it.
fn tool_list() -> Vec<Value> {
    tools::tools()
        .iter()
        .map(|t| serde_json::to_value(lspgate::mcp::tool(t)).unwrap())
        .collect()
}

#[test]
fn config_schema_is_published() {
    let schema = lspgate::workspace::config::Config::json_schema();
    assert_eq!(schema["type"], "object");
    assert!(schema["properties"]["server"].is_object());
    assert!(schema["properties"]["tools"].is_object());
    check("lspgate.schema.json", schema);
}

#[test]
fn tool_schemas_are_stable() {
    let list = tool_list();
    for t in &list {
        assert_eq!(t["inputSchema"]["type"], "object", "{}", t["name"]);
        assert_eq!(t["outputSchema"]["type"], "object", "{}", t["name"]);
        assert!(t["title"].is_string(), "{}", t["name"]);
    }
    check("tests/golden/tools.json", Value::Array(list));
}

/// What is sent carries none of what only a schema generator needs: no `$schema`, no
/// `title` in a schema, no `"default": null`, no `null` in a type, no `$ref`.
#[test]
fn schemas_carry_nothing_a_reader_does_not_need() {
    fn walk(v: &Value, at: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, sub) in m {
                    let here = format!("{at}/{k}");
                    let bad = match k.as_str() {
                        "$schema" => true,
                        // Inputs are read by models: inline, no references.
                        "$ref" | "$defs" => at.contains("/input"),
                        "default" => sub.is_null(),
                        "type" => sub
                            .as_array()
                            .is_some_and(|ts| ts.iter().any(|t| t == "null")),
                        // `title` as a keyword, not as a property called `title`.
                        "title" => !at.ends_with("/properties"),
                        _ => false,
                    };
                    if bad {
                        out.push(here.clone());
                    }
                    walk(sub, &here, out);
                }
            }
            Value::Array(items) => {
                for (i, sub) in items.iter().enumerate() {
                    walk(sub, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for t in tools::tools() {
        walk(t.input_schema(), &format!("{}/input", t.name), &mut found);
        // Outputs may say `null` where a result really sends it (`execute_command`'s answer).
        let mut out = Vec::new();
        walk(t.output_schema(), &format!("{}/output", t.name), &mut out);
        found.extend(out.into_iter().filter(|p| !p.ends_with("/type")));
    }
    assert!(found.is_empty(), "{found:#?}");
    // The check can fail.
    let mut probe = Vec::new();
    walk(
        &json!({"properties": {"title": {"type": ["string", "null"], "title": "x"}}}),
        "",
        &mut probe,
    );
    assert_eq!(probe, ["/properties/title/title", "/properties/title/type"]);
}

#[test]
fn annotations_follow_what_a_tool_can_do() {
    let writes = ["edit", "rename", "code_actions", "format", "undo"];
    let runs = ["run_task", "execute_command"];
    for t in tool_list() {
        let name = t["name"].as_str().unwrap();
        let a = &t["annotations"];
        assert_eq!(a["openWorldHint"], false, "{name}");
        if writes.contains(&name) || runs.contains(&name) {
            assert_eq!(a["readOnlyHint"], false, "{name}");
            assert_eq!(a["destructiveHint"], true, "{name}");
        } else if name == "restart_server" || name == "activity" {
            // They change lspgate's own state (a server process, a background call), no file.
            assert_eq!(a["readOnlyHint"], false, "{name}");
            assert_eq!(a["destructiveHint"], false, "{name}");
        } else {
            assert_eq!(a["readOnlyHint"], true, "{name}: {a}");
            // Read-only tools take no `apply` (nothing of theirs can write).
            assert!(
                t["inputSchema"]["properties"].get("apply").is_none(),
                "{name}"
            );
        }
        // A tool that takes `apply` writes.
        if t["inputSchema"]["properties"].get("apply").is_some() {
            assert!(
                writes.contains(&name),
                "{name} takes `apply` but is not a writing tool"
            );
        }
    }
    // Repeating the same call changes nothing more only for these; `idempotentHint` (default
    // false) is said only for them.
    let idempotent = ["rename", "format", "undo"];
    for t in tools::tools() {
        if let Effect::Write { idempotent: i } = t.effect {
            assert_eq!(i, idempotent.contains(&t.name), "{}", t.name);
        }
    }
    for t in tool_list() {
        let name = t["name"].as_str().unwrap();
        let hint = t["annotations"].get("idempotentHint");
        if idempotent.contains(&name) {
            assert_eq!(hint, Some(&json!(true)), "{name}");
        } else {
            assert_eq!(hint, None, "{name}");
        }
    }
}

/// `json.dumps(value)` of Python's standard library, as a Python MCP client would count it:
/// `", "` and `": "` separators, non-ASCII escaped as `\uXXXX`.
fn python_json_len(v: &Value) -> usize {
    let compact = serde_json::to_string(v).unwrap();
    let mut len = 0;
    let mut in_string = false;
    let mut escaped = false;
    for c in compact.chars() {
        len += match c {
            _ if in_string && escaped => {
                escaped = false;
                1
            }
            '\\' if in_string => {
                escaped = true;
                1
            }
            '"' => {
                in_string = !in_string;
                1
            }
            ',' | ':' if !in_string => 2,
            c if c.is_ascii() => 1,
            c => 6 * c.len_utf16(),
        };
    }
    len
}

#[test]
fn python_json_len_counts_like_json_dumps() {
    // json.dumps({"a": [1, "x,y: é"]}) == '{"a": [1, "x,y: \\u00e9"]}'
    assert_eq!(python_json_len(&json!({"a": [1, "x,y: é"]})), 25);
}

/// The tool list an agent pays for before asking anything: what clients put in the model's
/// context (name, description, input schema) and the whole `tools/list` result.
#[test]
fn the_tool_list_fits_its_budget() {
    let list = tool_list();
    let visible: usize = list
        .iter()
        .map(|t| {
            python_json_len(&json!({
                "name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]
            }))
        })
        .sum();
    let with_annotations: usize = list
        .iter()
        .map(|t| {
            python_json_len(&json!({
                "name": t["name"], "title": t["title"], "description": t["description"],
                "inputSchema": t["inputSchema"], "annotations": t["annotations"]
            }))
        })
        .sum();
    let full = python_json_len(&json!({ "tools": list }));
    let n = list.len();
    let instructions = tools::INSTRUCTIONS.chars().count();
    eprintln!(
        "lspgate tools/list, {n} tools: model-visible {visible} characters ({} per tool), \
         with title and annotations {with_annotations}, full tools/list {full}; \
         instructions {instructions}",
        visible / n
    );
    // Budgets that grow with the tools, never a wall the next one hits: each tool at most
    // 1,000 characters of what the model reads, and 460 a tool on average (12,000 for 26 tools;
    // 10,914 when this was written).
    let heaviest = list
        .iter()
        .map(|t| {
            let len = python_json_len(&json!({
                "name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]
            }));
            (len, t["name"].as_str().unwrap_or("?").to_string())
        })
        .max()
        .unwrap();
    eprintln!(
        "heaviest tool: {} with {} characters",
        heaviest.1, heaviest.0
    );
    assert!(
        heaviest.0 <= 1_000,
        "{} takes {} > 1,000",
        heaviest.1,
        heaviest.0
    );
    assert!(visible <= 460 * n, "model-visible {visible} > 460 × {n}");
    assert!(
        full * 2 * 22 <= 57_705 * n,
        "full tools/list {full} > half of 57,705 × {n}/22"
    );
    assert!(instructions <= 1_500, "instructions {instructions} > 1,500");
}

/// The harness holds every structured result to its output schema (`common::conforms`); that
/// check catches what a strict client would reject.
#[test]
fn the_output_check_can_fail() {
    let edit = tools::by_name("edit").unwrap().output_schema();
    let diag = json!({"file": "a.py", "diagnostics": [
        {"severity": "error", "source": "Pyright", "items": [[1, 1, 1, 2, "m"]]}]});
    let good = json!({"applied": true, "changed": true, "files": [], "diff": "",
                      "edit_id": 3, "introduced": [diag]});
    assert_eq!(common::conforms(edit, edit, &good, ""), Ok(()));
    let mut bad_severity = good.clone();
    bad_severity["introduced"][0]["diagnostics"][0]["severity"] = json!("fatal");
    let mut bad_type = good.clone();
    bad_type["edit_id"] = json!("3");
    let mut missing = good.clone();
    missing["introduced"][0]["diagnostics"][0]
        .as_object_mut()
        .unwrap()
        .remove("severity");
    let mut no_group = good.clone();
    no_group["introduced"][0]
        .as_object_mut()
        .unwrap()
        .remove("diagnostics");
    for bad in [bad_severity, bad_type, missing, no_group] {
        assert!(common::conforms(edit, edit, &bad, "").is_err(), "{bad}");
    }
}

/// The README shows the instructions as they are sent.
#[test]
fn the_readme_shows_the_instructions() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    assert!(
        readme.contains(tools::INSTRUCTIONS),
        "README.md does not show tools::INSTRUCTIONS verbatim"
    );
}
