//! What the REST custodians (Google Cloud KMS, Azure Key Vault) share: one POST of a JSON
//! body with a bearer token, under timeouts, following no redirect, reading at most 64 KiB into
//! a buffer zeroized on drop; and the words their errors are made of.

use std::time::Duration;

use bytes::Bytes;
use memfs_crypt::CustodyError;
use reqwest::StatusCode;
use serde::Serialize;
use zeroize::Zeroizing;

/// How long a connection may take to open.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a whole request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Getting an access token from a cloud's identity (a metadata server, a token exchange,
/// every credential of a chain tried).
pub(crate) const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest answer read: a KMS answer is a few hundred bytes.
const MAX_ANSWER: usize = 64 * 1024;

/// Whether `url`'s host is `127.0.0.1`, `[::1]` or `localhost`.
pub(crate) fn is_loopback(url: &reqwest::Url) -> bool {
    matches!(url.host_str(), Some("127.0.0.1" | "[::1]" | "localhost"))
}

/// POSTs the JSON `body` to `url` with the bearer `token`: the answer's status and body (at
/// most 64 KiB), or why there was none, naming `origin`.
pub(crate) async fn post(
    url: &str,
    origin: &str,
    loopback: bool,
    token: &str,
    body: Zeroizing<Vec<u8>>,
) -> Result<(StatusCode, Zeroizing<Vec<u8>>), String> {
    let mut client = reqwest::Client::builder()
        .connect_timeout(CONNECT_TIMEOUT)
        .timeout(REQUEST_TIMEOUT)
        // A redirect would carry the request (and its KEK) elsewhere: none is followed.
        .redirect(reqwest::redirect::Policy::none());
    if loopback {
        client = client.no_proxy();
    }
    let client = client.build().map_err(|e| causes(&e.without_url()))?;
    let unreached = |e: reqwest::Error| {
        if e.is_timeout() {
            format!("no answer from {origin} in time (5 s to connect, 30 s in all)")
        } else {
            format!("could not reach {origin}: {}", causes(&e.without_url()))
        }
    };
    // The body (a KEK in base64, or the slot's ciphertext) is zeroized when reqwest drops it.
    let mut response = client
        .post(url)
        .bearer_auth(token)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(Bytes::from_owner(body))
        .send()
        .await
        .map_err(unreached)?;
    let status = response.status();
    // Room for the longest answer up front, so no partial copy of a KEK is left behind by a
    // reallocation.
    let mut answer = Zeroizing::new(Vec::with_capacity(MAX_ANSWER));
    while let Some(chunk) = response.chunk().await.map_err(unreached)? {
        if answer.len() + chunk.len() > MAX_ANSWER {
            return Err(format!("{origin} answered {status} with more than 64 KiB"));
        }
        answer.extend_from_slice(&chunk);
    }
    Ok((status, answer))
}

/// `value` as JSON, in a buffer zeroized on drop (allocated once, for the largest request a
/// custodian sends: no copy left behind); `service` names it in the error.
pub(crate) fn json(value: &impl Serialize, service: &str) -> Result<Zeroizing<Vec<u8>>, CustodyError> {
    let mut out = Zeroizing::new(Vec::with_capacity(2048));
    serde_json::to_writer(&mut *out, value)
        .map_err(|_| CustodyError(format!("a {service} request could not be written")))?;
    Ok(out)
}

/// Text from a service as shown in an error: on one line, without control characters, at most
/// 500 characters.
pub(crate) fn shown(text: &str) -> String {
    let mut out: String = text.trim().chars().take(500).map(|c| if c.is_control() { ' ' } else { c }).collect();
    if text.trim().chars().nth(500).is_some() {
        out.push('…');
    }
    out
}

/// An error and its sources, each in its own words, joined by `: `.
pub(crate) fn causes(e: &dyn std::error::Error) -> String {
    let mut words = vec![e.to_string()];
    let mut source = e.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !words.iter().any(|word| word.contains(&said)) {
            words.push(said);
        }
        source = cause.source();
    }
    words.join(": ")
}
