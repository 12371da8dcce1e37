//! Installing a preset server into lspgate's data folder with npm, pip or `go install` (no
//! global changes beyond Go's own module and build caches),
//! reporting each step to whatever progress the caller shows (`Spinner` on a terminal).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::presets::{Install, Preset, install_dir, locate};

/// Installs `preset` into `presets::install_dir`, calling `step(what)` as each installer
/// command starts; the executable installed.
pub fn install(preset: &Preset, step: &dyn Fn(&str)) -> Result<PathBuf, String> {
    let dir = install_dir(preset);
    // Made 0700 (its parents in the data folder too), so no one else reaches what is installed.
    let sub = dir
        .strip_prefix(super::data_dir())
        .map_err(|_| format!("{} is not in the data folder", dir.display()))?;
    super::dirs::data(sub)?;
    match preset.install {
        Install::Npm(pkgs) => npm(&dir, pkgs, step)?,
        Install::Pip(pkgs) => pip(&dir, pkgs, step)?,
        Install::Go(module) => go(&dir, module, step)?,
        Install::System(hint) => {
            return Err(format!(
                "{} is not installed from npm, PyPI or the Go module proxy; install it with: {hint}",
                preset.name
            ));
        }
    }
    locate(preset).ok_or_else(|| {
        format!(
            "installed, but `{}` was not found afterwards",
            preset.command
        )
    })
}

/// `npm install` of `pkgs` with `dir` as its prefix.
fn npm(dir: &Path, pkgs: &[&str], step: &dyn Fn(&str)) -> Result<(), String> {
    step(&format!("npm install {}", pkgs.join(" ")));
    run(Command::new("npm")
        .args([
            "install",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--prefix",
        ])
        .arg(dir)
        .args(pkgs))
}

/// A virtualenv in `dir/venv`, then `pip install` of `pkgs` into it.
fn pip(dir: &Path, pkgs: &[&str], step: &dyn Fn(&str)) -> Result<(), String> {
    let venv = dir.join("venv");
    step("creating a virtualenv");
    run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    step(&format!("pip install {}", pkgs.join(" ")));
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet"])
        .args(pkgs))
}

/// `go install module` with `dir/bin` as `GOBIN`. Go's module cache and build cache stay the
/// user's own (`go env GOMODCACHE`, `GOCACHE`): they are caches, shared with every other Go
/// build, and `GOPATH` is left as the user set it. The `go` on lspgate's PATH builds it; one
/// older than the module needs fetches the toolchain it names (`GOTOOLCHAIN`, Go's default).
fn go(dir: &Path, module: &str, step: &dyn Fn(&str)) -> Result<(), String> {
    let Some(go) = super::presets::which("go") else {
        return Err(format!(
            "`go install {module}` needs Go, and `go` is not on PATH: install Go (https://go.dev/dl/) and run this again"
        ));
    };
    step(&format!("go install {module}"));
    // Run from the install folder: no go.mod or go.work of the caller's is in the way.
    run(Command::new(go)
        .args(["install", module])
        .current_dir(dir)
        .env("GOBIN", dir.join("bin")))
}

/// Runs an installer command to its end; a failure says how it exited and its last lines.
fn run(cmd: &mut Command) -> Result<(), String> {
    let o = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("could not run the installer: {e}"))?;
    if o.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&o.stderr);
    let tail: Vec<&str> = err.lines().rev().take(5).collect();
    Err(format!(
        "installer exited with {}: {}",
        o.status,
        tail.into_iter().rev().collect::<Vec<_>>().join("\n")
    ))
}

/// A spinner on stderr (drawn only on a terminal) showing an install's current step; cleared
/// when dropped.
pub struct Spinner(indicatif::ProgressBar);

impl Spinner {
    /// A spinner, ticking, on stderr.
    pub fn on_stderr() -> Spinner {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(120));
        Spinner(bar)
    }

    /// Shows `what` as the current step.
    pub fn step(&self, what: &str) {
        self.0.set_message(what.to_string());
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
