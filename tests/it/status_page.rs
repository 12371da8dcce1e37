//! The daemon's status page (protocol §5, "Status page") in a real headless browser (Debian's
//! Chromium driven by playwright-core, `tests/status_page/drive.js`) with a real pyright through
//! the daemon: its pid and memory, a plain write's event within 2 s without a reload, a crash's
//! restart and last error, the restart button (confirmed) giving a new pid, the events filtered;
//! a screenshot for the README (`docs/status-page.png`); the daemon's idle CPU before and after
//! the page. And at the HTTP level (`tests/it/raw_http/`): 401 without token or cookie, 403 for a
//! foreign Origin or Host, a ticket used twice, POSTs without or with a wrong CSRF token or from
//! a foreign Origin refused, and the stop button's POST stopping the daemon. Chromium or
//! playwright-core missing fails the test (scripts/install-test-servers.sh installs them).

use crate::common;
use crate::raw_http;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Daemon, repo, require, test_path, workspace};
use serde_json::{Value, json};

const CHROMIUM: &str = "/usr/bin/chromium";

fn playwright() -> PathBuf {
    repo().join(".tools/playwright/node_modules/playwright-core")
}

/// Fails (never skips) without the browser or its driver.
fn require_browser() {
    assert!(
        Path::new(CHROMIUM).is_file(),
        "{CHROMIUM} is not installed: run scripts/install-test-servers.sh (apt's chromium)"
    );
    assert!(
        playwright().join("package.json").is_file(),
        "playwright-core is not installed in .tools/playwright: run scripts/install-test-servers.sh"
    );
}

/// The daemon's CPU time so far (utime + stime of /proc/PID/stat), in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let rest = &stat[stat.rfind(')').unwrap() + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// The daemon's CPU ticks over `window` while nothing happens.
fn idle_cpu(pid: u32, window: Duration) -> u64 {
    let before = cpu_ticks(pid);
    std::thread::sleep(window);
    cpu_ticks(pid) - before
}

fn web_url(d: &Daemon, dir: &Path) -> String {
    let (code, out, err) = d.cli(dir, &["daemon", "status", "--web"]);
    assert_eq!(code, 0, "daemon status --web: {err}");
    let url = out.trim().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.contains("/status?ticket="),
        "{url}"
    );
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_page_shows_pyright_live_in_a_real_browser() {
    require("pyright-langserver");
    require_browser();
    let ws = workspace(&[
        (
            "app.py",
            "def twice(x: int) -> int:\n    return 2 * x\n\ntwice('no')\n",
        ),
        ("lib.py", "VALUE = 1\n"),
    ]);
    let d = Daemon::new();
    let gate = d.session(ws.path(), &[]).await;
    gate.ok("diagnostics", json!({"file": "app.py"})).await;
    let (servers, _) = gate.ok("servers", json!({})).await;
    let pyright = servers["servers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str().unwrap().contains("pyright") && s["pid"].is_u64())
        .unwrap_or_else(|| panic!("pyright runs: {servers}"))
        .clone();
    let name = pyright["name"].as_str().unwrap().to_string();
    let pid = pyright["pid"].as_u64().unwrap();

    // The terminal's table says the same.
    let (code, table, err) = d.cli(ws.path(), &["daemon", "status"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        table.contains(&name) && table.contains(&pid.to_string()) && table.contains("MiB"),
        "{table}"
    );
    assert!(table.contains("mcp-stdio"), "{table}");
    let (_, json_out, _) = d.cli(ws.path(), &["daemon", "status", "--json"]);
    let status: Value = serde_json::from_str(&json_out).unwrap();
    assert!(
        status["roots"].is_array() && status["pid"].is_u64(),
        "{status}"
    );

    let daemon_pid = d.pid();
    let window = Duration::from_secs(10);
    let closed_before = idle_cpu(daemon_pid, window);

    let url = web_url(&d, ws.path());
    let shot = repo().join("docs/status-page.png");
    let started = Instant::now();
    let out = std::process::Command::new("node")
        .arg(repo().join("tests/status_page/drive.js"))
        .env("PLAYWRIGHT", playwright())
        .env("CHROMIUM", CHROMIUM)
        .env("URL", &url)
        .env("ROOT", ws.path())
        .env("SCREENSHOT", &shot)
        .env("PATH", test_path())
        .output()
        .expect("node runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("the driver's report ({e}): {stderr}"));
    eprintln!(
        "status page driver ({:.1} s): {report:#}",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(report["ok"], true, "{report:#}\n{stderr}");
    // The ticket left the address bar, for the page's secret path.
    let landed = report["landed"].as_str().unwrap();
    assert!(
        landed.contains("/status/") && landed.ends_with('/') && !landed.contains("ticket"),
        "{report}"
    );
    assert_eq!(report["server"], name.as_str());
    assert_eq!(report["first"]["pid"], pid.to_string().as_str());
    assert!(
        report["first"]["mem"].as_str().unwrap().contains("MiB"),
        "{report}"
    );
    assert!(
        report["write_ms"].as_u64().unwrap() <= 2000,
        "the write showed after {} ms",
        report["write_ms"]
    );
    assert_eq!(report["not_reloaded"], true);
    let crashed = &report["after_crash"];
    assert_ne!(crashed["pid"], pid.to_string().as_str());
    assert!(
        crashed["restarts"]
            .as_str()
            .unwrap()
            .parse::<u32>()
            .unwrap()
            >= 1
    );
    assert!(!crashed["error"].as_str().unwrap().trim().is_empty());
    assert!(report["restart_event"].as_u64().unwrap() >= 1, "{report}");
    assert_ne!(report["after_button"]["pid"], crashed["pid"]);
    assert!(
        report["dialogs"][0]
            .as_str()
            .unwrap()
            .starts_with("Restart "),
        "{report}"
    );
    assert_eq!(report["filtered_kinds"], json!(["server_restarted"]));
    assert!(
        report["sessions"]
            .as_array()
            .unwrap()
            .contains(&json!("mcp-stdio"))
    );
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000);

    // The page closed: the daemon idles as it did before it was opened (once pyright, restarted
    // by the button, has settled: its indexing is the daemon's work too).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (servers, _) = gate.ok("servers", json!({})).await;
        let ready = servers["servers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == name.as_str() && s["state"] == "ready");
        if ready || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let closed_after = idle_cpu(daemon_pid, window);
    eprintln!(
        "daemon idle CPU over {} s: {closed_before} ticks before the page, {closed_after} after it closed",
        window.as_secs()
    );
    assert!(
        closed_after <= closed_before + 3,
        "idle CPU grew after the page closed: {closed_before} -> {closed_after} ticks"
    );
    drop(gate);
}

/// Reads a response's `Set-Cookie` into a `Cookie` header value.
fn cookie_of(r: &raw_http::Response) -> String {
    let set = r.header("set-cookie").expect("a cookie");
    assert!(
        set.contains("HttpOnly")
            && set.contains("SameSite=Strict")
            && set.contains("Path=/status/"),
        "{set}"
    );
    set.split(';').next().unwrap().to_string()
}

/// The page's secret path, which the cookie is scoped to (`Path=`).
fn base_of(r: &raw_http::Response) -> String {
    let set = r.header("set-cookie").expect("a cookie");
    let base = set
        .split(';')
        .find_map(|p| p.trim().strip_prefix("Path="))
        .expect("a Path")
        .to_string();
    let secret = base.strip_prefix("/status/").expect("under /status");
    assert!(
        secret.len() == 24 && secret.chars().all(|c| c.is_ascii_hexdigit()),
        "{base}"
    );
    base
}

#[test]
fn the_page_refuses_what_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::new();
    let url = web_url(&d, dir.path());
    let (addr, path) = raw_http::split_url(&url);
    let host = addr.to_string();
    let mut c = raw_http::Conn::connect(addr).unwrap();
    let get = |c: &mut raw_http::Conn, path: &str, extra: &[(&str, &str)]| {
        let mut h = vec![("Host", host.as_str())];
        h.extend_from_slice(extra);
        c.request("GET", path, &h, b"").unwrap()
    };
    // Nothing without the token, a cookie or a ticket.
    assert_eq!(get(&mut c, "/status", &[]).status, 401);
    assert_eq!(get(&mut c, "/status/snapshot", &[]).status, 401);
    assert_eq!(get(&mut c, "/status/events", &[]).status, 401);
    assert_eq!(get(&mut c, "/status?ticket=forged", &[]).status, 401);
    let r = get(
        &mut c,
        "/status/snapshot",
        &[("Cookie", "lspgate_status=forged")],
    );
    assert_eq!(r.status, 401);
    // A foreign Origin or Host, even with a valid ticket.
    assert_eq!(
        get(&mut c, &path, &[("Origin", "http://evil.example")]).status,
        403
    );
    let r = c
        .request("GET", &path, &[("Host", "evil.example")], b"")
        .unwrap();
    assert_eq!(r.status, 403);
    // The ticket: once, for a cookie and a page moving on to the bare one.
    // A HEAD (a link previewer) does not use it up.
    let r = c
        .request("HEAD", &path, &[("Host", host.as_str())], b"")
        .unwrap();
    assert_eq!(r.status, 200);
    let r = get(&mut c, &path, &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    let cookie = cookie_of(&r);
    let base = base_of(&r);
    assert!(
        r.text().contains(&format!("content=\"0;url={base}/\"")),
        "{}",
        r.text()
    );
    assert_eq!(get(&mut c, &path, &[]).status, 401, "a ticket is used once");
    // The cookie opens the page's secret path only: a browser sends it nowhere else (not to
    // another loopback port's `/status`), and lspgate takes it nowhere else.
    for elsewhere in ["/status", "/status/snapshot", "/status/page/snapshot"] {
        assert_eq!(
            get(&mut c, elsewhere, &[("Cookie", &cookie)]).status,
            401,
            "{elsewhere}"
        );
    }
    let page = get(&mut c, &format!("{base}/"), &[("Cookie", &cookie)]);
    assert_eq!(page.status, 200);
    assert!(page.text().contains(&format!("const BASE = \"{base}\"")));
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("connect-src 'self'"));
    let html = page.text();
    // Nothing from outside: no address in any src or href.
    assert!(!html.contains("src=\"http") && !html.contains("href=\"http"));
    let csrf = html
        .split("const CSRF = \"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap()
        .to_string();
    assert_eq!(csrf.len(), 64);
    let snap = get(&mut c, &format!("{base}/snapshot"), &[("Cookie", &cookie)]);
    assert_eq!(snap.status, 200);
    let snap: Value = serde_json::from_slice(&snap.body).unwrap();
    assert!(
        snap["pid"].is_u64() && snap["sessions"].is_array(),
        "{snap}"
    );

    // State-changing requests: the cookie alone is not enough.
    let origin = format!("http://{host}");
    let stop = format!("{base}/stop");
    let post = |c: &mut raw_http::Conn, path: &str, extra: &[(&str, &str)]| {
        let mut h = vec![
            ("Host", host.as_str()),
            ("Cookie", cookie.as_str()),
            ("Content-Type", "application/json"),
        ];
        h.extend_from_slice(extra);
        c.request("POST", path, &h, b"{}").unwrap().status
    };
    assert_eq!(post(&mut c, &stop, &[("Origin", &origin)]), 403);
    assert_eq!(
        post(
            &mut c,
            &stop,
            &[
                ("Origin", &origin),
                ("X-Lspgate-Csrf", "0".repeat(64).as_str())
            ]
        ),
        403
    );
    assert_eq!(
        post(
            &mut c,
            &stop,
            &[("Origin", "http://evil.example"), ("X-Lspgate-Csrf", &csrf)]
        ),
        403
    );
    assert_eq!(
        post(&mut c, &stop, &[("X-Lspgate-Csrf", &csrf)]),
        403,
        "no Origin"
    );
    // Another loopback port is same-site (the cookie goes along) but not the page's origin.
    assert_eq!(
        post(
            &mut c,
            &stop,
            &[("Origin", "http://127.0.0.1:1"), ("X-Lspgate-Csrf", &csrf)]
        ),
        403
    );
    // A cross-site form post can send neither header: refused before anything happens.
    let r = c
        .request(
            "POST",
            &stop,
            &[
                ("Host", host.as_str()),
                ("Origin", "http://evil.example"),
                ("Content-Type", "application/x-www-form-urlencoded"),
            ],
            b"x=1",
        )
        .unwrap();
    assert_eq!(r.status, 403);
    assert!(d.status().is_some(), "the daemon still runs");
    // Done right, the stop button stops the daemon.
    assert_eq!(
        post(
            &mut c,
            &stop,
            &[("Origin", &origin), ("X-Lspgate-Csrf", &csrf)]
        ),
        200
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while d.status().is_some_and(|s| s["state"] != "stopping") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let gone = d.status();
    assert!(
        gone.is_none() || gone.as_ref().is_some_and(|s| s["state"] == "stopping"),
        "{gone:?}"
    );
}

#[test]
fn the_daemons_http_face_serves_the_page_too() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::new();
    let token = "a-token-the-user-chose-for-the-page-0123";
    let mut child = std::process::Command::new(common::LSPGATE)
        .args([
            "daemon",
            "--root",
            dir.path().to_str().unwrap(),
            "--http",
            "127.0.0.1:0",
        ])
        .envs(d.env(&[("LSPGATE_TOKEN", token)]))
        .env("PATH", test_path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut url = None;
    for line in std::io::BufReader::new(stderr).lines() {
        let line = line.unwrap();
        if let Some(rest) = line.strip_prefix("lspgate: MCP over HTTP at ") {
            url = rest.split_whitespace().next().map(String::from);
            break;
        }
    }
    let url = url.expect("the daemon says where it listens");
    let (addr, _) = raw_http::split_url(&url);
    let host = addr.to_string();
    let bearer = format!("Bearer {token}");
    let mut c = raw_http::Conn::connect(addr).unwrap();
    let r = c
        .request("GET", "/status/snapshot", &[("Host", &host)], b"")
        .unwrap();
    assert_eq!(r.status, 401);
    let r = c
        .request(
            "GET",
            "/status/snapshot",
            &[("Host", &host), ("Authorization", &bearer)],
            b"",
        )
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    let snap: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(
        snap["roots"][0]["root"],
        dir.path().canonicalize().unwrap().to_str().unwrap()
    );
    // A script with the token POSTs without a CSRF token; what it names must exist.
    let root = dir.path().canonicalize().unwrap();
    let body = json!({"root": root, "id": "act-999"}).to_string();
    let r = c
        .request(
            "POST",
            "/status/cancel",
            &[("Host", &host), ("Authorization", &bearer)],
            body.as_bytes(),
        )
        .unwrap();
    assert_eq!(r.status, 409, "{}", r.text());
    assert!(r.text().contains("act-999"), "{}", r.text());
    let body = json!({"root": root, "server": "no/such-server"}).to_string();
    let r = c
        .request(
            "POST",
            "/status/restart",
            &[("Host", &host), ("Authorization", &bearer)],
            body.as_bytes(),
        )
        .unwrap();
    assert_eq!(r.status, 409, "{}", r.text());
    // A ticket `--web` minted gets a browser in here too (one set of keys).
    let web = web_url(&d, dir.path());
    let ticket = web.split_once("/status?").unwrap().1;
    let r = c
        .request("GET", &format!("/status?{ticket}"), &[("Host", &host)], b"")
        .unwrap();
    assert_eq!(r.status, 200, "{}", r.text());
    let cookie = cookie_of(&r);
    let base = base_of(&r);
    let r = c
        .request(
            "GET",
            &format!("{base}/snapshot"),
            &[("Host", &host), ("Cookie", &cookie)],
            b"",
        )
        .unwrap();
    assert_eq!(r.status, 200);
    // The cookie opens the page's routes only, never MCP.
    let r = c
        .request(
            "POST",
            "/mcp",
            &[
                ("Host", &host),
                ("Cookie", &cookie),
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
            ],
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        )
        .unwrap();
    assert_eq!(r.status, 401);
    // A page's event stream open while the daemon stops: the stream ends with the daemon's
    // stop, so the listener does not wait out its grace for it.
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let ask = format!(
        "GET {base}/events HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\n\r\n"
    );
    std::io::Write::write_all(&mut stream, ask.as_bytes()).unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&seen).contains("event: hello") {
        let n = std::io::Read::read(&mut stream, &mut buf).expect("the stream says hello");
        assert!(
            n > 0,
            "the stream closed early: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..n]);
    }
    let t = std::time::Instant::now();
    let (code, _, err) = d.cli(dir.path(), &["daemon", "stop"]);
    assert_eq!(code, 0, "{err}");
    let stop_took = t.elapsed();
    // The stream ended (its last chunk, end of file or reset), it did not wait out the read
    // timeout.
    let mut after = Vec::new();
    loop {
        match std::io::Read::read(&mut stream, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                after.extend_from_slice(&buf[..n]);
                if after.ends_with(b"0\r\n\r\n") {
                    break;
                }
            }
        }
    }
    assert!(
        t.elapsed().as_secs() < 15,
        "the stream outlived the daemon: {}",
        String::from_utf8_lossy(&after)
    );
    // The listener had nothing to wait for (a stream that outlived the stop held it the whole
    // 15 s the daemon gives its listeners).
    assert!(
        stop_took.as_secs_f64() < 10.0,
        "daemon stop took {stop_took:?} with a page stream open"
    );
    let _ = child.wait();
}
