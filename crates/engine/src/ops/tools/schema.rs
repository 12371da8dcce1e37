//! The tools' JSON Schemas as they are sent: generated with schemars, then made lean (no
//! `$schema`, titles, `"default": null` or nullable unions; optional means "not in `required`"),
//! and the check of a call's arguments against its input schema (unknown parameters refused).

use schemars::JsonSchema;
use serde_json::{Map, Value, json};

use super::ToolDef;

/// A tool's parameters: inline subschemas, property descriptions kept (they are written for
/// the model), the type's own description dropped (the tool's description says it).
pub fn input<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut v = generate::<T>(settings);
    lean(&mut v, Descriptions::Properties);
    if let Value::Object(m) = &mut v {
        m.remove("description");
    }
    v
}

/// A result's schema as it is serialized: fields left out when empty are not required, and no
/// descriptions (the protocol's shapes). Clients validate every result against it, so it is
/// kept small and cheap to check: a subschema is inline where it is used once (a `Loc` of a
/// 121-reference answer is not a `$ref` to resolve per location) and in `$defs` only where the
/// same schema would otherwise be written twice (`introduced` and `resolved` diagnostics).
pub fn output<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12().for_serialize();
    settings.inline_subschemas = false;
    let mut v = generate::<T>(settings);
    inline_single_use(&mut v);
    lean(&mut v, Descriptions::None);
    v
}

fn generate<T: JsonSchema>(mut settings: schemars::generate::SchemaSettings) -> Value {
    settings.meta_schema = None;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    serde_json::to_value(schema).unwrap_or(Value::Null)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Descriptions {
    Properties,
    None,
}

/// Replaces every `$ref` to a definition used once by the definition itself; definitions used
/// more than once stay in `$defs`.
fn inline_single_use(root: &mut Value) {
    fn uses(v: &Value, counts: &mut std::collections::HashMap<String, usize>) {
        match v {
            Value::Object(m) => {
                if let Some(r) = m.get("$ref").and_then(Value::as_str) {
                    *counts.entry(r.to_string()).or_default() += 1;
                }
                m.values().for_each(|s| uses(s, counts));
            }
            Value::Array(items) => items.iter().for_each(|s| uses(s, counts)),
            _ => {}
        }
    }
    fn substitute(v: &mut Value, name: &str, def: &Value) {
        match v {
            Value::Object(m) => {
                if m.get("$ref").and_then(Value::as_str) == Some(name) {
                    m.remove("$ref");
                    if let Value::Object(d) = def {
                        for (k, x) in d {
                            m.entry(k.clone()).or_insert_with(|| x.clone());
                        }
                    }
                }
                m.values_mut().for_each(|s| substitute(s, name, def));
            }
            Value::Array(items) => items.iter_mut().for_each(|s| substitute(s, name, def)),
            _ => {}
        }
    }
    // Each pass inlines one definition; a definition inlined may make another single-use.
    loop {
        let mut counts = std::collections::HashMap::new();
        uses(root, &mut counts);
        let Some(Value::Object(defs)) = root.get("$defs") else {
            return;
        };
        let once = defs.iter().find_map(|(k, d)| {
            let name = format!("#/$defs/{k}");
            // A definition that refers to itself stays (it would never end).
            let mut inner = std::collections::HashMap::new();
            uses(d, &mut inner);
            (counts.get(&name).copied().unwrap_or(0) <= 1 && !inner.contains_key(&name))
                .then(|| (k.clone(), name, d.clone()))
        });
        let Some((key, name, def)) = once else {
            return;
        };
        if let Some(Value::Object(defs)) = root.get_mut("$defs") {
            defs.remove(&key);
            if defs.is_empty()
                && let Value::Object(m) = root
            {
                m.remove("$defs");
            }
        }
        substitute(root, &name, &def);
    }
}

/// Schema keywords whose value is one subschema.
const ONE: &[&str] = &["items", "additionalProperties", "not", "contains"];
/// Schema keywords whose value is an array of subschemas.
const MANY: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// Strips what a reader (model or validator) does not need, walking schema keywords only (a
/// property may well be called `title`).
fn lean(schema: &mut Value, descriptions: Descriptions) {
    let Value::Object(m) = schema else { return };
    m.remove("title");
    m.remove("$schema");
    if m.get("default").is_some_and(Value::is_null) {
        m.remove("default");
    }
    if descriptions == Descriptions::None {
        m.remove("description");
    }
    // Counts and positions are never negative, and `format` only restates the Rust type.
    if matches!(m.get("type"), Some(Value::String(t)) if t == "integer" || t == "number")
        || matches!(m.get("type"), Some(Value::Array(ts)) if ts.iter().any(|t| t == "integer" || t == "number"))
    {
        m.remove("format");
        m.remove("minimum");
    }
    let required: Vec<String> = m
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(props)) = m.get_mut("properties") {
        for (name, sub) in props.iter_mut() {
            // An optional property is left out, never sent as null.
            if !required.contains(name) {
                not_null(sub);
            }
            lean(sub, descriptions);
        }
    }
    for key in ONE {
        if let Some(sub) = m.get_mut(*key) {
            lean(sub, descriptions);
        }
    }
    for key in MANY {
        if let Some(Value::Array(subs)) = m.get_mut(*key) {
            subs.iter_mut().for_each(|s| lean(s, descriptions));
        }
    }
    if let Some(Value::Object(defs)) = m.get_mut("$defs") {
        defs.values_mut().for_each(|s| lean(s, descriptions));
    }
    // An enum of strings says its type already.
    if m.get("type").is_some_and(|t| t == "string")
        && m.get("enum")
            .and_then(Value::as_array)
            .is_some_and(|vs| vs.iter().all(Value::is_string))
    {
        m.remove("type");
    }
}

/// Removes `null` from a schema's type, enum or `anyOf` (`Option<T>` as schemars writes it).
fn not_null(schema: &mut Value) {
    let Value::Object(m) = schema else { return };
    if let Some(Value::Array(types)) = m.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let t = types.remove(0);
            m.insert("type".into(), t);
        }
    }
    if let Some(Value::Array(values)) = m.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    let only_null = |s: &Value| {
        s.get("type").is_some_and(|t| t == "null") && s.as_object().is_some_and(|o| o.len() == 1)
    };
    if let Some(Value::Array(options)) = m.get_mut("anyOf") {
        options.retain(|o| !only_null(o));
        if options.len() == 1 {
            let Some(Value::Object(one)) = options.pop() else {
                return;
            };
            m.remove("anyOf");
            for (k, v) in one {
                m.entry(k).or_insert(v);
            }
        }
    }
}

/// The parameters in `args` that `schema` does not name, as paths (`colum`, `edits[0].txt`,
/// `probe.colum`), each with the names that were possible there. Walks properties, array items
/// and `anyOf`/`oneOf` alternatives (a key is known if any alternative names it); an object
/// schema without `properties` accepts anything.
pub fn unknown_parameters(schema: &Value, args: &Value) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    walk(schema, args, "", &mut out);
    out
}

fn walk(schema: &Value, value: &Value, at: &str, out: &mut Vec<(String, Vec<String>)>) {
    match value {
        Value::Object(map) => {
            let mut known: Map<String, Value> = Map::new();
            // Declared but empty (a tool whose only parameters every tool takes) names none.
            if !collect_properties(schema, &mut known) {
                return;
            }
            for (k, v) in map {
                let path = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                match known.get(k) {
                    Some(sub) => walk(sub, v, &path, out),
                    None => out.push((path, known.keys().cloned().collect())),
                }
            }
        }
        Value::Array(items) => {
            // Items of any alternative: a key is unknown only if no alternative names it.
            let mut item_schemas = Vec::new();
            collect_items(schema, &mut item_schemas);
            let item = match item_schemas.as_slice() {
                [one] => (*one).clone(),
                many => serde_json::json!({ "anyOf": many }),
            };
            for (i, v) in items.iter().enumerate() {
                walk(&item, v, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}

fn alternatives(schema: &Value) -> impl Iterator<Item = &Value> {
    ["anyOf", "oneOf"]
        .into_iter()
        .filter_map(|k| schema.get(k).and_then(Value::as_array))
        .flatten()
}

/// Adds the properties `schema` and its alternatives name; whether any of them declares
/// `properties` at all (possibly none).
fn collect_properties(schema: &Value, into: &mut Map<String, Value>) -> bool {
    let mut declared = false;
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        declared = true;
        for (k, v) in props {
            into.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    for alt in alternatives(schema) {
        declared |= collect_properties(alt, into);
    }
    declared
}

fn collect_items<'a>(schema: &'a Value, into: &mut Vec<&'a Value>) {
    if let Some(items) = schema.get("items") {
        into.push(items);
    }
    for alt in alternatives(schema) {
        collect_items(alt, into);
    }
}

/// Adds `background` to the input schema of a tool that takes it.
pub fn background_input(def: &ToolDef, schema: &mut Value) {
    if !def.background {
        return;
    }
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert(
            "background".into(),
            json!({"type": "boolean", "description": "Answer `activity_id` at once; follow or cancel it with `activity`."}),
        );
    }
}

/// The output schema of a tool that takes `background`: its result, or `{activity_id}`.
pub fn background_output(def: &ToolDef, schema: &mut Value) {
    if !def.background {
        return;
    }
    let Some(m) = schema.as_object_mut() else {
        return;
    };
    let required = m.remove("required").unwrap_or_else(|| json!([]));
    if let Some(props) = m.get_mut("properties").and_then(Value::as_object_mut) {
        props.insert("activity_id".into(), json!({"type": "string"}));
    }
    m.insert(
        "anyOf".into(),
        json!([{"required": required}, {"required": ["activity_id"]}]),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    /// Type docs that the tool's description replaces.
    struct Params {
        /// Said once, here.
        file: String,
        #[serde(default)]
        column: Option<u32>,
        #[serde(default)]
        kind: Option<Kind>,
        #[serde(default)]
        inner: Option<Inner>,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    enum Kind {
        A,
        B,
    }

    #[derive(JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        title: String,
    }

    #[test]
    fn input_schemas_are_lean() {
        let s = input::<Params>();
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "file": {"type": "string", "description": "Said once, here."},
                    "column": {"type": "integer"},
                    "kind": {"enum": ["A", "B"]},
                    "inner": {
                        "type": "object",
                        "properties": {"title": {"type": "string"}},
                        "required": ["title"]
                    }
                },
                "required": ["file"]
            })
        );
    }

    #[derive(JsonSchema, serde::Serialize)]
    #[allow(dead_code)]
    struct Out {
        /// Dropped: the shapes are the protocol's.
        n: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        maybe: Option<String>,
        always: Option<String>,
    }

    #[test]
    fn output_schemas_keep_nulls_that_are_sent() {
        let s = output::<Out>();
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "maybe": {"type": "string"},
                    "always": {"type": ["string", "null"]}
                },
                "required": ["n", "always"]
            })
        );
    }

    #[test]
    fn unknown_parameters_are_found_at_any_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "file": {"type": "string"},
                "edits": {"type": "array", "items": {"anyOf": [
                    {"type": "object", "properties": {"old_text": {}, "new_text": {}}},
                    {"type": "object", "properties": {"start_line": {}, "new_text": {}}}
                ]}},
                "anything": {}
            }
        });
        let args = json!({
            "file": "a.py",
            "colum": 3,
            "edits": [{"old_text": "a", "new_text": "b"}, {"start_line": 1, "nwe_text": "c"}],
            "anything": {"free": 1}
        });
        let found: Vec<String> = unknown_parameters(&schema, &args)
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(found, ["colum", "edits[1].nwe_text"]);
        assert!(unknown_parameters(&schema, &json!({"file": "a"})).is_empty());
    }

    /// Found by fuzzing (fuzz/tool_params): a schema that declares no properties (`servers`,
    /// whose only parameter every tool takes) let any parameter through.
    #[test]
    fn declared_but_empty_properties_name_none() {
        let schema = json!({"type": "object", "properties": {}});
        let found: Vec<String> = unknown_parameters(&schema, &json!({"": "10"}))
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(found, [""]);
        // No `properties` at all: a free-form object, anything goes.
        assert!(unknown_parameters(&json!({"type": "object"}), &json!({"x": 1})).is_empty());
    }
}
