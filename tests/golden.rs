//! Published schemas, kept as golden files: the JSON Schema of lspgate.toml and the tool list
//! agents see (names, descriptions, input and output schemas). A change to either must be made
//! on purpose: rerun with `UPDATE_GOLDEN=1` and commit the new file.

use std::path::Path;

use lspgate::ops::tools;
use lspgate::workspace::config::Config;
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

#[test]
fn config_schema_is_published() {
    let schema = Config::json_schema();
    assert_eq!(schema["type"], "object");
    assert!(schema["properties"]["server"].is_object());
    check("lspgate.schema.json", schema);
}

#[test]
fn tool_schemas_are_stable() {
    let list: Vec<Value> = tools::tools()
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": tools::description(t),
                "inputSchema": tools::input_schema(t),
                "outputSchema": (t.output_schema)(),
            })
        })
        .collect();
    for t in &list {
        assert_eq!(t["inputSchema"]["type"], "object", "{}", t["name"]);
        assert_eq!(t["outputSchema"]["type"], "object", "{}", t["name"]);
    }
    check("tests/golden/tools.json", Value::Array(list));
}
