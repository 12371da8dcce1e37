//! MCP over Streamable HTTP (protocol §5): rmcp's `StreamableHttpService` at `/mcp` under axum,
//! each MCP session an `Engine` session on the listener's shared workspace (so HTTP clients and
//! stdio sessions of one root use the same servers), every request through `guard` first.
//! Loopback unless `--http-public`; the bearer token is `LSPGATE_TOKEN` or one made at start,
//! written to a 0600 file in the user's runtime folder (removed when the listener stops); the
//! request body is capped at the frame limit; connections, sessions and requests per session
//! are bounded (`bounds`); on stop the listener takes no new connection, lets the tool calls in
//! flight finish (bounded), then ends its sessions.
//!
//! rmcp's own Host and Origin checks are off: the guard is the one place. Each POST without
//! `Mcp-Session-Id` claims a session place (`bounds`), handed to rmcp's session factory;
//! `sessions_of` makes each MCP session (MCP 2026-07-28's stateless requests get one per request).
//! A given token (`LSPGATE_TOKEN`) is refused below an estimated 64 bits (`Token::given`).

mod bounds;

use std::future::Future;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::McpServer;
use super::guard::{self, Guard, Origin};
use crate::ops::Engine;
pub use bounds::{
    HEADER_TIMEOUT, Limits, MAX_CONNECTIONS, MAX_SESSION_INFLIGHT, MAX_SESSIONS, RESUME_WINDOW,
    SESSION_IDLE,
};

/// The path MCP is served at.
pub const PATH: &str = "/mcp";

/// How long tool calls in flight get to finish when the listener stops.
const CALLS_GRACE: Duration = Duration::from_secs(10);

/// The shortest token lspgate accepts from `LSPGATE_TOKEN`.
const MIN_TOKEN: usize = 16;

/// The fewest bits of entropy lspgate estimates a token from `LSPGATE_TOKEN` must have
/// (`token_bits`): 16 random letters and digits have about 80.
const MIN_TOKEN_BITS: f64 = 64.0;

/// The `--http` settings of `serve` and `daemon`, as the command line gave them (its flags are
/// declared in the CLI) and as they cross the daemon's socket.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct HttpArgs {
    /// `HOST:PORT`, or a port on 127.0.0.1 (0 picks a free one); none: stdio.
    pub http: Option<String>,
    /// Listen on an address other than loopback.
    pub http_public: bool,
    /// Host names served besides loopback's.
    pub http_hosts: Vec<String>,
    /// Browser origins served besides loopback's.
    pub http_origins: Vec<String>,
}

/// A listener's settings, checked.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub addr: SocketAddr,
    pub public: bool,
    pub hosts: Vec<String>,
    pub origins: Vec<Origin>,
    /// The largest request body, in bytes (the frame limit): 413 beyond.
    pub max_body: usize,
    /// Connections, sessions, requests per session, the header timeout.
    pub limits: Limits,
}

impl HttpArgs {
    /// The listener's settings (`None` without `--http`); `var` reads the environment of the
    /// client the listener is for.
    pub fn config(
        &self,
        max_body: usize,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<HttpConfig>, String> {
        let Some(addr) = &self.http else {
            return Ok(None);
        };
        let addr = resolve(addr)?;
        if !addr.ip().is_loopback() && !self.http_public {
            return Err(format!(
                "--http {addr} is not a loopback address: add --http-public to listen there (clients still need the token)"
            ));
        }
        let listed = |flag: &[String], env: &str| -> Vec<String> {
            flag.iter()
                .cloned()
                .chain(
                    var(env)
                        .unwrap_or_default()
                        .split(',')
                        .map(|s| s.trim().to_string()),
                )
                .filter(|s| !s.is_empty())
                .collect()
        };
        let mut origins = Vec::new();
        for o in listed(&self.http_origins, "LSPGATE_HTTP_ORIGINS") {
            origins.push(Origin::parse(&o).ok_or_else(|| {
                format!("--http-origin `{o}` is not an origin (`https://host[:port]`, `http://host:*`, `null`)")
            })?);
        }
        Ok(Some(HttpConfig {
            addr,
            public: self.http_public,
            hosts: listed(&self.http_hosts, "LSPGATE_HTTP_HOSTS"),
            origins,
            max_body,
            limits: Limits::from_env(&var)?,
        }))
    }
}

/// `PORT`, `HOST:PORT` or `[V6]:PORT` to one socket address (a name resolving to several
/// takes the first; `localhost` is 127.0.0.1).
fn resolve(text: &str) -> Result<SocketAddr, String> {
    let text = text.trim();
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    if let Some(port) = text.strip_prefix("localhost:") {
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("--http {text}: the port is not a number"))?;
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    text.to_socket_addrs()
        .map_err(|e| format!("--http {text}: {e} (expected HOST:PORT)"))?
        .next()
        .ok_or_else(|| format!("--http {text}: no address"))
}

/// The bearer token of a listener.
#[derive(Clone)]
pub struct Token {
    secret: String,
    /// Made by lspgate (so written to a file and printed), not given.
    pub generated: bool,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// `given` (a listener hosted again keeps its token), else `LSPGATE_TOKEN` (read with
    /// `var`), else a new random one.
    pub fn choose(
        given: Option<(String, bool)>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Token, String> {
        if let Some((secret, generated)) = given {
            return Token::given(secret, generated);
        }
        match var("LSPGATE_TOKEN").filter(|t| !t.is_empty()) {
            Some(t) => Token::given(t, false),
            None => Token::generate(),
        }
    }

    fn given(secret: String, generated: bool) -> Result<Token, String> {
        if secret.len() < MIN_TOKEN || !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "LSPGATE_TOKEN must be at least {MIN_TOKEN} visible ASCII characters (no spaces)"
            ));
        }
        let bits = token_bits(secret.as_bytes());
        if bits < MIN_TOKEN_BITS {
            return Err(format!(
                "LSPGATE_TOKEN is too easy to guess: about {bits:.0} bits of entropy, lspgate wants at least {MIN_TOKEN_BITS:.0} (repeats, runs and sequences count for little): use 16 or more random letters and digits (`openssl rand -hex 16`), or leave it unset and lspgate makes one"
            ));
        }
        Ok(Token { secret, generated })
    }

    /// 32 random bytes from the kernel, in hex.
    pub fn generate() -> Result<Token, String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| format!("cannot make a token: {e}"))?;
        let secret = crate::text::hex(&bytes);
        Ok(Token {
            secret,
            generated: true,
        })
    }

    pub fn secret(&self) -> &str {
        &self.secret
    }
}

/// An estimate of the entropy of a token, in bits: each character that could not be guessed
/// from the ones before it counts for the alphabet of the character classes the token uses
/// (lowercase, uppercase, digits: 26, 26, 10; other visible ASCII: 32). A character is guessed
/// when it continues a step of the one before (`aaaa`, `abcd`, `9753`) or repeats the two
/// before it at some lag up to 8 (`abab`, `xyzxyz`).
fn token_bits(t: &[u8]) -> f64 {
    let class = |f: fn(&u8) -> bool, size: f64| if t.iter().any(f) { size } else { 0.0 };
    let alphabet = class(u8::is_ascii_lowercase, 26.0)
        + class(u8::is_ascii_uppercase, 26.0)
        + class(u8::is_ascii_digit, 10.0)
        + class(u8::is_ascii_punctuation, 32.0);
    let step = |i: usize| i16::from(t[i]) - i16::from(t[i - 1]);
    let guessed = |i: usize| {
        (i == 1 && t[1] == t[0])
            || (i >= 2 && step(i) == step(i - 1))
            || (2..=8).any(|lag| i > lag && t[i] == t[i - lag] && t[i - 1] == t[i - 1 - lag])
    };
    let free = (0..t.len()).filter(|&i| !guessed(i)).count();
    free as f64 * alphabet.max(1.0).log2()
}

/// The token's file, removed when the listener stops.
struct TokenFile(PathBuf);

impl TokenFile {
    /// Writes `token` to `http-ADDR.token` in the runtime folder (0700, the user's), created
    /// 0600 and never through a symlink; a leftover of a listener that died is replaced.
    fn write(addr: SocketAddr, token: &Token) -> Result<TokenFile, String> {
        use std::io::Write;
        let dir = crate::workspace::dirs::runtime_dir()?;
        let path = dir.join(format!("http-{addr}.token"));
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{}: {e}", path.display())),
        }
        let mut f = crate::workspace::dirs::private_file(
            &path,
            std::fs::OpenOptions::new().write(true).create_new(true),
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
        f.write_all(format!("{}\n", token.secret).as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TokenFile(path))
    }
}

impl Drop for TokenFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Requests in flight on a listener, from their arrival to the end of their response's body:
/// every POST (so every call), not the GET streams that only wait for notifications.
#[derive(Default)]
struct InFlight {
    n: AtomicUsize,
    idle: tokio::sync::Notify,
}

/// One request counted in an `InFlight` while it lives.
struct Running(Arc<InFlight>);

impl InFlight {
    fn enter(self: &Arc<Self>) -> Running {
        self.n.fetch_add(1, Ordering::AcqRel);
        Running(self.clone())
    }

    /// Resolves once no call is in flight.
    async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.n.load(Ordering::Acquire) == 0 {
                return;
            }
            notified.await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.n.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

/// Counts a request until its response's body has been sent (or dropped with its connection).
async fn track(
    axum::extract::State(inflight): axum::extract::State<Arc<InFlight>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    if request.method() == axum::http::Method::GET {
        return next.run(request).await;
    }
    let running = inflight.enter();
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    let body = futures::StreamExt::map(body.into_data_stream(), move |chunk| {
        let _held = &running;
        chunk
    });
    axum::response::Response::from_parts(parts, axum::body::Body::from_stream(body))
}

/// A bound listener, not serving yet.
pub struct Listener {
    tcp: tokio::net::TcpListener,
    addr: SocketAddr,
    config: HttpConfig,
    token: Token,
    token_file: Option<TokenFile>,
    sessions: Arc<AtomicUsize>,
    /// The daemon's status page, when this listener serves it too (`daemon --http`).
    page: Option<Arc<super::status::Page>>,
}

/// Binds `config.addr`; a generated token is written to its file.
pub async fn bind(config: &HttpConfig, token: Token) -> Result<Listener, String> {
    let tcp = tokio::net::TcpListener::bind(config.addr)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
    let addr = tcp
        .local_addr()
        .map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
    let token_file = if token.generated {
        Some(TokenFile::write(addr, &token)?)
    } else {
        None
    };
    if config.public && addr.ip().is_unspecified() && config.hosts.is_empty() {
        tracing::warn!(
            "listening on every address: requests must name this machine by an IP address, a loopback name, or a name given with --http-host"
        );
    }
    Ok(Listener {
        tcp,
        addr,
        config: config.clone(),
        token,
        token_file,
        sessions: Arc::default(),
        page: None,
    })
}

impl Listener {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL clients use (a name for a wildcard address: loopback).
    pub fn url(&self) -> String {
        let ip = match self.addr.ip() {
            IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::from([127, 0, 0, 1]),
            IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        format!("http://{}{PATH}", SocketAddr::new(ip, self.addr.port()))
    }

    /// Serves the status page (`/status…`) beside MCP.
    pub fn with_page(mut self, page: Arc<super::status::Page>) -> Listener {
        self.page = Some(page);
        self
    }

    pub fn token(&self) -> &Token {
        &self.token
    }

    pub fn token_file(&self) -> Option<&Path> {
        self.token_file.as_ref().map(|f| f.0.as_path())
    }

    /// The number of MCP sessions open on this listener, kept up to date while it serves.
    pub fn sessions(&self) -> Arc<AtomicUsize> {
        self.sessions.clone()
    }

    /// What to print on stderr: the URL, and the token when lspgate made it.
    pub fn announce(&self, root: &Path) -> String {
        let mut s = format!(
            "lspgate: MCP over HTTP at {} for {}\n",
            self.url(),
            root.display()
        );
        match self.token_file() {
            Some(file) => s.push_str(&format!(
                "lspgate: bearer token {} (also in {})\n",
                self.token.secret,
                file.display()
            )),
            None => s.push_str("lspgate: bearer token from LSPGATE_TOKEN\n"),
        }
        s
    }

    /// Serves until `stop` resolves: each MCP session an `McpServer` from `session`, every
    /// request through the guard. Then stops taking connections, lets the requests in flight
    /// finish and their answers go out (at most `CALLS_GRACE`), ends the sessions (and so their
    /// event streams) and removes the token file.
    pub async fn serve(
        self,
        session: impl Fn() -> McpServer + Send + Sync + 'static,
        stop: impl Future<Output = ()>,
    ) {
        let Listener {
            tcp,
            addr,
            config,
            token,
            token_file,
            sessions,
            page,
        } = self;
        let mut guard = Guard::new(
            token.secret(),
            config.public,
            &config.hosts,
            &config.origins,
        );
        if let Some(p) = &page {
            guard = guard.with_page(p.keys.clone());
        }
        let guard = Arc::new(guard);
        let inflight = Arc::new(InFlight::default());
        // The guard checks Host and Origin for rmcp too: one place, one rule.
        let http_config = StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .disable_allowed_origins()
            .with_max_request_body_bytes(config.max_body);
        let sessions_ended = http_config.cancellation_token.clone();
        let factory = {
            let sessions = sessions.clone();
            move || {
                let held: Arc<dyn std::any::Any + Send + Sync> =
                    Arc::new(bounds::Slot::claimed_or_new(&sessions));
                Ok(session().holding(held))
            }
        };
        // Sessions idle for long are closed, and finished responses are not kept for long.
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(SESSION_IDLE);
        manager.session_config.completed_cache_ttl = RESUME_WINDOW;
        let service = StreamableHttpService::new(factory, Arc::new(manager), http_config);
        let admission = Arc::new(bounds::Admission::new(sessions, &config.limits));
        let mut app = axum::Router::new().nest_service(PATH, service);
        if let Some(p) = page {
            app = app.merge(super::status::routes(p));
        }
        let app = app
            .fallback(|| async {
                (
                    axum::http::StatusCode::NOT_FOUND,
                    "lspgate serves MCP at /mcp",
                )
            })
            .layer(axum::middleware::from_fn_with_state(
                admission,
                bounds::admit,
            ))
            .layer(axum::middleware::from_fn_with_state(
                inflight.clone(),
                track,
            ))
            .layer(axum::middleware::from_fn_with_state(guard, guard::gate));
        let (closing, closed) = tokio::sync::watch::channel(false);
        let mut server = tokio::spawn(bounds::run(tcp, app, config.limits, closed));
        tracing::info!(%addr, connections = config.limits.connections(), sessions = config.limits.max_sessions, "serving MCP over HTTP");
        stop.await;
        tracing::info!(%addr, "stopping the HTTP listener");
        let _ = closing.send(true);
        if tokio::time::timeout(CALLS_GRACE, inflight.idle())
            .await
            .is_err()
        {
            tracing::warn!("requests still running after {CALLS_GRACE:?}: ending them");
        }
        sessions_ended.cancel();
        match tokio::time::timeout(Duration::from_secs(3), &mut server).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("the HTTP listener failed: {e}"),
            Err(_) => {
                tracing::warn!("connections still open 3 s after the stop: dropped");
                server.abort();
            }
        }
        drop(token_file);
        tracing::info!(%addr, "HTTP listener stopped");
    }
}

/// Serves the status page alone on `tcp` (the daemon's on-demand loopback listener for
/// `daemon status --web`), behind the guard with `token`, until `stop` resolves.
pub async fn serve_page(
    tcp: tokio::net::TcpListener,
    token: &Token,
    page: Arc<super::status::Page>,
    stop: impl Future<Output = ()>,
) {
    let guard = Arc::new(Guard::new(token.secret(), false, &[], &[]).with_page(page.keys.clone()));
    let app = super::status::routes(page)
        .fallback(|| async {
            (
                axum::http::StatusCode::NOT_FOUND,
                "the status page is at /status",
            )
        })
        .layer(axum::middleware::from_fn_with_state(guard, guard::gate));
    let limits = bounds::Limits::default();
    let (closing, closed) = tokio::sync::watch::channel(false);
    let mut server = tokio::spawn(bounds::run(tcp, app, limits, closed));
    stop.await;
    let _ = closing.send(true);
    if tokio::time::timeout(Duration::from_secs(3), &mut server)
        .await
        .is_err()
    {
        server.abort();
    }
}

/// New MCP sessions on `base`'s workspace with its options, each an `Engine` session of its
/// own (its previews and overlays its own), speaking through a transport of `max_frame` bytes.
pub fn sessions_of(base: Arc<Engine>, max_frame: usize) -> impl Fn() -> McpServer + Send + Sync {
    move || {
        let engine = Engine::session(base.shared().clone(), base.options().clone());
        McpServer::new(Arc::new(engine), max_frame)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(addr: &str) -> HttpArgs {
        HttpArgs {
            http: Some(addr.into()),
            ..HttpArgs::default()
        }
    }

    #[test]
    fn addresses_default_to_loopback_and_refuse_others_unless_public() {
        let none = |_: &str| None;
        let c = args("8765").config(10, none).unwrap().unwrap();
        assert_eq!(c.addr, "127.0.0.1:8765".parse().unwrap());
        let c = args("localhost:0").config(10, none).unwrap().unwrap();
        assert_eq!(c.addr, "127.0.0.1:0".parse().unwrap());
        let c = args("[::1]:9").config(10, none).unwrap().unwrap();
        assert!(c.addr.ip().is_loopback());
        let e = args("0.0.0.0:8765").config(10, none).unwrap_err();
        assert!(e.contains("--http-public"), "{e}");
        let e = args("192.168.1.20:8765").config(10, none).unwrap_err();
        assert!(e.contains("--http-public"), "{e}");
        let public = HttpArgs {
            http_public: true,
            ..args("0.0.0.0:8765")
        };
        assert!(public.config(10, none).unwrap().unwrap().public);
        assert!(args("127.0.0.1:http").config(10, none).is_err());
        assert!(HttpArgs::default().config(10, none).unwrap().is_none());
    }

    #[test]
    fn origins_and_hosts_come_from_flags_and_environment() {
        let a = HttpArgs {
            http_origins: vec!["https://ide.example".into()],
            ..args("0")
        };
        let env = |k: &str| {
            (k == "LSPGATE_HTTP_ORIGINS")
                .then(|| "http://a.example:*, ,https://b.example:8443".into())
        };
        let c = a.config(10, env).unwrap().unwrap();
        assert_eq!(c.origins.len(), 3);
        let bad = HttpArgs {
            http_origins: vec!["ide.example".into()],
            ..args("0")
        };
        assert!(
            bad.config(10, |_| None)
                .unwrap_err()
                .contains("not an origin")
        );
    }

    #[test]
    fn tokens_are_random_and_given_ones_checked() {
        let a = Token::generate().unwrap();
        let b = Token::generate().unwrap();
        assert_eq!(a.secret().len(), 64);
        assert_ne!(a.secret(), b.secret());
        assert!(a.generated);
        let env = |t: &'static str| move |k: &str| (k == "LSPGATE_TOKEN").then(|| t.to_string());
        let t = Token::choose(None, env("a-long-enough-token")).unwrap();
        assert!(!t.generated);
        assert_eq!(t.secret(), "a-long-enough-token");
        assert!(Token::choose(None, env("short")).is_err());
        assert!(Token::choose(None, env("has a space in it ok")).is_err());
        assert!(Token::choose(None, env("")).unwrap().generated);
        let kept =
            Token::choose(Some((a.secret().into(), true)), env("ignored-because-kept")).unwrap();
        assert_eq!(kept.secret(), a.secret());
        assert_eq!(format!("{kept:?}"), "Token(..)");
    }

    #[test]
    fn guessable_tokens_are_refused() {
        let env = |t: &'static str| move |k: &str| (k == "LSPGATE_TOKEN").then(|| t.to_string());
        for weak in [
            "aaaaaaaaaaaaaaaa",
            "abababababababababababab",
            "abcabcabcabcabcabcabc",
            "abcdefghijklmnop",
            "0123456789abcdef",
            "1111111111111111111111111111111111",
            "9876543210987654",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab",
            "xyzxyzxyzxyzxyzxyzxyzxyzxyzxyzxyzxyz",
            "4242424242424242",
        ] {
            let e = Token::choose(None, env(weak)).unwrap_err();
            assert!(e.contains("too easy to guess"), "{weak}: {e}");
        }
        for strong in [
            "a-long-enough-token",
            "a-token-the-user-chose-0123",
            "k3J9x2Qm7vT1pL8w",
            "4f1c9a7e2b6d8035",
            "correct-horse-battery-staple",
        ] {
            assert!(Token::choose(None, env(strong)).is_ok(), "{strong}");
        }
        // Every generated token passes its own check.
        for _ in 0..200 {
            let t = Token::generate().unwrap();
            assert!(token_bits(t.secret().as_bytes()) > 200.0);
        }
    }

    #[test]
    fn random_sixteen_character_tokens_pass() {
        // Tokens of 16 random characters from a-z0-9, as a user would make them: the estimate
        // rarely mistakes one for guessable.
        let mut bytes = [0u8; 16 * 500];
        getrandom::fill(&mut bytes).unwrap();
        const ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let refused = bytes
            .chunks(16)
            .filter(|c| {
                let t: Vec<u8> = c.iter().map(|b| ALNUM[*b as usize % ALNUM.len()]).collect();
                token_bits(&t) < MIN_TOKEN_BITS
            })
            .count();
        assert!(refused <= 5, "{refused} of 500 refused");
    }
}
