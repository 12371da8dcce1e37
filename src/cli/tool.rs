//! One subcommand per tool, generated from the tool table: each tool's input schema (the one
//! MCP clients get) gives the subcommand its arguments, so a parameter added to a tool's
//! parameter struct reaches MCP and the command line alike; what the schema cannot say (an
//! optional positional, trailing arguments, other spellings, help) is the tool declaration's
//! `CliShape` (its file in `ops::tools`, listed by `ops::tools::table`). Conventions:
//! - `FILE:LINE[:COL]` for tools that take `file` and `line`; `FILE` for those that take a file;
//!   the other required parameters in order (`workspace-symbols QUERY`, `execute-command SERVER
//!   COMMAND`), each also accepted as its `--flag`; `check` takes its `PATHS` and `run-task`
//!   the task's extra arguments after `--`.
//! - every other parameter is `--its-name` (`_` written `-`): integers and strings as values,
//!   booleans as `--flag` or `--flag=false`, lists by repeating the flag, objects and other
//!   lists as JSON (a `probe` also as `LINE[:COL]`).
//! - sugar kept from before: `--source-from PATH` (for `source`), `--old`/`--new`/`--lines`
//!   (for `edits`), `--to` (for `new_name`), `--task` (for `tasks`), `check --sarif`.
//! - a server command after `--` serves the call with that one server and no config.
//!
//! `ToolCommand` plugs into the clap derive as a flattened `Subcommand` implemented by hand, built
//! from any table of rows (`commands_of`), so a test can declare a tool of its own and find it
//! here.

use std::path::PathBuf;
use std::sync::OnceLock;

use clap::builder::PossibleValue;
use clap::{Arg, ArgAction, ArgMatches, Command as ClapCommand, FromArgMatches, Subcommand};
use serde_json::{Map, Value, json};

use crate::error::ToolError;
use crate::ops::tools::{self, ToolDef};

mod help;

/// A tool subcommand as parsed: the tool, its JSON arguments (as an MCP client would send
/// them, less what is read at run time), and the command line's extras.
#[derive(Debug, Clone)]
pub struct ToolCommand {
    pub tool: &'static str,
    pub args: Map<String, Value>,
    /// A server command after `--`: serve with it alone, no config.
    pub server: Vec<String>,
    /// `--source-from`: the file whose text is sent as `source`.
    pub source_from: Option<PathBuf>,
    /// `check --sarif`.
    pub sarif: bool,
}

/// The id of the trailing server command argument.
const SERVER_CMD: &str = "server command";
const AT: &str = "FILE:LINE[:COL]";

/// `text` as a `&'static str` (clap keeps names and help that way), made once per distinct
/// text for the process's life: the tool subcommands are built once.
fn intern(text: String) -> &'static str {
    static SEEN: OnceLock<std::sync::Mutex<Vec<&'static str>>> = OnceLock::new();
    let Ok(mut seen) = SEEN.get_or_init(Default::default).lock() else {
        return Box::leak(text.into_boxed_str());
    };
    if let Some(s) = seen.iter().find(|s| **s == text) {
        return s;
    }
    let s: &'static str = Box::leak(text.into_boxed_str());
    seen.push(s);
    s
}

/// `workspace_symbols` → `workspace-symbols`.
fn kebab(name: &'static str) -> &'static str {
    if name.contains('_') {
        intern(name.replace('_', "-"))
    } else {
        name
    }
}

/// The flag of parameter `name` of `def`.
fn flag(def: &ToolDef, name: &'static str) -> &'static str {
    def.cli
        .renamed
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or_else(|| kebab(name))
}

/// The properties of a tool's input schema, with the required ones in order first.
fn parameters(def: &'static ToolDef) -> (Vec<(&'static str, &'static Value)>, Vec<&'static str>) {
    let schema = def.input_schema();
    let required: Vec<&'static str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().map(|(k, v)| (k.as_str(), v)).collect())
        .unwrap_or_default();
    (props, required)
}

/// How a parameter is written on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Integer,
    Number,
    Bool,
    Text,
    /// A string, or an integer when it reads as one (`code_actions --apply 1`).
    IntegerOrText,
    Strings,
    Json,
}

fn shape(schema: &Value) -> Shape {
    match schema.get("type") {
        Some(Value::String(t)) => match t.as_str() {
            "integer" => Shape::Integer,
            "number" => Shape::Number,
            "boolean" => Shape::Bool,
            "string" => Shape::Text,
            "array"
                if schema.get("items").and_then(|i| i.get("type")) == Some(&json!("string")) =>
            {
                Shape::Strings
            }
            _ => Shape::Json,
        },
        Some(Value::Array(ts))
            if ts.contains(&json!("integer")) && ts.contains(&json!("string")) =>
        {
            Shape::IntegerOrText
        }
        _ if schema.get("enum").is_some() => Shape::Text,
        _ => Shape::Json,
    }
}

/// The clap argument for parameter `name` as a `--flag`.
fn flag_arg(def: &ToolDef, name: &'static str, schema: &'static Value) -> Arg {
    let mut arg = Arg::new(name)
        .long(flag(def, name))
        .value_name(intern(name.to_uppercase()));
    for (n, alias) in def.cli.flag_aliases {
        if *n == name {
            arg = arg.visible_alias(*alias);
        }
    }
    if let Some(d) = help::of(def, name, schema) {
        arg = arg.help(d);
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        let possible: Vec<PossibleValue> = values
            .iter()
            .filter_map(Value::as_str)
            .map(|v| {
                let p = PossibleValue::new(v);
                if v.contains('_') {
                    p.alias(intern(v.replace('_', "-")))
                } else {
                    p
                }
            })
            .collect();
        arg = arg.value_parser(possible);
    }
    match shape(schema) {
        Shape::Integer => arg.value_parser(clap::value_parser!(i64)),
        Shape::Number => arg.value_parser(clap::value_parser!(f64)),
        Shape::Bool => arg
            .value_parser(clap::value_parser!(bool))
            .value_name("BOOL")
            .hide_possible_values(true)
            .num_args(0..=1)
            .require_equals(true)
            .default_missing_value("true"),
        Shape::Strings => arg.action(ArgAction::Append),
        Shape::Json => arg.value_name("JSON"),
        Shape::Text | Shape::IntegerOrText => arg,
    }
}

/// The subcommand of one tool.
fn command(def: &'static ToolDef) -> ClapCommand {
    let (props, required) = parameters(def);
    let has = |n: &str| props.iter().any(|(p, _)| *p == n);
    let mut cmd = ClapCommand::new(kebab(def.name))
        .about(def.description)
        .next_help_heading("Tool options");
    if def.name.contains('_') {
        cmd = cmd.alias(def.name);
    }
    cmd = cmd.aliases(def.cli.aliases);
    let mut taken: Vec<&str> = Vec::new();
    cmd = location_args(cmd, def, &props, &required, &mut taken);
    cmd = required_args(cmd, def, &props, &required, &mut taken);
    cmd = other_args(cmd, def, &props, &taken);
    if has("source") {
        cmd = cmd.arg(
            Arg::new("source-from")
                .long("source-from")
                .value_name("PATH")
                .value_parser(clap::value_parser!(PathBuf))
                .conflicts_with("source")
                .help("Analyse this file's text instead of FILE's (FILE on disk is not touched)"),
        );
    }
    if has("edits") {
        cmd = edit_sugar_args(cmd);
    }
    if def.cli.sarif {
        cmd = cmd.arg(
            Arg::new("sarif")
                .long("sarif")
                .action(ArgAction::SetTrue)
                .help("SARIF 2.1.0 on stdout (for code scanning); every issue, whatever --limit"),
        );
    }
    if def.cli.trailing.is_none() {
        cmd = cmd.arg(
            Arg::new(SERVER_CMD)
                .value_name("CMD")
                .num_args(0..)
                .last(true)
                .help("Use exactly this server command instead of the presets"),
        );
    }
    cmd
}

/// A tool's parameters: the name and schema of each.
type Params = [(&'static str, &'static Value)];

/// `FILE:LINE[:COL]` for a tool that takes `file` and `line`, else `FILE` for one that takes a
/// file.
fn location_args(
    cmd: ClapCommand,
    def: &'static ToolDef,
    props: &Params,
    required: &[&'static str],
    taken: &mut Vec<&'static str>,
) -> ClapCommand {
    let has = |n: &str| props.iter().any(|(p, _)| *p == n);
    if has("file") && has("line") {
        taken.extend(["file", "line", "column"]);
        let name = if required.contains(&"line") || has("column") {
            AT
        } else {
            "FILE[:LINE]"
        };
        return cmd.arg(
            Arg::new(AT)
                .value_name(name)
                .required(true)
                .help("1-based line, 1-based column in characters (or --symbol)"),
        );
    }
    if !has("file") {
        return cmd;
    }
    taken.push("file");
    cmd.arg(
        Arg::new("file")
            .value_name("FILE")
            .required(required.contains(&"file"))
            .help(
                props
                    .iter()
                    .find(|(p, _)| *p == "file")
                    .and_then(|(_, s)| help::of(def, "file", s)),
            ),
    )
}

/// The other required parameters in order, each also accepted as its --flag.
fn required_args(
    mut cmd: ClapCommand,
    def: &'static ToolDef,
    props: &Params,
    required: &[&'static str],
    taken: &mut Vec<&'static str>,
) -> ClapCommand {
    let rest: Vec<&'static str> = required
        .iter()
        .filter(|n| !taken.contains(n))
        .copied()
        .collect();
    for name in rest {
        let Some((_, schema)) = props.iter().find(|(p, _)| *p == name) else {
            continue;
        };
        let flag_id = intern(format!("{name} (flag)"));
        cmd = cmd
            .arg(
                flag_arg(def, name, schema)
                    .id(flag_id)
                    .conflicts_with(name)
                    .hide_short_help(true),
            )
            .arg(
                positional(def, name, schema)
                    .value_name(intern(name.to_uppercase()))
                    .required_unless_present_any(if name == "edits" {
                        vec![flag_id, "old", "lines"]
                    } else {
                        vec![flag_id]
                    }),
            );
        taken.push(name);
    }
    cmd
}

/// Every other parameter: positional where the declaration says so, what follows `--` for
/// its trailing one, else `--its-name`.
fn other_args(
    mut cmd: ClapCommand,
    def: &'static ToolDef,
    props: &Params,
    taken: &[&'static str],
) -> ClapCommand {
    for (name, schema) in props {
        if taken.contains(name) {
            continue;
        }
        let help = help::of(def, name, schema);
        let arg = if def.cli.positional.contains(name) {
            Arg::new(*name)
                .value_name(intern(name.to_uppercase()))
                .action(ArgAction::Append)
                .help(help)
        } else if def.cli.trailing == Some(*name) {
            Arg::new(*name)
                .value_name(intern(name.to_uppercase()))
                .num_args(0..)
                .last(true)
                .help(help)
        } else {
            flag_arg(def, name, schema)
        };
        cmd = cmd.arg(arg);
    }
    cmd
}

/// `--old`/`--lines`/`--new`, the sugar kept for `edits`.
fn edit_sugar_args(cmd: ClapCommand) -> ClapCommand {
    cmd.arg(
        Arg::new("old")
            .long("old")
            .action(ArgAction::Append)
            .conflicts_with_all(["edits", "edits (flag)"])
            .help("Text to replace (it must occur exactly once); pairs with a --new"),
    )
    .arg(
        Arg::new("lines")
            .long("lines")
            .value_name("A-B")
            .action(ArgAction::Append)
            .conflicts_with_all(["edits", "edits (flag)"])
            .help("Lines to replace, 1-based and inclusive; pairs with a --new"),
    )
    .arg(
        Arg::new("new")
            .long("new")
            .action(ArgAction::Append)
            .conflicts_with_all(["edits", "edits (flag)"])
            .help("Replacement text, for each --old then each --lines"),
    )
}

/// A required parameter given without its flag.
fn positional(def: &ToolDef, name: &'static str, schema: &'static Value) -> Arg {
    let mut arg = flag_arg(def, name, schema);
    arg = Arg::new(name)
        .value_parser(arg.get_value_parser().clone())
        .action(if shape(schema) == Shape::Strings {
            ArgAction::Append
        } else {
            ArgAction::Set
        });
    if let Some(d) = help::of(def, name, schema) {
        arg = arg.help(d);
    }
    arg
}

/// Every tool's subcommand, built once.
fn commands() -> &'static [ClapCommand] {
    static COMMANDS: OnceLock<Vec<ClapCommand>> = OnceLock::new();
    COMMANDS.get_or_init(|| commands_of(tools::tools()))
}

/// The subcommands of the tools of `table`.
fn commands_of(table: &'static [ToolDef]) -> Vec<ClapCommand> {
    table.iter().map(command).collect()
}

/// The tool of `table` a subcommand name (or one of its aliases) names.
fn named(table: &'static [ToolDef], name: &str) -> Option<&'static ToolDef> {
    table
        .iter()
        .find(|t| kebab(t.name) == name || t.name == name || t.cli.aliases.contains(&name))
}

fn usage(msg: impl std::fmt::Display) -> clap::Error {
    clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{msg}\n"))
}

/// The JSON value of parameter `id` (a property name, or its `(flag)` twin) as given.
fn value_of(m: &ArgMatches, id: &str, schema: &Value) -> Result<Option<Value>, clap::Error> {
    if !matches!(
        m.value_source(id),
        Some(clap::parser::ValueSource::CommandLine)
    ) {
        return Ok(None);
    }
    Ok(Some(match shape(schema) {
        Shape::Integer => json!(m.get_one::<i64>(id).copied().unwrap_or_default()),
        Shape::Number => json!(m.get_one::<f64>(id).copied().unwrap_or_default()),
        Shape::Bool => json!(m.get_one::<bool>(id).copied().unwrap_or(true)),
        Shape::Strings => json!(
            m.get_many::<String>(id)
                .map(|v| v.cloned().collect::<Vec<_>>())
                .unwrap_or_default()
        ),
        Shape::Text => {
            let s = m.get_one::<String>(id).cloned().unwrap_or_default();
            // An enum value given as its `-` alias (`type-definition`) is sent as named.
            let snake = s.replace('-', "_");
            match schema.get("enum").and_then(Value::as_array) {
                Some(values) if values.contains(&json!(snake)) => json!(snake),
                _ => json!(s),
            }
        }
        Shape::IntegerOrText => {
            let s = m.get_one::<String>(id).cloned().unwrap_or_default();
            s.parse::<i64>().map(|n| json!(n)).unwrap_or(json!(s))
        }
        Shape::Json => {
            let s = m.get_one::<String>(id).cloned().unwrap_or_default();
            match serde_json::from_str::<Value>(&s) {
                Ok(v) => v,
                // A position object (`probe`) may be written LINE[:COL].
                Err(_) if schema.pointer("/properties/line").is_some() => {
                    let (l, c) = s.split_once(':').unwrap_or((&s, "1"));
                    json!({"line": l, "column": c})
                }
                Err(e) => return Err(usage(format!("--{id} is not JSON: {e}"))),
            }
        }
    }))
}

/// The JSON arguments of a parsed tool subcommand.
fn arguments(def: &'static ToolDef, m: &ArgMatches) -> Result<Map<String, Value>, clap::Error> {
    let (props, required) = parameters(def);
    let mut out = Map::new();
    if let Ok(Some(at)) = m.try_get_one::<String>(AT) {
        match split_at(at) {
            // A tool whose `line` is optional (`inlay_hints`) takes a bare FILE too.
            Err(_) if !required.contains(&"line") => {
                out.insert("file".into(), json!(at));
            }
            parts => {
                let (file, line, column) = parts.map_err(|e| usage(e.message))?;
                out.insert("file".into(), json!(file));
                out.insert("line".into(), json!(line));
                if let Some(c) = column {
                    if !props.iter().any(|(p, _)| *p == "column") {
                        return Err(usage(format!(
                            "`{at}`: {} takes FILE:LINE, no column",
                            kebab(def.name)
                        )));
                    }
                    out.insert("column".into(), json!(c));
                }
            }
        }
    }
    // Whether `id` is an argument of this subcommand (`file`, `line` and `column` are not
    // where `FILE:LINE[:COL]` stands for them).
    let defined = |id: &str| m.try_contains_id(id).is_ok();
    for (name, schema) in &props {
        if out.contains_key(*name) || !defined(name) {
            continue;
        }
        let twin = format!("{name} (flag)");
        let given = match value_of(m, name, schema)? {
            Some(v) => Some(v),
            None if defined(&twin) => value_of(m, &twin, schema)?,
            None => None,
        };
        if let Some(v) = given {
            out.insert(name.to_string(), v);
        }
    }
    if defined("old") {
        let edits = edit_sugar(m)?;
        if !edits.is_empty() {
            out.insert("edits".into(), Value::Array(edits));
        }
    }
    Ok(out)
}

/// `--old`/`--lines` with their `--new`s as `edits`.
fn edit_sugar(m: &ArgMatches) -> Result<Vec<Value>, clap::Error> {
    let list = |id: &str| -> Vec<String> {
        m.get_many::<String>(id)
            .map(|v| v.cloned().collect())
            .unwrap_or_default()
    };
    let (old, lines, new) = (list("old"), list("lines"), list("new"));
    if old.len() + lines.len() != new.len() {
        return Err(usage("give one --new for each --old or --lines"));
    }
    let mut news = new.into_iter();
    let mut edits = Vec::new();
    for o in old {
        edits.push(json!({"old_text": o, "new_text": news.next()}));
    }
    for l in lines {
        let (a, b) = l.split_once('-').unwrap_or((&l, &l));
        let n = |x: &str| {
            x.trim()
                .parse::<i64>()
                .map_err(|_| usage(format!("--lines `{l}` is not A-B")))
        };
        edits.push(json!({"start_line": n(a)?, "end_line": n(b)?, "new_text": news.next()}));
    }
    Ok(edits)
}

/// Splits `FILE:LINE[:COL]`.
pub(super) fn split_at(at: &str) -> Result<(String, u32, Option<u32>), ToolError> {
    let parts: Vec<&str> = at.rsplitn(3, ':').collect();
    let num = |s: &str| s.parse::<u32>().ok();
    match parts.as_slice() {
        [c, l, f] if num(c).is_some() && num(l).is_some() => {
            Ok((f.to_string(), num(l).unwrap_or(1), num(c)))
        }
        [l, f, ..] if num(l).is_some() => {
            let file = if parts.len() == 3 {
                format!("{}:{}", parts[2], parts[1])
            } else {
                f.to_string()
            };
            Ok((file, num(l).unwrap_or(1), None))
        }
        _ => Err(ToolError::invalid(format!(
            "`{at}` is not FILE:LINE or FILE:LINE:COL"
        ))),
    }
}

impl ToolCommand {
    /// The tool subcommand of `table` that `matches` chose, parsed.
    fn from_matches_in(
        table: &'static [ToolDef],
        matches: &ArgMatches,
    ) -> Result<Self, clap::Error> {
        let Some((name, m)) = matches.subcommand() else {
            return Err(clap::Error::new(clap::error::ErrorKind::MissingSubcommand));
        };
        let Some(def) = named(table, name) else {
            return Err(usage(format!("no tool `{name}`")));
        };
        let args = arguments(def, m)?;
        let mut server: Vec<String> = m
            .try_get_many::<String>(SERVER_CMD)
            .ok()
            .flatten()
            .map(|v| v.cloned().collect())
            .unwrap_or_default();
        if def.cli.trailing.is_some() {
            server.clear();
        }
        Ok(ToolCommand {
            tool: def.name,
            args,
            server,
            source_from: m
                .try_get_one::<PathBuf>("source-from")
                .ok()
                .flatten()
                .cloned(),
            sarif: m
                .try_get_one::<bool>("sarif")
                .ok()
                .flatten()
                .copied()
                .unwrap_or(false),
        })
    }
}

impl FromArgMatches for ToolCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        ToolCommand::from_matches_in(tools::tools(), matches)
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = ToolCommand::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for ToolCommand {
    fn augment_subcommands(cmd: ClapCommand) -> ClapCommand {
        cmd.subcommands(commands().iter().cloned())
    }

    fn augment_subcommands_for_update(cmd: ClapCommand) -> ClapCommand {
        ToolCommand::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        named(tools::tools(), name).is_some()
    }
}

impl ToolCommand {
    /// The arguments an MCP client would send: with `source` read from `--source-from`, and
    /// `terse`/`raw` from `--terse`/`--raw` (options of every tool subcommand, `cli/args.rs`).
    // Not a read inside a root for an answer: the file the user named with --source-from.
    #[allow(clippy::disallowed_methods)]
    pub fn json(&self, terse: bool, raw: bool) -> Result<Value, ToolError> {
        let mut args = self.args.clone();
        if let Some(p) = &self.source_from {
            let text = std::fs::read_to_string(p).map_err(|e| {
                ToolError::invalid(format!("cannot read --source-from {}: {e}", p.display()))
            })?;
            args.insert("source".into(), json!(text));
        }
        if terse {
            args.insert("terse".into(), json!(true));
        }
        if raw {
            args.insert("raw".into(), json!(true));
        }
        Ok(Value::Object(args))
    }
}

#[cfg(test)]
mod tests;
