//! A session's environment, and which of its variables make a server what it is: servers and
//! tasks run with the whole environment of the session that started them (its client's, in the
//! daemon), and sessions share a server only when the variables that server reads are equal.
//! A preset names the variables it reads (`preset_keys`), a configured server may name its own
//! (`env_keys`), and an explicit command counts every variable except those that differ per
//! terminal or harness session and never matter to a server (`PER_SESSION`).

use std::collections::BTreeMap;
use std::sync::Arc;

/// Variables that differ per terminal or harness session and never matter to a server: left out
/// of the identity of a server that counts every variable. A trailing `*` matches any rest, a
/// leading `*` any start.
pub const PER_SESSION: &[&str] = &[
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "TERM*",
    "COLORTERM",
    "SSH_*",
    "DISPLAY",
    "WINDOWID",
    "TMUX*",
    "*_SESSION_ID",
    "COLUMNS",
    "LINES",
    "PS1",
    "LSPGATE_*",
];

/// A session's whole environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    vars: BTreeMap<String, String>,
}

/// Which variables make a server what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Keys {
    /// These (patterns as in `PER_SESSION`).
    Only(Vec<String>),
    /// Every variable but `PER_SESSION`'s.
    AllBut,
}

impl Env {
    /// This process's environment (variables that are not UTF-8 are left out).
    pub fn of_process() -> Env {
        Env {
            vars: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
        }
    }

    pub fn from_map(vars: impl IntoIterator<Item = (String, String)>) -> Env {
        Env {
            vars: vars.into_iter().collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
    }

    /// Every variable, in name order.
    pub fn vars(&self) -> impl Iterator<Item = (&String, &String)> {
        self.vars.iter()
    }

    /// The variables `keys` names, with their values: what makes a server started with this
    /// environment the same as another.
    pub fn identity(&self, keys: &Keys) -> BTreeMap<String, String> {
        self.vars
            .iter()
            .filter(|(k, _)| match keys {
                Keys::Only(names) => names.iter().any(|p| matches(p, k)),
                Keys::AllBut => !PER_SESSION.iter().any(|p| matches(p, k)),
            })
            .map(|(k, v)| match k.as_str() {
                "PATH" => (k.clone(), first_of_each(v)),
                _ => (k.clone(), v.clone()),
            })
            .collect()
    }
}

/// A search path with each folder at its first place only: a later repeat never changes which
/// executable is found, so it never sets two sessions' servers apart.
fn first_of_each(path: &str) -> String {
    let mut seen = std::collections::HashSet::new();
    path.split(':')
        .filter(|d| seen.insert(*d))
        .collect::<Vec<_>>()
        .join(":")
}

impl Keys {
    /// Both sets together (every variable, if either counts them all).
    pub fn union(self, other: Keys) -> Keys {
        match (self, other) {
            (Keys::Only(mut a), Keys::Only(b)) => {
                for k in b {
                    if !a.contains(&k) {
                        a.push(k);
                    }
                }
                Keys::Only(a)
            }
            _ => Keys::AllBut,
        }
    }
}

/// The variables a preset's server reads (beyond `PATH`, which every one does): a virtualenv
/// or conda prefix for Python servers, Node's options for those that run on Node, the C
/// include paths for clangd, cargo's and rustup's for rust-analyzer, Go's for gopls.
pub fn preset_keys(preset: &str) -> Keys {
    const PYTHON: &[&str] = &["VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH", "PYTHONHOME"];
    const NODE: &[&str] = &["NODE_OPTIONS", "NODE_PATH"];
    let extra: &[&str] = match preset {
        "builtin/pyright" | "builtin/basedpyright" => PYTHON,
        "builtin/pylsp" | "builtin/ruff" => PYTHON,
        "builtin/typescript-language-server" => &["NODE_OPTIONS", "NODE_PATH", "TSS_*"],
        "builtin/clangd" => &["CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH"],
        "builtin/rust-analyzer" => &["CARGO_*", "RUSTUP_*", "RUSTFLAGS", "RUSTC_WRAPPER"],
        "builtin/gopls" => &["GO*", "CGO_*"],
        "builtin/nimlangserver" => &["NIM*"],
        // The rest run on Node (the vscode servers, yaml, bash) or read nothing else.
        _ => NODE,
    };
    Keys::Only(
        std::iter::once("PATH")
            .chain(extra.iter().copied())
            .map(String::from)
            .collect(),
    )
}

/// Whether the variable `name` matches `pattern` (`X*`, `*X` or an exact name).
fn matches(pattern: &str, name: &str) -> bool {
    if let Some(prefix) = pattern.strip_suffix('*') {
        name.starts_with(prefix)
    } else if let Some(suffix) = pattern.strip_prefix('*') {
        name.ends_with(suffix)
    } else {
        name == pattern
    }
}

/// An environment shared cheaply.
pub type SharedEnv = Arc<Env>;

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Env {
        Env::from_map(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn per_session_variables_never_set_servers_apart() {
        let a = env(&[
            ("PATH", "/bin"),
            ("PROBE", "one"),
            ("SHLVL", "1"),
            ("TERM_SESSION_ID", "a"),
            ("TERM", "xterm"),
            ("SSH_TTY", "/dev/pts/1"),
            ("LSPGATE_TERSE", "1"),
        ]);
        let b = env(&[
            ("PATH", "/bin"),
            ("PROBE", "one"),
            ("SHLVL", "3"),
            ("TERM_SESSION_ID", "b"),
            ("TERM", "dumb"),
        ]);
        assert_eq!(a.identity(&Keys::AllBut), b.identity(&Keys::AllBut));
        let c = env(&[("PATH", "/bin"), ("PROBE", "two")]);
        assert_ne!(a.identity(&Keys::AllBut), c.identity(&Keys::AllBut));
    }

    #[test]
    fn a_repeated_path_folder_shares_the_server_and_another_order_does_not() {
        let keys = preset_keys("builtin/pyright");
        let a = env(&[("PATH", "/tools/bin:/usr/bin")]);
        let b = env(&[("PATH", "/tools/bin:/usr/bin:/tools/bin:/usr/bin")]);
        let c = env(&[("PATH", "/usr/bin:/tools/bin")]);
        assert_eq!(a.identity(&keys), b.identity(&keys));
        assert_ne!(a.identity(&keys), c.identity(&keys));
    }

    #[test]
    fn presets_count_only_what_they_read() {
        let pyright = preset_keys("builtin/pyright");
        let a = env(&[("PATH", "/bin"), ("VIRTUAL_ENV", "/v1"), ("PROBE", "x")]);
        let b = env(&[("PATH", "/bin"), ("VIRTUAL_ENV", "/v1"), ("PROBE", "y")]);
        let c = env(&[("PATH", "/bin"), ("VIRTUAL_ENV", "/v2")]);
        assert_eq!(a.identity(&pyright), b.identity(&pyright));
        assert_ne!(a.identity(&pyright), c.identity(&pyright));
        let go = preset_keys("builtin/gopls");
        let g = env(&[
            ("GOFLAGS", "-mod=vendor"),
            ("CGO_ENABLED", "0"),
            ("HOME", "/h"),
        ]);
        assert_eq!(g.identity(&go).len(), 2);
        assert_eq!(
            preset_keys("builtin/pyright").union(Keys::AllBut),
            Keys::AllBut
        );
    }
}
