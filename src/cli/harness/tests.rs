//! Unit tests of `setup`'s merge engines: JSON/JSONC (`merge.rs` over `json.rs`) and TOML
//! (`block.rs`), and of the table's hook recognition.

use serde_json::{Value, json};

use super::table::{self, Entry, Mcp, Put, Style, runs_lspgate_hook, shell_quote};
use super::{block, json, merge};

const CMD: &str = "/opt/lspgate/bin/lspgate";

fn mcp() -> Entry {
    table::entry(&Put::Mcp(&["mcpServers"], Mcp::Plain), CMD)
}

fn pre() -> Entry {
    table::entry(
        &Put::Hook(&["hooks", "PreToolUse"], "pre-edit", Style::Claude),
        CMD,
    )
}

fn post() -> Entry {
    table::entry(
        &Put::Hook(&["hooks", "PostToolUse"], "post-edit", Style::Claude),
        CMD,
    )
}

/// Puts every entry in, checks the result parses and holds them, then takes them out again
/// and checks the original bytes come back; the text with them in.
fn round_trip(original: &str, jsonc: bool, entries: &[Entry]) -> String {
    let mut text = original.to_string();
    for e in entries {
        text = merge::put(&text, jsonc, e, CMD).unwrap();
    }
    for e in entries {
        assert!(
            merge::holds(&text, jsonc, e, CMD).unwrap(),
            "{e:?} missing in\n{text}"
        );
        assert_eq!(
            merge::put(&text, jsonc, e, CMD).unwrap(),
            text,
            "not idempotent"
        );
    }
    let mut back = text.clone();
    for e in entries {
        back = merge::take(&back, jsonc, e, CMD).unwrap();
    }
    assert_eq!(back, original, "remove did not restore, from\n{text}");
    text
}

fn parsed(text: &str, jsonc: bool) -> Value {
    let root = json::parse(text, jsonc).unwrap();
    json::value_of(text, &root)
}

#[test]
fn from_nothing_gives_the_documented_shape() {
    let text = round_trip("{}\n", false, &[mcp(), pre(), post()]);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["mcpServers"]["lspgate"],
        json!({"command": CMD, "args": ["serve"]})
    );
    let post = &v["hooks"]["PostToolUse"][0];
    assert_eq!(post["matcher"], "Write|Edit|MultiEdit|Bash");
    assert_eq!(post["hooks"][0]["type"], "command");
    assert_eq!(post["hooks"][0]["timeout"], 10);
    let command = post["hooks"][0]["command"].as_str().unwrap();
    assert_eq!(
        command,
        format!("{CMD} hook post-edit --format claude-code")
    );
    assert!(text.starts_with("{\n  \"mcpServers\": {\n    \"lspgate\": {\n"));
}

#[test]
fn other_members_keep_their_bytes_and_indentation() {
    let original = "{\n    \"z\": 1,\n    \"mcpServers\": {\n        \"other\": {\"command\": \"x\"}\n    },\n    \"a\": [1,   2]\n}";
    let text = round_trip(original, false, &[mcp(), pre()]);
    // Inserted after the last member, at the file's own four-space indentation.
    assert!(text.contains(
        "\"other\": {\"command\": \"x\"},\n        \"lspgate\": {\n            \"command\""
    ));
    assert!(text.contains("\"a\": [1,   2],\n    \"hooks\": {\n        \"PreToolUse\": [\n"));
    assert!(!text.ends_with('\n'), "no newline added at the end");
    let v = parsed(&text, false);
    assert_eq!(v["mcpServers"]["other"], json!({"command": "x"}));
    assert_eq!(v["z"], 1);
}

#[test]
fn tabs_and_one_line_files_keep_their_style() {
    let tabs = round_trip(
        "{\n\t\"mcpServers\": {\n\t\t\"x\": {}\n\t}\n}\n",
        false,
        &[mcp()],
    );
    assert!(
        tabs.contains("\n\t\t\"lspgate\": {\n\t\t\t\"command\""),
        "{tabs}"
    );
    let one = round_trip(
        "{\"mcpServers\": {\"x\": {}}, \"b\": true}",
        false,
        &[mcp(), post()],
    );
    assert!(!one.contains('\n'), "{one}");
    assert!(one.starts_with("{\"mcpServers\": {\"x\": {}, \"lspgate\": {\"command\": "));
}

#[test]
fn comments_and_trailing_commas_stay_in_jsonc() {
    let original = "// settings\n{\n  /* servers */\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"}, // the a server\n  },\n  \"hooks\": {\n    \"PreToolUse\": [\n      {\"matcher\": \"Bash\", \"hooks\": [{\"type\": \"command\", \"command\": \"audit\"}]} // audit\n    ]\n  }\n  // end\n}\n";
    let text = round_trip(original, true, &[mcp(), pre(), post()]);
    assert!(text.contains("// the a server"));
    assert!(
        text.contains("]}, // audit\n"),
        "a line's comment stays on its line:\n{text}"
    );
    assert!(
        text.contains("}, // the a server\n    \"lspgate\": {\n"),
        "{text}"
    );
    assert!(
        text.contains("\"serve\"]\n    },\n  },\n"),
        "trailing commas kept:\n{text}"
    );
    let v = parsed(&text, true);
    assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
    assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "audit");
    // Block comments closed on the last item's line stay there; one left open does not.
    let blocks = "{\n  \"a\": 1 /* one */ /* two */\n}";
    let text = round_trip(blocks, true, &[mcp()]);
    assert!(
        text.starts_with("{\n  \"a\": 1, /* one */ /* two */\n  \"mcpServers\""),
        "{text}"
    );
    let open = "{\n  \"a\": 1 /* open\n  still */\n}";
    let text = round_trip(open, true, &[mcp()]);
    assert!(
        text.starts_with("{\n  \"a\": 1,\n  \"mcpServers\""),
        "{text}"
    );
    // Strict JSON refuses the same text, naming where.
    let e = merge::put(original, false, &mcp(), CMD).unwrap_err();
    assert!(e.starts_with("line 1, column"), "{e}");
}

#[test]
fn a_present_entry_is_left_or_replaced_alone() {
    let same = format!(
        "{{\"mcpServers\": {{\"lspgate\": {{\"args\": [\"serve\"], \"command\": \"{CMD}\"}}}}}}"
    );
    assert_eq!(merge::put(&same, false, &mcp(), CMD).unwrap(), same);
    let old = "{\n  \"x\": 1,\n  \"mcpServers\": {\n    \"lspgate\": {\"command\": \"old\"},\n    \"y\": 2\n  }\n}\n";
    let text = merge::put(old, false, &mcp(), CMD).unwrap();
    let prefix = "{\n  \"x\": 1,\n  \"mcpServers\": {\n    \"lspgate\": {\n      \"command\": ";
    assert!(text.starts_with(prefix), "{text}");
    assert!(text.ends_with("\"args\": [\"serve\"]\n    },\n    \"y\": 2\n  }\n}\n"));
    // A remove takes the whole entry; the member in the middle goes with its line.
    let gone = merge::take(&text, false, &mcp(), CMD).unwrap();
    assert_eq!(
        gone,
        "{\n  \"x\": 1,\n  \"mcpServers\": {\n    \"y\": 2\n  }\n}\n"
    );
}

#[test]
fn hook_groups_are_recognised_by_their_commands() {
    // An older setup's path: replaced in place, not doubled.
    let old = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]},
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "/old/lspgate hook pre-edit --format claude-code"}]}
    ]}});
    let old = serde_json::to_string_pretty(&old).unwrap();
    let text = merge::put(&old, false, &pre(), CMD).unwrap();
    let v = parsed(&text, false);
    assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 2);
    assert_eq!(v["hooks"]["PreToolUse"][1], pre_value());
    assert_eq!(v["hooks"]["PreToolUse"][0]["hooks"][0]["command"], "guard");
    // A group the user shares with lspgate's hook counts as set up, and is never taken out.
    let shared = json!({"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [
        {"type": "command", "command": "guard"},
        {"type": "command", "command": format!("{CMD} hook pre-edit --format claude-code")}
    ]}]}});
    let shared = serde_json::to_string(&shared).unwrap();
    assert_eq!(merge::put(&shared, false, &pre(), CMD).unwrap(), shared);
    assert_eq!(merge::take(&shared, false, &pre(), CMD).unwrap(), shared);
}

fn pre_value() -> Value {
    match pre() {
        Entry::Hook { value, .. } => value.value(),
        Entry::Member { .. } => Value::Null,
    }
}

#[test]
fn windows_line_ends_stay_windows_line_ends() {
    let original = "{\r\n  \"a\": 1,\r\n  \"hooks\": {\"Stop\": []}\r\n}\r\n";
    let text = round_trip(original, false, &[mcp(), pre()]);
    assert_eq!(
        text.matches('\n').count(),
        text.matches("\r\n").count(),
        "{text:?}"
    );
}

#[test]
fn existing_empty_containers_and_wrong_shapes() {
    // Emptied containers go: one that was empty before setup too (nothing says who made it).
    let text = merge::put(
        "{\n  \"mcpServers\": {},\n  \"k\": null\n}\n",
        false,
        &mcp(),
        CMD,
    )
    .unwrap();
    let back = merge::take(&text, false, &mcp(), CMD).unwrap();
    assert_eq!(back, "{\n  \"k\": null\n}\n");
    round_trip("{\"hooks\": {\"Stop\": []}}", false, &[pre(), post()]);
    round_trip("{\"a\": 1,}", true, &[pre(), mcp()]);
    let e = merge::put("{\"hooks\": []}", false, &pre(), CMD).unwrap_err();
    assert_eq!(e, "`hooks` is not an object");
    let e = merge::put("{\"hooks\": {\"PreToolUse\": {}}}", false, &pre(), CMD).unwrap_err();
    assert_eq!(e, "`hooks.PreToolUse` is not an array");
    let e = merge::put("[1]", false, &pre(), CMD).unwrap_err();
    assert_eq!(e, "the top level is not an object");
}

#[test]
fn the_scanner_says_where_a_file_breaks() {
    let e = json::parse("{\n  \"a\": 1,\n  \"b\" 2\n}", true).unwrap_err();
    assert_eq!((e.line, e.column), (3, 7));
    let e = json::parse("{\"a\": [1, 2}", true).unwrap_err();
    assert_eq!(e.message, "expected `,` or `]`");
    assert!(json::parse("{} x", true).is_err());
    assert!(json::parse("{\"a\": \"unterminated}", true).is_err());
    assert!(json::parse(&"[".repeat(1000), true).is_err());
    let e = json::parse("{\"a\": 1,}", false).unwrap_err();
    assert_eq!(e.line, 1);
    assert!(json::parse("{\"a\": 1,} // c", true).is_ok());
}

#[test]
fn indentation_is_guessed_from_the_file() {
    assert_eq!(
        merge::indent_unit("{\n   \"a\": {\n      \"b\": 1\n   }\n}"),
        "   "
    );
    assert_eq!(merge::indent_unit("{\n\t\"a\": 1\n}"), "\t");
    assert_eq!(merge::indent_unit("{}"), "  ");
}

fn codex() -> Vec<Entry> {
    [
        Put::Mcp(&["mcp_servers"], Mcp::Plain),
        Put::Hook(&["hooks", "PreToolUse"], "pre-edit", Style::Codex),
        Put::Hook(&["hooks", "PostToolUse"], "post-edit", Style::Codex),
    ]
    .iter()
    .map(|p| table::entry(p, CMD))
    .collect()
}

#[test]
fn toml_gets_a_block_at_its_end_and_loses_it_again() {
    for original in [
        "",
        "model = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"x\"\n",
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ncommand = \"audit\"",
    ] {
        let text = block::put(original, &codex(), CMD).unwrap();
        assert!(text.starts_with(original));
        assert_eq!(
            block::put(&text, &codex(), CMD).unwrap(),
            text,
            "not idempotent"
        );
        let doc = block::parse(&text).unwrap();
        for e in codex() {
            assert!(block::holds(&doc, &e), "{e:?} not in\n{text}");
        }
        assert_eq!(doc["mcp_servers"]["lspgate"]["args"], json!(["serve"]));
        let hooks = &doc["hooks"]["PostToolUse"];
        let last = &hooks[hooks.as_array().unwrap().len() - 1];
        assert_eq!(last["matcher"], "^(apply_patch|Bash)$");
        assert_eq!(last["hooks"][0]["timeout"], 10);
        assert_eq!(block::take(&text), original);
    }
}

#[test]
fn toml_entries_the_user_wrote_are_kept_and_stale_blocks_replaced() {
    let own = "[mcp_servers.lspgate]\ncommand = \"mine\"\n";
    let text = block::put(own, &codex(), CMD).unwrap();
    assert_eq!(text.matches("[mcp_servers.lspgate]").count(), 1);
    assert!(text.contains("[[hooks.PreToolUse]]"));
    let stale = block::put("a = 1\n", &codex(), "/old/lspgate").unwrap();
    let fresh = block::put(&stale, &codex(), CMD).unwrap();
    assert!(fresh.starts_with("a = 1\n\n# >>> lspgate setup"));
    assert!(!fresh.contains("/old/"));
    assert_eq!(block::take(&fresh), "a = 1\n");
}

#[test]
fn toml_that_cannot_take_the_block_is_refused() {
    let e = block::put(
        "mcp_servers = { lspgate2 = { command = \"x\" } }\n",
        &codex(),
        CMD,
    );
    assert!(e.is_err(), "{e:?}");
    let e = block::put(
        "[hooks]\nPreToolUse = [{ matcher = \"x\", hooks = [] }]\n",
        &codex(),
        CMD,
    );
    assert!(e.unwrap_err().contains("lspgate's block"));
    let e = block::parse("a = \n").unwrap_err();
    assert!(e.contains("line 1"), "{e}");
}

#[test]
fn hook_commands_are_recognised() {
    assert_eq!(shell_quote("/usr/bin/lspgate"), "/usr/bin/lspgate");
    assert_eq!(shell_quote("/a b/it's"), r"'/a b/it'\''s'");
    assert!(runs_lspgate_hook(
        "lspgate hook post-edit --format codex",
        CMD
    ));
    assert!(runs_lspgate_hook("'/x y/lspgate' hook pre-edit", CMD));
    assert!(runs_lspgate_hook(&format!("{CMD} hook pre-edit"), CMD));
    assert!(!runs_lspgate_hook("lspgate serve", CMD));
    assert!(!runs_lspgate_hook("my-lspgate hook", CMD));
}
