//! The MCP server over streamable HTTP (MCP transports, "Streamable HTTP"), at one path.
//!
//! There is no authentication: whoever reaches the endpoint reads and changes the memory. So
//! [`loopback_config`] accepts only requests addressed to a loopback host (a `Host` header of
//! `localhost`, `127.0.0.1` or `[::1]`, which defeats DNS rebinding) and refuses any request
//! carrying an `Origin` header (browsers send one; MCP clients do not), so that no web page can
//! drive the endpoint from a browser on the same machine.

use std::future::Future;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::{MemoryServer, ServeError};
use crate::engine::Memfs;

/// The path [`router`] and [`serve_http`] serve MCP at.
pub const ENDPOINT_PATH: &str = "/mcp";

/// The configuration for a server bound to a loopback address: `Host` must be a loopback
/// name or address, and a request with an `Origin` header (a browser's) is refused with 403.
pub fn loopback_config() -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default().enforce_origin_validation()
}

/// The configuration for a server reachable from other machines: any `Host` is accepted
/// (clients name the server by whatever name or address reaches it); a request with an
/// `Origin` header is still refused. There is no authentication: anyone who can reach the
/// address can read and change the memory.
pub fn remote_config() -> StreamableHttpServerConfig {
    loopback_config().disable_allowed_hosts()
}

/// The streamable-HTTP service (a `tower::Service`) for `memfs`, with a session per client
/// kept in memory. Mount it at the path of your choice.
pub fn http_service(
    memfs: Arc<Memfs>,
    config: StreamableHttpServerConfig,
) -> StreamableHttpService<MemoryServer, LocalSessionManager> {
    let server = MemoryServer::new(memfs);
    StreamableHttpService::new(move || Ok(server.clone()), Arc::new(LocalSessionManager::default()), config)
}

/// An axum router serving [`http_service`] at [`ENDPOINT_PATH`] (`/mcp`), and nothing else.
pub fn router(memfs: Arc<Memfs>, config: StreamableHttpServerConfig) -> axum::Router {
    axum::Router::new().route_service(ENDPOINT_PATH, http_service(memfs, config))
}

/// Serves [`router`] on `listener` until `shutdown` completes; then ends every MCP session
/// (closing their event streams), lets requests under way finish and returns.
///
/// ```no_run
/// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use memfs::{Dialect, Memfs, mcp};
///
/// let memfs = Arc::new(Memfs::ephemeral(Dialect::Spec)?);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8765").await?;
/// // Clients connect to http://127.0.0.1:8765/mcp.
/// let stop = async { tokio::time::sleep(std::time::Duration::from_secs(60)).await };
/// mcp::serve_http(memfs.clone(), listener, mcp::loopback_config(), stop).await?;
/// memfs.flush().await?;
/// # Ok(()) }
/// ```
pub async fn serve_http<F>(
    memfs: Arc<Memfs>,
    listener: tokio::net::TcpListener,
    config: StreamableHttpServerConfig,
    shutdown: F,
) -> Result<(), ServeError>
where
    F: Future<Output = ()> + Send + 'static,
{
    let sessions = config.cancellation_token.clone();
    let app = router(memfs, config);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            shutdown.await;
            // Open event streams (a client's GET stream) last as long as their session:
            // without this, graceful shutdown would wait for them forever.
            sessions.cancel();
        })
        .await
        .map_err(ServeError::Http)
}
