//! `lspgate serve --http ADDR`: the per-user daemon serves MCP over HTTP for this session while
//! this command runs (`daemon::http`); standalone, or when no daemon can be had, this process
//! serves it itself. Either way the URL (and a generated token) go to stderr, and SIGTERM or
//! SIGINT stops the listener gracefully.

use super::{Cli, Command, context, standalone};
use crate::daemon::terminated;
use crate::mcp::http::{self, Token};

pub(super) async fn serve(cli: &Cli, max_frame: usize) -> i32 {
    let Command::Serve {
        http: flags,
        server,
        ..
    } = &cli.command
    else {
        return 2;
    };
    let args = flags.settings();
    let session = context::session(cli, server);
    if !standalone(cli) {
        match crate::daemon::http::serve(session.clone(), args.clone(), max_frame).await {
            Ok(code) => return code,
            Err(why) => tracing::warn!("no daemon ({why}); serving HTTP from this process"),
        }
    }
    let config = match args.config(max_frame, context::var) {
        Ok(Some(c)) => c,
        Ok(None) => return 2,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let listener = match Token::choose(None, context::var) {
        Ok(token) => http::bind(&config, token).await,
        Err(e) => Err(e),
    };
    let listener = match listener {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    let engine = match session.agent_engine(None).await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return 2;
        }
    };
    eprint!("{}", listener.announce(engine.root().path()));
    listener
        .serve(http::sessions_of(engine.clone(), max_frame), terminated())
        .await;
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), engine.shutdown()).await;
    0
}
