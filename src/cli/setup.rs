//! `lspgate install` (a preset server into lspgate's data folder) and `lspgate doctor` (what
//! the workspace needs, what is found, how to install the rest).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::{Cli, engine_for, load_config, say_raw};
use crate::lsp::Cap;
use crate::ops::Engine;
use crate::registry::Server;
use crate::workspace::Root;
use crate::workspace::install::{self, Spinner};
use crate::workspace::presets::{self, PRESETS, Preset};
use lspgate_core::error::{CoreError, Kind};

pub(super) fn install(name: &str) -> i32 {
    let Some(preset) = Preset::by_name(name) else {
        let names: Vec<_> = PRESETS.iter().map(|p| p.name).collect();
        eprintln!(
            "invalid_params: no preset `{name}`; known: {}",
            names.join(", ")
        );
        return 2;
    };
    eprintln!(
        "installing {} into {} …",
        preset.name,
        presets::install_dir(preset).display()
    );
    let spinner = Spinner::on_stderr();
    let installed = install::install(preset, &|what| spinner.step(what));
    drop(spinner);
    match installed {
        Ok(exe) => {
            say!("{} installed: {}", preset.name, exe.display());
            0
        }
        Err(e) => {
            eprintln!("install failed: {e}");
            1
        }
    }
}

/// For the workspace: the languages found, which server serves each (found, or how to install
/// it), and each found server's version and capabilities (from a real `initialize`).
pub(super) async fn doctor(cli: &Cli) -> i32 {
    let engine = match engine_for(cli, &[]) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let root = engine.root().clone();
    let mut text = header(cli, &root);
    // What restricted presets go without (an untrusted workspace), by server.
    let notes: HashMap<String, Option<String>> = engine
        .registry()
        .statuses()
        .into_iter()
        .map(|s| (s.name, s.note))
        .collect();
    let found = engine.languages().scan(20_000);
    let mut report = Vec::new();
    if found.is_empty() {
        let _ = writeln!(text, "no source files found");
    }
    for (language, files) in &found {
        report.push(language_report(&engine, language, *files, &notes, &mut text).await);
    }
    let watcher = engine.registry().start_watching().await;
    let _ = writeln!(text, "file watcher: {watcher}");
    engine.shutdown().await;
    if cli.json {
        say!(
            "{}",
            serde_json::to_string_pretty(&json!({"languages": report, "watcher": watcher}))
                .unwrap_or_default()
        );
    } else {
        say_raw(&text);
    }
    let all_ok = report.iter().all(|r| {
        r["servers"]
            .as_array()
            .is_some_and(|s| !s.is_empty() && s.iter().all(|x| x["ok"] == true))
    });
    i32::from(!all_ok)
}

/// The doctor's first lines: version, workspace, data folder, and whether config and
/// workspace are trusted.
fn header(cli: &Cli, root: &Root) -> String {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "lspgate {} — workspace {}",
        env!("CARGO_PKG_VERSION"),
        root.path().display()
    );
    let _ = writeln!(
        text,
        "data folder: {}",
        crate::workspace::data_dir().display()
    );
    let config = load_config(cli, root).unwrap_or_default();
    if let Some(u) = &config.untrusted {
        let _ = writeln!(
            text,
            "config: {} is NOT TRUSTED ({}): its servers and tasks do not run; review it, then `{}`",
            u.config.display(),
            if u.changed {
                "changed since it was trusted"
            } else {
                "never trusted"
            },
            u.command()
        );
    } else if let Some(u) = &config.workspace {
        let _ = writeln!(
            text,
            "workspace: NOT TRUSTED: presets that run the repository's code start restricted or not at all, and task presets take no extra args; review it, then `{}`",
            u.command()
        );
    }
    for note in &config.notes {
        let _ = writeln!(text, "config: {note}");
    }
    text
}

/// One language's servers, each started on one of its files: written to `text`, and as JSON.
async fn language_report(
    engine: &Engine,
    language: &str,
    files: usize,
    notes: &HashMap<String, Option<String>>,
    text: &mut String,
) -> Value {
    let names = engine.registry().by_language(language);
    if names.is_empty() {
        let e = engine.registry().no_server(language, engine.root().path());
        let _ = writeln!(
            text,
            "{language} ({files} files): no server — {}",
            e.message
        );
        return json!({"language": language, "files": files, "servers": [], "missing": e.message});
    }
    let _ = writeln!(text, "{language} ({files} files):");
    let mut servers = Vec::new();
    let file = engine.languages().first_file(20_000, |l| l == language);
    let started = match &file {
        Some(f) => engine.registry().servers_for(f, language).await,
        None => Vec::new(),
    };
    for (name, result) in names.iter().zip(started) {
        servers.push(match result {
            Ok(server) => {
                let note = notes.get(name.as_str()).cloned().flatten();
                server_ok(engine, name, &server, note, text).await
            }
            Err(e) => server_failed(name, &e, text),
        });
    }
    json!({"language": language, "files": files, "servers": servers})
}

/// A server that started: its version (or its package's), capabilities, restriction.
async fn server_ok(
    engine: &Engine,
    name: &str,
    server: &Server,
    note: Option<String>,
    text: &mut String,
) -> Value {
    let c = server.client();
    let version = match c.server_version() {
        Some(v) if v.chars().any(|ch| ch.is_ascii_digit()) => Some(v.to_string()),
        _ => match engine.registry().get(name).await.map(|s| s.launch) {
            Some(presets::Launch::Stdio(s)) => presets::package_version(&s.command),
            _ => None,
        },
    };
    let caps: Vec<&str> = Cap::ALL
        .iter()
        .filter(|cap| server.supports(**cap) || **cap == Cap::PullDiagnostics)
        .map(|cap| cap.name())
        .collect();
    let _ = writeln!(
        text,
        "  ok       {name}  {}\n           capabilities: {}",
        version.as_deref().unwrap_or("(no version given)"),
        caps.join(", ")
    );
    if let Some(n) = &note {
        let _ = writeln!(text, "           restricted: {n}");
    }
    json!({"name": name, "ok": true, "version": version, "capabilities": caps, "note": note})
}

/// A server that did not start: untrusted, missing (with its fix) or failed.
fn server_failed(name: &str, e: &CoreError, text: &mut String) -> Value {
    let fix = e
        .data
        .as_ref()
        .and_then(|d| d.get("install").or_else(|| d.get("fix")))
        .and_then(|v| v.as_str())
        .unwrap_or("")
        .to_string();
    let label = match e.kind {
        Kind::UntrustedConfig => "untrusted",
        Kind::NoServer => "missing",
        _ => "failed",
    };
    let _ = writeln!(text, "  {label:<8} {name}  — {}", e.message);
    json!({"name": name, "ok": false, "error": e.message, "fix": fix})
}
