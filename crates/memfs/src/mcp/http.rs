//! The MCP server over streamable HTTP (MCP transports, "Streamable HTTP"), at one path.
//!
//! With [`BearerAuth`] (given to [`serve_http`]), every request must carry
//! `Authorization: Bearer TOKEN` with a token of a [`Tokens`] list (the format of `memfs
//! serve`'s tokens file), bound to the namespace served; others are refused with 401 before
//! they reach MCP. Without it there is no authentication: whoever reaches the endpoint reads
//! and changes the memory. In both cases [`loopback_config`] accepts only requests addressed to a loopback host (a `Host` header of
//! `localhost`, `127.0.0.1` or `[::1]`, which defeats DNS rebinding) and refuses any request
//! carrying an `Origin` header (browsers send one; MCP clients do not), so that no web page can
//! drive the endpoint from a browser on the same machine.

use std::future::Future;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

use super::{MemoryServer, ServeError};
use crate::engine::Memfs;
use crate::http::{Limits, SHUTDOWN_GRACE, Tokens};

/// Bearer tokens for the MCP endpoint: the tokens of `tokens` bound to `namespace` (all of
/// them when `namespace` is `None`, for a server of a store that is not a namespace).
#[derive(Debug)]
pub struct BearerAuth {
    tokens: Tokens,
    namespace: Option<String>,
}

impl BearerAuth {
    /// Accepts the tokens of `tokens` bound to `namespace`, or every one of them when it is
    /// `None`.
    pub fn new(tokens: Tokens, namespace: Option<String>) -> Self {
        BearerAuth { tokens, namespace }
    }

    /// Whether the headers carry exactly one `Authorization: Bearer TOKEN` (RFC 6750 §2.1,
    /// the scheme in any case) with an accepted token.
    fn accepts(&self, headers: &axum::http::HeaderMap) -> bool {
        let mut values = headers.get_all(header::AUTHORIZATION).iter();
        let (Some(value), None) = (values.next(), values.next()) else { return false };
        let Some(token) = value.to_str().ok().and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        }) else {
            return false;
        };
        match (self.tokens.namespace_of(token), &self.namespace) {
            (Some(bound), Some(served)) => bound == served,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

/// Refuses, with 401 and `WWW-Authenticate: Bearer`, a request without an accepted token.
async fn require_token(State(auth): State<Arc<BearerAuth>>, request: Request, next: Next) -> Response {
    if auth.accepts(request.headers()) {
        return next.run(request).await;
    }
    let mut response = (
        StatusCode::UNAUTHORIZED,
        axum::Json(serde_json::json!({"error": "missing or invalid bearer token: send Authorization: Bearer TOKEN"})),
    )
        .into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Bearer realm="memfs""#));
    response
}

/// The path [`router`] and [`serve_http`] serve MCP at.
pub const ENDPOINT_PATH: &str = "/mcp";

/// The configuration for a server bound to a loopback address: `Host` must be a loopback
/// name or address, and a request with an `Origin` header (a browser's) is refused with 403.
pub fn loopback_config() -> StreamableHttpServerConfig {
    StreamableHttpServerConfig::default().enforce_origin_validation()
}

/// The configuration for a server reachable from other machines: any `Host` is accepted
/// (clients name the server by whatever name or address reaches it); a request with an
/// `Origin` header is still refused. Serve it with a [`BearerAuth`] ([`serve_http`]): without
/// tokens, anyone who can reach the address can read and change the memory.
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

/// Serves [`router`] on `listener` within `limits` (the connection limit and timeouts of
/// `memfs serve`, from the same connection loop) until `shutdown` completes; then ends every
/// MCP session (closing their event streams), lets requests under way finish (for at most
/// [`SHUTDOWN_GRACE`]) and returns.
///
/// With `auth`, every request must carry a token it accepts (checked before the request
/// reaches MCP, and before the `Host` and `Origin` checks); with `None`, no authentication.
/// A request (up to its answer's head: an event stream then runs on, kept alive by MCP's
/// pings) is bounded by `limits.request_timeout`.
///
/// ```no_run
/// # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use memfs::http::Limits;
/// use memfs::{Dialect, Memfs, mcp};
///
/// let memfs = Arc::new(Memfs::ephemeral(Dialect::Spec)?);
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8765").await?;
/// // Clients connect to http://127.0.0.1:8765/mcp.
/// let stop = async { tokio::time::sleep(std::time::Duration::from_secs(60)).await };
/// mcp::serve_http(memfs.clone(), listener, mcp::loopback_config(), None, Limits::default(), stop).await?;
/// memfs.flush().await?;
/// # Ok(()) }
/// ```
pub async fn serve_http<F>(
    memfs: Arc<Memfs>,
    listener: tokio::net::TcpListener,
    config: StreamableHttpServerConfig,
    auth: Option<BearerAuth>,
    limits: Limits,
    shutdown: F,
) -> Result<(), ServeError>
where
    F: Future<Output = ()> + Send + 'static,
{
    let sessions = config.cancellation_token.clone();
    let app = router(memfs, config);
    let app = match auth {
        Some(auth) => app.layer(axum::middleware::from_fn_with_state(Arc::new(auth), require_token)),
        None => app,
    };
    let app = crate::http::time_limited(app, limits.request_timeout);
    let shutdown = async move {
        shutdown.await;
        // Open event streams (a client's GET stream) last as long as their session: without
        // this, every one would be held until the grace ran out.
        sessions.cancel();
    };
    crate::http::serve_within(listener, app, limits, SHUTDOWN_GRACE, shutdown).await.map_err(ServeError::Http)
}
