//! `lspgate.toml`: servers, project language declarations and tasks (protocol §4). Parsed strictly;
//! an invalid file is rejected with its path, line and reason (a `tcp` server off loopback
//! without `allow_remote` included). Its JSON Schema is published. The workspace's own file is
//! loaded with its trust (see `trust`): untrusted, its commands do not run, and it may lower
//! `max_inflight` and `[timeouts]` but not raise them past lspgate's defaults (`cap_limits`).
//! Its `tools` profile is checked against the tool table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// The whole file.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Language servers; an entry whose `name` is a preset's replaces that preset.
    #[serde(default, rename = "server")]
    pub servers: Vec<ServerConfig>,
    /// Project language declarations: glob (root-relative) → language id. They beat detection.
    #[serde(default)]
    pub languages: BTreeMap<String, String>,
    /// Toolchain tasks (build, test, …) for `run_task` and `check`.
    #[serde(default, rename = "task")]
    pub tasks: Vec<TaskConfig>,
    /// Bounds per request kind, in seconds: `references = 60`, `hover = 5`, … (capability
    /// names, plus `initialize`).
    #[serde(default)]
    pub timeouts: BTreeMap<String, f64>,
    /// The tools `lspgate serve` offers agents: groups (`navigation`, `diagnostics`, `edits`,
    /// `gates`, `admin`, `all`) or tool names; `servers` always. Default: all. `--tools`
    /// overrides it.
    #[serde(default)]
    pub tools: Option<Vec<String>>,
    /// Where `tools` is written (file and line), to place an error in its names: the tool
    /// table, which knows them, is the operations layer's (`tools_error`).
    #[serde(skip)]
    #[schemars(skip)]
    pub tools_at: Option<(PathBuf, usize)>,
    /// Heavy calls (`check`, `shrink`, `run_task`, `rename` with `apply`) that may run at once
    /// on this workspace, background ones included; one more is refused with `busy`. Default 2.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_inflight: Option<usize>,
    /// Set when this is the workspace's own file and its content is not trusted: its servers
    /// and tasks do not run (they answer `untrusted_config`); `[languages]` still applies, and
    /// `max_inflight` and `[timeouts]` apply up to lspgate's defaults.
    #[serde(skip)]
    #[schemars(skip)]
    pub untrusted: Option<super::trust::Untrusted>,
    /// Set when the workspace is not trusted (`trust::workspace`; for its own file, the same as
    /// `untrusted`): presets that run the repository's code start restricted, task presets
    /// refuse extra arguments. `None` for a config built by hand (`Config::default()`).
    #[serde(skip)]
    #[schemars(skip)]
    pub workspace: Option<super::trust::Untrusted>,
    /// What lspgate changed in the file's values, and why (an untrusted file's limits capped):
    /// logged at load, shown by `doctor`.
    #[serde(skip)]
    #[schemars(skip)]
    pub notes: Vec<String>,
}

/// The most `max_inflight` an untrusted lspgate.toml may ask for: lspgate's default.
pub const UNTRUSTED_MAX_INFLIGHT: usize = DEFAULT_MAX_INFLIGHT;

/// Heavy calls that may run at once on a root unless `max_inflight` says otherwise.
pub const DEFAULT_MAX_INFLIGHT: usize = 2;

/// The longest bound, in seconds, an untrusted lspgate.toml may set for `kind` in `[timeouts]`:
/// lspgate's default for it (`initialize`: 60, any request: 30, the `--timeout` default).
pub fn untrusted_timeout_cap(kind: &str) -> f64 {
    let d = crate::lsp::ClientOptions::default();
    if kind == "initialize" {
        d.init_timeout.as_secs_f64()
    } else {
        d.request_timeout.as_secs_f64()
    }
}

/// How lspgate reaches a server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    #[default]
    Stdio,
    Tcp,
}

/// One `[[server]]` entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// `namespace/name`, e.g. `local/pyright`; must contain a slash.
    pub name: String,
    /// Executable to start (stdio transport).
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Vec<String>,
    /// Language ids it serves, e.g. `["python"]`.
    pub languages: Vec<String>,
    /// Root markers: a file's server root is its nearest ancestor holding one of these.
    #[serde(default)]
    pub roots: Vec<String>,
    #[serde(default)]
    pub transport: TransportKind,
    /// `host:port` of a server already listening (tcp transport). Loopback only (127.0.0.0/8,
    /// `::1`, `localhost`) unless `allow_remote`.
    #[serde(default)]
    pub address: Option<String>,
    /// Let a tcp `address` be another host. lspgate sends a server the content of every file it
    /// asks about, so this is off by default.
    #[serde(default)]
    pub allow_remote: bool,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The variables of a session's environment this server reads (besides `PATH`; `NAME*`
    /// and `*NAME` patterns allowed): sessions share one instance only when these are equal.
    /// Unset: every variable but those that differ per terminal session.
    #[serde(default)]
    pub env_keys: Option<Vec<String>>,
    /// Sent as `initializationOptions`.
    #[serde(default)]
    pub initialization: Option<Value>,
    /// Served on `workspace/configuration`, by section.
    #[serde(default)]
    pub settings: Option<Value>,
    /// Allowlist of capabilities to use (hover, definition, references, …); empty = all.
    #[serde(default)]
    pub capabilities: Vec<String>,
    /// Resident memory cap in MiB: a server over it is restarted, saying so.
    #[serde(default)]
    pub max_memory: Option<u64>,
}

/// One `[[task]]` entry.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskConfig {
    pub name: String,
    /// The command and its arguments, run in the root.
    pub command: Vec<String>,
    /// cargo-json, gcc, tsc, nim, or a regex with named groups.
    #[serde(default)]
    pub parser: Option<String>,
}

/// A config file that could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{path}:{line}: {reason}")]
pub struct ConfigError {
    pub path: PathBuf,
    pub line: usize,
    pub reason: String,
}

/// Capability names the allowlist accepts.
pub const CAPABILITY_NAMES: &[&str] = &[
    "hover",
    "definition",
    "declaration",
    "type_definition",
    "implementation",
    "references",
    "document_symbols",
    "workspace_symbols",
    "signature_help",
    "completions",
    "call_hierarchy",
    "type_hierarchy",
    "inlay_hints",
    "semantic_tokens",
    "diagnostics",
];

impl Config {
    /// The config of the workspace at `root`: `explicit` (`--config`, trusted by being named),
    /// else `<root>/lspgate.toml` when there is one, with its trust looked up (the digest is of
    /// the very bytes parsed), else none.
    // Not a read inside a root for an answer: the workspace's lspgate.toml, checked to be a file and trusted by digest before it is used.
    #[allow(clippy::disallowed_methods)]
    pub fn for_workspace(root: &Path, explicit: Option<&Path>) -> Result<Config, ConfigError> {
        if let Some(path) = explicit {
            let mut config = Config::load(path)?;
            config.workspace = super::trust::workspace(root);
            return Ok(config);
        }
        let path = root.join("lspgate.toml");
        if !path.is_file() {
            return Ok(Config {
                workspace: super::trust::workspace(root),
                ..Config::default()
            });
        }
        let bytes = std::fs::read(&path).map_err(|e| ConfigError {
            path: path.clone(),
            line: 0,
            reason: e.to_string(),
        })?;
        let text = String::from_utf8(bytes).map_err(|_| ConfigError {
            path: path.clone(),
            line: 0,
            reason: "not UTF-8".into(),
        })?;
        let mut config = Config::parse(&text, &path)?;
        config.untrusted = super::trust::check(&path, root, text.as_bytes());
        config.workspace = config.untrusted.clone();
        if config.untrusted.is_some() {
            config.cap_limits();
            for n in &config.notes {
                tracing::warn!("{n}");
            }
        }
        Ok(config)
    }

    /// An untrusted file may lower `max_inflight` and `[timeouts]` but not raise them: values
    /// past lspgate's defaults are capped there, each with a note saying so.
    pub fn cap_limits(&mut self) {
        let trust = self
            .untrusted
            .as_ref()
            .map(|u| format!("; `{}` lets it set more", u.command()))
            .unwrap_or_default();
        let file = self
            .untrusted
            .as_ref()
            .map(|u| u.config.display().to_string())
            .unwrap_or_else(|| "lspgate.toml".into());
        if let Some(n) = self.max_inflight
            && n > UNTRUSTED_MAX_INFLIGHT
        {
            self.max_inflight = Some(UNTRUSTED_MAX_INFLIGHT);
            self.notes.push(format!(
                "{file} is not trusted: max_inflight {n} capped at {UNTRUSTED_MAX_INFLIGHT} (the default){trust}"
            ));
        }
        for (kind, secs) in self.timeouts.iter_mut() {
            let cap = untrusted_timeout_cap(kind);
            if *secs > cap {
                self.notes.push(format!(
                    "{file} is not trusted: [timeouts] {kind} = {secs} capped at {cap} s (the default){trust}"
                ));
                *secs = cap;
            }
        }
    }

    /// `reason` (why the names in `tools` are wrong, from the tool table) placed at the line
    /// of `tools` in the file.
    pub fn tools_error(&self, reason: String) -> ConfigError {
        let (path, line) = self.tools_at.clone().unwrap_or_default();
        ConfigError { path, line, reason }
    }

    /// Whether the file defines anything that runs: servers (commands or tcp addresses) or
    /// tasks.
    pub fn has_commands(&self) -> bool {
        !self.servers.is_empty() || !self.tasks.is_empty()
    }

    /// Reads `path`; a missing file is an error (the caller decides whether one is required).
    // Not a read inside a root for an answer: a config file the user named.
    #[allow(clippy::disallowed_methods)]
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            line: 0,
            reason: e.to_string(),
        })?;
        Config::parse(&text, path)
    }

    /// Parses and validates `text` (named `path` in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let err = |(line, reason): Invalid| ConfigError {
            path: path.to_path_buf(),
            line,
            reason,
        };
        let mut config: Config = toml::from_str(text).map_err(|e| {
            let line = e.span().map_or(0, |s| line_of(text, s.start));
            err((line, e.message().to_string()))
        })?;
        // Validation errors point at where the value is written, as toml's parser saw it.
        let spans = Spans::new(text);
        config.validate(&spans).map_err(err)?;
        if config.tools.is_some() {
            let line = spans.line(&[Key::Name("tools")]);
            config.tools_at = Some((path.to_path_buf(), line));
        }
        Ok(config)
    }

    /// Checks what toml's types do not: limits, servers, timeouts, globs.
    fn validate(&self, spans: &Spans) -> Result<(), Invalid> {
        if self.max_inflight == Some(0) {
            let line = spans.line(&[Key::Name("max_inflight")]);
            return Err((line, "`max_inflight` must be 1 or more".into()));
        }
        let mut seen = std::collections::HashSet::new();
        for (i, s) in self.servers.iter().enumerate() {
            let at =
                |field: &str| spans.line(&[Key::Name("server"), Key::Index(i), Key::Name(field)]);
            s.validate_name().map_err(|r| (at("name"), r))?;
            if !seen.insert(s.name.as_str()) {
                return Err((at("name"), format!("server `{}` is defined twice", s.name)));
            }
            s.validate(at)?;
        }
        for (kind, secs) in &self.timeouts {
            let line = spans.line(&[Key::Name("timeouts"), Key::Name(kind)]);
            validate_timeout(kind, *secs).map_err(|reason| (line, reason))?;
        }
        for glob in self.languages.keys() {
            if let Err(e) = globset::Glob::new(glob) {
                let line = spans.line(&[Key::Name("languages"), Key::Name(glob)]);
                return Err((line, format!("bad glob `{glob}`: {e}")));
            }
        }
        Ok(())
    }

    /// The JSON Schema of the file.
    pub fn json_schema() -> Value {
        serde_json::to_value(schemars::schema_for!(Config)).unwrap_or(Value::Null)
    }
}

/// A validation error: the line it points at and why.
type Invalid = (usize, String);

impl ServerConfig {
    /// Checks the name is `namespace/name`.
    fn validate_name(&self) -> Result<(), String> {
        let n = &self.name;
        if !n.contains('/') || n.starts_with('/') || n.ends_with('/') {
            return Err(format!(
                "server name `{n}` must be namespace/name, e.g. local/{n}"
            ));
        }
        Ok(())
    }

    /// Checks languages, transport and capabilities; `at(field)` is the line a field is on.
    fn validate(&self, at: impl Fn(&str) -> usize) -> Result<(), Invalid> {
        let line = at("name");
        if self.languages.is_empty() {
            return Err((
                line,
                format!("server `{}` serves no `languages`", self.name),
            ));
        }
        self.validate_transport(&at)?;
        if let Some(bad) = self
            .capabilities
            .iter()
            .find(|c| !CAPABILITY_NAMES.contains(&c.as_str()))
        {
            return Err((
                line,
                format!(
                    "server `{}`: unknown capability `{bad}`; known: {}",
                    self.name,
                    CAPABILITY_NAMES.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// Checks the transport has what it needs: a command, or a loopback (or allowed) address.
    fn validate_transport(&self, at: impl Fn(&str) -> usize) -> Result<(), Invalid> {
        let (line, name) = (at("name"), &self.name);
        match self.transport {
            TransportKind::Stdio if self.command.as_deref().is_none_or(str::is_empty) => Err((
                line,
                format!(
                    "server `{name}` needs a `command` (or transport = \"tcp\" with an `address`)"
                ),
            )),
            TransportKind::Tcp if self.address.as_deref().is_none_or(str::is_empty) => Err((
                line,
                format!("server `{name}` uses tcp but has no `address` (host:port)"),
            )),
            TransportKind::Tcp if !self.allow_remote => {
                let address = self.address.as_deref().unwrap_or_default();
                if is_loopback(address) {
                    return Ok(());
                }
                Err((
                    at("address"),
                    format!(
                        "server `{name}`: tcp address `{address}` is not loopback (127.0.0.1, ::1 or localhost); lspgate sends a server the files it asks about, so a remote one needs `allow_remote = true`"
                    ),
                ))
            }
            TransportKind::Stdio if self.allow_remote => Err((
                line,
                format!("server `{name}`: `allow_remote` is for transport = \"tcp\" only"),
            )),
            _ => Ok(()),
        }
    }
}

/// Checks one `[timeouts]` entry: a known request kind, a positive number of seconds.
fn validate_timeout(kind: &str, secs: f64) -> Result<(), String> {
    if kind != "initialize" && !CAPABILITY_NAMES.contains(&kind) {
        return Err(format!(
            "unknown request kind `{kind}` in [timeouts]; known: initialize, {}",
            CAPABILITY_NAMES.join(", ")
        ));
    }
    if !(secs.is_finite() && secs > 0.0) {
        return Err(format!(
            "timeout for `{kind}` must be a positive number of seconds"
        ));
    }
    Ok(())
}

/// Whether `host:port` names this machine: an IP in 127.0.0.0/8, `::1` (as `[::1]:PORT`), or
/// `localhost`. A port is required.
fn is_loopback(address: &str) -> bool {
    let Some((host, port)) = address.rsplit_once(':') else {
        return false;
    };
    if port.parse::<u16>().is_err() {
        return false;
    }
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// A step of the way to a value in the file: a key of a table, or an entry of an array (of
/// tables: `[[server]]`).
enum Key<'a> {
    Name(&'a str),
    Index(usize),
}

/// The file as toml's own parser saw it, with the span of every key and value: where a
/// validation error points.
struct Spans<'i> {
    text: &'i str,
    doc: Option<toml::Spanned<toml::de::DeTable<'i>>>,
}

impl<'i> Spans<'i> {
    fn new(text: &'i str) -> Spans<'i> {
        Spans {
            text,
            doc: toml::de::DeTable::parse(text).ok(),
        }
    }

    /// The 1-based line of the value at `path` (its key's line, for a key), 0 when it is not
    /// there.
    fn line(&self, path: &[Key]) -> usize {
        use toml::de::DeValue;
        let Some(doc) = &self.doc else { return 0 };
        let mut table = doc.get_ref();
        let mut at = None;
        let mut value: Option<&toml::Spanned<DeValue>> = None;
        for step in path {
            match step {
                Key::Name(name) => {
                    if let Some(v) = value {
                        match v.get_ref() {
                            DeValue::Table(t) => table = t,
                            _ => return 0,
                        }
                    }
                    let Some((k, v)) = table.iter().find(|(k, _)| k.get_ref() == name) else {
                        return 0;
                    };
                    at = Some(k.span().start);
                    value = Some(v);
                }
                Key::Index(i) => {
                    let Some(DeValue::Array(items)) = value.map(|v| v.get_ref()) else {
                        return 0;
                    };
                    let Some(item) = items.get(*i) else { return 0 };
                    at = Some(item.span().start);
                    value = Some(item);
                }
            }
        }
        at.map_or(0, |offset| line_of(self.text, offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str) -> Result<Config, ConfigError> {
        Config::parse(t, Path::new("lspgate.toml"))
    }

    #[test]
    fn a_full_config_parses() {
        let c = parse(
            r#"
[[server]]
name = "local/pyright"
command = "pyright-langserver"
args = ["--stdio"]
languages = ["python"]
roots = ["pyproject.toml"]
settings = { python = { analysis = { typeCheckingMode = "strict" } } }
capabilities = ["hover", "references"]

[[server]]
name = "remote/thing"
transport = "tcp"
address = "127.0.0.1:9000"
languages = ["c"]

[languages]
"*.pyi" = "python"

[[task]]
name = "build"
command = ["cargo", "build", "--message-format=json"]
parser = "cargo-json"
"#,
        )
        .unwrap();
        assert_eq!(c.servers.len(), 2);
        assert_eq!(
            c.servers[0].settings.as_ref().unwrap()["python"]["analysis"]["typeCheckingMode"],
            "strict"
        );
        assert_eq!(c.servers[1].transport, TransportKind::Tcp);
        assert_eq!(c.languages["*.pyi"], "python");
        assert_eq!(c.tasks[0].parser.as_deref(), Some("cargo-json"));
    }

    #[test]
    fn errors_name_the_line_and_reason() {
        let e =
            parse("[[server]]\nname = \"pyright\"\ncommand = \"x\"\nlanguages = [\"python\"]\n")
                .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("namespace/name"), "{e}");
        let e = parse("\n\n[[server]]\nname = \"a/b\"\nlanguages = [\"c\"]\n").unwrap_err();
        assert_eq!(e.line, 4);
        assert!(e.reason.contains("command"), "{e}");
        let e =
            parse("[[server]]\nname = \"a/b\"\ncommand = \"x\"\nlanguages = [\"c\"]\ncolour = 1\n")
                .unwrap_err();
        assert!(e.reason.contains("colour"), "{e}");
        assert!(e.line >= 1, "{e}");
        let e = parse("[[server]\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("[[server]]\nname = \"a/b\"\ncommand = \"x\"\nlanguages = [\"c\"]\ncapabilities = [\"telepathy\"]\n").unwrap_err();
        assert!(e.reason.contains("telepathy"));
        assert!(e.to_string().starts_with("lspgate.toml:2: "), "{e}");
    }

    #[test]
    fn errors_point_at_the_line_the_value_is_on() {
        // Lines that a text search would take for the value: a longer key, a comment.
        let e = parse("[timeouts]\nhovering = 5\nhover = -1\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e =
            parse("# languages: a[ is not a glob\n[languages]\n\"a[\" = \"python\"\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let two = "[[server]]\nname = \"local/a\"\ncommand = \"a\"\nlanguages = [\"python\"]\n\n\
                   [[server]]\ncommand = \"b\"\nlanguages = [\"c\"]\ntransport = \"tcp\"\n\
                   address = \"10.0.0.1:1\"\nname = \"local/b\"\n";
        let e = parse(two).unwrap_err();
        assert!(e.reason.contains("not loopback"), "{e}");
        assert_eq!(e.line, 10, "{e}");
        let e = parse(
            &two.replace("10.0.0.1:1", "127.0.0.1:1")
                .replace("[\"c\"]", "[]"),
        )
        .unwrap_err();
        assert_eq!(e.line, 11, "the second server's name: {e}");
    }

    #[test]
    fn an_untrusted_file_may_lower_limits_but_not_raise_them() {
        let text =
            "max_inflight = 1000000\n[timeouts]\nreferences = 86400\nhover = 5\ninitialize = 600\n";
        let mut c = parse(text).unwrap();
        c.untrusted = Some(crate::workspace::trust::Untrusted {
            config: PathBuf::from("/w/lspgate.toml"),
            root: PathBuf::from("/w"),
            digest: String::new(),
            changed: false,
        });
        c.cap_limits();
        assert_eq!(c.max_inflight, Some(UNTRUSTED_MAX_INFLIGHT));
        assert_eq!(c.timeouts["references"], 30.0);
        assert_eq!(c.timeouts["initialize"], 60.0);
        assert_eq!(c.timeouts["hover"], 5.0, "lowering is fine");
        assert_eq!(c.notes.len(), 3, "{:?}", c.notes);
        assert!(
            c.notes[0].contains("max_inflight 1000000 capped at 2")
                && c.notes[0].contains("lspgate trust --root /w"),
            "{:?}",
            c.notes
        );
        // Within the defaults: nothing to say.
        let mut c = parse("max_inflight = 1\n[timeouts]\nreferences = 10\n").unwrap();
        c.cap_limits();
        assert_eq!((c.max_inflight, c.notes.len()), (Some(1), 0));
    }

    #[test]
    fn tcp_servers_are_loopback_unless_allowed_remote() {
        let tcp = |address: &str, extra: &str| {
            parse(&format!(
                "[[server]]\nname = \"r/x\"\ntransport = \"tcp\"\naddress = \"{address}\"\nlanguages = [\"c\"]\n{extra}"
            ))
        };
        for ok in [
            "127.0.0.1:9000",
            "127.1.2.3:1",
            "[::1]:9000",
            "localhost:9000",
        ] {
            assert!(tcp(ok, "").is_ok(), "{ok}");
        }
        for bad in [
            "10.0.0.5:9000",
            "example.com:9000",
            "0.0.0.0:9000",
            "[::]:9000",
            "127.0.0.1",
            "127.0.0.1:http",
            "localhost.example.com:1",
        ] {
            let e = tcp(bad, "").unwrap_err();
            assert_eq!(e.line, 4, "{e}");
            assert!(e.reason.contains("allow_remote = true"), "{e}");
        }
        let c = tcp("10.0.0.5:9000", "allow_remote = true\n").unwrap();
        assert!(c.servers[0].allow_remote);
        let e = parse(
            "[[server]]\nname = \"a/b\"\ncommand = \"x\"\nlanguages = [\"c\"]\nallow_remote = true\n",
        )
        .unwrap_err();
        assert!(e.reason.contains("is for transport = \"tcp\" only"), "{e}");
    }
}
