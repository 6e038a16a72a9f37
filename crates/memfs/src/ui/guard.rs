//! Who may talk to the viewer: the bound host, the same origin, the one-time token, the
//! session cookie and the CSRF header; and the security headers of every answer.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::Ui;
use super::reply::refuse;
use crate::http::{TokenError, is_json, new_token};

/// The session cookie's name.
const COOKIE: &str = "memfs_ui";

/// The header every `POST` carries, with the session's CSRF value.
pub(super) const CSRF_HEADER: &str = "x-memfs-csrf";

/// What the server knows of its one person: secrets are kept as keyed hashes, compared in
/// constant time ([`blake3::Hash`]'s `==`).
pub(super) struct Guard {
    /// The `Host` values a request may carry.
    hosts: Vec<String>,
    /// The key of the hashes below (random per server).
    key: [u8; 32],
    /// The one-time token's hash, until it is used.
    token: Mutex<Option<blake3::Hash>>,
    /// The session cookie's hash, once the token was exchanged.
    session: Mutex<Option<blake3::Hash>>,
    /// The value of the CSRF header: not a secret from the page, which reads it from
    /// `/api/session` (behind the cookie), but from every other site.
    pub(super) csrf: String,
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
            csrf: new_token()?,
        };
        Ok((guard, token))
    }

    fn hash(&self, secret: &str) -> blake3::Hash {
        blake3::keyed_hash(&self.key, secret.as_bytes())
    }

    /// Exchanges the one-time token for a new session's cookie value (`None`: not the token,
    /// or already used).
    fn exchange(&self, token: &str) -> Option<String> {
        let mut unused = self.token.lock().expect("token");
        if *unused != Some(self.hash(token)) {
            return None;
        }
        let cookie = new_token().ok()?;
        *self.session.lock().expect("session") = Some(self.hash(&cookie));
        *unused = None;
        Some(cookie)
    }

    fn in_session(&self, headers: &HeaderMap) -> bool {
        let Some(cookie) = cookie(headers) else { return false };
        let session = *self.session.lock().expect("session");
        session.is_some_and(|s| s == self.hash(cookie))
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
        return Some(
            refuse(StatusCode::MISDIRECTED_REQUEST, "this server answers only at the address memfs ui printed")
                .into_response(),
        );
    }
    if let Some(origin) = headers.get(header::ORIGIN)
        && origin.to_str().ok() != Some(&format!("http://{host}"))
    {
        return Some(refuse(StatusCode::FORBIDDEN, "requests from other sites are refused").into_response());
    }
    let path = request.uri().path();
    if matches!(path, "/app.js" | "/app.css") {
        return None;
    }
    if path == "/"
        && let Some(token) = query_token(request.uri().query())
    {
        return Some(match guard.exchange(&token) {
            Some(cookie) => signed_in(&cookie),
            None => refuse(
                StatusCode::FORBIDDEN,
                "this address was already used, or its token is wrong: stop memfs ui and start it again for a new one",
            )
            .into_response(),
        });
    }
    if !guard.in_session(headers) {
        return Some(match path.starts_with("/api/") {
            true => refuse(StatusCode::UNAUTHORIZED, "no session: open the address memfs ui printed").into_response(),
            false => signed_out(),
        });
    }
    if request.method() == Method::POST {
        let csrf = headers.get(CSRF_HEADER).map(|v| v.as_bytes());
        if csrf != Some(guard.csrf.as_bytes()) {
            return Some(refuse(StatusCode::FORBIDDEN, "a write needs the page's x-memfs-csrf header").into_response());
        }
        if !is_json(headers) {
            let refused = refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, "a write takes a JSON body (application/json)");
            return Some(refused.into_response());
        }
    }
    None
}

/// The `token` parameter of a query string.
fn query_token(query: Option<&str>) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let value = pair.strip_prefix("token=")?;
        Some(percent_encoding::percent_decode_str(value).decode_utf8_lossy().into_owned())
    })
}

/// The session cookie's value in the request's `Cookie` headers.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|pair| pair.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

/// The answer to the token's one use: the cookie, and the page without the token in its address.
fn signed_in(cookie: &str) -> Response {
    let set = format!("{COOKIE}={cookie}; HttpOnly; SameSite=Strict; Path=/");
    let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/")]).into_response();
    if let Ok(value) = HeaderValue::from_str(&set) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

/// The page asked for without a session.
fn signed_out() -> Response {
    let body = "<!doctype html><meta charset=utf-8><title>memfs</title>\
        <p>No session. Open the address that <code>memfs ui</code> printed when it started \
        (it works once); to get a new one, stop <code>memfs ui</code> and start it again.</p>";
    (StatusCode::UNAUTHORIZED, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_works_once_and_the_cookie_after() {
        let (guard, token) = Guard::new("127.0.0.1:9".parse().unwrap()).unwrap();
        assert_eq!(guard.hosts, ["127.0.0.1:9", "localhost:9"]);
        assert!(guard.exchange("memfs_wrong").is_none());
        let cookie = guard.exchange(&token).expect("the token's first use");
        assert!(guard.exchange(&token).is_none(), "a second use");
        let mut headers = HeaderMap::new();
        assert!(!guard.in_session(&headers));
        headers.insert(header::COOKIE, HeaderValue::from_str(&format!("a=b; {COOKIE}={cookie}")).unwrap());
        assert!(guard.in_session(&headers));
        headers.insert(header::COOKIE, HeaderValue::from_str(&format!("{COOKIE}={token}")).unwrap());
        assert!(!guard.in_session(&headers));
    }

    #[test]
    fn the_token_is_read_from_the_query() {
        assert_eq!(query_token(Some("a=1&token=memfs_ab%63")).as_deref(), Some("memfs_abc"));
        assert_eq!(query_token(Some("tokens=x")), None);
        assert_eq!(query_token(None), None);
    }
}
