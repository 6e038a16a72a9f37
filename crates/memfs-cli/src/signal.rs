//! Stopping the servers (`memfs mcp --http`, `memfs serve`, `memfs ui`) cleanly.

use std::future::Future;
use std::io::Write;

/// Installs the handlers for Ctrl-C (SIGINT) and, on Unix, SIGTERM now, and returns a future
/// that completes on either and says so on stderr. Call it before saying the server is up: a
/// signal that comes after that is then always handled.
pub(crate) fn shutdown() -> impl Future<Output = ()> {
    #[cfg(unix)]
    let (interrupt, terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::interrupt()).ok(), signal(SignalKind::terminate()).ok())
    };
    async move {
        #[cfg(unix)]
        {
            // A handler that could not be installed never fires.
            let wait = |signal: Option<tokio::signal::unix::Signal>| async move {
                match signal {
                    Some(mut signal) => drop(signal.recv().await),
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(interrupt) => {}
                () = wait(terminate) => {}
            }
        }
        #[cfg(not(unix))]
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        // `writeln!`, not `eprintln!`: with stderr gone (a closed terminal, a dead pipe reader)
        // `eprintln!` panics, this task ends, and the server never stops.
        let _ = writeln!(std::io::stderr(), "memfs: stopping");
    }
}
