//! `memfs ui`: a local web app to read a store, its history and its policy, and to put it
//! right, served by memfs itself (docs/UI.md has the whole contract).
//!
//! The page, its script and its style sheet are compiled in (`ui/assets`): nothing is fetched
//! from elsewhere. Every request is answered by the same engine as the tool's commands: an
//! edit is a commit by the person's actor under the store's policy, a restore is
//! [`Memfs::restore`], a purge [`Memfs::purge`] with the command line's dry run first.
//!
//! # Who may talk to it
//!
//! The server is meant for one person on one machine, through a browser that also visits
//! other sites and loads pages other local programs serve. So (`guard`): the `Host` of every
//! request must be the address it listens on (a DNS-rebinding page names its own host: `421`);
//! a request from another `Origin` is refused (`403`); the page trades the one-time token of
//! the printed address for a session secret (`POST /api/session`; the token then no longer
//! works) and keeps it in its `sessionStorage`, which belongs to its origin, port included;
//! every request but the page's own files needs that secret in the `x-memfs-session` header
//! (`401`), which no other site's form or `fetch` can send, and every `POST` a JSON body
//! (`415`). No cookie is set: cookies go to every port of a host, so one set here would reach
//! any program serving pages on another loopback port.
//!
//! # Modules
//!
//! - `assets`: the page, script and style sheet, compiled in;
//! - `guard`: the checks above, the token's exchange, and the security headers of every answer;
//! - `read`: the reading routes (tree, file, search, history, diff, overview);
//! - `write`: the writing routes (create, edit, rename, delete, restore, undo, purge, check);
//! - `reply`: JSON answers and refusals.

mod assets;
mod guard;
mod read;
mod reply;
mod write;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::routing::{get, post};

use crate::engine::Memfs;
use crate::url::Location;

use crate::http::SHUTDOWN_GRACE;
pub use crate::http::{Limits, ServeError, TokenError};

/// The viewer of one store, as one person's session.
pub struct Ui {
    memfs: Arc<Memfs>,
    /// The store's location (key slots are read from it).
    location: Location,
    /// Who may talk to it: the token, the session, the hosts.
    guard: guard::Guard,
    /// The result of the last `check` run from the page.
    last_check: Mutex<Option<read::LastCheck>>,
    /// The connection limit and timeouts (`memfs serve`'s).
    limits: Limits,
}

impl Ui {
    /// A viewer of `memfs` (opened from `location`) listening on `addr`; returns it with the
    /// one-time token of its address (`http://ADDR/?token=TOKEN`).
    pub fn new(memfs: Arc<Memfs>, location: Location, addr: SocketAddr) -> Result<(Self, String), TokenError> {
        let (guard, token) = guard::Guard::new(addr)?;
        let ui = Ui { memfs, location, guard, last_check: Mutex::new(None), limits: Limits::default() };
        Ok((ui, token))
    }

    /// Sets the connection limit and timeouts (default [`Limits::default`]).
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The routes (without the request timeout [`Ui::serve`] adds).
    pub fn router(self: Arc<Self>) -> Router {
        Router::new()
            .route("/", get(assets::page))
            .route("/app.js", get(assets::script))
            .route("/app.css", get(assets::style))
            .route("/api/session", get(read::session).post(guard::open))
            .route("/api/tree", get(read::tree))
            .route("/api/file", get(read::file))
            .route("/api/search", get(read::search))
            .route("/api/log", get(read::log))
            .route("/api/show", get(read::show))
            .route("/api/diff", get(read::diff))
            .route("/api/stats", get(read::stats))
            .route("/api/create", post(write::create))
            .route("/api/edit", post(write::edit))
            .route("/api/rename", post(write::rename))
            .route("/api/delete", post(write::delete))
            .route("/api/restore", post(write::restore))
            .route("/api/undo", post(write::undo))
            .route("/api/purge", post(write::purge))
            .route("/api/check", post(write::check))
            .fallback(reply::not_found)
            .layer(axum::middleware::from_fn_with_state(self.clone(), guard::check))
            .with_state(self)
    }

    /// Serves on `listener` within its [`Limits`] (by `memfs serve`'s connection loop) until
    /// `shutdown` completes; then lets requests in flight finish (for at most
    /// [`SHUTDOWN_GRACE`]) and records the store's pending last-access days.
    pub async fn serve(
        self: Arc<Self>,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), ServeError> {
        let memfs = self.memfs.clone();
        let limits = self.limits;
        let router = crate::http::time_limited(self.router(), limits.request_timeout);
        crate::http::serve_within(listener, router, limits, SHUTDOWN_GRACE, shutdown).await.map_err(ServeError::Io)?;
        memfs.flush().await.map_err(ServeError::Flush)?;
        Ok(())
    }
}
