//! The JSON endpoint for fleets in other languages: tool input or `tool_use` in, `tool_result`
//! out, behind bearer tokens bound to namespaces (`memfs serve --http ADDR`).
//!
//! # Protocol
//!
//! - `POST /v1/memory` with `Authorization: Bearer TOKEN` and `Content-Type: application/json`.
//!   The body is one JSON value, a tool input (`{"command":"view","path":"/memories"}`) or a
//!   whole `tool_use` block (`{"type":"tool_use","id":"toolu_1","name":"memory","input":{…}}`).
//!   It runs on the store of the token's namespace and the answer is `200` with exactly the
//!   line `memfs exec` writes for the same input ([`protocol::answer`](crate::protocol::answer)):
//!   `{"content":"…","is_error":false}`, or
//!   `{"type":"tool_result","tool_use_id":"toolu_1","content":"…","is_error":false}`. A tool
//!   error (a missing file, a bad path) is such an answer with `"is_error":true`, not an HTTP
//!   error: the model must read it.
//! - `GET /v1/health`, without a token: `200 {"status":"ok"}`.
//!
//! Everything else is refused with a JSON body `{"error":"…"}` and changes nothing, checked in
//! this order: no or unknown route `404`, wrong method `405`; no `Authorization: Bearer` header
//! `401`, an unknown token `401` (both with `WWW-Authenticate: Bearer realm="memfs"`); another
//! content type `415`; a body over the limit (default [`DEFAULT_MAX_BODY`]) `413`; a body that
//! is not JSON `400`; a namespace whose store cannot be opened `503` (tried again on the next
//! request); a request not answered within the request timeout `503`.
//!
//! # Store failures, request ids and the request log
//!
//! Every answer carries an `x-request-id` header ([`RequestId`]). A store failure (a store
//! that cannot be opened, a backend error during a command) is answered with a generic
//! message naming that id, never the error itself (which can name the server's store
//! location): the detail goes to the server's [`Observer`] with the same id. Each request, answered
//! or refused, makes one [`Served`] record: time, id, namespace, command name, status and
//! duration; no content, no path, no token.
//!
//! # Connections
//!
//! [`Server::serve`] bounds its connections ([`Limits`]): at most 256 open at once (more wait
//! to be accepted), 10 s to send a request's headers (from the connection's start or the
//! previous answer), 60 s of silence, 60 s per request. `memfs mcp --http` and `memfs ui` are
//! served by the same connection loop, with the same limits.
//!
//! # Tokens and namespaces
//!
//! Each token is bound to one namespace ([`Tokens`]); a request can reach only its
//! namespace's store, which has its own keys. Only hashes of tokens are kept, compared in
//! constant time. The stores are opened on first use with one set of [`OpenOptions`] (so one
//! credential unlocks every namespace served) and shared by all requests ([`Namespaces`]);
//! concurrent mutations on one store commit by compare-and-swap and re-run on a lost race.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use memfs::http::{Namespaces, Server, Tokens};
//! use memfs::OpenOptions;
//!
//! let tokens = Tokens::parse("alice 0123456789abcdef0123456789abcdef", "tokens")?;
//! let server = Arc::new(Server::new(tokens, Namespaces::new("memory://", OpenOptions::default())));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! println!("serving on http://{}", listener.local_addr()?);
//! // server.serve(listener, shutdown_signal).await?;
//! # Ok(()) }
//! ```
//!
//! The endpoint speaks plain HTTP: tokens and memories cross the network in clear, so outside
//! loopback put it behind a TLS-terminating proxy.

mod connections;
mod error;
mod namespaces;
mod observe;
mod routes;
mod tokens;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

pub use connections::Limits;
#[cfg(any(feature = "ui", feature = "mcp"))]
pub(crate) use connections::{serve as serve_within, time_limited};
pub use error::{ServeError, TokenError};
pub use namespaces::Namespaces;
pub use observe::{Observer, RequestId, Served, StoreFailure};
#[cfg(feature = "ui")]
pub(crate) use routes::is_json;
pub use tokens::{MIN_TOKEN_LEN, Tokens, new_token, new_token_line};

#[cfg(doc)]
use crate::OpenOptions;

/// How long requests in flight may take to finish once shutdown begins, by default.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// The default limit of a request body: 1 MiB.
pub const DEFAULT_MAX_BODY: usize = 1 << 20;

/// The endpoint: tokens, the namespaces' stores and limits.
pub struct Server {
    tokens: Tokens,
    namespaces: Namespaces,
    max_body: usize,
    grace: Duration,
    limits: Limits,
    observer: Arc<dyn Observer>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("tokens", &self.tokens)
            .field("namespaces", &self.namespaces)
            .field("max_body", &self.max_body)
            .field("grace", &self.grace)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// An endpoint accepting `tokens`, running each request on its namespace's store.
    pub fn new(tokens: Tokens, namespaces: Namespaces) -> Self {
        Server {
            tokens,
            namespaces,
            max_body: DEFAULT_MAX_BODY,
            grace: SHUTDOWN_GRACE,
            limits: Limits::default(),
            observer: Arc::new(observe::Unobserved),
        }
    }

    /// Sets the connection limits and timeouts (default [`Limits::default`]).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Sends the requests served and store failures to `observer` (by default they are dropped).
    pub fn with_observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = observer;
        self
    }

    /// Refuses request bodies over `bytes` with `413`.
    pub fn with_max_body(mut self, bytes: usize) -> Self {
        self.max_body = bytes;
        self
    }

    /// Lets requests in flight at shutdown finish for at most `grace` (default
    /// [`SHUTDOWN_GRACE`]).
    pub fn with_shutdown_grace(mut self, grace: Duration) -> Self {
        self.grace = grace;
        self
    }

    /// The namespaces' stores.
    pub fn namespaces(&self) -> &Namespaces {
        &self.namespaces
    }

    /// The routes, to serve with `axum::serve` or to nest in a larger router.
    pub fn router(self: Arc<Self>) -> axum::Router {
        routes::router(self)
    }

    /// Serves on `listener` until `shutdown` completes; then takes no new request, lets those
    /// in flight finish (for at most [`SHUTDOWN_GRACE`], or as set: a request cut off then has committed
    /// whole or not at all), and records the last-access days the stores still hold
    /// ([`Namespaces::flush`]).
    pub async fn serve(
        self: Arc<Self>,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let router = self.clone().router();
        connections::serve(listener, router, self.limits, self.grace, shutdown).await.map_err(ServeError::Io)?;
        self.namespaces.flush().await.map_err(ServeError::Flush)?;
        Ok(())
    }
}
