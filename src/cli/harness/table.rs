//! The vocabulary of what `setup` writes: a harness's files (project and user paths, format,
//! seed), the entries each receives (MCP server, hook groups, LSP client) and how an entry is
//! made from the command lspgate runs as. Each harness's own files and shapes are in its file
//! of `cli::harnesses`.

use std::path::Path;

use serde_json::Value;

/// How a file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    /// JSON with comments and trailing commas.
    Jsonc,
    Toml,
}

/// A value to write, its members in the order they are written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum J {
    Str(String),
    Int(i64),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
    Bool(bool),
}

impl J {
    pub(crate) fn value(&self) -> Value {
        match self {
            J::Str(s) => Value::from(s.as_str()),
            J::Int(n) => Value::from(*n),
            J::Bool(b) => Value::from(*b),
            J::Arr(a) => Value::Array(a.iter().map(J::value).collect()),
            J::Obj(o) => Value::Object(o.iter().map(|(k, v)| (k.clone(), v.value())).collect()),
        }
    }

    pub(crate) fn is_scalar(&self) -> bool {
        matches!(self, J::Str(_) | J::Int(_) | J::Bool(_))
    }
}

pub(crate) fn s(text: &str) -> J {
    J::Str(text.to_string())
}

pub(crate) fn obj(members: Vec<(&str, J)>) -> J {
    J::Obj(
        members
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

pub(crate) fn strs(items: &[&str]) -> J {
    J::Arr(items.iter().map(|i| s(i)).collect())
}

/// One thing `setup` puts in a file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
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
    pub(crate) fn path(&self) -> &[String] {
        match self {
            Entry::Member { path, .. } | Entry::Hook { path, .. } => path,
        }
    }

    /// The entry as a note names it, one of the user's.
    pub(crate) fn named(&self) -> String {
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

/// An entry's value, made from the command lspgate runs as (the MCP server, the LSP client).
pub(crate) type Shape = fn(&Launch) -> J;

/// A hook group's value for one hook (`HookLine`): each harness has its own.
pub(crate) type Group = fn(&HookLine) -> J;

/// What a file receives: each entry sits in the object (or, for hooks, array) at its path.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Put {
    Mcp(&'static [&'static str], Shape),
    /// The hook for `pre-edit`, `post-edit`, `start` (a session's) or `stop` (a turn's end).
    Hook(&'static [&'static str], &'static str, Group),
    Lsp(&'static [&'static str], Shape),
}

/// One file of a harness.
pub(crate) struct File {
    /// Under the project root.
    pub(crate) project: &'static str,
    /// Under the home folder.
    pub(crate) user: &'static str,
    /// A name to use instead, in the same folder, when a file of that name exists.
    pub(crate) instead: Option<&'static str>,
    pub(crate) format: Format,
    /// What a file made from nothing starts as; a file left equal to it by `--remove` goes.
    pub(crate) seed: &'static str,
    pub(crate) puts: &'static [Put],
}

/// The seed of a JSON file made from nothing.
pub(crate) const EMPTY: &str = "{}\n";

/// A JSON file at `project` under the project's root and `user` under the home folder.
pub(crate) const fn json(project: &'static str, user: &'static str, puts: &'static [Put]) -> File {
    File {
        project,
        user,
        instead: None,
        format: Format::Json,
        seed: EMPTY,
        puts,
    }
}

/// The MCP server entries' path in most harnesses.
pub(crate) const MCP: &[&str] = &["mcpServers"];

/// `{"command": CMD, "args": ["serve"]}`: the MCP server entry of most harnesses.
pub(crate) fn plain_mcp(l: &Launch) -> J {
    obj(vec![("command", s(l.program())), ("args", l.args("serve"))])
}

/// The file extensions the LSP entry claims, with their language ids.
pub(crate) const LANGUAGES: &[(&str, &str)] = &[
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
pub(crate) fn words(cmd: &str) -> Vec<&str> {
    match cmd.split_once(' ') {
        Some((first, _)) if LAUNCHERS.contains(&first) => cmd.split_whitespace().collect(),
        _ => vec![cmd],
    }
}

/// `cmd` as a shell command's first words (a hook's command line).
pub(crate) fn line(cmd: &str) -> String {
    words(cmd)
        .iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The command lspgate runs as, in words (`npx -y lspgate` is three).
pub(crate) struct Launch<'a> {
    words: Vec<&'a str>,
}

impl<'a> Launch<'a> {
    pub(crate) fn of(cmd: &'a str) -> Launch<'a> {
        Launch { words: words(cmd) }
    }

    /// The program: the first word.
    pub(crate) fn program(&self) -> &'a str {
        self.words.first().copied().unwrap_or("")
    }

    /// Every word, then `sub`.
    pub(crate) fn all(&self, sub: &str) -> J {
        let mut all: Vec<&str> = self.words.clone();
        all.push(sub);
        strs(&all)
    }

    /// The words after the program, then `sub`.
    pub(crate) fn args(&self, sub: &str) -> J {
        let mut rest: Vec<&str> = self.words.iter().skip(1).copied().collect();
        rest.push(sub);
        strs(&rest)
    }
}

/// One hook as a harness's group holds it: `lspgate hook WHICH` with its bound.
pub(crate) struct HookLine<'a> {
    /// `cmd` as a shell command's first words.
    line: String,
    /// `pre-edit`, `post-edit`, `start` or `stop`.
    pub(crate) which: &'a str,
    /// The harness's timeout for it, in seconds: the gate's bound and a margin, else 10.
    pub(crate) secs: i64,
    /// Whether it is a tool's hook (matched by tool), not a session's start or a turn's end.
    pub(crate) edits: bool,
}

impl HookLine<'_> {
    /// The command running this hook for the harness named `format`.
    pub(crate) fn command(&self, format: &str) -> J {
        s(&format!(
            "{} hook {} --format {format}",
            self.line, self.which
        ))
    }

    /// `{"matcher": MATCHER, …rest}` for a tool's hook, `{…rest}` for the others.
    pub(crate) fn matched(&self, matcher: &str, rest: Vec<(&'static str, J)>) -> J {
        let mut members = Vec::new();
        if self.edits {
            members.push(("matcher", s(matcher)));
        }
        members.extend(rest);
        obj(members)
    }
}

/// A hook group's handlers: one command handler, named or not.
pub(crate) fn handler(command: J, name: Option<J>, timeout: i64) -> J {
    let mut members: Vec<(&str, J)> = name.map(|n| ("name", n)).into_iter().collect();
    members.extend([
        ("type", s("command")),
        ("command", command),
        ("timeout", J::Int(timeout)),
    ]);
    J::Arr(vec![obj(members)])
}

/// The entry `put` stands for, running lspgate as `cmd`.
pub(crate) fn entry(put: &Put, cmd: &str) -> Entry {
    let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    match *put {
        Put::Mcp(at, shape) | Put::Lsp(at, shape) => Entry::Member {
            path: path(at),
            key: "lspgate".into(),
            value: shape(&Launch::of(cmd)),
        },
        Put::Hook(at, which, group) => Entry::Hook {
            path: path(at),
            value: group(&HookLine {
                line: line(cmd),
                which,
                // The gate's harness timeout leaves it its own bound and a margin; a
                // session's start answers at once.
                secs: match which {
                    "stop" => crate::ops::hook::GATE_BUDGET as i64 + 30,
                    _ => 10,
                },
                edits: matches!(which, "pre-edit" | "post-edit"),
            }),
        },
    }
}

/// `cmd` as one shell word.
pub(crate) fn shell_quote(cmd: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./+-:@%=,".contains(c);
    if !cmd.is_empty() && cmd.chars().all(plain) {
        cmd.to_string()
    } else {
        format!("'{}'", cmd.replace('\'', r"'\''"))
    }
}

/// Whether a hook's command runs `lspgate hook …`: this `cmd`, or any executable named
/// lspgate (an older setup's path).
pub(crate) fn runs_lspgate_hook(command: &str, cmd: &str) -> bool {
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
pub(crate) enum Ours {
    No,
    /// Some of its commands, alongside others: counts as set up, never touched.
    Partly,
    /// All its commands: lspgate's own group.
    All,
}

/// Whether `group` (a hook group with `hooks: [{command}]`, or a flat `{command}`) is
/// lspgate's.
pub(crate) fn ours(group: &Value, cmd: &str) -> Ours {
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
