//! Fuzz target: a tool call's admission and parameter decoding (`ops::tools::decode`: the
//! tool, the session's profile, unknown parameters at any depth, then the tool's parameter
//! type, numeric strings included). Checks: never a panic, every refusal is `invalid_params`
//! with a message, and admitted arguments name only parameters of the tool's schema.

#![no_main]

use libfuzzer_sys::fuzz_target;
use lspgate::error::Code;
use lspgate::ops::tools::{self, EVERY_TOOL, Profile};
use serde_json::Value;

/// Profiles to try, picked by the second byte.
const PROFILES: [&[&str]; 5] = [
    &[],
    &["navigation"],
    &["edits", "gates"],
    &["hover", "diagnostics"],
    &["admin"],
];

fuzz_target!(|data: &[u8]| {
    let [t, p, rest @ ..] = data else {
        return;
    };
    let all = tools::tools();
    let name = match all.get(*t as usize % (all.len() + 1)) {
        Some(def) => def.name,
        None => "no_such_tool",
    };
    let items = PROFILES[*p as usize % PROFILES.len()];
    let profile = if items.is_empty() {
        Profile::all()
    } else {
        Profile::parse(items).expect("a valid profile")
    };
    let Ok(args) = serde_json::from_slice::<Value>(rest) else {
        return;
    };
    match tools::decode(&profile, name, args.clone()) {
        Err(e) => {
            assert_eq!(e.code, Code::InvalidParams, "{e:?}");
            assert!(!e.message.is_empty());
        }
        Ok(()) => {
            assert!(profile.allows(name));
            let def = tools::by_name(name).expect("a known tool");
            let known = def.input_schema()["properties"]
                .as_object()
                .expect("an object schema");
            if let Value::Object(m) = &args {
                for k in m.keys() {
                    assert!(
                        known.contains_key(k) || EVERY_TOOL.contains(&k.as_str()),
                        "`{k}` admitted for {name}"
                    );
                }
            } else {
                assert!(args.is_null(), "non-object arguments admitted: {args}");
            }
        }
    }
});
