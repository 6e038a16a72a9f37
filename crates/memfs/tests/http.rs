//! The HTTP endpoint (`memfs::http`) in-process on 127.0.0.1, driven with reqwest: exact
//! answers (the same lines `memfs exec` writes), every refusal with its exact status and body
//! and the store left unchanged, tenant isolation, concurrency, and the flush at shutdown.

use std::sync::{Arc, Mutex};

use memfs::StateDir;
use memfs::http::{Namespaces, Observer, Served, Server, StoreFailure, Tokens};
use memfs::protocol::handle_line;
use memfs::{Credential, Dialect, KdfParams, KeyFile, Location, Memfs, OpenOptions};
use reqwest::StatusCode;
use reqwest::header::{ALLOW, CONTENT_TYPE, WWW_AUTHENTICATE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;

const ALICE: &str = "alice-token-0123456789abcdef0123456789";
const BOB: &str = "bob-token-0123456789abcdef0123456789abc";

/// Asserts two texts are equal, printing both in full (escaped) on mismatch.
#[track_caller]
fn assert_text(actual: &str, expected: &str) {
    assert!(
        actual == expected,
        "text mismatch\nexpected: \"{}\"\n  actual: \"{}\"\n",
        expected.escape_debug(),
        actual.escape_debug()
    );
}

/// A server running in this process until dropped (then shut down gracefully).
struct Running {
    url: String,
    server: Arc<Server>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<Result<(), memfs::http::ServeError>>>,
    client: reqwest::Client,
}

impl Running {
    async fn start(server: Server) -> Self {
        let server = Arc::new(server);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let url = format!("http://{}", listener.local_addr().expect("local address"));
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(server.clone().serve(listener, async move {
            let _ = stopped.await;
        }));
        Running { url, server, stop: Some(stop), task: Some(task), client: reqwest::Client::new() }
    }

    /// Two tenants on ephemeral stores (`memory://`: one store per namespace).
    async fn memory(dialect: Dialect, max_body: usize) -> Self {
        let tokens = Tokens::parse(&format!("alice {ALICE}\nbob {BOB}\n"), "test tokens").expect("tokens");
        let options = OpenOptions { dialect, state_dir: StateDir::Off, ..OpenOptions::default() };
        Running::start(Server::new(tokens, Namespaces::new("memory://", options)).with_max_body(max_body)).await
    }

    /// POSTs `body` as JSON to /v1/memory with `token`; the status and the body as text.
    async fn post(&self, token: Option<&str>, body: &str) -> (StatusCode, String) {
        let mut request = self
            .client
            .post(format!("{}/v1/memory", self.url))
            .header(CONTENT_TYPE, "application/json")
            .body(body.to_owned());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("a response");
        let status = response.status();
        (status, response.text().await.expect("a body"))
    }

    /// Stops the server and waits for its flush.
    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("the server task").expect("serve and flush");
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

const VIEW_ROOT: &str = r#"{"command":"view","path":"/memories"}"#;
const EMPTY_ROOT: &str = r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories","is_error":false}"#;

#[tokio::test]
async fn bare_input_and_tool_use_get_the_exec_lines() {
    let server = Running::memory(Dialect::Spec, memfs::http::DEFAULT_MAX_BODY).await;
    // The same inputs through `memfs exec`'s line handler, on a store of its own.
    let reference = Memfs::ephemeral(Dialect::Spec).expect("memory://");
    let inputs = [
        VIEW_ROOT,
        r#"{"command":"create","path":"/memories/notes.md","file_text":"é \"q\"\n\ttab"}"#,
        r#"{"type":"tool_use","id":"toolu_01","name":"memory","input":{"command":"view","path":"/memories/notes.md"}}"#,
        r#"{"type":"tool_use","id":"toolu_02","name":"memory","input":{"command":"delete","path":"/memories/nope.md"}}"#,
        r#"{"type":"tool_use","id":"toolu_03","name":"other","input":{"command":"view","path":"/memories"}}"#,
        r#"{"command":"view","path":"/etc/passwd"}"#,
        r#"[1,2]"#,
    ];
    let expected = [
        EMPTY_ROOT,
        r#"{"content":"File created successfully at: /memories/notes.md","is_error":false}"#,
        r#"{"type":"tool_result","tool_use_id":"toolu_01","content":"Here's the content of /memories/notes.md with line numbers:\n     1\té \"q\"\n     2\t\ttab","is_error":false}"#,
        r#"{"type":"tool_result","tool_use_id":"toolu_02","content":"Error: The path /memories/nope.md does not exist","is_error":true}"#,
        r#"{"type":"tool_result","tool_use_id":"toolu_03","content":"Error: Tool 'other' not found","is_error":true}"#,
        r#"{"content":"Path must start with /memories, got: /etc/passwd","is_error":true}"#,
        r#"{"content":"Invalid input: expected a JSON object with a `command` field, got an array","is_error":true}"#,
    ];
    for (input, expected) in inputs.iter().zip(expected) {
        let (status, body) = server.post(Some(ALICE), input).await;
        assert_eq!(status, StatusCode::OK, "{input}");
        assert_text(&body, expected);
        assert_text(&handle_line(&reference, input).await.expect("an answer"), expected);
    }
    // The content type of an answer.
    let response = server
        .client
        .post(format!("{}/v1/memory", server.url))
        .bearer_auth(ALICE)
        .header(CONTENT_TYPE, "application/json; charset=utf-8")
        .body(VIEW_ROOT)
        .send()
        .await
        .expect("a response");
    assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
}

#[tokio::test]
async fn health_needs_no_token() {
    let server = Running::memory(Dialect::Spec, 1024).await;
    let response = server.client.get(format!("{}/v1/health", server.url)).send().await.expect("a response");
    assert_eq!(response.status(), StatusCode::OK);
    assert_text(&response.text().await.expect("body"), r#"{"status":"ok"}"#);
}

#[tokio::test]
async fn refuses_requests_without_a_valid_token_and_changes_nothing() {
    let server = Running::memory(Dialect::Spec, 1024).await;
    let create = r#"{"command":"create","path":"/memories/x.md","file_text":"intruder"}"#;
    let missing = r#"{"error":"missing bearer token: send the header Authorization: Bearer TOKEN"}"#;
    let invalid = r#"{"error":"invalid bearer token"}"#;
    let no_token = (missing, r#"Bearer realm="memfs""#);
    let bad_token = (invalid, r#"Bearer realm="memfs", error="invalid_token""#);
    let cases = [
        (None, no_token),
        (Some("Basic YWxpY2U6cHc=".to_owned()), no_token),
        (Some("Bearer".to_owned()), no_token),
        (Some("Bearer wrong-token-0123456789abcdef0123456789".to_owned()), bad_token),
        // A prefix of a real token, and the token with its last character changed.
        (Some(format!("Bearer {}", &ALICE[..ALICE.len() - 1])), bad_token),
        (Some(format!("bearer {}X", &ALICE[..ALICE.len() - 1])), bad_token),
    ];
    for (authorization, (body, challenge)) in cases {
        let mut request = server
            .client
            .post(format!("{}/v1/memory", server.url))
            .header(CONTENT_TYPE, "application/json")
            .body(create);
        if let Some(value) = &authorization {
            request = request.header("authorization", value);
        }
        let headers = &authorization;
        let response = request.send().await.expect("a response");
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED, "{headers:?}");
        assert_eq!(response.headers()[WWW_AUTHENTICATE], challenge, "{headers:?}");
        assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
        assert_text(&response.text().await.expect("body"), body);
    }
    // Two Authorization headers, one of them valid: refused too.
    let response = server
        .client
        .post(format!("{}/v1/memory", server.url))
        .header(CONTENT_TYPE, "application/json")
        .header("authorization", format!("Bearer {ALICE}"))
        .header("authorization", "Bearer wrong-token-0123456789abcdef0123456789")
        .body(create)
        .send()
        .await
        .expect("a response");
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    // Nothing was created in either namespace, nor was a store even opened.
    assert!(server.server.namespaces().opened().is_empty());
    assert_text(&server.post(Some(ALICE), VIEW_ROOT).await.1, EMPTY_ROOT);
    assert_text(&server.post(Some(BOB), VIEW_ROOT).await.1, EMPTY_ROOT);
}

#[tokio::test]
async fn tenants_are_isolated() {
    let server = Running::memory(Dialect::Spec, 1024).await;
    let (status, body) =
        server.post(Some(ALICE), r#"{"command":"create","path":"/memories/secret.md","file_text":"alice only"}"#).await;
    assert_eq!(status, StatusCode::OK);
    assert_text(&body, r#"{"content":"File created successfully at: /memories/secret.md","is_error":false}"#);
    assert_text(&server.post(Some(BOB), VIEW_ROOT).await.1, EMPTY_ROOT);
    assert_text(
        &server.post(Some(BOB), r#"{"command":"view","path":"/memories/secret.md"}"#).await.1,
        r#"{"content":"The path /memories/secret.md does not exist. Please provide a valid path.","is_error":true}"#,
    );
    assert_text(
        &server.post(Some(BOB), r#"{"command":"delete","path":"/memories/secret.md"}"#).await.1,
        r#"{"content":"Error: The path /memories/secret.md does not exist","is_error":true}"#,
    );
    assert_text(
        &server.post(Some(ALICE), r#"{"command":"view","path":"/memories/secret.md"}"#).await.1,
        r#"{"content":"Here's the content of /memories/secret.md with line numbers:\n     1\talice only","is_error":false}"#,
    );
    let opened: Vec<String> = server.server.namespaces().opened().into_keys().collect();
    assert_eq!(opened, ["alice", "bob"]);
}

#[tokio::test]
async fn refuses_bodies_over_the_limit() {
    let server = Running::memory(Dialect::Spec, 1024).await;
    let big = format!(r#"{{"command":"create","path":"/memories/big.md","file_text":"{}"}}"#, "x".repeat(1024));
    let (status, body) = server.post(Some(ALICE), &big).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    assert_text(&body, r#"{"error":"request body too large: the limit is 1024 bytes"}"#);
    // Exactly at the limit is fine.
    let at_limit = format!(r#"{{"command":"create","path":"/memories/fits.md","file_text":"{}"}}"#, "y".repeat(962));
    assert_eq!(at_limit.len(), 1024);
    let (status, body) = server.post(Some(ALICE), &at_limit).await;
    assert_eq!(status, StatusCode::OK);
    assert_text(&body, r#"{"content":"File created successfully at: /memories/fits.md","is_error":false}"#);
    // A chunked body declares no length: it is cut off as it grows past the limit.
    let addr = server.url.strip_prefix("http://").expect("an http URL");
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let chunk = "z".repeat(800);
    let request = format!(
        "POST /v1/memory HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {ALICE}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n{len:x}\r\n{chunk}\r\n{len:x}\r\n{chunk}\r\n0\r\n\r\n",
        len = chunk.len()
    );
    socket.write_all(request.as_bytes()).await.expect("send");
    let mut response = String::new();
    socket.read_to_string(&mut response).await.expect("read");
    assert!(response.starts_with("HTTP/1.1 413 Payload Too Large\r\n"), "{response}");
    assert!(
        response.ends_with("\r\n\r\n{\"error\":\"request body too large: the limit is 1024 bytes\"}"),
        "{response}"
    );
    assert_text(
        &server.post(Some(ALICE), VIEW_ROOT).await.1,
        r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories\n962B\t/memories/fits.md","is_error":false}"#,
    );
}

#[tokio::test]
async fn refuses_bad_json_wrong_content_types_routes_and_methods() {
    let server = Running::memory(Dialect::Spec, 1024).await;
    for (body, expected) in [
        ("{\"command\":", r#"{"error":"invalid JSON body: EOF while parsing a value at line 1 column 11"}"#),
        ("", r#"{"error":"invalid JSON body: EOF while parsing a value at line 1 column 0"}"#),
        ("view /memories", r#"{"error":"invalid JSON body: expected value at line 1 column 1"}"#),
        (r#"{"command":"view"} {}"#, r#"{"error":"invalid JSON body: trailing characters at line 1 column 20"}"#),
    ] {
        let (status, text) = server.post(Some(ALICE), body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body:?}");
        assert_text(&text, expected);
    }
    for content_type in [None, Some("text/plain"), Some("application/x-www-form-urlencoded")] {
        let mut request = server.client.post(format!("{}/v1/memory", server.url)).bearer_auth(ALICE).body(VIEW_ROOT);
        if let Some(content_type) = content_type {
            request = request.header(CONTENT_TYPE, content_type);
        }
        let response = request.send().await.expect("a response");
        assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE, "{content_type:?}");
        assert_text(
            &response.text().await.expect("body"),
            r#"{"error":"unsupported content type: send Content-Type: application/json"}"#,
        );
    }
    let response = server.client.get(format!("{}/v1/memories", server.url)).send().await.expect("a response");
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert_text(
        &response.text().await.expect("body"),
        r#"{"error":"not found: the endpoints are POST /v1/memory and GET /v1/health"}"#,
    );
    for (method, url, allow) in
        [(reqwest::Method::GET, "/v1/memory", "POST"), (reqwest::Method::POST, "/v1/health", "GET,HEAD")]
    {
        let response = server
            .client
            .request(method.clone(), format!("{}{url}", server.url))
            .bearer_auth(ALICE)
            .send()
            .await
            .expect("a response");
        assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED, "{method} {url}");
        assert_eq!(response.headers()[ALLOW], allow, "{method} {url}");
        assert_text(
            &response.text().await.expect("body"),
            r#"{"error":"method not allowed: the endpoints are POST /v1/memory and GET /v1/health"}"#,
        );
    }
    assert_text(&server.post(Some(ALICE), VIEW_ROOT).await.1, EMPTY_ROOT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_on_one_namespace_all_land() {
    let server = Arc::new(Running::memory(Dialect::Spec, 1024).await);
    let create = |i: usize| {
        format!(r#"{{"command":"create","path":"/memories/note-{i:02}.md","file_text":"note number {i}\n"}}"#)
    };
    let mut tasks = Vec::new();
    for i in 0..64 {
        let server = server.clone();
        let body = create(i);
        tasks.push(tokio::spawn(async move { server.post(Some(ALICE), &body).await }));
    }
    for (i, task) in tasks.into_iter().enumerate() {
        let (status, body) = task.await.expect("a request task");
        assert_eq!(status, StatusCode::OK);
        assert_text(
            &body,
            &format!(r#"{{"content":"File created successfully at: /memories/note-{i:02}.md","is_error":false}}"#),
        );
    }
    // The view equals the one of the same creates made one after another.
    let reference = Memfs::ephemeral(Dialect::Spec).expect("memory://");
    for i in 0..64 {
        handle_line(&reference, &create(i)).await.expect("an answer");
    }
    let expected = handle_line(&reference, VIEW_ROOT).await.expect("an answer");
    let actual = server.post(Some(ALICE), VIEW_ROOT).await.1;
    assert_text(&actual, &expected);
    assert_eq!(actual.matches("\\t/memories/note-").count(), 64);
    let stats = server.server.namespaces().opened()["alice"].stats();
    assert_eq!((stats.commands, stats.commits), (65, 64));
}

/// An [`Observer`] that keeps what it is given: `NAMESPACE COMMAND STATUS` per request, and
/// `(request id, NAMESPACE: error)` per store failure.
#[derive(Default)]
struct Recorded {
    accesses: Mutex<Vec<String>>,
    failures: Mutex<Vec<(String, String)>>,
}

impl Observer for Recorded {
    fn served(&self, r: &Served) {
        let ns = r.namespace.as_deref().unwrap_or("-");
        self.accesses.lock().unwrap().push(format!("{ns} {} {}", r.command.unwrap_or("-"), r.status));
    }

    fn store_failure(&self, f: &StoreFailure<'_>) {
        let detail = format!("{}: {}", f.namespace, memfs::error_chain(f.error));
        self.failures.lock().unwrap().push((f.request_id.to_string(), detail));
    }
}

fn key() -> Credential {
    Credential::KeyFile(KeyFile::from_bytes([7; 32]))
}

/// Namespaces of a local folder store, all initialised with one key; `carol` has a token but
/// no store. Also checks that the last-access days of reads are recorded at shutdown.
#[tokio::test]
async fn folder_store_namespaces_and_flush_at_shutdown() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let url = format!("file://{}", dir.path().join("store").display());
    for ns in ["alice", "bob"] {
        Memfs::init(Location::new(&url).namespace(ns), &key(), KdfParams::DEFAULT).await.expect("init");
    }
    const CAROL: &str = "carol-token-0123456789abcdef0123456789";
    let tokens = || Tokens::parse(&format!("alice {ALICE}\nbob {BOB}\ncarol {CAROL}"), "tokens").expect("tokens");
    let options = |today| OpenOptions {
        credential: Some(key()),
        today: Some(today),
        actor: "server".into(),
        state_dir: StateDir::Off,
        ..OpenOptions::default()
    };

    // Day 100: alice writes a file.
    let log = Arc::new(Recorded::default());
    let server =
        Running::start(Server::new(tokens(), Namespaces::new(&url, options(100))).with_observer(log.clone())).await;
    let (status, body) =
        server.post(Some(ALICE), r#"{"command":"create","path":"/memories/a.md","file_text":"on disk"}"#).await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, r#"{"content":"File created successfully at: /memories/a.md","is_error":false}"#)
    );
    assert_text(&server.post(Some(BOB), VIEW_ROOT).await.1, EMPTY_ROOT);
    let (status, body) = server.post(Some(CAROL), VIEW_ROOT).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    // The tenant learns a request id, not the server's store location; the log has the detail
    // under the same id.
    let failures = log.failures.lock().unwrap().clone();
    assert_eq!(failures.len(), 1, "{failures:?}");
    let id = failures[0].0.clone();
    assert_text(
        &body,
        &format!(
            r#"{{"error":"cannot open the store of this token's namespace (request id {id}); the server's log has the detail"}}"#
        ),
    );
    assert_text(&failures[0].1, &format!("carol: no memfs store at {url} (namespace carol)"));
    let accesses = log.accesses.lock().unwrap().clone();
    assert_eq!(accesses, ["alice create 200", "bob view 200", "carol view 503"]);
    server.stop().await;

    // Day 101: a new server reads it; the read's day is recorded when the server stops.
    let server = Running::start(Server::new(tokens(), Namespaces::new(&url, options(101)))).await;
    assert_text(
        &server.post(Some(ALICE), r#"{"command":"view","path":"/memories/a.md"}"#).await.1,
        r#"{"content":"Here's the content of /memories/a.md with line numbers:\n     1\ton disk","is_error":false}"#,
    );
    server.stop().await;
    let alice = Memfs::open(
        Location::new(&url).namespace("alice"),
        OpenOptions { credential: Some(key()), state_dir: StateDir::Off, ..OpenOptions::default() },
    )
    .await
    .expect("alice's store opens");
    let log = alice.log(None, None).await.expect("the log");
    let commands: Vec<&str> = log.iter().map(|c| c.command.as_str()).collect();
    assert_eq!(commands[0], r#"{"command":"record-access","files":1}"#);
    assert_eq!(log[0].actor, "server");
    assert_eq!(commands.len(), 2);
    // Bob's store is untouched: no commit at all.
    let bob = Memfs::open(
        Location::new(&url).namespace("bob"),
        OpenOptions { credential: Some(key()), state_dir: StateDir::Off, ..OpenOptions::default() },
    )
    .await
    .expect("bob's store opens");
    assert!(bob.log(None, None).await.expect("the log").is_empty());
}

/// A client that never finishes its request does not hold the server up after shutdown.
#[tokio::test]
async fn shutdown_does_not_wait_for_ever_on_a_stalled_request() {
    let tokens = Tokens::parse(&format!("alice {ALICE}"), "test tokens").expect("tokens");
    let server = Server::new(
        tokens,
        Namespaces::new("memory://", OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() }),
    )
    .with_shutdown_grace(std::time::Duration::from_millis(300));
    let running = Running::start(server).await;
    let addr = running.url.strip_prefix("http://").expect("an http URL").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&addr).await.expect("connect");
    let head = format!(
        "POST /v1/memory HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {ALICE}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"comm"
    );
    socket.write_all(head.as_bytes()).await.expect("send a part");
    // The request is in flight (its handler is reading the body) when shutdown begins.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    tokio::time::timeout(std::time::Duration::from_secs(5), running.stop()).await.expect("stopped within the grace");
    assert!(started.elapsed() >= std::time::Duration::from_millis(300), "{:?}", started.elapsed());
    drop(socket);
}
