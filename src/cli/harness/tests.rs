//! Unit tests of `setup`'s merge engines: JSON/JSONC (`merge.rs` over `json.rs`) and TOML
//! (`block.rs`), of the table's hook recognition, and of writes that follow no link
//! (`disk.rs`).

use serde_json::{Value, json};

use super::table::{self, Entry, Put, plain_mcp, runs_lspgate_hook, shell_quote};
use super::{block, json, merge};
use crate::cli::harnesses::{claude_code, codex, opencode};

const CMD: &str = "/opt/lspgate/bin/lspgate";

fn mcp() -> Entry {
    table::entry(&Put::Mcp(&["mcpServers"], plain_mcp), CMD)
}

fn pre() -> Entry {
    table::entry(
        &Put::Hook(&["hooks", "PreToolUse"], "pre-edit", claude_code::group),
        CMD,
    )
}

fn post() -> Entry {
    table::entry(
        &Put::Hook(&["hooks", "PostToolUse"], "post-edit", claude_code::group),
        CMD,
    )
}

/// Puts every entry in, checks the result parses and holds them, then takes them out again
/// and checks the original bytes come back; the text with them in.
fn round_trip(original: &str, jsonc: bool, entries: &[Entry]) -> String {
    let mut text = original.to_string();
    for e in entries {
        text = put(&text, jsonc, e);
    }
    for e in entries {
        assert!(
            merge::holds(&text, jsonc, e, CMD).unwrap(),
            "{e:?} missing in\n{text}"
        );
        assert_eq!(put(&text, jsonc, e), text, "not idempotent");
    }
    let mut back = text.clone();
    for e in entries {
        back = take(&back, jsonc, e);
    }
    assert_eq!(back, original, "remove did not restore, from\n{text}");
    text
}

/// `text` with `entry` put in, no entry of lspgate's left as it was.
fn put(text: &str, jsonc: bool, entry: &Entry) -> String {
    let (text, kept) = merge::put(text, jsonc, entry, CMD).unwrap();
    assert_eq!(kept, None, "kept in\n{text}");
    text
}

/// `text` with `entry` taken out, no entry of lspgate's left in.
fn take(text: &str, jsonc: bool, entry: &Entry) -> String {
    let (text, left) = merge::take(text, jsonc, entry, CMD).unwrap();
    assert_eq!(left, None, "left in\n{text}");
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
fn a_present_entry_is_left_as_it_is() {
    let same = format!(
        "{{\"mcpServers\": {{\"lspgate\": {{\"args\": [\"serve\"], \"command\": \"{CMD}\"}}}}}}"
    );
    assert_eq!(put(&same, false, &mcp()), same);
    // One that differs (an older path, the user's own) stays as it is, named for a note; a
    // remove leaves it in too.
    let old = "{\n  \"x\": 1,\n  \"mcpServers\": {\n    \"lspgate\": {\"command\": \"old\"},\n    \"y\": 2\n  }\n}\n";
    let (text, kept) = merge::put(old, false, &mcp(), CMD).unwrap();
    assert_eq!(text, old);
    assert_eq!(
        kept.as_deref(),
        Some("your lspgate entry `mcpServers.lspgate`")
    );
    let (text, left) = merge::take(old, false, &mcp(), CMD).unwrap();
    assert_eq!(text, old);
    assert_eq!(
        left.as_deref(),
        Some("your lspgate entry `mcpServers.lspgate`")
    );
    // A remove takes the whole entry as setup writes it; the member in the middle goes with
    // its line.
    let written = format!(
        "{{\n  \"x\": 1,\n  \"mcpServers\": {{\n    \"lspgate\": {{\"command\": \"{CMD}\", \"args\": [\"serve\"]}},\n    \"y\": 2\n  }}\n}}\n"
    );
    assert_eq!(
        take(&written, false, &mcp()),
        "{\n  \"x\": 1,\n  \"mcpServers\": {\n    \"y\": 2\n  }\n}\n"
    );
}

#[test]
fn a_users_changes_to_lspgates_entries_survive_setup_and_remove() {
    // The user added an environment to the server setup wrote.
    let setup = put("{}\n", false, &mcp());
    let changed = setup.replace(
        "\"args\": [\"serve\"]",
        "\"args\": [\"serve\"],\n      \"env\": {\"X\": \"1\"}",
    );
    assert_ne!(changed, setup);
    let (text, kept) = merge::put(&changed, false, &mcp(), CMD).unwrap();
    assert_eq!(text, changed, "setup reverted the user's change");
    assert!(kept.is_some());
    let (text, left) = merge::take(&changed, false, &mcp(), CMD).unwrap();
    assert_eq!(text, changed, "remove took the user's entry");
    assert!(left.is_some());
    // The user made lspgate's hook block on errors.
    let setup = put("{}\n", false, &post());
    let changed = setup.replace(
        "hook post-edit --format",
        "hook post-edit --block-on error --format",
    );
    assert_ne!(changed, setup);
    let (text, kept) = merge::put(&changed, false, &post(), CMD).unwrap();
    assert_eq!(text, changed, "setup reverted the user's hook");
    assert_eq!(
        kept.as_deref(),
        Some("your lspgate hook group in `hooks.PostToolUse`")
    );
    assert!(merge::holds(&changed, false, &post(), CMD).unwrap());
    let (text, left) = merge::take(&changed, false, &post(), CMD).unwrap();
    assert_eq!(text, changed, "remove took the user's hook");
    assert!(left.is_some());
    // What setup writes goes, however it is spelled; the user's group beside it stays.
    let both = json!({"hooks": {"PostToolUse": [
        {"hooks": [{"timeout": 10, "command": format!("{CMD} hook post-edit --format claude-code"), "type": "command"}], "matcher": "Write|Edit|MultiEdit|Bash"},
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "lspgate hook post-edit --format claude-code"}]}
    ]}});
    let both = serde_json::to_string_pretty(&both).unwrap();
    let (text, left) = merge::take(&both, false, &post(), CMD).unwrap();
    assert!(left.is_some());
    let v = parsed(&text, false);
    assert_eq!(v["hooks"]["PostToolUse"].as_array().unwrap().len(), 1);
    assert_eq!(v["hooks"]["PostToolUse"][0]["matcher"], "Edit");
}

#[test]
fn hook_groups_are_recognised_by_their_commands() {
    // An older setup's path: kept as it is, not doubled.
    let old = json!({"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]},
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "/old/lspgate hook pre-edit --format claude-code"}]}
    ]}});
    let old = serde_json::to_string_pretty(&old).unwrap();
    let (text, kept) = merge::put(&old, false, &pre(), CMD).unwrap();
    assert_eq!(text, old);
    assert!(kept.is_some());
    // A group the user shares with lspgate's hook counts as set up, and is never taken out.
    let shared = json!({"hooks": {"PreToolUse": [{"matcher": "Edit", "hooks": [
        {"type": "command", "command": "guard"},
        {"type": "command", "command": format!("{CMD} hook pre-edit --format claude-code")}
    ]}]}});
    let shared = serde_json::to_string(&shared).unwrap();
    assert!(merge::holds(&shared, false, &pre(), CMD).unwrap());
    assert_eq!(merge::put(&shared, false, &pre(), CMD).unwrap().0, shared);
    assert_eq!(merge::take(&shared, false, &pre(), CMD).unwrap().0, shared);
    // A group running something else is not lspgate's: setup's goes beside it.
    let v = put(&old.replace("/old/lspgate", "other"), false, &pre());
    assert_eq!(parsed(&v, false)["hooks"]["PreToolUse"][2], pre_value());
}

fn pre_value() -> Value {
    match pre() {
        Entry::Hook { value, .. } => value.value(),
        Entry::Member { .. } => Value::Null,
    }
}

#[test]
fn duplicate_keys_are_read_as_harnesses_read_them_the_last_one() {
    let ours = format!("{{\"command\": \"{CMD}\", \"args\": [\"serve\"]}}");
    let theirs = "{\"command\": \"mine\"}";
    // The last one is setup's: set up already; a remove takes it, then leaves the user's.
    let last_ours = format!("{{\"mcpServers\": {{\"lspgate\": {theirs}, \"lspgate\": {ours}}}}}");
    assert_eq!(put(&last_ours, false, &mcp()), last_ours);
    let (text, left) = merge::take(&last_ours, false, &mcp(), CMD).unwrap();
    assert_eq!(
        text,
        format!("{{\"mcpServers\": {{\"lspgate\": {theirs}}}}}")
    );
    assert!(left.is_some());
    // The last one is the user's: it is the one the harness runs, kept and left.
    let last_theirs = format!("{{\"mcpServers\": {{\"lspgate\": {ours}, \"lspgate\": {theirs}}}}}");
    let (text, kept) = merge::put(&last_theirs, false, &mcp(), CMD).unwrap();
    assert_eq!(text, last_theirs);
    assert!(kept.is_some());
    assert!(!merge::holds(&last_theirs, false, &mcp(), CMD).unwrap());
    let (text, left) = merge::take(&last_theirs, false, &mcp(), CMD).unwrap();
    assert_eq!(text, last_theirs);
    assert!(left.is_some());
    // Along the path too: the last `mcpServers` is the one written into.
    let two = "{\"mcpServers\": {\"a\": {}}, \"mcpServers\": {\"b\": {}}}";
    let text = put(two, false, &mcp());
    assert!(
        text.starts_with("{\"mcpServers\": {\"a\": {}}, \"mcpServers\": {\"b\": {}, \"lspgate\""),
        "{text}"
    );
    assert_eq!(take(&text, false, &mcp()), two);
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
    // A comment closing the last item's line: the new item goes before its `\r\n`.
    for original in [
        "{\r\n  \"a\": 1 // c\r\n}\r\n",
        "{\r\n  \"a\": 1, // c\r\n}\r\n",
        "{\r\n  \"a\": 1 /* c */\r\n}\r\n",
    ] {
        let text = round_trip(original, true, &[mcp(), post()]);
        assert!(!text.contains("\r\r"), "{text:?}");
        assert_eq!(
            text.matches('\n').count(),
            text.matches("\r\n").count(),
            "{text:?}"
        );
    }
    let text = put("{\r\n  \"a\": 1 // c\r\n}\r\n", true, &mcp());
    assert!(
        text.starts_with("{\r\n  \"a\": 1, // c\r\n  \"mcpServers\": {\r\n"),
        "{text:?}"
    );
}

#[test]
fn existing_empty_containers_and_wrong_shapes() {
    // Emptied containers go: one that was empty before setup too (nothing says who made it).
    let text = put(
        "{\n  \"mcpServers\": {},\n  \"k\": null\n}\n",
        false,
        &mcp(),
    );
    let back = take(&text, false, &mcp());
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
    codex_for(CMD)
}

fn codex_for(cmd: &str) -> Vec<Entry> {
    [
        Put::Mcp(&["mcp_servers"], plain_mcp),
        Put::Hook(&["hooks", "PreToolUse"], "pre-edit", codex::group),
        Put::Hook(&["hooks", "PostToolUse"], "post-edit", codex::group),
    ]
    .iter()
    .map(|p| table::entry(p, cmd))
    .collect()
}

#[test]
fn toml_gets_a_block_at_its_end_and_loses_it_again() {
    for original in [
        "",
        "model = \"o3\" # the model\n\n[mcp_servers.other]\ncommand = \"x\"\n",
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\n[[hooks.PreToolUse.hooks]]\ncommand = \"audit\"",
    ] {
        let text = toml_put(original, CMD);
        assert!(text.starts_with(original));
        assert_eq!(toml_put(&text, CMD), text, "not idempotent");
        let doc = block::parse(&text).unwrap();
        for e in codex() {
            assert!(block::holds(&doc, &e), "{e:?} not in\n{text}");
        }
        assert_eq!(doc["mcp_servers"]["lspgate"]["args"], json!(["serve"]));
        let hooks = &doc["hooks"]["PostToolUse"];
        let last = &hooks[hooks.as_array().unwrap().len() - 1];
        assert_eq!(last["matcher"], "^(apply_patch|Bash)$");
        assert_eq!(last["hooks"][0]["timeout"], 10);
        assert_eq!(block::take(&text, &codex()), (original.to_string(), vec![]));
    }
}

/// `text` with lspgate's block put in, running `cmd`, nothing left as it was.
fn toml_put(text: &str, cmd: &str) -> String {
    let entries: Vec<Entry> = codex_for(cmd);
    let (text, kept) = block::put(text, &entries, cmd).unwrap();
    assert!(kept.is_empty(), "{kept:?} kept in\n{text}");
    text
}

#[test]
fn toml_entries_the_user_wrote_are_kept_and_so_are_blocks_that_differ() {
    let own = "[mcp_servers.lspgate]\ncommand = \"mine\"\n";
    let (text, kept) = block::put(own, &codex(), CMD).unwrap();
    assert_eq!(text.matches("[mcp_servers.lspgate]").count(), 1);
    assert!(text.contains("[[hooks.PreToolUse]]"));
    assert_eq!(kept, ["your lspgate entry `mcp_servers.lspgate`"]);
    // A block setup wrote for another command differs from what it writes: kept, and left by
    // a remove.
    let stale = toml_put("a = 1\n", "/old/lspgate");
    let (text, kept) = block::put(&stale, &codex(), CMD).unwrap();
    assert_eq!(text, stale);
    assert_eq!(kept, [block::NAMED]);
    assert_eq!(
        block::take(&stale, &codex()),
        (stale.clone(), vec![block::NAMED.to_string()])
    );
    assert_eq!(block::take(&stale, &codex_for("/old/lspgate")).0, "a = 1\n");
}

#[test]
fn a_block_the_user_changed_survives_setup_and_remove() {
    let text = toml_put("a = 1\n", CMD);
    let changed = text.replace(
        "args = [\"serve\"]\n",
        "args = [\"serve\"]\nenv = { X = \"1\" }\n",
    );
    assert_ne!(changed, text);
    let (again, kept) = block::put(&changed, &codex(), CMD).unwrap();
    assert_eq!(again, changed, "setup reverted the user's change");
    assert_eq!(kept, [block::NAMED]);
    let (back, left) = block::take(&changed, &codex());
    assert_eq!(back, changed, "remove took the user's block");
    assert_eq!(left, [block::NAMED]);
    // A block as setup wrote it, for entries the rest of the file has since, is setup's own:
    // rewritten without them.
    let mine = "[[hooks.PreToolUse]]\nmatcher = \"x\"\n[[hooks.PreToolUse.hooks]]\ncommand = \"lspgate hook pre-edit --format codex\"\n";
    let both = format!("{mine}\n{}", &text["a = 1\n\n".len()..]);
    let (fewer, kept) = block::put(&both, &codex(), CMD).unwrap();
    assert_eq!(kept, ["your lspgate hook group in `hooks.PreToolUse`"]);
    assert!(fewer.starts_with(mine));
    assert_eq!(fewer.matches("hook pre-edit").count(), 1, "{fewer}");
    assert_eq!(block::take(&fewer, &codex()).0, mine);
}

#[test]
fn toml_blocks_take_the_files_line_ends() {
    let original = "model = \"o3\"\r\n[mcp_servers.docs]\r\ncommand = \"docs\"\r\n";
    let text = toml_put(original, CMD);
    assert!(text.starts_with(original));
    assert!(text.contains("\r\n\r\n# >>> lspgate setup"), "{text:?}");
    assert_eq!(
        text.matches('\n').count(),
        text.matches("\r\n").count(),
        "{text:?}"
    );
    assert_eq!(toml_put(&text, CMD), text, "not idempotent");
    assert_eq!(block::take(&text, &codex()), (original.to_string(), vec![]));
    // One with no line end at its end.
    let bare = "model = \"o3\"\r\nx = 1";
    let text = toml_put(bare, CMD);
    assert!(
        text.starts_with("model = \"o3\"\r\nx = 1\r\n# >>> lspgate setup"),
        "{text:?}"
    );
    assert_eq!(block::take(&text, &codex()).0, bare);
    // A block written with `\n` in a file since turned to `\r\n` is still setup's own.
    let lf = toml_put("a = 1\n", CMD);
    let crlf = lf.replace('\n', "\r\n");
    assert_eq!(toml_put(&crlf, CMD), crlf);
    assert_eq!(block::take(&crlf, &codex()).0, "a = 1\r\n");
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
    // Through a launcher: this one, or another setup's (a pinned version, another launcher).
    assert!(runs_lspgate_hook(
        "npx -y lspgate hook pre-edit --format claude-code",
        "npx -y lspgate"
    ));
    assert!(runs_lspgate_hook("uvx lspgate@0.2.0 hook post-edit", CMD));
    assert!(runs_lspgate_hook("npx --yes lspgate hook post-edit", CMD));
    assert!(!runs_lspgate_hook(
        "npx -y lspgate-other hook post-edit",
        CMD
    ));
    assert!(!runs_lspgate_hook("uvx lspgate serve", CMD));
    assert!(!runs_lspgate_hook("npx", CMD));
}

#[test]
fn a_launchers_line_is_split_into_words_and_any_other_command_is_one() {
    assert_eq!(table::words("npx -y lspgate"), ["npx", "-y", "lspgate"]);
    assert_eq!(table::words("uvx lspgate@0.2.0"), ["uvx", "lspgate@0.2.0"]);
    assert_eq!(
        table::words("/opt/my gate/lspgate"),
        ["/opt/my gate/lspgate"]
    );
    assert_eq!(table::line("npx -y lspgate"), "npx -y lspgate");
    assert_eq!(
        table::line("/opt/my gate/lspgate"),
        "'/opt/my gate/lspgate'"
    );
    let opencode = table::entry(&Put::Mcp(&["mcp"], opencode::mcp), "uvx lspgate");
    let Entry::Member { value, .. } = opencode else {
        panic!("{opencode:?}")
    };
    assert_eq!(
        value.value()["command"],
        serde_json::json!(["uvx", "lspgate", "serve"])
    );
}

#[test]
fn the_launcher_is_told_or_seen_in_uvs_cache() {
    use std::path::Path;
    let launched = super::launched;
    assert_eq!(launched("npx", None).as_deref(), Some("npx -y lspgate"));
    assert_eq!(launched("uvx", None).as_deref(), Some("uvx lspgate"));
    let cached = Path::new("/home/u/.cache/uv/archive-v0/Xk3/bin/lspgate");
    assert_eq!(launched("", Some(cached)).as_deref(), Some("uvx lspgate"));
    let elsewhere = Path::new("/tmp/uvc/archive-v0/DGmvuTLmuCe2Gm91/bin/lspgate");
    assert_eq!(
        launched("", Some(elsewhere)).as_deref(),
        Some("uvx lspgate")
    );
    let installed = Path::new("/home/u/.local/share/uv/tools/lspgate/bin/lspgate");
    assert_eq!(launched("", Some(installed)), None);
    assert_eq!(launched("npm", Some(Path::new("/usr/bin/lspgate"))), None);
    assert_eq!(
        launched("", Some(Path::new("/home/u/.cargo/bin/lspgate"))),
        None
    );
}

#[test]
fn project_writes_follow_no_link_swapped_in_after_the_check() {
    use std::os::unix::fs::symlink;
    use std::path::Path;
    let dir = tempfile::tempdir().unwrap();
    let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("settings.json"), "{}\n").unwrap();
    let rel = Path::new(".claude/settings.json");
    let place = super::disk::Place::Project(&root, rel);
    // Checked while there was no link: nothing there yet.
    assert_eq!(place.read().unwrap(), None);
    // Then a link appears where the folder would be, and another where the file would be.
    symlink(&outside, root.join(".claude")).unwrap();
    assert!(place.write("{\"x\": 1}\n").is_err());
    assert!(place.delete(&root).is_err());
    std::fs::remove_file(root.join(".claude")).unwrap();
    std::fs::create_dir(root.join(".claude")).unwrap();
    symlink(outside.join("settings.json"), root.join(rel)).unwrap();
    // The link itself is replaced, its target untouched.
    place.write("{\"x\": 1}\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(outside.join("settings.json")).unwrap(),
        "{}\n"
    );
    assert!(
        !std::fs::symlink_metadata(root.join(rel))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(place.read().unwrap().as_deref(), Some("{\"x\": 1}\n"));
    assert_eq!(std::fs::read_dir(root.join(".claude")).unwrap().count(), 1);
}
