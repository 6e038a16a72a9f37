//! The viewer's answers: JSON values, and refusals as `{"error": "…"}` with a status.

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::error::{Error, ErrorKind, error_chain};

/// A route's answer: a JSON value, or a refusal.
pub(super) type Reply = Result<Json<Value>, Refusal>;

/// A request not answered as asked: a status and a JSON body with at least `error`.
#[derive(Debug)]
pub(super) struct Refusal {
    status: StatusCode,
    body: Value,
}

impl Refusal {
    /// `body` (an object with `error`, and more) with `status`.
    pub(super) fn with(status: StatusCode, body: Value) -> Self {
        Refusal { status, body }
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        (self.status, Json(self.body)).into_response()
    }
}

/// A JSON body as a route received it.
pub(super) type Sent<T> = Result<Json<T>, JsonRejection>;

/// The body of a write, or `400` saying what is wrong with it.
pub(super) fn body<T>(sent: Sent<T>) -> Result<T, Refusal> {
    sent.map(|Json(value)| value).map_err(|e| refuse(StatusCode::BAD_REQUEST, &e.body_text()))
}

/// `{"error": message}` with `status`.
pub(super) fn refuse(status: StatusCode, message: &str) -> Refusal {
    Refusal { status, body: json!({"error": message}) }
}

/// A library error as a refusal: nothing there `404`, the store failing `500`, anything else
/// (a bad path, a bad revision, a refused history command) `400`. The text is the error's
/// chain, as the command line prints it: it names no secret.
pub(super) fn failed(e: &Error) -> Refusal {
    let status = match (e, e.kind()) {
        (Error::NotFound { .. }, _) => StatusCode::NOT_FOUND,
        // A revision that names no commit is the request's mistake, not the store's.
        (Error::Store { source: memfs_store::Error::UnknownRevision { .. }, .. }, _) => StatusCode::BAD_REQUEST,
        // The text of an outcome unknown says so, and how to find out.
        (_, ErrorKind::Store | ErrorKind::OutcomeUnknown | ErrorKind::Credential | ErrorKind::NoStore) => {
            StatusCode::INTERNAL_SERVER_ERROR
        }
        (_, ErrorKind::Other) => StatusCode::BAD_REQUEST,
    };
    refuse(status, &error_chain(e))
}

/// Unknown routes.
pub(super) async fn not_found() -> Refusal {
    refuse(StatusCode::NOT_FOUND, "no such page")
}
