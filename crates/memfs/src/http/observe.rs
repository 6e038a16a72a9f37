//! What the endpoint reports to its operator: one record per request served, and the detail of
//! each store failure a tenant was told about only coarsely.
//!
//! The records hold no content, no path and no token: a request's record has the time, a
//! request id, the namespace (once a token named one), the tool command's name (one of the six,
//! never a client-supplied string) and the status and duration. A [`StoreFailure`] holds the
//! store's error, which may name the server's store location: it is for the server's log only,
//! and the tenant gets [`RequestId`] to quote instead. The words of the log lines are the
//! embedding program's (`memfs serve` prints them on stderr).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// A request's id: 16 random hex digits, in the request's record, in the `x-request-id` answer
/// header, and in the coarse answer to a store failure and that failure's record.
#[derive(Clone, PartialEq, Eq)]
pub struct RequestId(String);

impl RequestId {
    pub(super) fn new() -> Self {
        let mut bytes = [0u8; 8];
        // Without the RNG, ids are still told apart by the request log's time; all zeros says
        // so plainly.
        let _ = getrandom::fill(&mut bytes);
        RequestId(bytes.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RequestId({})", self.0)
    }
}

/// One request, answered.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Served {
    /// When the request arrived.
    pub time: jiff::Timestamp,
    /// Its id.
    pub request_id: RequestId,
    /// The namespace of its token, when it had a valid one.
    pub namespace: Option<Arc<str>>,
    /// The tool command it ran (`view`, `create`, `str_replace`, `insert`, `delete`,
    /// `rename`), when its body named one of them.
    pub command: Option<&'static str>,
    /// The HTTP status of the answer.
    pub status: u16,
    /// From the request's arrival to its answer.
    pub duration: Duration,
}

/// A store failure: the tenant was answered with [`RequestId`] and a generic message.
#[derive(Debug)]
#[non_exhaustive]
pub struct StoreFailure<'a> {
    /// The request.
    pub request_id: &'a RequestId,
    /// Its namespace.
    pub namespace: &'a str,
    /// The error, in full (it may name the store's location, credentials redacted).
    pub error: &'a crate::Error,
}

/// Where the endpoint's records go ([`Server::with_observer`](super::Server::with_observer)); by
/// default nowhere.
pub trait Observer: Send + Sync {
    /// A request was answered.
    fn served(&self, request: &Served);
    /// A store failed while serving a request.
    fn store_failure(&self, failure: &StoreFailure<'_>);
}

/// No log.
pub(super) struct Unobserved;

impl Observer for Unobserved {
    fn served(&self, _: &Served) {}
    fn store_failure(&self, _: &StoreFailure<'_>) {}
}

/// The tool command a request body names, if it is one of the six: taken from a bare input's
/// `command`, or a `tool_use` block's `input.command`. Anything else is not echoed.
pub(super) fn command_of(value: &serde_json::Value) -> Option<&'static str> {
    let input = if value.get("type").and_then(serde_json::Value::as_str) == Some("tool_use") {
        value.get("input")?
    } else {
        value
    };
    let name = input.get("command")?.as_str()?;
    ["view", "create", "str_replace", "insert", "delete", "rename"].into_iter().find(|known| *known == name)
}
