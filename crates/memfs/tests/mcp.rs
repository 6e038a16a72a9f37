//! `memfs::mcp` in process: rmcp's own client against the server, over `tokio::io::duplex` and
//! over streamable HTTP on 127.0.0.1.
//!
//! The command script, `tests/mcp/script.json` at the repository root, is shared with the
//! Python client (`tests/mcp/client.py`): each step is a `tools/call` of `memory` with its
//! arguments, and the exact text and `isError` of the answer, in the `spec` dialect (the
//! strings of the memory tool's documentation page).

use std::sync::Arc;
use std::time::Duration;

use memfs::mcp::{self, MemoryServer};
use memfs::{Dialect, Memfs};
use rmcp::model::{CallToolRequestParams, CallToolResult, ErrorCode};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ServiceExt, model::JsonObject};
use serde_json::{Value, json};
use tokio::task::JoinHandle;

/// The shared script: `[{"arguments": {…}, "text": "…", "isError": bool}, …]`.
const SCRIPT: &str = include_str!("../../../tests/mcp/script.json");

/// How long any one exchange may take before the test fails instead of hanging.
const TIMEOUT: Duration = Duration::from_secs(30);

type Client = RunningService<RoleClient, ()>;

/// Asserts two texts are equal, printing both in full (escaped) on mismatch.
#[track_caller]
fn assert_text(what: &str, actual: &str, expected: &str) {
    assert!(
        actual == expected,
        "{what}: text mismatch\nexpected: \"{}\"\n  actual: \"{}\"\n",
        expected.escape_debug(),
        actual.escape_debug()
    );
}

/// A client connected to a fresh ephemeral store's server over an in-memory pipe.
async fn connect(dialect: Dialect) -> (Client, JoinHandle<Result<(), mcp::ServeError>>, Arc<Memfs>) {
    let memfs = Arc::new(Memfs::ephemeral(dialect).expect("ephemeral store"));
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    let server = tokio::spawn(MemoryServer::new(memfs.clone()).serve(read, write));
    let client =
        tokio::time::timeout(TIMEOUT, ().serve(client_end)).await.expect("initialize in time").expect("initialize");
    (client, server, memfs)
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

async fn call(client: &Client, arguments: Option<JsonObject>) -> Result<CallToolResult, ServiceError> {
    let mut params = CallToolRequestParams::new("memory");
    params.arguments = arguments;
    tokio::time::timeout(TIMEOUT, client.call_tool(params)).await.expect("an answer in time")
}

/// The one text block of a result, and its `isError`.
fn text_of(result: &CallToolResult) -> (String, bool) {
    let wire = serde_json::to_value(result).expect("serialize");
    assert_eq!(result.content.len(), 1, "exactly one content block: {wire}");
    let text = result.content[0].as_text().unwrap_or_else(|| panic!("a text block: {wire}"));
    let is_error = result.is_error.unwrap_or_else(|| panic!("isError present: {wire}"));
    (text.text.clone(), is_error)
}

/// Runs the whole script on `client`, asserting every answer exactly.
async fn run_script(client: &Client) {
    let steps: Vec<Value> = serde_json::from_str(SCRIPT).expect("script.json parses");
    assert!(steps.len() >= 20, "the script has its steps");
    for (n, step) in steps.iter().enumerate() {
        let arguments = object(step["arguments"].clone());
        let result = call(client, Some(arguments)).await.unwrap_or_else(|e| panic!("step {n}: protocol error {e}"));
        let (text, is_error) = text_of(&result);
        let what = format!("step {n} {}", step["arguments"]);
        assert_text(&what, &text, step["text"].as_str().expect("text"));
        assert_eq!(is_error, step["isError"].as_bool().expect("isError"), "{what}: isError");
    }
}

async fn finish(client: Client, server: JoinHandle<Result<(), mcp::ServeError>>) {
    client.cancel().await.expect("close the client");
    // The server sees the end of its input and returns.
    tokio::time::timeout(TIMEOUT, server).await.expect("server stops").expect("server task").expect("server result");
}

#[tokio::test]
async fn initialize_names_the_server_and_its_tools_capability() {
    let (client, server, _memfs) = connect(Dialect::Spec).await;
    let info = client.peer_info().expect("server info after initialize");
    let server_info = info.server_info.as_ref().expect("serverInfo");
    assert_eq!((server_info.name.as_str(), server_info.version.as_str()), ("memfs", env!("CARGO_PKG_VERSION")));
    assert!(info.capabilities.tools.is_some(), "tools capability");
    assert!(info.capabilities.resources.is_none() && info.capabilities.prompts.is_none(), "tools only");
    assert_text(
        "instructions",
        info.instructions.as_deref().expect("instructions"),
        "IMPORTANT: ALWAYS VIEW YOUR MEMORY DIRECTORY BEFORE DOING ANYTHING ELSE.\n\
         MEMORY PROTOCOL:\n\
         1. Use the `view` command of your `memory` tool to check for earlier progress.\n\
         2. ... (work on the task) ...\n     \
         - As you make progress, record status / progress / thoughts etc in your memory.\n\
         ASSUME INTERRUPTION: Your context window might be reset at any moment, so you risk losing any \
         progress that is not recorded in your memory directory.",
    );
    finish(client, server).await;
}

#[tokio::test]
async fn tools_list_is_the_one_memory_tool_with_the_six_commands() {
    let (client, server, _memfs) = connect(Dialect::Spec).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 1, "one tool: {tools:?}");
    let tool = &tools[0];
    assert_eq!(tool.name, "memory");
    assert_eq!(tool, &MemoryServer::tool(), "listed as defined");
    let schema = Value::Object((*tool.input_schema).clone());
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["command"]));
    assert_eq!(
        schema["properties"]["command"]["enum"],
        json!(["view", "create", "str_replace", "insert", "delete", "rename"])
    );
    let mut fields: Vec<&str> =
        schema["properties"].as_object().expect("properties").keys().map(String::as_str).collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "command",
            "file_text",
            "insert_line",
            "insert_text",
            "new_path",
            "new_str",
            "old_path",
            "old_str",
            "path",
            "view_range"
        ]
    );
    let types: Vec<(&str, &Value)> = fields.iter().map(|f| (*f, &schema["properties"][f]["type"])).collect();
    for (field, ty) in types {
        let expected = match field {
            "insert_line" => "integer",
            "view_range" => "array",
            _ => "string",
        };
        assert_eq!(ty, expected, "{field}: type");
    }
    assert_eq!(
        schema["properties"]["view_range"],
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2,
               "description": "view (optional): [start_line, end_line], 1-based and inclusive; end_line -1 means to the end. Selects a file's lines, or a directory listing's entries (a cut answer names the range of the next part)."})
    );
    // Each field's description says which commands use it.
    for (field, commands) in [
        ("path", "view, create, str_replace, insert, delete: "),
        ("file_text", "create: "),
        ("old_str", "str_replace: "),
        ("new_str", "str_replace: "),
        ("insert_line", "insert: "),
        ("insert_text", "insert: "),
        ("old_path", "rename: "),
        ("new_path", "rename: "),
    ] {
        let description = schema["properties"][field]["description"].as_str().expect("description");
        assert!(description.starts_with(commands), "{field}: {description}");
    }
    let description = tool.description.as_deref().expect("a description");
    assert!(description.starts_with("Your persistent memory: a directory of text files under /memories"));
    for command in ["- view: ", "- create: ", "- str_replace: ", "- insert: ", "- delete: ", "- rename: "] {
        assert!(description.contains(command), "the description explains {command}");
    }
    finish(client, server).await;
}

#[tokio::test]
async fn every_command_answers_the_exact_dialect_string() {
    let (client, server, _memfs) = connect(Dialect::Spec).await;
    run_script(&client).await;
    finish(client, server).await;
}

#[tokio::test]
async fn the_store_dialect_picks_the_strings() {
    let (client, server, _memfs) = connect(Dialect::PythonSdk).await;
    for (arguments, expected, error) in [
        (
            json!({"command": "view", "path": "/memories"}),
            "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items:\n4K\t/memories",
            false,
        ),
        (json!({"command": "delete", "path": "/memories/gone"}), "The path /memories/gone does not exist", true),
    ] {
        let result = call(&client, Some(object(arguments))).await.expect("a tool result");
        assert_eq!(text_of(&result), (expected.to_owned(), error));
    }
    finish(client, server).await;
}

#[tokio::test]
async fn failures_are_error_results_not_protocol_errors() {
    let (client, server, memfs) = connect(Dialect::Spec).await;
    // No arguments at all: the engine's input error, as a tool result.
    let result = call(&client, None).await.expect("a tool result");
    assert_eq!(
        text_of(&result),
        (
            "Invalid input: missing required field `command` (one of: view, create, str_replace, insert, delete, rename)"
                .to_owned(),
            true
        )
    );
    let result =
        call(&client, Some(object(json!({"command": "view", "path": "/memories/none.md"})))).await.expect("result");
    assert_eq!(
        text_of(&result),
        ("The path /memories/none.md does not exist. Please provide a valid path.".to_owned(), true)
    );
    let wire = serde_json::to_value(&result).expect("serialize");
    assert_eq!(wire["isError"], json!(true), "on the wire: {wire}");
    assert_eq!(
        wire["content"],
        json!([{"type": "text", "text": "The path /memories/none.md does not exist. Please provide a valid path."}])
    );
    // Failed commands commit nothing.
    assert_eq!(memfs.stats().commits, 0);
    finish(client, server).await;
}

#[tokio::test]
async fn another_tool_is_a_protocol_error() {
    let (client, server, memfs) = connect(Dialect::Spec).await;
    let params = CallToolRequestParams::new("web_search")
        .with_arguments(object(json!({"command": "view", "path": "/memories"})));
    let err =
        tokio::time::timeout(TIMEOUT, client.call_tool(params)).await.expect("in time").expect_err("a protocol error");
    let ServiceError::McpError(data) = err else { panic!("not an MCP error: {err:?}") };
    assert_eq!(data.code, ErrorCode::INVALID_PARAMS);
    assert_text("message", &data.message, "Unknown tool: web_search. This server has one tool: memory");
    assert_eq!(memfs.stats().commands, 0, "nothing ran");
    finish(client, server).await;
}

#[tokio::test]
async fn concurrent_calls_all_land() {
    let (client, server, memfs) = connect(Dialect::Spec).await;
    let client = Arc::new(client);
    let calls: Vec<_> = (0..16)
        .map(|i| {
            let client = client.clone();
            tokio::spawn(async move {
                let input = json!({"command": "create", "path": format!("/memories/f{i:02}.md"), "file_text": "x"});
                let result = call(&client, Some(object(input))).await.expect("result");
                text_of(&result)
            })
        })
        .collect();
    for (i, handle) in calls.into_iter().enumerate() {
        assert_eq!(handle.await.expect("task"), (format!("File created successfully at: /memories/f{i:02}.md"), false));
    }
    assert_eq!(memfs.stats().commits, 16);
    let client = Arc::into_inner(client).expect("the last handle");
    finish(client, server).await;
}

/// Starts [`mcp::serve_http`] on 127.0.0.1 with a free port; returns the endpoint URL, a
/// trigger that stops it, and its task.
async fn start_http(
    memfs: Arc<Memfs>,
    config: rmcp::transport::StreamableHttpServerConfig,
) -> (String, tokio::sync::oneshot::Sender<()>, JoinHandle<Result<(), mcp::ServeError>>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let shutdown = async move {
        let _ = stopped.await;
    };
    let server = tokio::spawn(mcp::serve_http(memfs, listener, config, None, memfs::http::Limits::default(), shutdown));
    (format!("http://{addr}/mcp"), stop, server)
}

#[tokio::test]
async fn streamable_http_runs_the_script_and_stops_with_clients_connected() {
    let memfs = Arc::new(Memfs::ephemeral(Dialect::Spec).expect("ephemeral store"));
    let (url, stop, server) = start_http(memfs.clone(), mcp::loopback_config()).await;
    let client = tokio::time::timeout(TIMEOUT, ().serve(StreamableHttpClientTransport::from_uri(url.as_str())))
        .await
        .expect("initialize in time")
        .expect("initialize over HTTP");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("memfs"));
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools, vec![MemoryServer::tool()]);
    run_script(&client).await;
    let unknown = client.call_tool(CallToolRequestParams::new("other")).await.expect_err("unknown tool");
    assert!(matches!(&unknown, ServiceError::McpError(e) if e.code == ErrorCode::INVALID_PARAMS), "{unknown:?}");
    // Stop while the client's session is still open: the server must not wait for it.
    stop.send(()).expect("server still running");
    tokio::time::timeout(TIMEOUT, server).await.expect("server stops in time").expect("task").expect("serve_http");
    drop(client);
}

/// An `initialize` request, as raw HTTP.
fn raw_initialize(url: &str) -> reqwest::RequestBuilder {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.to_string())
}

#[tokio::test]
async fn http_refuses_browsers_and_foreign_host_names() {
    let memfs = Arc::new(Memfs::ephemeral(Dialect::Spec).expect("ephemeral store"));
    let (url, stop, server) = start_http(memfs.clone(), mcp::loopback_config()).await;
    // The same request is served when it names a loopback host and carries no Origin.
    let ok = raw_initialize(&url).send().await.expect("send");
    assert_eq!(ok.status(), reqwest::StatusCode::OK);
    // A web page on this machine (any Origin) is refused: no cross-site request reaches it.
    let browser = raw_initialize(&url).header("origin", "http://localhost:3000").send().await.expect("send");
    assert_eq!(browser.status(), reqwest::StatusCode::FORBIDDEN);
    // DNS rebinding: a page whose name resolves to 127.0.0.1 sends its own name as Host.
    let rebound = raw_initialize(&url).header("host", "attacker.example").send().await.expect("send");
    assert_eq!(rebound.status(), reqwest::StatusCode::FORBIDDEN);
    // Only /mcp is served.
    let other = raw_initialize(&url.replace("/mcp", "/other")).send().await.expect("send");
    assert_eq!(other.status(), reqwest::StatusCode::NOT_FOUND);
    assert_eq!(memfs.stats().commands, 0);
    stop.send(()).expect("server still running");
    tokio::time::timeout(TIMEOUT, server).await.expect("server stops in time").expect("task").expect("serve_http");
}

#[tokio::test]
async fn remote_config_accepts_any_host_but_still_refuses_browsers() {
    let memfs = Arc::new(Memfs::ephemeral(Dialect::Spec).expect("ephemeral store"));
    let (url, stop, server) = start_http(memfs.clone(), mcp::remote_config()).await;
    let named = raw_initialize(&url).header("host", "memory-host.example").send().await.expect("send");
    assert_eq!(named.status(), reqwest::StatusCode::OK);
    let browser = raw_initialize(&url).header("origin", "https://memory-host.example").send().await.expect("send");
    assert_eq!(browser.status(), reqwest::StatusCode::FORBIDDEN);
    stop.send(()).expect("server still running");
    tokio::time::timeout(TIMEOUT, server).await.expect("server stops in time").expect("task").expect("serve_http");
}
