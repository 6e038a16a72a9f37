//! The connection loop of every memfs server ([`Server::serve`](super::Server::serve), `memfs
//! mcp --http`, `memfs ui`): a bounded number of connections, each cut when its client is too
//! slow to send a request's headers or stays silent too long, and each request bounded in time.
//!
//! `axum::serve` has neither bound, so a client that opens connections and sends nothing (or a
//! header a byte a minute) would hold file descriptors and memory for ever, and once the
//! process ran out of them no honest client was answered. Here each accepted
//! connection holds a permit of a semaphore taken *before* `accept`: past the limit, new
//! connections wait in the kernel's backlog until one closes (they are not refused, so a burst
//! of honest clients is only delayed).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;

/// The limits of a server's connections: [`Server::serve`](super::Server::serve)'s, and those
/// of `memfs mcp --http` and `memfs ui` (`serve_http`, `Ui::with_limits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most connections open at once; more wait to be accepted.
    pub max_connections: usize,
    /// How long a client has to send a request's headers, from the moment the server waits
    /// for them: when the connection opens, and after each answer (hyper's
    /// `header_read_timeout`, which starts as soon as the previous answer is sent).
    pub header_timeout: Duration,
    /// How long a connection may stay with no byte read or written, unless a request's command
    /// is running on the store: a client that stops half-way through a body is cut after
    /// this. (An idle keep-alive connection is closed after `header_timeout`, which runs while
    /// the server waits for the next request's headers.)
    pub idle_timeout: Duration,
    /// How long a request may take, from its headers to its answer (reading its body and
    /// running its command); past it the answer is `503`.
    pub request_timeout: Duration,
}

impl Limits {
    /// At most 256 connections: far more than a fleet behind one proxy needs, far fewer than
    /// the usual limit of 1024 open files.
    pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
    /// 10 s for headers: a client on a slow link sends a few hundred bytes in well under that.
    pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
    /// 60 s of silence.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
    /// 60 s per request: a command on a cloud store takes a few round trips; an unlock of a
    /// namespace's store with the default Argon2 costs about a second.
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_connections: Self::DEFAULT_MAX_CONNECTIONS,
            header_timeout: Self::DEFAULT_HEADER_TIMEOUT,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
        }
    }
}

/// Serves `router` on `listener` within `limits` until `shutdown` completes; then takes no
/// new connection, lets the requests in flight finish for at most `grace` (a client that never
/// finishes its request must not keep the server up for ever), and returns.
pub(crate) async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    limits: Limits,
    grace: Duration,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (stopping, mut stopped_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stopping.send(true);
    });
    let serving = run(listener, router, limits, stopped_rx.clone());
    let grace = async {
        stopped(&mut stopped_rx).await;
        tokio::time::sleep(grace).await;
    };
    tokio::select! {
        served = serving => served,
        () = grace => Ok(()),
    }
}

/// `router` with each request answered within `limit` (else `503` with a JSON `{"error": …}`)
/// and counted as running meanwhile, so that a silent wait for the store is not idleness. For
/// routers that do not time their requests themselves (the viewer's, MCP's); the JSON
/// endpoint's route times its own, to log the request's id with the `503`.
#[cfg(any(feature = "ui", feature = "mcp"))]
pub(crate) fn time_limited(router: axum::Router, limit: Duration) -> axum::Router {
    router.layer(axum::middleware::from_fn(move |request, next| within(limit, request, next)))
}

#[cfg(any(feature = "ui", feature = "mcp"))]
async fn within(
    limit: Duration,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let busy = request.extensions().get::<Busy>().cloned();
    let _busy = busy.as_ref().map(Busy::enter);
    match tokio::time::timeout(limit, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            let error = serde_json::json!({ "error": timed_out(limit) });
            (axum::http::StatusCode::SERVICE_UNAVAILABLE, axum::Json(error)).into_response()
        }
    }
}

/// What a request answered `503` past the request timeout `limit` is told.
pub(super) fn timed_out(limit: Duration) -> String {
    format!(
        "the request took longer than the server's limit of {} s; a command it carried may or may not have been applied",
        limit.as_secs_f64()
    )
}

/// Accepts connections on `listener` and serves `router` on each, until `stopping` is set;
/// then stops accepting, asks each connection to finish its request in flight and close, and
/// returns when all have (the caller bounds the wait).
async fn run(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    limits: Limits,
    mut stopping: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut connections = JoinSet::new();
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.map_err(std::io::Error::other)?,
            () = stopped(&mut stopping) => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A connection reset before it was accepted, or out of file descriptors: go on
                // (after a pause, so that a full descriptor table does not spin).
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stopped(&mut stopping) => break,
        };
        let router = router.clone();
        let stopping = stopping.clone();
        connections.spawn(async move {
            serve_connection(stream, router, limits, stopping).await;
            drop(permit);
        });
        // Reap finished connections so the set does not grow.
        while connections.try_join_next().is_some() {}
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// Completes once `stopping` is set; never if its sender is gone unset. The guard `wait_for`
/// returns is dropped here, so the futures that await this stay `Send`.
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    if stopping.wait_for(|stop| *stop).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Serves one connection until it closes, breaks a limit, or the server stops.
async fn serve_connection(
    stream: tokio::net::TcpStream,
    router: axum::Router,
    limits: Limits,
    mut stopping: watch::Receiver<bool>,
) {
    let activity = Arc::new(Activity::new());
    let io = TokioIo::new(Tracked { inner: stream, activity: activity.clone() });
    let service = InFlight { inner: TowerToHyperService::new(router), activity: activity.clone() };
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .serve_connection(io, service);
    let mut connection = std::pin::pin!(connection);
    let idle = activity.idle_past(limits.idle_timeout);
    let mut idle = std::pin::pin!(idle);
    tokio::select! {
        // An error here is the client's (a reset, a malformed request, headers too slow):
        // hyper has answered what it could; there is nothing to report to anyone.
        _ = connection.as_mut() => return,
        () = idle.as_mut() => return,
        () = stopped(&mut stopping) => {}
    }
    connection.as_mut().graceful_shutdown();
    tokio::select! {
        _ = connection => {}
        () = idle => {}
    }
}

/// When a connection last moved a byte, and how many of its requests are running a command.
struct Activity {
    last: Mutex<Instant>,
    in_flight: AtomicUsize,
}

impl Activity {
    fn new() -> Self {
        Activity { last: Mutex::new(Instant::now()), in_flight: AtomicUsize::new(0) }
    }

    fn touch(&self) {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    /// Completes once the connection has been silent for `limit` with no request in flight.
    async fn idle_past(&self, limit: Duration) {
        loop {
            let last = *self.last.lock().unwrap_or_else(PoisonError::into_inner);
            let deadline = last + limit;
            if Instant::now() >= deadline {
                if self.in_flight.load(Ordering::SeqCst) == 0 {
                    return;
                }
                // A command is running (the request timeout bounds it): look again later.
                self.touch();
                continue;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

/// The connection's stream, noting each read or write that moves bytes.
struct Tracked {
    inner: tokio::net::TcpStream,
    activity: Arc<Activity>,
}

impl AsyncRead for Tracked {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        polled
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, data: &[u8]) -> Poll<std::io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(polled, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        polled
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The router, each request carrying its connection's [`Busy`] handle.
struct InFlight {
    inner: TowerToHyperService<axum::Router>,
    activity: Arc<Activity>,
}

impl hyper::service::Service<axum::http::Request<hyper::body::Incoming>> for InFlight {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = <TowerToHyperService<axum::Router> as hyper::service::Service<
        axum::http::Request<hyper::body::Incoming>,
    >>::Future;

    fn call(&self, mut request: axum::http::Request<hyper::body::Incoming>) -> Self::Future {
        request.extensions_mut().insert(Busy(self.activity.clone()));
        self.inner.call(request)
    }
}

/// A request's handle on its connection's idle watch: while a [`BusyGuard`] lives (the
/// request's command runs on the store, sending and receiving nothing), silence is not idleness.
#[derive(Clone)]
pub(super) struct Busy(Arc<Activity>);

impl Busy {
    pub(super) fn enter(&self) -> BusyGuard {
        self.0.in_flight.fetch_add(1, Ordering::SeqCst);
        BusyGuard(self.0.clone())
    }
}

/// See [`Busy`].
pub(super) struct BusyGuard(Arc<Activity>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.touch();
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}
