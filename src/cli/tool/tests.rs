//! Unit tests of the CLI's tool commands: parsing, rendering and calls of a tool table.

use super::*;
use crate::ops::Engine;
use crate::ops::render::Render;
use crate::ops::tools::{CliShape, Effect, Group, Profile, Progress, Tool, entry};

/// A tool declared here only, to show that its one declaration reaches every front end.
struct Echo;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoParams {
    word: String,
    #[serde(default)]
    times: Option<u32>,
    #[serde(default)]
    terse: Option<bool>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Echoed {
    said: String,
}

impl Render for Echoed {
    fn render(&self, terse: bool) -> String {
        if terse {
            self.said.clone()
        } else {
            format!("said: {}", self.said)
        }
    }
}

impl Tool for Echo {
    const NAME: &'static str = "echo_back";
    const TITLE: &'static str = "Echo";
    const DESCRIPTION: &'static str = "Says a word again.";
    const GROUP: Group = Group::Admin;
    const EFFECT: Effect = Effect::Read;
    const CLI: CliShape = CliShape {
        aliases: &["say"],
        flag_aliases: &[("times", "repeat")],
        help: &[("word", "The word to say"), ("times", "How often")],
        ..CliShape::PLAIN
    };
    type Params = EchoParams;
    type Result = Echoed;
    async fn run(_: &Engine, p: EchoParams, _: Progress<'_>) -> Result<Echoed, ToolError> {
        let _ = p.terse;
        let times = p.times.unwrap_or(1) as usize;
        Ok(Echoed {
            said: vec![p.word; times].join(" "),
        })
    }
}

/// A table of a real tool and the one above.
static TABLE: [ToolDef; 2] = [entry::<tools::table::Hover>(), entry::<Echo>()];

#[tokio::test]
async fn one_declaration_reaches_the_tool_list_the_dispatcher_and_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let engine = crate::ops::activity::dropped::engine(dir.path());
    assert!(tools::by_name("echo_back").is_none());

    // MCP's tool list: its name, title, description and schemas, from its types.
    let listed: Vec<Value> = crate::mcp::tool_list_of(&engine, &TABLE)
        .into_iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    let echo = listed.iter().find(|t| t["name"] == "echo_back").unwrap();
    assert_eq!(echo["title"], "Echo");
    assert_eq!(echo["description"], "Says a word again.");
    assert_eq!(
        echo["inputSchema"],
        json!({"type": "object", "required": ["word"],
               "properties": {"word": {"type": "string"}, "times": {"type": "integer"}}})
    );
    assert_eq!(echo["outputSchema"]["required"], json!(["said"]));
    assert_eq!(echo["annotations"]["readOnlyHint"], true);

    // The dispatcher: admission by its schema, decoding into its parameters, its operation
    // and its rendering.
    let call = |args: Value| {
        let engine = engine.clone();
        async move { tools::call_in(&engine, &TABLE, "echo_back", args, &|_, _| {}).await }
    };
    let out = call(json!({"word": "hi", "times": 2})).await.unwrap();
    assert_eq!(out.structured, json!({"said": "hi hi"}));
    assert_eq!(out.text, "said: hi hi");
    assert_eq!(
        call(json!({"word": "hi", "terse": true}))
            .await
            .unwrap()
            .text,
        "hi"
    );
    let e = call(json!({"word": "hi", "tmes": 2})).await.err().unwrap();
    assert!(e.message.contains("`tmes`"), "{e:?}");
    let e = tools::decode_in(&TABLE, &Profile::all(), "echo_back", json!({"word": 3}));
    assert!(e.unwrap_err().message.starts_with("bad arguments"));

    // The command line: its subcommand, aliases, positional and help.
    let cli = ClapCommand::new("lspgate").subcommands(commands_of(&TABLE));
    let sub = cli.find_subcommand("echo-back").unwrap();
    let word = sub.get_arguments().find(|a| a.get_id() == "word").unwrap();
    assert_eq!(word.get_help().unwrap().to_string(), "The word to say");
    for argv in [
        ["lspgate", "echo-back", "hi", "--times", "2"],
        ["lspgate", "say", "--word", "hi", "--repeat=2"],
    ] {
        let m = cli.clone().try_get_matches_from(argv).unwrap();
        let c = ToolCommand::from_matches_in(&TABLE, &m).unwrap();
        assert_eq!(c.tool, "echo_back");
        assert_eq!(
            c.json(false, false).unwrap(),
            json!({"word": "hi", "times": 2})
        );
    }
}

/// Every tool of the table is in MCP's list as declared, reaches its own decoder through
/// the dispatcher, and has its subcommand.
#[tokio::test]
async fn every_declared_tool_is_reachable_from_every_front_end() {
    let dir = tempfile::tempdir().unwrap();
    let engine = crate::ops::activity::dropped::engine(dir.path());
    for def in tools::tools() {
        let listed = serde_json::to_value(crate::mcp::tool(def)).unwrap();
        assert_eq!(listed["name"], def.name);
        assert_eq!(&listed["inputSchema"], def.input_schema());
        // A bad `terse` (a parameter of every tool) is refused by the tool's own decoder.
        let e = tools::call(&engine, def.name, json!({"terse": "yes"}))
            .await
            .err()
            .unwrap();
        assert!(
            e.message.starts_with("bad arguments"),
            "{}: {e:?}",
            def.name
        );
        assert!(ToolCommand::has_subcommand(kebab(def.name)), "{}", def.name);
        assert!(
            commands().iter().any(|c| c.get_name() == kebab(def.name)),
            "{}",
            def.name
        );
    }
}

/// Parses `lspgate ARGS` and returns the tool and its JSON arguments.
fn parse(args: &[&str]) -> Result<(String, Value, Vec<String>), String> {
    use clap::{CommandFactory, FromArgMatches as _};
    let matches = crate::cli::Cli::command()
        .try_get_matches_from(std::iter::once("lspgate").chain(args.iter().copied()))
        .map_err(|e| e.to_string())?;
    let cli = crate::cli::Cli::from_arg_matches(&matches).map_err(|e| e.to_string())?;
    match cli.command {
        crate::cli::Command::Tool(t) => {
            let v = t.json(cli.terse, false).map_err(|e| e.to_string())?;
            Ok((t.tool.to_string(), v, t.server))
        }
        other => Err(format!("not a tool: {other:?}")),
    }
}

#[test]
fn every_tool_has_a_subcommand_with_its_parameters() {
    for def in tools::tools() {
        let cmd = command(def);
        let (props, _) = parameters(def);
        for (name, _) in props {
            let known = cmd.get_arguments().any(|a| {
                a.get_id() == name
                    || (matches!(name, "file" | "line" | "column") && a.get_id() == AT)
            });
            assert!(known, "{} lacks {name}", def.name);
        }
    }
}

/// `--help` says what every option of every subcommand is.
#[test]
fn every_option_says_what_it_is() {
    use clap::CommandFactory;
    let cli = crate::cli::Cli::command();
    for sub in cli.get_subcommands() {
        for a in sub.get_arguments().filter(|a| !a.is_hide_set()) {
            assert!(
                a.get_help().is_some(),
                "`lspgate {} --help` says nothing of {}",
                sub.get_name(),
                a.get_id()
            );
        }
    }
}

#[test]
fn positions_positionals_and_flags() {
    assert_eq!(
        parse(&["hover", "app.py:7:38"]).unwrap().1,
        json!({"file": "app.py", "line": 7, "column": 38})
    );
    let (tool, args, server) = parse(&[
        "references",
        "shop/pricing.py:4",
        "--symbol",
        "compute",
        "--terse",
        "--include-declaration=false",
        "--limit",
        "5",
        "--",
        "srv",
        "--stdio",
    ])
    .unwrap();
    assert_eq!(tool, "references");
    assert_eq!(
        args,
        json!({"file": "shop/pricing.py", "line": 4, "symbol": "compute", "terse": true,
               "include_declaration": false, "limit": 5})
    );
    assert_eq!(server, ["srv", "--stdio"]);
    assert_eq!(
        parse(&[
            "definition",
            "a.py:3",
            "--symbol",
            "f",
            "--kind",
            "type-definition"
        ])
        .unwrap()
        .1["kind"],
        "type_definition"
    );
    assert_eq!(
        parse(&["workspace-symbols", "Cart", "--kind", "class"])
            .unwrap()
            .1,
        json!({"query": "Cart", "kind": "class"})
    );
    assert_eq!(
        parse(&[
            "execute-command",
            "builtin/pyright",
            "pyright.organizeimports",
            "--arguments",
            "[\"file:///a.py\"]"
        ])
        .unwrap()
        .1,
        json!({"server": "builtin/pyright", "command": "pyright.organizeimports", "arguments": ["file:///a.py"]})
    );
    assert_eq!(
        parse(&["restart-server", "builtin/pyright"]).unwrap().1,
        json!({"name": "builtin/pyright"})
    );
    // A required parameter as its flag, an alias, and the old spellings.
    assert_eq!(
        parse(&["rename", "a.py:4", "--symbol", "f", "--to", "g", "--apply"])
            .unwrap()
            .1,
        json!({"file": "a.py", "line": 4, "symbol": "f", "new_name": "g", "apply": true})
    );
    assert_eq!(
        parse(&["call-hierarchy", "a.py:4:5", "--direction", "outgoing"])
            .unwrap()
            .1["direction"],
        "outgoing"
    );
    assert_eq!(
        parse(&[
            "code-actions",
            "main.c:2",
            "--end-line",
            "3",
            "--apply",
            "1"
        ])
        .unwrap()
        .1,
        json!({"file": "main.c", "line": 2, "end_line": 3, "apply": 1})
    );
    assert!(parse(&["code-actions", "main.c:2:4"]).is_err());
    assert_eq!(
        parse(&[
            "edit", "a.py", "--old", "x", "--new", "y", "--lines", "3-4", "--new", "z"
        ])
        .unwrap()
        .1["edits"],
        json!([{"old_text": "x", "new_text": "y"}, {"start_line": 3, "end_line": 4, "new_text": "z"}])
    );
    assert_eq!(
        parse(&["what-if", "a.py", "--edits", "[]", "--probe", "3:5"])
            .unwrap()
            .1["probe"],
        json!({"line": "3", "column": "5"})
    );
    assert_eq!(
        parse(&[
            "check",
            "src",
            "lib",
            "--task",
            "build",
            "--severity",
            "warning",
            "--limit",
            "10"
        ])
        .unwrap()
        .1,
        json!({"paths": ["src", "lib"], "tasks": ["build"], "severity": "warning", "limit": 10})
    );
    assert_eq!(
        parse(&["run-task", "test", "--task-timeout", "5", "--", "-k", "x"])
            .unwrap()
            .1,
        json!({"name": "test", "timeout": 5.0, "args": ["-k", "x"]})
    );
    assert_eq!(
        parse(&["document-symbols", "q.py", "--depth", "2", "--locals"])
            .unwrap()
            .1,
        json!({"file": "q.py", "depth": 2, "locals": true})
    );
    assert_eq!(parse(&["undo", "3"]).unwrap().1, json!({"edit_id": 3}));
    assert_eq!(parse(&["servers"]).unwrap().1, json!({}));
    assert!(parse(&["hover", "app.py"]).is_err());
    assert!(parse(&["undo", "three"]).is_err());
    assert!(parse(&["workspace-symbols"]).is_err());
}
