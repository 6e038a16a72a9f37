//! The routes: `POST /v1/memory`, `GET /v1/health`, and JSON answers for everything refused.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, HttpBody};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use super::Server;
use super::connections::{Busy, timed_out};
use super::observe::{RequestId, Served, StoreFailure, command_of};
use crate::protocol;

/// What the memory route learnt of a request, for its record ([`Served`]).
#[derive(Clone, Default)]
struct Noted {
    namespace: Option<Arc<str>>,
    command: Option<&'static str>,
}

/// The endpoints, for the 404 and 405 messages.
const ENDPOINTS: &str = "the endpoints are POST /v1/memory and GET /v1/health";

pub(super) fn router(server: Arc<Server>) -> Router {
    Router::new()
        .route("/v1/memory", post(memory))
        .route("/v1/health", get(health))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(server.clone(), observed))
        .with_state(server)
}

/// Gives each request its id, and records it once answered.
async fn observed(State(server): State<Arc<Server>>, mut request: Request, next: Next) -> Response {
    let time = jiff::Timestamp::now();
    let started = Instant::now();
    let request_id = RequestId::new();
    request.extensions_mut().insert(request_id.clone());
    let mut response = next.run(request).await;
    let noted = response.extensions_mut().remove::<Noted>().unwrap_or_default();
    if let Ok(value) = HeaderValue::from_str(request_id.as_str()) {
        response.headers_mut().insert("x-request-id", value);
    }
    server.observer.served(&Served {
        time,
        request_id,
        namespace: noted.namespace,
        command: noted.command,
        status: response.status().as_u16(),
        duration: started.elapsed(),
    });
    response
}

async fn health() -> Response {
    (StatusCode::OK, Json(json!({"status": "ok"}))).into_response()
}

async fn not_found() -> Response {
    Refused::NotFound.into_response()
}

async fn method_not_allowed() -> Response {
    Refused::MethodNotAllowed.into_response()
}

/// One tool input or `tool_use` block in, its answer out: the line `memfs exec` would write.
async fn memory(State(server): State<Arc<Server>>, request: Request) -> Response {
    let request_id = request.extensions().get::<RequestId>().cloned().unwrap_or_else(RequestId::new);
    let busy = request.extensions().get::<Busy>().cloned();
    let mut noted = Noted::default();
    let limit = server.limits.request_timeout;
    let answered = tokio::time::timeout(limit, answer(&server, request, &request_id, busy, &mut noted)).await;
    let mut response = match answered {
        Ok(Ok(answer)) => {
            ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], answer).into_response()
        }
        Ok(Err(refused)) => refused.into_response(),
        Err(_) => Refused::TimedOut { limit }.into_response(),
    };
    response.extensions_mut().insert(noted);
    response
}

/// The checks, in order: the token first (nothing else is looked at for a stranger), then the
/// content type, the size, the JSON, and the store.
async fn answer(
    server: &Server,
    request: Request,
    id: &RequestId,
    busy: Option<Busy>,
    noted: &mut Noted,
) -> Result<String, Refused> {
    let (parts, body) = request.into_parts();
    let namespace = authenticate(server, &parts.headers)?;
    noted.namespace = Some(namespace.into());
    if !is_json(&parts.headers) {
        return Err(Refused::ContentType);
    }
    let limit = server.max_body;
    // A declared length over the limit is refused before reading anything.
    let declared = parts.headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|len| len > limit as u64) {
        return Err(Refused::TooLarge { limit });
    }
    let bytes = read_body(body, limit).await?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| Refused::BadJson(e.to_string()))?;
    noted.command = command_of(&value);
    // From here on the connection is silent while the store works: not idle.
    let _busy = busy.as_ref().map(Busy::enter);
    // A store's errors can name the server's store location: the tenant gets the request id,
    // the server's log the detail.
    let report = |error: &crate::Error| {
        server.observer.store_failure(&StoreFailure { request_id: id, namespace, error });
    };
    let memfs = server.namespaces.get(namespace).await.map_err(|e| {
        report(&e);
        Refused::Unavailable(id.clone())
    })?;
    let answer = protocol::answer_reporting(&memfs, &value, |e| {
        report(e);
        store_failed(id, e.kind())
    });
    Ok(answer.await.to_json())
}

/// The answer to a command that a store failure stopped: one whose outcome is unknown (its
/// commit may have landed) says so, for the client not to send it again blindly.
fn store_failed(id: &RequestId, kind: crate::ErrorKind) -> String {
    match kind {
        crate::ErrorKind::OutcomeUnknown => format!(
            "memfs: the outcome of this command is unknown: it may have been applied, and the store could not be read \
             long enough to know; do not send it again blindly (`memfs log` shows whether it is in; request id {id})"
        ),
        _ => format!(
            "memfs: the store failed while running this command (request id {id}); the server's log has the detail"
        ),
    }
}

/// The namespace of the request's bearer token (RFC 6750 §2.1: `Authorization: Bearer TOKEN`,
/// the scheme in any case).
fn authenticate<'s>(server: &'s Server, headers: &HeaderMap) -> Result<&'s str, Refused> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(Refused::NoToken);
    };
    let value = value.to_str().map_err(|_| Refused::BadToken)?;
    let token = match value.split_once(' ') {
        Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
        _ => return Err(Refused::NoToken),
    };
    server.tokens.namespace_of(token).ok_or(Refused::BadToken)
}

/// `application/json`, with any parameters (`; charset=utf-8`). Also `memfs ui`'s check of a write.
pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    let Some(value) = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    essence.eq_ignore_ascii_case("application/json")
}

/// The body, refused as soon as it grows past `limit` bytes (a chunked body declares no length).
async fn read_body(mut body: Body, limit: usize) -> Result<Vec<u8>, Refused> {
    let mut bytes = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
        let frame = frame.map_err(|_| Refused::BodyRead)?;
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > limit {
                return Err(Refused::TooLarge { limit });
            }
            bytes.extend_from_slice(&data);
        }
    }
    Ok(bytes)
}

/// A request the endpoint does not answer with a tool result. Each becomes a JSON body
/// `{"error": "…"}` with its status.
enum Refused {
    NoToken,
    BadToken,
    ContentType,
    TooLarge { limit: usize },
    BodyRead,
    BadJson(String),
    Unavailable(RequestId),
    TimedOut { limit: std::time::Duration },
    NotFound,
    MethodNotAllowed,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        // RFC 6750 §3: a 401 names the scheme, with `invalid_token` when a token was sent.
        let mut challenge = None;
        let (status, message) = match self {
            Refused::NoToken => {
                challenge = Some(r#"Bearer realm="memfs""#);
                (
                    StatusCode::UNAUTHORIZED,
                    "missing bearer token: send the header Authorization: Bearer TOKEN".to_owned(),
                )
            }
            Refused::BadToken => {
                challenge = Some(r#"Bearer realm="memfs", error="invalid_token""#);
                (StatusCode::UNAUTHORIZED, "invalid bearer token".to_owned())
            }
            Refused::ContentType => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported content type: send Content-Type: application/json".to_owned(),
            ),
            Refused::TooLarge { limit } => {
                (StatusCode::PAYLOAD_TOO_LARGE, format!("request body too large: the limit is {limit} bytes"))
            }
            Refused::BodyRead => (StatusCode::BAD_REQUEST, "cannot read the request body".to_owned()),
            Refused::BadJson(e) => (StatusCode::BAD_REQUEST, format!("invalid JSON body: {e}")),
            Refused::Unavailable(id) => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "cannot open the store of this token's namespace (request id {id}); the server's log has the detail"
                ),
            ),
            Refused::TimedOut { limit } => (StatusCode::SERVICE_UNAVAILABLE, timed_out(limit)),
            Refused::NotFound => (StatusCode::NOT_FOUND, format!("not found: {ENDPOINTS}")),
            Refused::MethodNotAllowed => (StatusCode::METHOD_NOT_ALLOWED, format!("method not allowed: {ENDPOINTS}")),
        };
        let mut response = (status, Json(json!({"error": message}))).into_response();
        if let Some(challenge) = challenge {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tenant tells a command whose outcome is unknown from one that failed: it must not send
    /// the first again blindly, and may send the second again.
    #[test]
    fn an_outcome_unknown_is_answered_apart_from_a_store_failure() {
        let id = RequestId::new();
        assert_eq!(
            store_failed(&id, crate::ErrorKind::OutcomeUnknown),
            format!(
                "memfs: the outcome of this command is unknown: it may have been applied, and the store could not \
                 be read long enough to know; do not send it again blindly (`memfs log` shows whether it is in; \
                 request id {id})"
            )
        );
        assert_eq!(
            store_failed(&id, crate::ErrorKind::Store),
            format!(
                "memfs: the store failed while running this command (request id {id}); the server's log has the detail"
            )
        );
    }
}
