//! `memfs mcp`: Serve the memory tool over MCP (stdio by default, or streamable HTTP with --http ADDR).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use memfs::Dialect;
use memfs::mcp::{self, ENDPOINT_PATH, MemoryServer};

use crate::cli::StoreArgs;

/// Arguments of `memfs mcp`.
#[derive(Debug, Args)]
#[command(after_long_help = EXAMPLES)]
pub(crate) struct McpArgs {
    /// Which answer strings to use: `spec` (the documentation page) or `python-sdk`
    /// (byte-identical to anthropic==2.10.0's BetaLocalFilesystemMemoryTool).
    #[arg(long, default_value = "spec", env = "MEMFS_DIALECT", value_parser = crate::cli::parse_dialect)]
    pub(crate) dialect: Dialect,

    /// Serve MCP over streamable HTTP at http://ADDR/mcp instead of stdio. ADDR is HOST:PORT,
    /// such as `127.0.0.1:8765`, `[::1]:8765` or `localhost:8765` (port 0: any free port; the
    /// address is printed on stderr). There is NO authentication: anyone who can reach the
    /// address can read and change the memory. So ADDR must be a loopback address, requests
    /// must name a loopback host, and requests from web browsers (with an Origin header) are
    /// refused. Stops on Ctrl-C or SIGTERM.
    #[arg(long, value_name = "ADDR")]
    pub(crate) http: Option<String>,

    /// Allow --http on an address that is not loopback (such as `0.0.0.0:8765`), and accept any
    /// Host header. Still no authentication: anyone on the network who can reach it can read
    /// and change the memory. Use it only on a network you trust, or behind a proxy that
    /// authenticates.
    #[arg(long, requires = "http")]
    pub(crate) allow_remote: bool,
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
  # Streamable HTTP on this machine only:
  memfs mcp --http 127.0.0.1:8765      # clients connect to http://127.0.0.1:8765/mcp";

pub(crate) async fn run(store: &StoreArgs, args: McpArgs) -> anyhow::Result<()> {
    // The address is checked before the store is opened (or created): a refused flag
    // changes nothing.
    let bind = args.http.as_deref().map(|addr| bind_address(addr, args.allow_remote)).transpose()?;
    let memfs = Arc::new(crate::store::open(store, args.dialect, true).await?);
    match bind {
        None => MemoryServer::new(memfs.clone()).serve_stdio().await?,
        Some(addr) => {
            let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("listening on {addr}"))?;
            let local = listener.local_addr().context("reading the bound address")?;
            let config =
                if addr.ip().to_canonical().is_loopback() { mcp::loopback_config() } else { mcp::remote_config() };
            eprintln!("memfs: MCP over streamable HTTP at http://{local}{ENDPOINT_PATH} (no authentication)");
            mcp::serve_http(memfs.clone(), listener, config, crate::signal::shutdown()).await?;
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
            "--http {addr}: not a loopback address. MCP over HTTP has no authentication (anyone who reaches \
             the address can read and change the memory), so memfs mcp serves it only on loopback \
             (127.0.0.1:PORT, [::1]:PORT, localhost:PORT). To serve on {addr} anyway, add --allow-remote."
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
                    "--http {addr}: not a loopback address. MCP over HTTP has no authentication (anyone who reaches \
                     the address can read and change the memory), so memfs mcp serves it only on loopback \
                     (127.0.0.1:PORT, [::1]:PORT, localhost:PORT). To serve on {addr} anyway, add --allow-remote."
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
