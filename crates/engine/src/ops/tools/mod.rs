//! The tool table: every tool declared once, in its own file named after it (`hover.rs`,
//! `check.rs`, …) as a type implementing `Tool`, next to its own parameter and result types and
//! their text; `table.rs` lists them in order, and `entry` turns a declaration into its
//! `ToolDef` row: name, title, description, group, effect, schemas, required capability, heavy
//! and background, CLI shape, and the typed decoder and runner (`dispatch.rs`). MCP's tool
//! list, the dispatcher, admission and the CLI subcommands all read the rows, so adding a tool
//! or a parameter touches one place.

mod dispatch;
pub mod profile;
pub mod schema;
pub mod table;

// One file per tool; `ops::types` names their types too.
pub(super) mod activity;
pub(super) mod call_hierarchy;
pub(super) mod check;
pub(super) mod code_actions;
pub(super) mod completions;
pub(super) mod definition;
pub(super) mod diagnostics;
pub(super) mod document_symbols;
pub(super) mod edit;
pub(super) mod events;
pub(super) mod execute_command;
pub(super) mod explain_failure;
pub(super) mod format;
pub(super) mod hover;
pub(super) mod inlay_hints;
pub(super) mod references;
pub(super) mod rename;
#[cfg(test)]
mod renderings;
pub(super) mod restart_server;
pub(super) mod run_task;
pub(super) mod servers;
pub(super) mod shrink;
pub(super) mod signature_help;
pub(super) mod type_hierarchy;
pub(super) mod undo;
pub(super) mod what_if;
pub(super) mod workspace_symbols;

pub use super::render::ToolOutput;
pub use dispatch::{call, call_for_resource, call_with_progress, decode, offered, run_boxed};
/// Over a table of one's own (tests: one declaration reaches every front end).
pub use dispatch::{call_in, decode_in};
pub use table::TOOLS;

use std::future::Future;
use std::sync::OnceLock;

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::Engine;
use super::render::{Render, cap};
use crate::error::ToolError;
use crate::lsp::Cap;
pub use dispatch::Progress;
pub use profile::Profile;

/// One tool, declared once (in its own file; `table.rs` lists them): what agents see of it, how
/// it is admitted, what it takes and answers, and its command line. `entry` makes its table row.
pub trait Tool {
    const NAME: &'static str;
    /// For people (client UIs).
    const TITLE: &'static str;
    /// For the model, read once per session: what the tool answers and when to use it. The
    /// conventions every tool shares are in the server's instructions (`INSTRUCTIONS`).
    const DESCRIPTION: &'static str;
    const GROUP: Group;
    const EFFECT: Effect;
    /// Offered when a server may support any of these (empty: always).
    const CAPS: &'static [Cap] = &[];
    /// Takes `background: true` (runs as an activity, `ops::activity`); always heavy.
    const BACKGROUND: bool = false;
    /// In every tool profile, whatever it names (`servers`: where to look after `no_server`).
    const ALWAYS_OFFERED: bool = false;
    /// Its subcommand, beyond what the input schema says.
    const CLI: CliShape = CliShape::PLAIN;

    /// What a call takes: its schema is the tool's input schema, and the dispatcher decodes
    /// the arguments into it.
    type Params: DeserializeOwned + JsonSchema + Send;
    /// What a call answers: its schema is the output schema, `Render` its text.
    type Result: Serialize + JsonSchema + Render + Send + 'static;

    /// The operation.
    fn run(
        engine: &Engine,
        params: Self::Params,
        progress: Progress<'_>,
    ) -> impl Future<Output = Result<Self::Result, ToolError>> + Send;

    /// Whether a call with these (admitted) arguments counts against `max_inflight`.
    fn heavy(_args: &Value) -> bool {
        Self::BACKGROUND
    }

    /// The input schema of `Params`, before `terse`, `raw` and `background` are settled.
    fn input() -> Value {
        schema::input::<Self::Params>()
    }
}

/// The table row of tool `T`.
pub const fn entry<T: Tool>() -> ToolDef {
    ToolDef {
        name: T::NAME,
        title: T::TITLE,
        description: T::DESCRIPTION,
        group: T::GROUP,
        effect: T::EFFECT,
        caps: T::CAPS,
        background: T::BACKGROUND,
        always_offered: T::ALWAYS_OFFERED,
        cli: T::CLI,
        heavy: T::heavy,
        params: T::input,
        result: schema::output::<T::Result>,
        decode: dispatch::decode_as::<T>,
        run: dispatch::run_as::<T>,
        inputs: OnceLock::new(),
        outputs: OnceLock::new(),
    }
}

/// A tool's operation on JSON arguments (admitted), with its answer rendered.
type Run =
    for<'a> fn(&'a Engine, Value, Progress<'a>) -> BoxFuture<'a, Result<ToolOutput, ToolError>>;

/// One tool as agents see it: a `Tool` declaration's row (`entry`).
pub struct ToolDef {
    pub name: &'static str,
    /// For people (client UIs).
    pub title: &'static str,
    /// For the model, read once per session: what the tool answers and when to use it. The
    /// conventions every tool shares are in the server's instructions (`INSTRUCTIONS`).
    pub description: &'static str,
    pub group: Group,
    pub effect: Effect,
    /// Offered when a server may support any of these (empty: always).
    pub caps: &'static [Cap],
    /// Takes `background: true`.
    pub background: bool,
    /// In every tool profile.
    pub always_offered: bool,
    /// Its subcommand, beyond what the input schema says.
    pub cli: CliShape,
    heavy: fn(&Value) -> bool,
    params: fn() -> Value,
    result: fn() -> Value,
    decode: fn(Value) -> Result<(), ToolError>,
    run: Run,
    inputs: OnceLock<Value>,
    outputs: OnceLock<Value>,
}

/// A tool's subcommand beyond what its input schema gives (`cli/tool.rs`): positions,
/// trailing arguments, other spellings, help.
#[derive(Debug, Clone, Copy)]
pub struct CliShape {
    /// Other names of the subcommand, besides its snake_case name (`symbols`).
    pub aliases: &'static [&'static str],
    /// Optional parameters given without `--name` (required ones always are).
    pub positional: &'static [&'static str],
    /// The parameter that takes what follows `--` (instead of a server command).
    pub trailing: Option<&'static str>,
    /// `(parameter, flag)`: a parameter's flag where its own name is a global option's.
    pub renamed: &'static [(&'static str, &'static str)],
    /// `(parameter, alias)`: other spellings of a parameter's flag.
    pub flag_aliases: &'static [(&'static str, &'static str)],
    /// `(parameter, help)`: `--help` of parameters whose schema has no description (the
    /// conventions every tool shares are in `cli/tool/help.rs`).
    pub help: &'static [(&'static str, &'static str)],
    /// `--sarif`: the answer as SARIF 2.1.0 (`check`).
    pub sarif: bool,
}

impl CliShape {
    /// Nothing beyond the input schema.
    pub const PLAIN: CliShape = CliShape {
        aliases: &[],
        positional: &[],
        trailing: None,
        renamed: &[],
        flag_aliases: &[],
        help: &[],
        sarif: false,
    };
}

/// The groups a tool profile names (`--tools navigation,diagnostics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Navigation,
    Diagnostics,
    Edits,
    Gates,
    Admin,
}

impl Group {
    pub const ALL: [Group; 5] = [
        Group::Navigation,
        Group::Diagnostics,
        Group::Edits,
        Group::Gates,
        Group::Admin,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Group::Navigation => "navigation",
            Group::Diagnostics => "diagnostics",
            Group::Edits => "edits",
            Group::Gates => "gates",
            Group::Admin => "admin",
        }
    }

    pub fn by_name(name: &str) -> Option<Group> {
        Group::ALL.into_iter().find(|g| g.name() == name)
    }
}

/// What calling a tool can do to the workspace: the source of its MCP annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only: files on disk are never written (overlays stay in memory).
    Read,
    /// Can write files (it previews unless `apply`); `idempotent`: repeating the same call
    /// changes nothing more.
    Write { idempotent: bool },
    /// Runs commands lspgate cannot bound (configured tasks, a server's own commands).
    Run,
    /// Changes lspgate's own state only (restarts a server process); no file is written.
    Control,
}

/// MCP tool annotations (all hints): `readOnlyHint`, `destructiveHint`, `idempotentHint`
/// (the last two only mean something when not read-only), `openWorldHint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hints {
    pub read_only: bool,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    /// lspgate works on the workspace and its servers only: never an open world.
    pub open_world: bool,
}

impl Effect {
    pub fn hints(self) -> Hints {
        let (read_only, destructive, idempotent) = match self {
            Effect::Read => (true, None, None),
            // `idempotentHint` defaults to false: said only where it is true.
            Effect::Write { idempotent } => (false, Some(true), idempotent.then_some(true)),
            Effect::Run => (false, Some(true), None),
            Effect::Control => (false, Some(false), None),
        };
        Hints {
            read_only,
            destructive,
            idempotent,
            open_world: false,
        }
    }
}

/// Said once per session (MCP `instructions`) instead of in every tool and parameter.
pub const INSTRUCTIONS: &str = "\
lspgate answers from the workspace's real language servers and toolchains, always for the files' \
current content on disk. Prefer it to text search for code questions (`definition`, `references`, \
`workspace_symbols`), and ask `diagnostics` or `check` whether code is right after changing it. \
Conventions of every tool:
- `file`: a path relative to the workspace root (or absolute inside it, or a file:// URI). `line` \
and `column` are 1-based; columns count Unicode characters. Instead of `column`, `symbol` names \
a word on that line (`occurrence`: which match, default 1).
- `source` (reading tools): text to analyse instead of the file on disk; never written.
- Every tool also takes `terse: true` (minimal text, one `path:line:col message` a line) and \
`raw: true` (adds the exact LSP requests and commands sent).
- Long lists take `limit`; when cut they give `total` and `next_cursor`: pass it as `cursor` \
for the rest.
- `edit`, `rename` and `format` only preview a diff unless `apply: true` (`code_actions` applies \
the action `apply` names). Applied changes are checked against what you saw, atomic, undoable \
with `undo`, and report the diagnostics they introduced and resolved.
- `partial: true` means a server could not finish (still indexing, timed out); `reason` says why.
- Failures read `CODE: message` (invalid_params, symbol_not_found, no_server, not_supported, \
revision_conflict, ...); unknown parameters are refused.";

/// Every tool, in the order they are listed.
pub fn tools() -> &'static [ToolDef] {
    &TOOLS
}

/// The tool called `name`.
pub fn by_name(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

/// Parameters every tool takes, stated once in `INSTRUCTIONS` rather than in every schema.
pub const EVERY_TOOL: &[&str] = &["terse", "raw"];

impl ToolDef {
    /// The input schema as sent: the tool's own parameters. `terse` and `raw`, which every
    /// tool takes, are said once in the instructions (`EVERY_TOOL`). Generated once.
    pub fn input_schema(&self) -> &Value {
        self.inputs.get_or_init(|| {
            let mut schema = (self.params)();
            if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
                for p in EVERY_TOOL {
                    props.remove(*p);
                }
            }
            schema::background_input(self, &mut schema);
            schema
        })
    }

    /// The output schema as sent; every structured result validates against it.
    pub fn output_schema(&self) -> &Value {
        self.outputs.get_or_init(|| {
            let mut schema = (self.result)();
            schema::background_output(self, &mut schema);
            schema
        })
    }

    /// Whether a call with these (admitted) arguments counts against `max_inflight`.
    pub fn is_heavy(&self, args: &Value) -> bool {
        (self.heavy)(args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn background_is_taken_from_tools_that_take_it() {
        let def = |n| by_name(n).unwrap();
        let mut args = json!({"name": "t", "background": true});
        assert!(dispatch::take_background(def("run_task"), &mut args));
        assert_eq!(args, json!({"name": "t"}));
        let mut args = json!({"file": "a", "background": true});
        assert!(!dispatch::take_background(def("hover"), &mut args));
    }

    #[test]
    fn decode_knows_every_tool_as_dispatch_does() {
        for def in tools() {
            if let Err(e) = decode(&Profile::all(), def.name, json!({})) {
                assert!(!e.message.contains("unknown tool"), "{}: {e:?}", def.name);
            }
        }
        assert!(
            decode(
                &Profile::all(),
                "hover",
                json!({"file": "a.py", "line": "3", "column": 1})
            )
            .is_ok()
        );
        let e = decode(
            &Profile::all(),
            "hover",
            json!({"file": "a.py", "line": 1, "colum": 1}),
        )
        .unwrap_err();
        assert!(e.message.contains("`colum`"), "{e:?}");
    }

    /// Found by fuzzing (fuzz/tool_params): `servers` takes no parameters of its own, and any
    /// parameter was admitted for it.
    #[test]
    fn a_tool_without_parameters_refuses_unknown_ones() {
        let e = decode(&Profile::all(), "servers", json!({"": "10"})).unwrap_err();
        assert!(e.message.contains("unknown parameter"), "{e:?}");
        assert!(
            decode(
                &Profile::all(),
                "servers",
                json!({"terse": true, "raw": false})
            )
            .is_ok()
        );
        assert!(decode(&Profile::all(), "servers", Value::Null).is_ok());
    }

    /// What used to be said by name in admission (`check`, `shrink`, `run_task`; `rename`
    /// with `apply`; `diagnostics` of the whole workspace) is said by each declaration.
    #[test]
    fn heavy_and_background_come_from_the_declarations() {
        let def = |n| by_name(n).unwrap();
        let background: Vec<&str> = tools()
            .iter()
            .filter(|t| t.background)
            .map(|t| t.name)
            .collect();
        assert_eq!(background, ["check", "shrink", "run_task"]);
        for n in background {
            assert!(def(n).is_heavy(&json!({})), "{n}");
        }
        assert!(def("rename").is_heavy(&json!({"apply": true})));
        assert!(!def("rename").is_heavy(&json!({"apply": false})));
        assert!(def("diagnostics").is_heavy(&json!({})));
        assert!(def("diagnostics").is_heavy(&json!({"file": null})));
        assert!(!def("diagnostics").is_heavy(&json!({"file": "a.py"})));
        assert!(!def("hover").is_heavy(&json!({})));
        let always: Vec<&str> = tools()
            .iter()
            .filter(|t| t.always_offered)
            .map(|t| t.name)
            .collect();
        assert_eq!(always, ["servers"]);
    }
}
