//! What `setup` writes for each harness, as data: its files (project and user paths, format),
//! the entries each receives (MCP server, hook groups, LSP client), and the notes to print.
//! The formats are the harnesses' documented ones (Claude Code, Codex, Gemini CLI, Cursor,
//! OpenCode, GitHub Copilot CLI).

use std::path::Path;

use serde_json::Value;

use super::Harness;

/// How a file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Json,
    /// JSON with comments and trailing commas.
    Jsonc,
    Toml,
}

/// A value to write, its members in the order they are written.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum J {
    Str(String),
    Int(i64),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
    Bool(bool),
}

impl J {
    pub(super) fn value(&self) -> Value {
        match self {
            J::Str(s) => Value::from(s.as_str()),
            J::Int(n) => Value::from(*n),
            J::Bool(b) => Value::from(*b),
            J::Arr(a) => Value::Array(a.iter().map(J::value).collect()),
            J::Obj(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), v.value())).collect()),
        }
    }

    pub(super) fn is_scalar(&self) -> bool {
        matches!(self, J::Str(_) | J::Int(_) | J::Bool(_))
    }
}

fn s(text: &str) -> J {
    J::Str(text.to_string())
}

fn obj(members: Vec<(&str, J)>) -> J {
    J::Obj(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

fn strs(items: &[&str]) -> J {
    J::Arr(items.iter().map(|i| s(i)).collect())
}

/// One thing `setup` puts in a file.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Entry {
    /// The member `key` of the object at `path` (the MCP server, the LSP client).
    Member {
        path: Vec<String>,
        key: String,
        value: J,
    },
    /// One element of the array at `path`: a hook group, known as lspgate's by its commands.
    Hook { path: Vec<String>, value: J },
}

impl Entry {
    pub(super) fn path(&self) -> &[String] {
        match self {
            Entry::Member { path, .. } | Entry::Hook { path, .. } => path,
        }
    }

    /// The entry as a note names it, one of the user's.
    pub(super) fn named(&self) -> String {
        match self {
            Entry::Member { path, key, .. } => {
                format!("your lspgate entry `{}.{key}`", path.join("."))
            }
            Entry::Hook { path, .. } => {
                format!("your lspgate hook group in `{}`", path.join("."))
            }
        }
    }
}

/// The MCP server entry's shape.
#[derive(Debug, Clone, Copy)]
pub(super) enum Mcp {
    /// `{"command": CMD, "args": ["serve"]}` (Claude Code, Codex, Gemini CLI, Cursor).
    Plain,
    OpenCode,
    Copilot,
}

/// The hook group's shape.
#[derive(Debug, Clone, Copy)]
pub(super) enum Style {
    Claude,
    Codex,
    Gemini,
    Cursor,
}

/// The LSP client entry's shape.
#[derive(Debug, Clone, Copy)]
pub(super) enum Lsp {
    OpenCode,
    Copilot,
}

/// What a file receives: each entry sits in the object (or, for hooks, array) at `at`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Put {
    Mcp(&'static [&'static str], Mcp),
    /// The hook for `pre-edit`, `post-edit`, `start` (a session's) or `stop` (a turn's end).
    Hook(&'static [&'static str], &'static str, Style),
    Lsp(&'static [&'static str], Lsp),
}

/// One file of a harness.
pub(super) struct File {
    /// Under the project root.
    pub project: &'static str,
    /// Under the home folder.
    pub user: &'static str,
    /// A name to use instead, in the same folder, when a file of that name exists.
    pub instead: Option<&'static str>,
    pub format: Format,
    /// What a file made from nothing starts as; a file left equal to it by `--remove` goes.
    pub seed: &'static str,
    pub puts: &'static [Put],
}

pub(super) struct Row {
    pub harness: Harness,
    pub files: &'static [File],
    pub notes: &'static [&'static str],
}

const EMPTY: &str = "{}\n";

const fn json(project: &'static str, user: &'static str, puts: &'static [Put]) -> File {
    File {
        project,
        user,
        instead: None,
        format: Format::Json,
        seed: EMPTY,
        puts,
    }
}

const MCP: &[&str] = &["mcpServers"];

/// The table.
pub(super) const TABLE: &[Row] = &[
    Row {
        harness: Harness::ClaudeCode,
        files: &[
            json(".mcp.json", ".claude.json", &[Put::Mcp(MCP, Mcp::Plain)]),
            json(
                ".claude/settings.json",
                ".claude/settings.json",
                &[
                    Put::Hook(&["hooks", "PreToolUse"], "pre-edit", Style::Claude),
                    Put::Hook(&["hooks", "PostToolUse"], "post-edit", Style::Claude),
                    Put::Hook(&["hooks", "SessionStart"], "start", Style::Claude),
                    Put::Hook(&["hooks", "Stop"], "stop", Style::Claude),
                    Put::Hook(&["hooks", "SubagentStop"], "stop", Style::Claude),
                ],
            ),
        ],
        notes: &[
            "Claude Code reads LSP servers only from plugins (no project or user LSP configuration): no LSP entry written.",
        ],
    },
    Row {
        harness: Harness::Codex,
        files: &[File {
            project: ".codex/config.toml",
            user: ".codex/config.toml",
            instead: None,
            format: Format::Toml,
            seed: "",
            puts: &[
                Put::Mcp(&["mcp_servers"], Mcp::Plain),
                Put::Hook(&["hooks", "PreToolUse"], "pre-edit", Style::Codex),
                Put::Hook(&["hooks", "PostToolUse"], "post-edit", Style::Codex),
                Put::Hook(&["hooks", "SessionStart"], "start", Style::Codex),
                Put::Hook(&["hooks", "Stop"], "stop", Style::Codex),
            ],
        }],
        notes: &[
            "Codex reads a project's .codex/ configuration only when the project is trusted, and skips new or changed hooks until you review and trust them in /hooks.",
        ],
    },
    Row {
        harness: Harness::Gemini,
        files: &[File {
            format: Format::Jsonc,
            ..json(
                ".gemini/settings.json",
                ".gemini/settings.json",
                &[
                    Put::Mcp(MCP, Mcp::Plain),
                    Put::Hook(&["hooks", "BeforeTool"], "pre-edit", Style::Gemini),
                    Put::Hook(&["hooks", "AfterTool"], "post-edit", Style::Gemini),
                    Put::Hook(&["hooks", "SessionStart"], "start", Style::Gemini),
                    Put::Hook(&["hooks", "AfterAgent"], "stop", Style::Gemini),
                ],
            )
        }],
        notes: &[
            "Gemini CLI ignores a project's .gemini/settings.json in an untrusted folder, and asks again when a project hook's command changes.",
        ],
    },
    Row {
        harness: Harness::Cursor,
        files: &[
            json(
                ".cursor/mcp.json",
                ".cursor/mcp.json",
                &[Put::Mcp(MCP, Mcp::Plain)],
            ),
            File {
                seed: "{\n  \"version\": 1\n}\n",
                ..json(
                    ".cursor/hooks.json",
                    ".cursor/hooks.json",
                    &[
                        Put::Hook(&["hooks", "postToolUse"], "post-edit", Style::Cursor),
                        Put::Hook(&["hooks", "stop"], "stop", Style::Cursor),
                    ],
                )
            },
        ],
        notes: &[
            "Cursor gets the post-edit hook and the turn-end gate: no pre-edit hook, and no sessionStart hook (some Cursor versions reject it).",
        ],
    },
    Row {
        harness: Harness::Opencode,
        files: &[File {
            project: "opencode.json",
            user: ".config/opencode/opencode.json",
            instead: Some("opencode.jsonc"),
            format: Format::Jsonc,
            seed: EMPTY,
            puts: &[
                Put::Mcp(&["mcp"], Mcp::OpenCode),
                Put::Lsp(&["lsp"], Lsp::OpenCode),
            ],
        }],
        notes: &["OpenCode has hooks only as JavaScript plugins: no hook written."],
    },
    Row {
        harness: Harness::Copilot,
        files: &[
            json(
                ".github/mcp.json",
                ".copilot/mcp-config.json",
                &[Put::Mcp(MCP, Mcp::Copilot)],
            ),
            json(
                ".github/lsp.json",
                ".copilot/lsp-config.json",
                &[Put::Lsp(&["lspServers"], Lsp::Copilot)],
            ),
        ],
        notes: &[
            "No hooks written for Copilot CLI: the arguments of its edit tools are not documented.",
        ],
    },
];

/// The row of `harness`.
pub(super) fn row(harness: Harness) -> Option<&'static Row> {
    TABLE.iter().find(|r| r.harness == harness)
}

/// The file extensions the LSP entry claims, with their language ids.
const LANGUAGES: &[(&str, &str)] = &[
    (".py", "python"),
    (".pyi", "python"),
    (".ts", "typescript"),
    (".tsx", "typescriptreact"),
    (".js", "javascript"),
    (".jsx", "javascriptreact"),
    (".mjs", "javascript"),
    (".cjs", "javascript"),
    (".c", "c"),
    (".h", "c"),
    (".cc", "cpp"),
    (".cpp", "cpp"),
    (".hpp", "cpp"),
];

/// The launchers `cmd` may be a line of (`npx -y lspgate`, `uvx lspgate`): any other `cmd` is
/// one word, a path or a name, spaces and all.
const LAUNCHERS: &[&str] = &["npx", "uvx", "bunx", "pnpx"];

/// `cmd` as the words of a command: a launcher's line split at its spaces, anything else one
/// word.
pub(super) fn words(cmd: &str) -> Vec<&str> {
    match cmd.split_once(' ') {
        Some((first, _)) if LAUNCHERS.contains(&first) => cmd.split_whitespace().collect(),
        _ => vec![cmd],
    }
}

/// `cmd` as a shell command's first words (a hook's command line).
pub(super) fn line(cmd: &str) -> String {
    words(cmd)
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The entry `put` stands for, running lspgate as `cmd`.
pub(super) fn entry(put: &Put, cmd: &str) -> Entry {
    let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let words = words(cmd);
    let program = words.first().copied().unwrap_or(cmd);
    let all = |sub: &'static str| {
        let mut all = words.clone();
        all.push(sub);
        all
    };
    let args = |sub: &'static str| strs(&all(sub)[1..]);
    match *put {
        Put::Mcp(at, shape) => Entry::Member {
            path: path(at),
            key: "lspgate".into(),
            value: match shape {
                Mcp::Plain => obj(vec![("command", s(program)), ("args", args("serve"))]),
                Mcp::OpenCode => obj(vec![
                    ("type", s("local")),
                    ("command", strs(&all("serve"))),
                    ("enabled", J::Bool(true)),
                ]),
                Mcp::Copilot => obj(vec![
                    ("type", s("local")),
                    ("command", s(program)),
                    ("args", args("serve")),
                    ("tools", strs(&["*"])),
                ]),
            },
        },
        Put::Hook(at, which, style) => Entry::Hook {
            path: path(at),
            value: hook(cmd, which, style),
        },
        Put::Lsp(at, shape) => Entry::Member {
            path: path(at),
            key: "lspgate".into(),
            value: match shape {
                Lsp::OpenCode => {
                    let extensions: Vec<&str> = LANGUAGES.iter().map(|(e, _)| *e).collect();
                    obj(vec![
                        ("command", strs(&all("lsp"))),
                        ("extensions", strs(&extensions)),
                    ])
                }
                Lsp::Copilot => {
                    let map = LANGUAGES
                        .iter()
                        .filter(|(e, _)| *e != ".mjs" && *e != ".cjs")
                        .map(|(e, l)| (*e, s(l)))
                        .collect();
                    obj(vec![
                        ("command", s(program)),
                        ("args", args("lsp")),
                        ("fileExtensions", obj(map)),
                    ])
                }
            },
        },
    }
}

/// The hook group running `lspgate hook WHICH` for `style`'s harness.
fn hook(cmd: &str, which: &str, style: Style) -> J {
    let format = match style {
        Style::Claude => "claude-code",
        Style::Codex => "codex",
        Style::Gemini => "gemini",
        Style::Cursor => "cursor",
    };
    let command = s(&format!("{} hook {which} --format {format}", line(cmd)));
    let handler = |name: Option<J>, timeout: i64| {
        let mut members: Vec<(&str, J)> = name.map(|n| ("name", n)).into_iter().collect();
        members.extend([
            ("type", s("command")),
            ("command", command.clone()),
            ("timeout", J::Int(timeout)),
        ]);
        J::Arr(vec![obj(members)])
    };
    // The gate's harness timeout leaves it its own bound and a margin; a session's start
    // answers at once.
    let secs = match which {
        "stop" => super::super::hook::GATE_BUDGET as i64 + 30,
        _ => 10,
    };
    let edits = matches!(which, "pre-edit" | "post-edit");
    // Tool events are matched by tool; a session's start and a turn's end are not.
    let matched = |matcher: &str, rest: Vec<(&'static str, J)>| {
        let mut members = Vec::new();
        if edits {
            members.push(("matcher", s(matcher)));
        }
        members.extend(rest);
        obj(members)
    };
    match style {
        Style::Claude => matched(
            "Write|Edit|MultiEdit|Bash",
            vec![("hooks", handler(None, secs))],
        ),
        Style::Codex => matched("^(apply_patch|Bash)$", vec![("hooks", handler(None, secs))]),
        // Gemini's timeouts are in milliseconds.
        Style::Gemini => matched(
            "write_file|replace|run_shell_command",
            vec![(
                "hooks",
                handler(Some(s(&format!("lspgate-{which}"))), secs * 1000),
            )],
        ),
        Style::Cursor => {
            let mut members = vec![("command", command)];
            if edits {
                members.push(("matcher", s("Write|Shell|Delete")));
            }
            members.push(("timeout", J::Int(secs)));
            obj(members)
        }
    }
}

/// `cmd` as one shell word.
pub(super) fn shell_quote(cmd: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./+-:@%=,".contains(c);
    if !cmd.is_empty() && cmd.chars().all(plain) {
        cmd.to_string()
    } else {
        format!("'{}'", cmd.replace('\'', r"'\''"))
    }
}

/// Whether a hook's command runs `lspgate hook …`: this `cmd`, or any executable named
/// lspgate (an older setup's path).
pub(super) fn runs_lspgate_hook(command: &str, cmd: &str) -> bool {
    if command.starts_with(&format!("{} hook ", line(cmd)))
        || command.starts_with(&format!("{cmd} hook "))
    {
        return true;
    }
    // The first word, quoted or not, and what follows it; a launcher's line (`npx -y lspgate`,
    // `uvx lspgate@0.2.0`) stands for lspgate as a whole.
    let command = command.trim_start();
    let launched = launched(command);
    let command = launched.as_deref().unwrap_or(command);
    let (first, rest) = match command.chars().next() {
        Some(q @ ('\'' | '"')) => match command[1..].find(q) {
            Some(n) => (&command[1..=n], &command[n + 2..]),
            None => return false,
        },
        _ => command
            .split_once(char::is_whitespace)
            .unwrap_or((command, "")),
    };
    Path::new(first).file_name().is_some_and(|n| n == "lspgate")
        && rest.split_whitespace().next() == Some("hook")
}

/// `command` read as lspgate's own when it runs lspgate through a launcher (`npx -y lspgate
/// hook …`, `uvx lspgate@0.2.0 hook …`): `lspgate hook …`.
fn launched(command: &str) -> Option<String> {
    let mut parts = command.split_whitespace();
    if !LAUNCHERS.contains(&parts.next()?) {
        return None;
    }
    let word = parts.find(|w| !w.starts_with('-'))?;
    let name = word.split_once('@').map_or(word, |(n, _)| n);
    let rest: Vec<&str> = parts.collect();
    (name == "lspgate").then(|| format!("lspgate {}", rest.join(" ")))
}

/// How much of a hook group is lspgate's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ours {
    No,
    /// Some of its commands, alongside others: counts as set up, never touched.
    Partly,
    /// All its commands: lspgate's own group.
    All,
}

/// Whether `group` (a hook group with `hooks: [{command}]`, or a flat `{command}`) is
/// lspgate's.
pub(super) fn ours(group: &Value, cmd: &str) -> Ours {
    let commands: Vec<&str> = match group.get("hooks").and_then(Value::as_array) {
        Some(handlers) => handlers
            .iter()
            .map(|h| h.get("command").and_then(Value::as_str).unwrap_or(""))
            .collect(),
        None => group
            .get("command")
            .and_then(Value::as_str)
            .into_iter()
            .collect(),
    };
    let mine = commands
        .iter()
        .filter(|c| runs_lspgate_hook(c, cmd))
        .count();
    match mine {
        0 => Ours::No,
        n if n == commands.len() => Ours::All,
        _ => Ours::Partly,
    }
}
