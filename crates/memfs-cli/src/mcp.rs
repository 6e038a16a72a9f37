//! `memfs mcp`: Serve the memory tool over MCP (stdio by default, or streamable HTTP with --http ADDR).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use memfs::Dialect;
use memfs::http::Tokens;
use memfs::mcp::{self, BearerAuth, ENDPOINT_PATH, MemoryServer};

use crate::store::StoreArgs;

/// Arguments of `memfs mcp`.
#[derive(Debug, Args)]
#[command(after_long_help = format!("{EXAMPLES}\n\n{}", crate::limits::HELP))]
pub(crate) struct McpArgs {
    /// Which answer strings to use: `spec` (the documentation page), `python-sdk`
    /// (byte-identical to anthropic==2.10.0's BetaLocalFilesystemMemoryTool) or
    /// `typescript-sdk` (byte-identical to @anthropic-ai/sdk@1.12.0's).
    #[arg(long, default_value = "spec", env = "MEMFS_DIALECT", value_parser = crate::value::parse_dialect)]
    pub(crate) dialect: Dialect,

    /// Serve MCP over streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is HOST:PORT,
    /// such as `127.0.0.1:8765`, `[::1]:8765` or `localhost:8765` (port 0: any free port; the
    /// address is printed on stderr). Every request needs `Authorization: Bearer TOKEN` with a
    /// token from --tokens, unless --no-auth. ADDR must be a loopback address unless
    /// --allow-remote, requests to a loopback address must name a loopback host, and requests
    /// from web browsers (with an Origin header) are refused. Stops on Ctrl-C or SIGTERM.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<String>,

    /// The bearer tokens --http accepts: a file of `NAMESPACE TOKEN` lines, the format of
    /// `memfs serve --tokens` (mode 0600 or stricter). With --namespace NAME only NAME's tokens
    /// are accepted; without, every token in the file.
    #[arg(long, value_name = "FILE", requires = "http", conflicts_with = "no_auth")]
    pub(crate) tokens: Option<PathBuf>,

    /// Serve --http without tokens: anyone who can reach the address can read and change the
    /// memory. Accepted only on a loopback address.
    #[arg(long, requires = "http")]
    pub(crate) no_auth: bool,

    /// Allow --http on an address that is not loopback (such as `0.0.0.0:8765`), and accept any
    /// Host header. Requires --tokens; the transport is plain HTTP, so tokens and memories
    /// cross the network in clear: put it behind a TLS-terminating proxy.
    #[arg(long, requires = "http")]
    pub(crate) allow_remote: bool,

    /// The limits of --http's connections (`memfs serve`'s flags and defaults).
    #[command(flatten)]
    pub(crate) limits: crate::limits::LimitArgs,
}

const EXAMPLES: &str = "\
stdout carries only MCP messages; diagnostics go to stderr. In stdio mode, memfs mcp stops at
the end of its input.

Examples (absolute paths: clients start memfs from a directory of their own):
  # A store and its key file, once:
  memfs --store file:///home/me/memfs-store --key-file /home/me/memfs.key init
  # Claude Code, all projects (the tool appears as mcp__memfs__memory):
  claude mcp add --scope user memfs -- /usr/local/bin/memfs mcp \\
      --store file:///home/me/memfs-store --key-file /home/me/memfs.key
  # Streamable HTTP on this machine, behind a token:
  memfs serve --new-token me > ~/.config/memfs/mcp-tokens && chmod 600 ~/.config/memfs/mcp-tokens
  memfs mcp --http 127.0.0.1:8765 --tokens ~/.config/memfs/mcp-tokens
      # clients connect to http://127.0.0.1:8765/mcp with Authorization: Bearer TOKEN";

pub(crate) async fn run(store: &StoreArgs, args: McpArgs) -> anyhow::Result<()> {
    // Before the store is unlocked: the keys must never reach a core file.
    crate::core_dump::disable()?;
    // The address is checked before the store is opened (or created): a refused flag
    // changes nothing.
    let bind = args.http.as_deref().map(|addr| bind_address(addr, args.allow_remote)).transpose()?;
    let auth = match (bind, &args.tokens) {
        (None, _) => None,
        (Some(_), Some(path)) => Some(BearerAuth::new(Tokens::read_file(path)?, store.namespace.clone())),
        (Some(addr), None) => {
            let addr_text = args.http.as_deref().unwrap_or_default();
            if !args.no_auth {
                anyhow::bail!(
                    "memfs mcp --http needs bearer tokens: give --tokens FILE (`NAMESPACE TOKEN` lines, as for memfs serve; make one with `memfs serve --new-token NAMESPACE`), or --no-auth to serve {addr_text} without authentication"
                );
            }
            if !addr.ip().to_canonical().is_loopback() {
                anyhow::bail!(
                    "--no-auth is accepted only on a loopback address: without tokens, anyone who reaches {addr_text} could read and change the memory; give --tokens FILE"
                );
            }
            None
        }
    };
    let opened = crate::store::open(store, args.dialect, true).await;
    let memfs = match (opened, bind) {
        (Ok(memfs), _) => Arc::new(memfs),
        // On stdio the store is opened before the handshake, and one that cannot open is not an
        // exit: a client shows a server that exits before answering `initialize` as a closed
        // connection (the MCP Python SDK: "Connection closed"; Claude Code: "failed", the reason
        // only in its logs). So the server answers the handshake and tools/list, and every
        // tools/call with isError and memfs's message: the model reads it in the tool result,
        // where it is shown to the user too. The message also goes to stderr, and memfs exits
        // with status 1 at the end of the input.
        (Err(e), None) => {
            let message = format!("memfs: {}{}", crate::advice::message(e.as_ref()), crate::advice::for_error(&e));
            eprintln!("{message}");
            MemoryServer::unavailable(message).serve_stdio().await?;
            // Said once already, above; `main` would say it again.
            std::process::exit(1);
        }
        // Over HTTP memfs is a long-running server started by hand: it stops at once.
        (Err(e), Some(_)) => return Err(e),
    };
    match bind {
        None => MemoryServer::new(memfs.clone()).serve_stdio().await?,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("listening on {addr}"))?;
            let local = listener.local_addr().context("reading the bound address")?;
            let limits = args.limits.limits();
            let config =
                if addr.ip().to_canonical().is_loopback() { mcp::loopback_config() } else { mcp::remote_config() };
            let stop = crate::signal::shutdown();
            match auth {
                Some(auth) => {
                    eprintln!("memfs: MCP over streamable HTTP at http://{local}{ENDPOINT_PATH} (bearer tokens)");
                    mcp::serve_http(memfs.clone(), listener, config, Some(auth), limits, stop).await?;
                }
                None => {
                    eprintln!("memfs: MCP over streamable HTTP at http://{local}{ENDPOINT_PATH} (no authentication)");
                    mcp::serve_http(memfs.clone(), listener, config, None, limits, stop).await?;
                }
            }
        }
    }
    // Last-access days of the session's reads that no commit carried yet.
    memfs.flush().await?;
    Ok(())
}

/// Parses `HOST:PORT` for --http and refuses a non-loopback address unless `allow_remote`.
fn bind_address(addr: &str, allow_remote: bool) -> anyhow::Result<SocketAddr> {
    let parsed = match addr.strip_prefix("localhost:") {
        Some(port) => port.parse::<u16>().ok().map(|port| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)),
        None => addr.parse::<SocketAddr>().ok(),
    };
    let Some(socket) = parsed else {
        anyhow::bail!(
            "--http {addr}: expected HOST:PORT with HOST an IP address or localhost, such as 127.0.0.1:8765, [::1]:8765 or localhost:8765"
        );
    };
    if !allow_remote && !socket.ip().to_canonical().is_loopback() {
        anyhow::bail!(
            "--http {addr}: not a loopback address. MCP over HTTP is plain HTTP (tokens and memories \
             would cross the network in clear), so memfs mcp serves it only on loopback \
             (127.0.0.1:PORT, [::1]:PORT, localhost:PORT). To serve on {addr} anyway (with --tokens, \
             behind a TLS-terminating proxy), add --allow-remote."
        );
    }
    Ok(socket)
}

#[cfg(test)]
mod tests {
    use super::bind_address;

    #[test]
    fn loopback_addresses_are_accepted() {
        for (addr, expected) in
            [("127.0.0.1:8765", "127.0.0.1:8765"), ("[::1]:0", "[::1]:0"), ("localhost:9", "127.0.0.1:9")]
        {
            assert_eq!(bind_address(addr, false).unwrap().to_string(), expected);
        }
    }

    #[test]
    fn other_addresses_need_allow_remote() {
        for addr in ["0.0.0.0:8765", "[::]:8765", "192.168.1.2:80"] {
            let err = bind_address(addr, false).unwrap_err().to_string();
            assert_eq!(
                err,
                format!(
                    "--http {addr}: not a loopback address. MCP over HTTP is plain HTTP (tokens and memories \
                     would cross the network in clear), so memfs mcp serves it only on loopback \
                     (127.0.0.1:PORT, [::1]:PORT, localhost:PORT). To serve on {addr} anyway (with --tokens, \
                     behind a TLS-terminating proxy), add --allow-remote."
                )
            );
            assert_eq!(bind_address(addr, true).unwrap().to_string(), addr);
        }
    }

    #[test]
    fn malformed_addresses_are_refused() {
        for addr in ["8765", "example.com:80", "localhost", "127.0.0.1", "localhost:http"] {
            assert_eq!(
                bind_address(addr, false).unwrap_err().to_string(),
                format!(
                    "--http {addr}: expected HOST:PORT with HOST an IP address or localhost, such as 127.0.0.1:8765, [::1]:8765 or localhost:8765"
                )
            );
        }
    }
}
