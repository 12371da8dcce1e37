//! `lspgate daemon status` for a person: the status page's facts as plain tables (per root its
//! servers with state, pid, memory, uptime, restarts and last error, its watcher and
//! diagnostics; the sessions attached; activities with a text progress bar), and
//! `--web --open`'s browser.

use std::fmt::Write;

use serde_json::Value;

/// The daemon's snapshot (`Request::Snapshot`) as text.
pub(super) fn render(snap: &Value) -> String {
    let mut out = String::new();
    if snap["state"] == "stopping" {
        let _ = writeln!(out, "lspgate daemon (pid {}) is stopping", snap["pid"]);
        return out;
    }
    let _ = writeln!(
        out,
        "lspgate {} daemon, pid {}, up {}, {}",
        snap["version"].as_str().unwrap_or("?"),
        snap["pid"],
        duration(snap["uptime_secs"].as_u64().unwrap_or(0)),
        mib(snap["rss_bytes"].as_u64())
    );
    let roots = snap["roots"].as_array().cloned().unwrap_or_default();
    if roots.is_empty() {
        let _ = writeln!(out, "\nno workspace open");
    }
    for root in &roots {
        render_root(&mut out, root);
    }
    render_sessions(&mut out, snap);
    out.trim_end().to_string()
}

/// One root of the snapshot: its servers' table, its watcher, diagnostics and activities.
fn render_root(out: &mut String, root: &Value) {
    let _ = writeln!(out, "\n{}", root["root"].as_str().unwrap_or("?"));
    let mut rows = vec![vec![
        "SERVER".to_string(),
        "STATE".into(),
        "PID".into(),
        "MEMORY".into(),
        "UPTIME".into(),
        "RESTARTS".into(),
        "DOCS".into(),
        "LAST ERROR".into(),
    ]];
    for s in root["servers"].as_array().into_iter().flatten() {
        rows.push(server_row(s));
    }
    table(out, &rows);
    if let Some(w) = root["watcher"].as_object() {
        let _ = writeln!(
            out,
            "  watcher: {} ({} watched)",
            w.get("mode").and_then(Value::as_str).unwrap_or("?"),
            w.get("watched").and_then(Value::as_u64).unwrap_or(0)
        );
    }
    render_diagnostics(out, &root["diagnostics"]);
    for a in root["activities"].as_array().into_iter().flatten() {
        let p = &a["progress"];
        let (done, total) = (p["done"].as_u64().unwrap_or(0), p["total"].as_u64());
        let _ = writeln!(
            out,
            "  activity {} {} {}",
            a["id"].as_str().unwrap_or("?"),
            a["kind"].as_str().unwrap_or("?"),
            bar(done, total)
        );
    }
}

/// A server's row of its root's table: name, state, pid, memory, uptime, restarts, open
/// documents and last error.
fn server_row(s: &Value) -> Vec<String> {
    vec![
        s["name"].as_str().unwrap_or("?").to_string(),
        s["state"].as_str().unwrap_or("?").to_string(),
        s["pid"]
            .as_u64()
            .map(|p| p.to_string())
            .unwrap_or("-".into()),
        if s["pid"].is_u64() {
            mib(s["rss_bytes"].as_u64())
        } else {
            "-".into()
        },
        s["uptime_secs"]
            .as_u64()
            .map(duration)
            .unwrap_or("-".into()),
        s["restarts"].as_u64().unwrap_or(0).to_string(),
        s["open_documents"]
            .as_u64()
            .map(|n| n.to_string())
            .unwrap_or("-".into()),
        s["last_error"]
            .as_str()
            .map(|e| clip(e, 60))
            .unwrap_or_default(),
    ]
}

/// A root's diagnostics line (`d`, when it has one): the counts and the worst files.
fn render_diagnostics(out: &mut String, d: &Value) {
    if !d.is_object() {
        return;
    }
    let worst: Vec<String> = d["worst"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            format!(
                "{} ({}E {}W)",
                f["file"].as_str().unwrap_or("?"),
                f["errors"],
                f["warnings"]
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "  diagnostics: {} errors, {} warnings in {} files{}{}",
        d["errors"],
        d["warnings"],
        d["files"],
        if worst.is_empty() { "" } else { "; worst: " },
        worst.join(", ")
    );
}

/// The sessions attached: their count, and a table of them if any.
fn render_sessions(out: &mut String, snap: &Value) {
    let sessions = snap["sessions"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(out, "\nsessions: {}", sessions.len());
    if sessions.is_empty() {
        return;
    }
    let now = snap["at_ms"].as_i64().unwrap_or(0);
    let mut rows = vec![vec![
        "KIND".to_string(),
        "ROOT".into(),
        "SINCE".into(),
        "CALLS".into(),
        "LAST TOOL".into(),
    ]];
    for s in &sessions {
        let since = (now - s["since_ms"].as_i64().unwrap_or(now)).max(0) as u64 / 1000;
        rows.push(vec![
            s["kind"].as_str().unwrap_or("?").to_string(),
            s["root"].as_str().unwrap_or("?").to_string(),
            format!("{} ago", duration(since)),
            s["calls"].to_string(),
            s["last_tool"].as_str().unwrap_or("-").to_string(),
        ]);
    }
    table(out, &rows);
}

/// `[#########-----------]  45/100`, or a count when the total is unknown.
pub(super) fn bar(done: u64, total: Option<u64>) -> String {
    const WIDTH: u64 = 20;
    match total {
        Some(t) if t > 0 => {
            let filled = (done.min(t) * WIDTH / t) as usize;
            format!(
                "[{}{}] {done}/{t}",
                "#".repeat(filled),
                "-".repeat(WIDTH as usize - filled)
            )
        }
        _ => format!("{done} done"),
    }
}

fn table(out: &mut String, rows: &[Vec<String>]) {
    let cols = rows.first().map(Vec::len).unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    for r in rows {
        let mut line = String::from("  ");
        for (c, cell) in r.iter().enumerate() {
            let pad = widths[c] - cell.chars().count();
            let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
}

fn mib(bytes: Option<u64>) -> String {
    match bytes {
        Some(b) => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        None => "-".into(),
    }
}

fn duration(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

fn clip(s: &str, n: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    if line.chars().count() <= n {
        line.to_string()
    } else {
        format!("{}…", line.chars().take(n).collect::<String>())
    }
}

/// Opens `url` in the user's browser (`$BROWSER`, else `xdg-open`), detached; says so when
/// neither can. The browser is handed a file (0600, in lspgate's private runtime folder) that
/// moves on to `url`: a command line is readable by every user, and the ticket in `url` would
/// be theirs to take first.
pub(super) fn open_browser(url: &str) {
    let browser = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
        .unwrap_or_else(|| "xdg-open".into());
    let target = match moving_on(url) {
        Ok(file) => format!("file://{}", file.display()),
        Err(e) => {
            eprintln!(
                "lspgate: cannot write the page that opens the URL ({e}); open the URL above"
            );
            return;
        }
    };
    let spawned = std::process::Command::new(&browser)
        .arg(&target)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if let Err(e) = spawned {
        eprintln!("lspgate: cannot open a browser ({browser}: {e}); open the URL above");
    }
}

/// A private file that sends a browser on to `url` (replaced at each `--open`).
fn moving_on(url: &str) -> Result<std::path::PathBuf, String> {
    use std::io::Write;
    let dir = crate::workspace::dirs::runtime_dir()?;
    let path = dir.join("status-open.html");
    let _ = std::fs::remove_file(&path);
    let attr = url.replace('&', "&amp;").replace('"', "&quot;");
    let html = format!(
        "<!doctype html><meta http-equiv=\"refresh\" content=\"0;url={attr}\"><title>lspgate</title>\n"
    );
    crate::workspace::dirs::private_file(
        &path,
        std::fs::OpenOptions::new().write(true).create_new(true),
    )
    .and_then(|mut f| f.write_all(html.as_bytes()))
    .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table_shows_servers_sessions_and_progress() {
        let snap = json!({
            "version": "0.1.0", "pid": 7, "uptime_secs": 65, "rss_bytes": 10485760, "at_ms": 10000,
            "roots": [{"root": "/w", "servers": [{"name": "builtin/pyright", "state": "ready", "pid": 42,
                "rss_bytes": 52428800, "uptime_secs": 30, "restarts": 1, "open_documents": 2,
                "last_error": "exited with signal 9"}],
                "watcher": {"mode": "inotify", "watched": 3},
                "diagnostics": {"errors": 1, "warnings": 0, "files": 1, "worst": [{"file": "a.py", "errors": 1, "warnings": 0}]},
                "activities": [{"id": "act-1", "kind": "check", "progress": {"done": 5, "total": 10}}]}],
            "sessions": [{"kind": "mcp-stdio", "root": "/w", "since_ms": 4000, "calls": 3, "last_tool": "hover"}]
        });
        let text = render(&snap);
        assert!(
            text.contains("builtin/pyright  ready  42   50.0 MiB"),
            "{text}"
        );
        assert!(text.contains("exited with signal 9"));
        assert!(text.contains("inotify (3 watched)"));
        assert!(text.contains("a.py (1E 0W)"));
        assert!(text.contains("[##########----------] 5/10"));
        assert!(
            text.contains("mcp-stdio  /w    6s ago  3      hover"),
            "{text}"
        );
    }
}
