//! One Messages API request: the body, the headers, and reading the answer.

use std::time::Duration;

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue, USER_AGENT};
use serde_json::{Value, json};

use super::{API_VERSION, AgentConfig, AgentError, BETA, CLEAR_TOOL_USES, MEMORY_TOOL_TYPE};
use crate::protocol::TOOL_NAME;
use crate::url::redact;

/// How long one request may take, as the official SDKs allow by default.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// How much of a body that is not an API error object an error message keeps.
const BODY_EXCERPT: usize = 300;

/// A client for `POST {base_url}/v1/messages` with one configuration.
pub(crate) struct Client<'a> {
    http: reqwest::Client,
    url: reqwest::Url,
    config: &'a AgentConfig,
}

/// A successful answer: the fields the loop follows, and the content blocks verbatim.
pub(crate) struct Answer {
    pub(crate) content: Vec<Value>,
    pub(crate) stop_reason: String,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
}

impl<'a> Client<'a> {
    pub(crate) fn new(config: &'a AgentConfig) -> Result<Self, AgentError> {
        let url = messages_url(&config.base_url)?;
        let mut headers = HeaderMap::new();
        let mut key = HeaderValue::from_str(config.api_key.expose())
            .map_err(|_| AgentError::InvalidApiKey { reason: "it cannot be sent as an HTTP header" })?;
        key.set_sensitive(true);
        headers.insert("x-api-key", key);
        headers.insert("anthropic-version", HeaderValue::from_static(API_VERSION));
        headers.insert("anthropic-beta", HeaderValue::from_static(BETA));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(USER_AGENT, HeaderValue::from_static(concat!("memfs/", env!("CARGO_PKG_VERSION"))));
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .timeout(REQUEST_TIMEOUT)
            // Never follow a redirect: reqwest drops `Authorization` on a cross-origin hop but
            // not `x-api-key`, so a 3xx to another host would receive the key and the whole
            // conversation. A 3xx is reported instead (`AgentError::Redirect`).
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| AgentError::Network { url: redact(url.as_str()), source: Box::new(e.without_url()) })?;
        Ok(Client { http, url, config })
    }

    /// The request body for the conversation so far.
    pub(crate) fn body(&self, messages: &[Value]) -> Value {
        let config = self.config;
        let mut body = json!({
            "model": config.model,
            "max_tokens": config.max_tokens,
            "messages": messages,
            "tools": [{"type": MEMORY_TOOL_TYPE, "name": TOOL_NAME}],
        });
        if let Some(system) = &config.system {
            body["system"] = json!(system);
        }
        if config.context_editing {
            body["context_management"] = json!({
                "edits": [{"type": CLEAR_TOOL_USES, "exclude_tools": [TOOL_NAME]}],
            });
        }
        body
    }

    /// Sends the conversation so far and reads the answer, retrying as the official SDKs do:
    /// up to [`AgentConfig::max_retries`] more times after a network failure or an HTTP 408,
    /// 409, 429 or 5xx (unless the server says `x-should-retry: false`), waiting what
    /// `retry-after-ms` or `retry-after` asks (up to a minute), else 0.5 s doubling up to 8 s,
    /// less up to a quarter at random.
    pub(crate) async fn send(&self, messages: &[Value]) -> Result<Answer, AgentError> {
        let body = self.body(messages);
        let mut retries = 0;
        loop {
            match self.attempt(&body).await {
                Ok(answer) => return Ok(answer),
                Err(Failed { retry: Some(asked), .. }) if retries < self.config.max_retries => {
                    tokio::time::sleep(asked.unwrap_or_else(|| backoff(retries))).await;
                    retries += 1;
                }
                Err(failed) => return Err(failed.error),
            }
        }
    }

    async fn attempt(&self, body: &Value) -> Result<Answer, Failed> {
        let network = |e: reqwest::Error| Failed {
            error: AgentError::Network { url: redact(self.url.as_str()), source: Box::new(e.without_url()) },
            retry: Some(None),
        };
        let response = self.http.post(self.url.clone()).json(body).send().await.map_err(network)?;
        let status = response.status();
        let headers = response.headers();
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let request_id = header("request-id");
        let should_retry = match header("x-should-retry").as_deref() {
            Some("true") => true,
            Some("false") => false,
            _ => matches!(status.as_u16(), 408 | 409 | 429) || status.is_server_error(),
        };
        let asked = retry_after(header("retry-after-ms").as_deref(), header("retry-after").as_deref());
        if status.is_redirection() {
            // The target is named (resolved against the request, credentials and query
            // redacted); the body is not read.
            let target = header("location")
                .map(|location| match self.url.join(&location) {
                    Ok(url) => redact(url.as_str()),
                    Err(_) => redact(&location),
                })
                .unwrap_or_else(|| "(no Location header)".to_owned());
            return Err(Failed { error: AgentError::Redirect { status: status.as_u16(), target }, retry: None });
        }
        let bytes = response.bytes().await.map_err(network)?;
        if !status.is_success() {
            let error = self.api_error(status.as_u16(), &bytes, request_id);
            return Err(Failed { error, retry: should_retry.then_some(asked) });
        }
        parse_answer(&bytes).map_err(|error| Failed { error, retry: None })
    }

    fn api_error(&self, status: u16, body: &[u8], request_id: Option<String>) -> AgentError {
        let parsed: Option<Value> = serde_json::from_slice(body).ok();
        let error = parsed.as_ref().and_then(|v| v.get("error"));
        let kind = error.and_then(|e| e.get("type")).and_then(Value::as_str).map(str::to_owned);
        let message = match error.and_then(|e| e.get("message")).and_then(Value::as_str) {
            Some(message) => message.to_owned(),
            None => {
                let text = String::from_utf8_lossy(body);
                let excerpt: String = text.chars().take(BODY_EXCERPT).collect();
                if excerpt.trim().is_empty() {
                    "(no message)".to_owned()
                } else if excerpt.len() < text.len() {
                    format!("{}…", excerpt.trim_end())
                } else {
                    excerpt.trim_end().to_owned()
                }
            }
        };
        // A proxy may echo a request header back: never keep the key.
        let message = message.replace(self.config.api_key.expose(), "****");
        AgentError::Api { status, kind, message, request_id }
    }
}

/// A failed attempt, and whether to try again: `Some(wait)` to retry, after `wait` when the
/// server asked for one.
struct Failed {
    error: AgentError,
    retry: Option<Option<Duration>>,
}

/// The wait a server asked for: `retry-after-ms` (milliseconds), else `retry-after` (seconds),
/// when more than zero and at most a minute.
fn retry_after(ms: Option<&str>, seconds: Option<&str>) -> Option<Duration> {
    let wait = match (ms.and_then(|v| v.trim().parse::<f64>().ok()), seconds) {
        (Some(ms), _) => ms / 1000.0,
        (None, Some(s)) => s.trim().parse::<f64>().ok()?,
        (None, None) => return None,
    };
    (wait > 0.0 && wait <= MAX_RETRY_AFTER).then(|| Duration::from_secs_f64(wait))
}

/// The longest wait a `retry-after` header may ask for; longer ones are not honoured.
const MAX_RETRY_AFTER: f64 = 60.0;

/// The wait before retry `n` (from 0) when the server asked for none: 0.5 s doubling up to
/// 8 s, less up to a quarter at random so that clients that failed together do not retry
/// together.
fn backoff(n: u32) -> Duration {
    let base = (0.5 * 2f64.powi(n.min(4) as i32)).min(8.0);
    let mut byte = [0u8];
    let jitter = if getrandom::fill(&mut byte).is_ok() { f64::from(byte[0]) / 255.0 * 0.25 } else { 0.0 };
    Duration::from_secs_f64(base * (1.0 - jitter))
}

/// `{base_url}/v1/messages`, for an `http` or `https` base URL.
fn messages_url(base_url: &str) -> Result<reqwest::Url, AgentError> {
    let bad = |reason: &str| AgentError::BaseUrl { url: redact(base_url), reason: reason.to_owned() };
    let url = reqwest::Url::parse(&format!("{}/v1/messages", base_url.trim_end_matches('/')))
        .map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("expected an http:// or https:// URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad("expected no query string or fragment"));
    }
    // Plain HTTP would carry the key and the conversation in clear: only to this machine.
    if url.scheme() == "http" && !is_loopback(&url) {
        return Err(bad(
            "plain http:// is accepted only for a loopback host (localhost, 127.0.0.1, [::1]); use https://",
        ));
    }
    Ok(url)
}

/// Whether the URL's host is this machine: `localhost`, an address in 127.0.0.0/8, or `::1`.
fn is_loopback(url: &reqwest::Url) -> bool {
    let Some(host) = url.host_str() else { return false };
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

/// Reads a successful answer: a `message` with a list of content blocks and a stop reason.
fn parse_answer(bytes: &[u8]) -> Result<Answer, AgentError> {
    let bad = |reason: String| AgentError::BadResponse { reason };
    let value: Value = serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON ({e})")))?;
    if value.get("type").and_then(Value::as_str) != Some("message") {
        return Err(bad("its type is not \"message\"".to_owned()));
    }
    let content = match value.get("content") {
        Some(Value::Array(blocks)) => blocks.clone(),
        _ => return Err(bad("it has no content list".to_owned())),
    };
    let stop_reason = match value.get("stop_reason") {
        Some(Value::String(reason)) => reason.clone(),
        _ => return Err(bad("it has no stop_reason".to_owned())),
    };
    let usage = value.get("usage");
    let tokens = |field: &str| usage.and_then(|u| u.get(field)).and_then(Value::as_u64).unwrap_or(0);
    Ok(Answer { content, stop_reason, input_tokens: tokens("input_tokens"), output_tokens: tokens("output_tokens") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_url_joins_and_checks() {
        let url = |s: &str| messages_url(s).map(|u| u.to_string()).map_err(|e| e.to_string());
        assert_eq!(url("https://api.anthropic.com").as_deref(), Ok("https://api.anthropic.com/v1/messages"));
        assert_eq!(url("http://127.0.0.1:8080/").as_deref(), Ok("http://127.0.0.1:8080/v1/messages"));
        assert_eq!(url("https://proxy/anthropic").as_deref(), Ok("https://proxy/anthropic/v1/messages"));
        assert_eq!(url("http://localhost:1/").as_deref(), Ok("http://localhost:1/v1/messages"));
        assert_eq!(url("http://127.0.0.2").as_deref(), Ok("http://127.0.0.2/v1/messages"));
        assert_eq!(url("http://[::1]:9").as_deref(), Ok("http://[::1]:9/v1/messages"));
        for remote in ["http://proxy/anthropic", "http://10.0.0.1", "http://[::2]", "http://localhost.example.com"] {
            assert_eq!(
                url(remote).unwrap_err(),
                format!(
                    "the base URL {remote} is not usable: plain http:// is accepted only for a loopback host (localhost, 127.0.0.1, [::1]); use https://"
                )
            );
        }
        assert_eq!(
            url("ftp://user:secret@host").unwrap_err(),
            "the base URL ftp://****@host is not usable: expected an http:// or https:// URL"
        );
        assert_eq!(
            url("https://host/?key=secret").unwrap_err(),
            "the base URL https://host/?**** is not usable: expected no query string or fragment"
        );
        assert_eq!(url("not a url").unwrap_err(), "the base URL not a url is not usable: relative URL without a base");
    }

    #[test]
    fn answers_must_be_messages() {
        let parse = |s: &str| parse_answer(s.as_bytes()).map(|a| a.stop_reason).map_err(|e| e.to_string());
        assert_eq!(parse(r#"{"type":"message","content":[],"stop_reason":"end_turn"}"#).as_deref(), Ok("end_turn"));
        assert_eq!(
            parse("<html>").unwrap_err(),
            "the Messages API sent an answer memfs cannot read: not JSON (expected value at line 1 column 1)"
        );
        assert_eq!(
            parse(r#"{"type":"completion"}"#).unwrap_err(),
            "the Messages API sent an answer memfs cannot read: its type is not \"message\""
        );
        assert_eq!(
            parse(r#"{"type":"message","content":"hi","stop_reason":"end_turn"}"#).unwrap_err(),
            "the Messages API sent an answer memfs cannot read: it has no content list"
        );
        assert_eq!(
            parse(r#"{"type":"message","content":[],"stop_reason":null}"#).unwrap_err(),
            "the Messages API sent an answer memfs cannot read: it has no stop_reason"
        );
    }

    #[test]
    fn api_errors_are_cleaned_of_the_key() {
        let config = AgentConfig::new(super::super::ApiKey::new("sk-secret-1").expect("key"), "m");
        let client = Client::new(&config).expect("client");
        let err =
            |status, body: &[u8], id: Option<&str>| client.api_error(status, body, id.map(str::to_owned)).to_string();
        assert_eq!(
            err(
                401,
                br#"{"type":"error","error":{"type":"authentication_error","message":"bad key sk-secret-1"}}"#,
                None
            ),
            "the Messages API answered 401 authentication_error: bad key ****"
        );
        assert_eq!(
            err(502, b"<html>gateway saw sk-secret-1</html>\n", Some("req_1")),
            "the Messages API answered 502: <html>gateway saw ****</html> (request-id req_1)"
        );
        assert_eq!(err(500, b"", None), "the Messages API answered 500: (no message)");
        let long = "x".repeat(400);
        assert_eq!(err(503, long.as_bytes(), None), format!("the Messages API answered 503: {}…", "x".repeat(300)));
    }

    #[test]
    fn retry_waits() {
        let ms = |v: Option<Duration>| v.map(|d| d.as_millis());
        assert_eq!(ms(retry_after(Some("10"), Some("5"))), Some(10));
        assert_eq!(ms(retry_after(None, Some("2"))), Some(2000));
        assert_eq!(ms(retry_after(Some("junk"), Some("1.5"))), Some(1500));
        assert_eq!(ms(retry_after(None, Some("0"))), None);
        assert_eq!(ms(retry_after(None, Some("61"))), None);
        assert_eq!(ms(retry_after(None, Some("Wed, 21 Oct 2015 07:28:00 GMT"))), None);
        assert_eq!(ms(retry_after(None, None)), None);
        for (n, max) in [(0, 500), (1, 1000), (2, 2000), (3, 4000), (4, 8000), (9, 8000)] {
            let wait = backoff(n).as_millis();
            assert!(wait <= max && wait >= max * 3 / 4, "retry {n}: {wait} ms");
        }
    }
}
