//! Stopping the servers (`memfs mcp --http`, `memfs serve`) cleanly.

use std::io::Write;

/// Completes on Ctrl-C (SIGINT) or, on Unix, SIGTERM, and says so on stderr.
pub(crate) async fn shutdown() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            // No handler could be installed: never stop on this one.
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => drop(signal.recv().await),
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
    // `writeln!`, not `eprintln!`: with stderr gone (a closed terminal, a dead pipe reader)
    // `eprintln!` panics, this task ends, and the server never stops.
    let _ = writeln!(std::io::stderr(), "memfs: stopping");
}
