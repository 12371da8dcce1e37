//! The `lspgate` binary: parses the command line, sends logs to stderr, runs, sets the exit code.
//!
//! One thread of tokio: lspgate only moves messages between the client, its servers and the disk,
//! so a second worker would buy nothing but cross-thread wake-ups on every call; slow disk work
//! (applying edits, installs, workspace walks) goes to the blocking pool. A panic kills the
//! servers' process groups before it is reported.

use clap::Parser;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::LevelFilter;

fn main() {
    // One malloc arena: lspgate runs on one thread, and the blocking pool's occasional threads
    // would otherwise each get an arena of their own, resident for the rest of the process.
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt before any other thread exists, with a valid parameter and value.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    // A panic must not leave servers behind: kill their process groups, then report as usual.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        lspgate::lsp::transport::kill_all_servers();
        default_hook(info);
    }));
    let cli = lspgate::cli::Cli::parse();
    let level = match cli.verbose {
        0 => LevelFilter::WARN,
        1 => LevelFilter::INFO,
        _ => LevelFilter::DEBUG,
    };
    let logs = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false);
    // Filter directives only when asked for: parsing them pulls in a regex engine, which
    // costs the common case resident memory for nothing.
    match std::env::var("LSPGATE_LOG") {
        Ok(directives) => logs.with_env_filter(EnvFilter::new(directives)).init(),
        Err(_) => logs.with_max_level(level).init(),
    }
    // One thread: lspgate only moves messages between the client, its servers and the disk, so
    // a second worker buys nothing but cross-thread wake-ups on every call (and memory). Slow
    // disk work (applying edits, installs) goes to the blocking pool.
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            std::process::exit(2);
        }
    };
    let code = runtime.block_on(lspgate::cli::run(cli));
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    // Nothing polls the client's pipes any more: give them back their blocking mode.
    lspgate::mcp::stdio::restore_client_io();
    std::process::exit(code);
}
