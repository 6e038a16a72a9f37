//! A loopback stub of the Google Cloud Storage XML API, as `object_store` 0.14's GCS client
//! speaks it (no GCS emulator that installs here serves its writes: see `gcs.rs` and
//! docs/CLOUD.md).
//!
//! It serves one bucket on `127.0.0.1:0` in the test's tokio runtime and implements only what
//! that client sends for the calls memfs makes:
//!
//! - `PUT /{bucket}/{key}`: store the body. `x-goog-if-generation-match: 0` means "must not
//!   exist", `N` means "the current generation must be N"; otherwise `412`. Answers `ETag`
//!   and `x-goog-generation`;
//! - `GET` and `HEAD /{bucket}/{key}`, with `Range`, `If-Match`, `If-None-Match` (`304`),
//!   `If-Modified-Since`, `If-Unmodified-Since` and `?generation=`; answers `ETag`,
//!   `x-goog-generation`, `Last-Modified`, `Content-Length` (and `Content-Range`, `206`);
//! - `DELETE /{bucket}/{key}`: `204`, or `404` if it is missing;
//! - `GET /{bucket}?list-type=2` with `prefix`, `delimiter`, `start-after`, `max-keys` and
//!   `continuation-token`: an XML `ListBucketResult`, paged.
//!
//! Anything else (multipart uploads, copies, other buckets' objects) is answered `501` or
//! `404` with an XML error, so a test that starts using it fails loudly. The state is one
//! `Mutex<BTreeMap>` and one generation counter for the whole stub, so a conditional write
//! is checked and applied under one lock: of racing writers on one generation, exactly one
//! wins. Every request is recorded (method, key, query, headers, the status answered) for
//! tests to assert on.
//!
//! Like Google, the ETag is derived from the content (Google's is its MD5; here a BLAKE3
//! prefix), so equal bytes written twice get equal ETags, and only the generation tells the
//! writes apart.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use jiff::Timestamp;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::prefix::PrefixStore;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};
use percent_encoding::percent_decode_str;

/// The service account key that turns OAuth off: the client then sends an empty bearer token
/// and never asks Google for one. The three fields are required by its parser.
pub(crate) const NO_OAUTH_KEY: &str =
    r#"{"private_key":"","private_key_id":"","client_email":"","disable_oauth":true}"#;

/// Where generations start: like Google's (microseconds since the epoch), nothing like the
/// small numbers of memfs's own head generation, so the two cannot be mistaken for each other.
pub(crate) const FIRST_GENERATION: u64 = 1_700_000_000_000_001;

/// One stored object.
#[derive(Debug, Clone)]
pub(crate) struct StubObject {
    pub(crate) data: Bytes,
    pub(crate) generation: u64,
    pub(crate) etag: String,
    content_type: Option<HeaderValue>,
    /// Whole seconds: HTTP dates carry no more, and a conditional read compares them.
    last_modified: Timestamp,
}

/// One request as the stub saw it, and what it answered.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: Method,
    /// The object key, percent-decoded; `None` for a bucket request (a list).
    pub(crate) key: Option<String>,
    /// Query parameters, decoded, in order.
    pub(crate) query: Vec<(String, String)>,
    pub(crate) headers: HeaderMap,
    pub(crate) status: StatusCode,
    pub(crate) response_headers: HeaderMap,
}

impl Recorded {
    /// A request header as text (`None` if absent).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|v| v.to_str().expect("an ASCII header"))
    }

    /// A response header as text (`None` if absent).
    pub(crate) fn response_header(&self, name: &str) -> Option<&str> {
        self.response_headers.get(name).map(|v| v.to_str().expect("an ASCII header"))
    }

    /// The `x-goog-if-generation-match` precondition, as sent.
    pub(crate) fn generation_match(&self) -> Option<&str> {
        self.header("x-goog-if-generation-match")
    }
}

#[derive(Default)]
struct Objects {
    map: BTreeMap<String, StubObject>,
    /// The last generation handed out, over all objects.
    generation: u64,
}

struct Shared {
    bucket: String,
    objects: Mutex<Objects>,
    log: Mutex<Vec<Recorded>>,
    /// Most keys (objects and prefixes) in one list page.
    page_size: AtomicUsize,
    /// A dishonest stub, for tests that must see a dishonest store refused.
    ignore_preconditions: AtomicBool,
    /// How many of the next requests get a transient `503` and change nothing.
    fail_next: AtomicUsize,
    /// The next PUT of a key ending with this is applied only after the delay: the client has
    /// timed out by then, and the write lands anyway (a lost answer).
    delay_next_put: Mutex<Option<(String, Duration)>>,
}

/// A running stub; the server stops when it is dropped.
pub(crate) struct GcsStub {
    shared: Arc<Shared>,
    addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
}

impl Drop for GcsStub {
    fn drop(&mut self) {
        self.server.abort();
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl GcsStub {
    /// Starts a stub serving `bucket` on a free loopback port, in the current runtime.
    pub(crate) async fn start(bucket: &str) -> GcsStub {
        let shared = Arc::new(Shared {
            bucket: bucket.to_owned(),
            objects: Mutex::new(Objects { map: BTreeMap::new(), generation: FIRST_GENERATION - 1 }),
            log: Mutex::new(Vec::new()),
            page_size: AtomicUsize::new(1000),
            ignore_preconditions: AtomicBool::new(false),
            fail_next: AtomicUsize::new(0),
            delay_next_put: Mutex::new(None),
        });
        let app = Router::new().fallback(handle).layer(DefaultBodyLimit::max(64 << 20)).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind a loopback port");
        let addr = listener.local_addr().expect("a local address");
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("the stub serves");
        });
        GcsStub { shared, addr, server }
    }

    /// The base URL to give the client (`with_base_url`, `google_base_url`).
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A GCS client for this stub's bucket (not rooted at any prefix). Retries are off, so each
    /// call is exactly the requests it needs; timeouts are short.
    pub(crate) fn client(&self) -> Arc<dyn ObjectStore> {
        self.client_for(&self.shared.bucket)
    }

    /// A GCS client for `bucket` on this stub (which serves only its own).
    pub(crate) fn client_for(&self, bucket: &str) -> Arc<dyn ObjectStore> {
        let retry = RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(10),
                max_backoff: Duration::from_millis(50),
                base: 2.0,
            },
            max_retries: 0,
            retry_timeout: Duration::from_secs(5),
        };
        let store = GoogleCloudStorageBuilder::new()
            .with_bucket_name(bucket)
            .with_base_url(&self.url())
            .with_service_account_key(NO_OAUTH_KEY)
            .with_client_options(
                ClientOptions::new()
                    .with_allow_http(true)
                    .with_connect_timeout(Duration::from_secs(2))
                    .with_timeout(Duration::from_secs(10)),
            )
            .with_retry(retry)
            .build()
            .expect("a GCS client for the stub");
        Arc::new(store)
    }

    /// [`GcsStub::client`] rooted at `prefix`, as a `gs://bucket/prefix` store is.
    pub(crate) fn prefixed(&self, prefix: &str) -> Arc<dyn ObjectStore> {
        Arc::new(PrefixStore::new(self.client(), prefix))
    }

    /// Most entries in one list page (1000, as Google's, unless set).
    pub(crate) fn set_page_size(&self, n: usize) {
        self.shared.page_size.store(n.max(1), Ordering::SeqCst);
    }

    /// Makes the stub accept every write whatever its precondition, as a dishonest store.
    pub(crate) fn set_ignore_preconditions(&self, ignore: bool) {
        self.shared.ignore_preconditions.store(ignore, Ordering::SeqCst);
    }

    /// Answers the next `n` requests with a transient `503 Service Unavailable`, changing nothing.
    pub(crate) fn fail_next(&self, n: usize) {
        self.shared.fail_next.store(n, Ordering::SeqCst);
    }

    /// Applies the next PUT of a key ending with `suffix` only after `delay`, whether or not the
    /// client is still waiting: a write whose answer is lost.
    pub(crate) fn delay_next_put(&self, suffix: &str, delay: Duration) {
        *lock(&self.shared.delay_next_put) = Some((suffix.to_owned(), delay));
    }

    /// The object stored under `key` (the full key, prefix included).
    pub(crate) fn object(&self, key: &str) -> Option<StubObject> {
        lock(&self.shared.objects).map.get(key).cloned()
    }

    /// Every stored key, in order.
    pub(crate) fn keys(&self) -> Vec<String> {
        lock(&self.shared.objects).map.keys().cloned().collect()
    }

    /// The requests so far, in the order they were answered.
    pub(crate) fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.log).clone()
    }

    /// The requests so far, and forgets them.
    pub(crate) fn take_requests(&self) -> Vec<Recorded> {
        std::mem::take(&mut *lock(&self.shared.log))
    }
}

/// Every request lands here: the bucket and key come from the raw (percent-encoded) path.
async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let raw = uri.path().strip_prefix('/').unwrap_or(uri.path());
    let (bucket, key) = match raw.split_once('/') {
        Some((b, k)) => (decode(b), Some(decode(k))),
        None => (decode(raw), None),
    };
    let query = parse_query(uri.query().unwrap_or(""));
    let transient = shared.fail_next.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok();
    let delayed = match (&method, &key) {
        (&Method::PUT, Some(Some(k))) => {
            let mut slot = lock(&shared.delay_next_put);
            match slot.as_ref() {
                Some((suffix, delay)) if k.ends_with(suffix.as_str()) => {
                    let delay = *delay;
                    *slot = None;
                    Some(delay)
                }
                _ => None,
            }
        }
        _ => None,
    };
    let response = if transient {
        error(StatusCode::SERVICE_UNAVAILABLE, "ServiceUnavailable", "Please try again.")
    } else if let (Some(delay), Some(Some(k))) = (delayed, key.clone()) {
        // Applied in a task of its own, so that the client giving up (and the connection
        // closing) cannot cancel it.
        // It records itself: by the time it runs, this handler may be gone.
        let task = tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let response = object_request(&shared, &method, &k, &query, &headers, body);
            lock(&shared.log).push(Recorded {
                method,
                key: Some(k),
                query,
                headers,
                status: response.status(),
                response_headers: response.headers().clone(),
            });
            response
        });
        return task.await.expect("the delayed write runs");
    } else {
        match (bucket, &key) {
            (Some(b), _) if b != shared.bucket => {
                error(StatusCode::NOT_FOUND, "NoSuchBucket", "The specified bucket does not exist.")
            }
            (None, _) | (_, Some(None)) => error(StatusCode::BAD_REQUEST, "InvalidURI", "Couldn't parse the URI."),
            (Some(_), Some(Some(key))) => object_request(&shared, &method, key, &query, &headers, body),
            (Some(_), None) if method == Method::GET => list(&shared, &query),
            (Some(_), None) => not_implemented("bucket operations other than list"),
        }
    };
    lock(&shared.log).push(Recorded {
        method,
        key: key.flatten(),
        query,
        headers,
        status: response.status(),
        response_headers: response.headers().clone(),
    });
    response
}

fn decode(s: &str) -> Option<String> {
    percent_decode_str(s).decode_utf8().ok().map(|c| c.into_owned())
}

/// `application/x-www-form-urlencoded`, as reqwest writes a query.
fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let d = |s: &str| decode(&s.replace('+', " ")).unwrap_or_default();
            (d(k), d(v))
        })
        .collect()
}

fn param<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

fn object_request(
    shared: &Shared,
    method: &Method,
    key: &str,
    query: &[(String, String)],
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    if key.is_empty() {
        return error(StatusCode::BAD_REQUEST, "InvalidArgument", "The object name is empty.");
    }
    if query.iter().any(|(k, _)| k == "uploads" || k == "uploadId" || k == "partNumber") {
        return not_implemented("multipart uploads");
    }
    if headers.contains_key("x-goog-copy-source") {
        return not_implemented("copies");
    }
    match *method {
        Method::PUT => put(shared, key, headers, body),
        Method::GET | Method::HEAD => get(shared, key, query, headers, *method == Method::HEAD),
        Method::DELETE => delete(shared, key, headers),
        _ => not_implemented("this method on an object"),
    }
}

/// Parses `x-goog-if-generation-match`: `Ok(None)` when absent, `Err` (a `400` to answer)
/// when it is not a number.
fn generation_match(headers: &HeaderMap) -> Result<Option<u64>, Box<Response>> {
    match headers.get("x-goog-if-generation-match") {
        None => Ok(None),
        Some(v) => v.to_str().ok().and_then(|s| s.parse().ok()).map(Some).ok_or_else(|| {
            Box::new(error(
                StatusCode::BAD_REQUEST,
                "InvalidArgument",
                "Invalid argument for x-goog-if-generation-match.",
            ))
        }),
    }
}

fn precondition_failed() -> Response {
    error(
        StatusCode::PRECONDITION_FAILED,
        "PreconditionFailed",
        "At least one of the pre-conditions you specified did not hold.",
    )
}

fn put(shared: &Shared, key: &str, headers: &HeaderMap, body: Bytes) -> Response {
    let expected = match generation_match(headers) {
        Ok(g) => g,
        Err(response) => return *response,
    };
    let declared = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<usize>().ok());
    if declared != Some(body.len()) {
        return error(StatusCode::BAD_REQUEST, "InvalidArgument", "Content-Length does not match the body.");
    }
    let honest = !shared.ignore_preconditions.load(Ordering::SeqCst);
    // Checked and applied under one lock: a conditional write is atomic.
    let mut objects = lock(&shared.objects);
    let current = objects.map.get(key).map(|o| o.generation);
    if let (Some(expected), true) = (expected, honest) {
        // 0: the object must not exist; N: its generation must be N (a missing one has none).
        if current.unwrap_or(0) != expected {
            return precondition_failed();
        }
    }
    objects.generation += 1;
    let object = StubObject {
        etag: etag_of(&body),
        generation: objects.generation,
        data: body,
        content_type: headers.get(header::CONTENT_TYPE).cloned(),
        last_modified: Timestamp::from_second(Timestamp::now().as_second()).expect("now is a timestamp"),
    };
    let response = Response::builder()
        .status(StatusCode::OK)
        .header(header::ETAG, &object.etag)
        .header("x-goog-generation", object.generation)
        .header("x-goog-metageneration", 1)
        .body(Body::empty())
        .expect("a response");
    objects.map.insert(key.to_owned(), object);
    response
}

fn etag_of(data: &[u8]) -> String {
    format!("\"{}\"", &blake3::hash(data).to_hex()[..32])
}

fn http_date(t: Timestamp) -> String {
    t.strftime("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

fn parse_http_date(v: &HeaderValue) -> Option<Timestamp> {
    let s = v.to_str().ok()?;
    Timestamp::strptime("%a, %d %b %Y %H:%M:%S %z", s.replace("GMT", "+0000")).ok()
}

/// The `If-Match`/`If-None-Match` list matches `etag` (`*` matches any).
fn etag_matches(v: &HeaderValue, etag: &str) -> bool {
    v.to_str().is_ok_and(|s| s.split(',').map(str::trim).any(|t| t == "*" || t == etag))
}

fn get(shared: &Shared, key: &str, query: &[(String, String)], headers: &HeaderMap, head: bool) -> Response {
    let Some(object) = lock(&shared.objects).map.get(key).cloned() else {
        return error(StatusCode::NOT_FOUND, "NoSuchKey", "The specified key does not exist.");
    };
    if let Some(g) = param(query, "generation")
        && g != object.generation.to_string()
    {
        // Old generations are not kept (as in a bucket without versioning).
        return error(StatusCode::NOT_FOUND, "NoSuchKey", "The specified key does not exist.");
    }
    if let Some(v) = headers.get(header::IF_MATCH)
        && !etag_matches(v, &object.etag)
    {
        return precondition_failed();
    }
    if let Some(t) = headers.get(header::IF_UNMODIFIED_SINCE).and_then(parse_http_date)
        && object.last_modified > t
    {
        return precondition_failed();
    }
    let not_modified = match headers.get(header::IF_NONE_MATCH) {
        Some(v) => etag_matches(v, &object.etag),
        None => {
            headers.get(header::IF_MODIFIED_SINCE).and_then(parse_http_date).is_some_and(|t| object.last_modified <= t)
        }
    };
    let meta = |status: StatusCode| {
        let mut b = Response::builder()
            .status(status)
            .header(header::ETAG, &object.etag)
            .header("x-goog-generation", object.generation)
            .header("x-goog-metageneration", 1)
            .header(header::LAST_MODIFIED, http_date(object.last_modified));
        if let Some(ct) = &object.content_type {
            b = b.header(header::CONTENT_TYPE, ct);
        }
        b
    };
    if not_modified {
        return meta(StatusCode::NOT_MODIFIED).body(Body::empty()).expect("a response");
    }
    let size = object.data.len() as u64;
    let (status, range) = match headers.get(header::RANGE) {
        None => (StatusCode::OK, 0..size),
        Some(v) => match v.to_str().ok().and_then(|s| parse_range(s, size)) {
            Some(r) => (StatusCode::PARTIAL_CONTENT, r),
            None => {
                return error(
                    StatusCode::RANGE_NOT_SATISFIABLE,
                    "InvalidRange",
                    "The requested range cannot be satisfied.",
                );
            }
        },
    };
    let mut b = meta(status).header(header::CONTENT_LENGTH, range.end - range.start);
    if status == StatusCode::PARTIAL_CONTENT {
        b = b.header(header::CONTENT_RANGE, format!("bytes {}-{}/{size}", range.start, range.end - 1));
    }
    let body =
        if head { Body::empty() } else { Body::from(object.data.slice(range.start as usize..range.end as usize)) };
    b.body(body).expect("a response")
}

/// `bytes=a-b`, `bytes=a-`, `bytes=-n` against an object of `size` bytes; `None` if it
/// cannot be satisfied.
fn parse_range(s: &str, size: u64) -> Option<std::ops::Range<u64>> {
    let (start, end) = s.strip_prefix("bytes=")?.split_once('-')?;
    let range = match (start.parse::<u64>().ok(), end.parse::<u64>().ok()) {
        (Some(a), Some(b)) if a <= b => a..(b + 1).min(size),
        (Some(a), None) if end.is_empty() => a..size,
        (None, Some(n)) if start.is_empty() && n > 0 => size.saturating_sub(n)..size,
        _ => return None,
    };
    (range.start < size).then_some(range)
}

fn delete(shared: &Shared, key: &str, headers: &HeaderMap) -> Response {
    let expected = match generation_match(headers) {
        Ok(g) => g,
        Err(response) => return *response,
    };
    let mut objects = lock(&shared.objects);
    let Some(current) = objects.map.get(key).map(|o| o.generation) else {
        return error(StatusCode::NOT_FOUND, "NoSuchKey", "The specified key does not exist.");
    };
    if expected.is_some_and(|g| g != current) && !shared.ignore_preconditions.load(Ordering::SeqCst) {
        return precondition_failed();
    }
    objects.map.remove(key);
    Response::builder().status(StatusCode::NO_CONTENT).body(Body::empty()).expect("a response")
}

/// One page of a `list-type=2` listing.
fn list(shared: &Shared, query: &[(String, String)]) -> Response {
    if param(query, "list-type") != Some("2") {
        return not_implemented("listings other than list-type=2");
    }
    let prefix = param(query, "prefix").unwrap_or("");
    let delimiter = param(query, "delimiter").filter(|d| !d.is_empty());
    let page = shared.page_size.load(Ordering::SeqCst);
    let max_keys = match param(query, "max-keys").map(str::parse::<usize>) {
        None => page,
        Some(Ok(n)) => n.min(page),
        Some(Err(_)) => return error(StatusCode::BAD_REQUEST, "InvalidArgument", "Invalid max-keys."),
    };
    // The token is the last entry of the previous page, hex-encoded: an object key, or a
    // common prefix (which ends with the delimiter), whose keys were all folded into it.
    let token = match param(query, "continuation-token") {
        None => None,
        Some(t) => match hex::decode(t).ok().and_then(|b| String::from_utf8(b).ok()) {
            Some(t) => Some(t),
            None => return error(StatusCode::BAD_REQUEST, "InvalidArgument", "Invalid continuation token."),
        },
    };
    let after = token.clone().or_else(|| param(query, "start-after").map(str::to_owned));

    let objects = lock(&shared.objects);
    let from = match &after {
        Some(a) => Bound::Excluded(a.as_str()),
        None => Bound::Included(prefix),
    };
    let mut contents: Vec<(&String, &StubObject)> = Vec::new();
    let mut prefixes: Vec<String> = Vec::new();
    let mut last: Option<String> = None;
    let mut truncated = false;
    for (key, object) in objects.map.range::<str, _>((from, Bound::Unbounded)) {
        if !key.starts_with(prefix) {
            if key.as_str() > prefix {
                break;
            }
            continue;
        }
        // Keys folded into the common prefix the previous page ended on.
        if let (Some(t), Some(d)) = (&token, delimiter)
            && t.ends_with(d)
            && key.starts_with(t.as_str())
        {
            continue;
        }
        let folded = delimiter.and_then(|d| {
            let rest = &key[prefix.len()..];
            rest.find(d).map(|i| format!("{prefix}{}", &rest[..i + d.len()]))
        });
        if let Some(p) = &folded
            && prefixes.last() == Some(p)
        {
            continue;
        }
        if contents.len() + prefixes.len() == max_keys {
            truncated = true;
            break;
        }
        match folded {
            Some(p) => {
                last = Some(p.clone());
                prefixes.push(p);
            }
            None => {
                last = Some(key.clone());
                contents.push((key, object));
            }
        }
    }

    let mut xml = String::from("<?xml version='1.0' encoding='UTF-8'?>");
    xml.push_str("<ListBucketResult xmlns='http://doc.s3.amazonaws.com/2006-03-01'>");
    xml.push_str(&format!("<Name>{}</Name><Prefix>{}</Prefix>", escape(&shared.bucket), escape(prefix)));
    xml.push_str(&format!("<KeyCount>{}</KeyCount><MaxKeys>{max_keys}</MaxKeys>", contents.len() + prefixes.len()));
    xml.push_str(&format!("<IsTruncated>{truncated}</IsTruncated>"));
    for (key, o) in &contents {
        xml.push_str(&format!(
            "<Contents><Key>{}</Key><Generation>{}</Generation><MetaGeneration>1</MetaGeneration><LastModified>{}</LastModified><ETag>{}</ETag><Size>{}</Size></Contents>",
            escape(key),
            o.generation,
            o.last_modified.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            escape(&o.etag),
            o.data.len()
        ));
    }
    for p in &prefixes {
        xml.push_str(&format!("<CommonPrefixes><Prefix>{}</Prefix></CommonPrefixes>", escape(p)));
    }
    if truncated && let Some(last) = last {
        xml.push_str(&format!("<NextContinuationToken>{}</NextContinuationToken>", hex::encode(last)));
    }
    xml.push_str("</ListBucketResult>");
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/xml; charset=UTF-8")
        .body(Body::from(xml))
        .expect("a response")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&apos;")
}

/// An XML error as the XML API writes it.
fn error(status: StatusCode, code: &str, message: &str) -> Response {
    let body =
        format!("<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code><Message>{message}</Message></Error>");
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/xml; charset=UTF-8")
        .body(Body::from(body))
        .expect("a response")
}

fn not_implemented(what: &str) -> Response {
    error(StatusCode::NOT_IMPLEMENTED, "NotImplemented", &format!("The GCS stub does not implement {what}."))
}
