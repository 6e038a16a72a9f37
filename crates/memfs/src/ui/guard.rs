//! Who may talk to the viewer: the bound host, the same origin, the one-time token traded for
//! a session secret that the page sends in a header; and the security headers of every
//! answer.
//!
//! The session is a header, not a cookie: a browser sends a host's cookies to every port of
//! that host, and every loopback port is the same site for `SameSite`, so a cookie set by
//! `127.0.0.1:8790` reached any other program a page of the browser loaded from
//! `127.0.0.1:PORT`. The page keeps the secret in its `sessionStorage`, which belongs to its
//! origin, port included; nothing the browser sends on its own (a cookie, a form) opens
//! anything here.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::Ui;
use super::reply::{Reply, Sent, body, refuse};
use crate::http::{TokenError, is_json, new_token};

/// The header every request but the page's own files carries, with the session's secret.
pub(super) const SESSION_HEADER: &str = "x-memfs-session";

/// What the server knows of its one person: secrets are kept as keyed hashes, compared in
/// constant time ([`blake3::Hash`]'s `==`).
pub(super) struct Guard {
    /// The `Host` values a request may carry.
    hosts: Vec<String>,
    /// The key of the hashes below (random per server).
    key: [u8; 32],
    /// The one-time token's hash, until it is used.
    token: Mutex<Option<blake3::Hash>>,
    /// The session secret's hash, once the token was traded for it.
    session: Mutex<Option<blake3::Hash>>,
}

impl Guard {
    /// A guard for a server on `addr`, and its one-time token.
    pub(super) fn new(addr: SocketAddr) -> Result<(Self, String), TokenError> {
        let token = new_token()?;
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|_| TokenError::Random)?;
        let mut hosts = vec![addr.to_string()];
        if addr.ip().is_loopback() {
            hosts.push(format!("localhost:{}", addr.port()));
        }
        let guard = Guard {
            hosts,
            key,
            token: Mutex::new(Some(blake3::keyed_hash(&key, token.as_bytes()))),
            session: Mutex::new(None),
        };
        Ok((guard, token))
    }

    fn hash(&self, secret: &str) -> blake3::Hash {
        blake3::keyed_hash(&self.key, secret.as_bytes())
    }

    /// Trades the one-time token for a new session's secret (`None`: not the token, or
    /// already used).
    fn exchange(&self, token: &str) -> Option<String> {
        let mut unused = self.token.lock().expect("token");
        if *unused != Some(self.hash(token)) {
            return None;
        }
        let secret = new_token().ok()?;
        *self.session.lock().expect("session") = Some(self.hash(&secret));
        *unused = None;
        Some(secret)
    }

    fn in_session(&self, headers: &HeaderMap) -> bool {
        let Some(secret) = headers.get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else { return false };
        let session = *self.session.lock().expect("session");
        session.is_some_and(|s| s == self.hash(secret))
    }
}

/// The body of `POST /api/session`.
#[derive(Deserialize)]
pub(super) struct Open {
    token: String,
}

/// `POST /api/session {"token"}`: the one-time token of the printed address, traded once for
/// the session's secret (`{"session": "…"}`), which the page sends as [`SESSION_HEADER`].
pub(super) async fn open(State(ui): State<Arc<Ui>>, sent: Sent<Open>) -> Reply {
    let Open { token } = body(sent)?;
    match ui.guard.exchange(&token) {
        Some(secret) => Ok(Json(json!({ "session": secret }))),
        None => Err(refuse(
            StatusCode::FORBIDDEN,
            "this address was already used, or its token is wrong: stop memfs ui and start it again for a new one",
        )),
    }
}

/// The checks, in order: host, origin, token exchange, session, then for a `POST` the CSRF
/// header and a JSON body. Every answer gets the security headers.
pub(super) async fn check(State(ui): State<Arc<Ui>>, request: Request, next: Next) -> Response {
    let mut response = match admit(&ui, &request) {
        None => next.run(request).await,
        Some(answer) => answer,
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CONTENT_SECURITY_POLICY, "default-src 'self'; frame-ancestors 'none'; form-action 'self'"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::CACHE_CONTROL, "no-store"),
        (header::REFERRER_POLICY, "no-referrer"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

/// `None` to let the request through; else the answer it gets instead.
fn admit(ui: &Ui, request: &Request) -> Option<Response> {
    let guard = &ui.guard;
    let headers = request.headers();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if !guard.hosts.iter().any(|h| h == host) {
        let message = "this server answers only at the address memfs ui printed";
        return Some(refuse(StatusCode::MISDIRECTED_REQUEST, message).into_response());
    }
    if let Some(origin) = headers.get(header::ORIGIN)
        && origin.to_str().ok() != Some(&format!("http://{host}"))
    {
        return Some(refuse(StatusCode::FORBIDDEN, "requests from other sites are refused").into_response());
    }
    let (method, path) = (request.method(), request.uri().path());
    // The page and its files hold no secret: a navigation (the printed address, a reload)
    // cannot carry the session's header, and the page reads the token from its address.
    if *method == Method::GET && matches!(path, "/" | "/app.js" | "/app.css") {
        return None;
    }
    let opening = *method == Method::POST && path == "/api/session";
    if !opening && !guard.in_session(headers) {
        return Some(refuse(StatusCode::UNAUTHORIZED, "no session: open the address memfs ui printed").into_response());
    }
    if *method == Method::POST && !is_json(headers) {
        let refused = refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, "a write takes a JSON body (application/json)");
        return Some(refused.into_response());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_works_once_and_the_session_header_after() {
        let (guard, token) = Guard::new("127.0.0.1:9".parse().unwrap()).unwrap();
        assert_eq!(guard.hosts, ["127.0.0.1:9", "localhost:9"]);
        assert!(guard.exchange("memfs_wrong").is_none());
        let secret = guard.exchange(&token).expect("the token's first use");
        assert!(guard.exchange(&token).is_none(), "a second use");
        let mut headers = HeaderMap::new();
        assert!(!guard.in_session(&headers));
        headers.insert(header::COOKIE, HeaderValue::from_str(&format!("memfs_ui={secret}")).unwrap());
        assert!(!guard.in_session(&headers), "a cookie is no session");
        headers.insert(SESSION_HEADER, HeaderValue::from_str(&secret).unwrap());
        assert!(guard.in_session(&headers));
        headers.insert(SESSION_HEADER, HeaderValue::from_str(&token).unwrap());
        assert!(!guard.in_session(&headers), "the token is no session");
    }
}
