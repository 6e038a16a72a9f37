//! Errors of the Messages API loop.
//!
//! Rules: a memory command that fails is not an error here: the model reads it as a
//! `tool_result` with `is_error: true` and the loop goes on. [`AgentError`] is for what stops
//! the loop: no usable key, an unusable base URL (not http or https, or plain http to a host that is not loopback),
//! a redirect (never followed), an HTTP error of the API (with the API's own
//! message), a network failure, an answer that is not a Messages API response, the request
//! limit. No message carries the API key: the key is never formatted, and a message the
//! server sends back is cleaned of it before it is kept. URLs are shown with credentials
//! redacted.

use thiserror::Error;

/// The loop stopped.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum AgentError {
    /// `ANTHROPIC_API_KEY` is not set, or empty.
    #[error("ANTHROPIC_API_KEY is not set: set it to your Anthropic API key")]
    MissingApiKey,
    /// The API key cannot be sent as a header.
    #[error("the API key is not usable: {reason}")]
    InvalidApiKey {
        /// What is wrong with it (never the key).
        reason: &'static str,
    },
    /// The base URL is not an `http` or `https` URL.
    #[error("the base URL {url} is not usable: {reason}")]
    BaseUrl {
        /// The URL, credentials redacted.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The API answered with an HTTP error.
    #[error(
        "the Messages API answered {status}{}: {message}{}",
        kind.as_ref().map(|k| format!(" {k}")).unwrap_or_default(),
        request_id.as_ref().map(|id| format!(" (request-id {id})")).unwrap_or_default()
    )]
    Api {
        /// The HTTP status code.
        status: u16,
        /// The error's `type` (`invalid_request_error`, `authentication_error`, …), when the
        /// body is an API error object.
        kind: Option<String>,
        /// The error's `message`, or the start of the body when it is not an API error object;
        /// cleaned of the API key.
        message: String,
        /// The `request-id` response header, for support requests.
        request_id: Option<String>,
    },
    /// The API answered with a redirect, which memfs never follows: the key and the
    /// conversation go to the configured base URL only.
    #[error(
        "the Messages API answered {status} with a redirect to {target}: memfs does not follow redirects (set ANTHROPIC_BASE_URL to the address you trust)"
    )]
    Redirect {
        /// The HTTP status code (3xx).
        status: u16,
        /// The `Location` it named, resolved against the request's URL, credentials and query
        /// string redacted.
        target: String,
    },
    /// The request did not get an answer (connection refused, DNS, TLS, timeout, …).
    #[error("cannot reach the Messages API at {url}")]
    Network {
        /// The request's URL, credentials redacted.
        url: String,
        /// What failed.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A successful answer that is not a Messages API response memfs can follow.
    #[error("the Messages API sent an answer memfs cannot read: {reason}")]
    BadResponse {
        /// What is wrong with it.
        reason: String,
    },
    /// The model still asked for tools in the last request allowed. Its tool calls were not
    /// run.
    #[error("the model still asked for tools after {turns} requests, the limit (raise max_turns)")]
    TurnLimit {
        /// The limit that was reached.
        turns: u32,
    },
}
