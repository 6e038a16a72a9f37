//! `memfs::agent::run` against the scripted Messages API server
//! (`tests/scripted/messages_server.py`, Python standard library only), which plays the memory
//! tool documentation's example: view `/memories`, view a file, answer. Every request the loop
//! sends is recorded by the server and compared whole, headers and JSON bodies.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use memfs::agent::{self, AgentConfig, AgentError, ApiKey, Event};
use memfs::{Dialect, Memfs};
use serde_json::{Value, json};

const KEY: &str = "sk-ant-test-0123456789";
const MODEL: &str = "claude-opus-4-7";
const PROMPT: &str = "Help me respond to this customer service ticket.";
const GUIDELINES: &str = "<guidelines>\n<addressing_customers>\n- Always address customers by their first name\n- Use empathetic language\n</addressing_customers>\n</guidelines>\n";

/// The scripted server, stopped (stdin closed, then killed) when dropped.
struct Scripted {
    child: Child,
    url: String,
    record: PathBuf,
    _dir: tempfile::TempDir,
}

impl Scripted {
    fn start() -> Self {
        Scripted::with_scenario("docs-example")
    }

    fn with_scenario(scenario: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let record = dir.path().join("requests.jsonl");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scripted/messages_server.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg("--record")
            .arg(&record)
            .args(["--scenario", scenario])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start python3 tests/scripted/messages_server.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("read the URL line");
        let url = line.trim_end().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "unexpected first line {line:?}");
        Scripted { child, url, record, _dir: dir }
    }

    /// The requests received so far, one JSON value each.
    fn requests(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.record).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
    }
}

impl Drop for Scripted {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[track_caller]
fn assert_json(what: &str, actual: &Value, expected: &Value) {
    assert!(
        actual == expected,
        "{what}: JSON mismatch\nexpected: {}\n  actual: {}\n",
        serde_json::to_string_pretty(expected).unwrap(),
        serde_json::to_string_pretty(actual).unwrap()
    );
}

fn config(server: &Scripted) -> AgentConfig {
    let mut config = AgentConfig::new(ApiKey::new(KEY).expect("key"), MODEL);
    config.base_url = server.url.clone();
    config
}

async fn store_with_guidelines() -> Memfs {
    let memfs = Memfs::ephemeral(Dialect::Spec).expect("store");
    let create =
        json!({"command": "create", "path": "/memories/customer_service_guidelines.xml", "file_text": GUIDELINES});
    let result = memfs.call(&create).await;
    assert!(!result.is_error, "{}", result.content);
    memfs
}

const LISTING: &str = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories\n147B\t/memories/customer_service_guidelines.xml";
const FILE_VIEW: &str = "Here's the content of /memories/customer_service_guidelines.xml with line numbers:\n     1\t<guidelines>\n     2\t<addressing_customers>\n     3\t- Always address customers by their first name\n     4\t- Use empathetic language\n     5\t</addressing_customers>\n     6\t</guidelines>\n     7\t";
const FINAL: &str =
    "Based on your customer service guidelines, I can help you craft a response. Please share the ticket details...";

fn first_answer() -> Value {
    json!([
        {"type": "text", "text": "I'll help you respond to the customer service ticket. Let me check my memory for any previous context."},
        {"type": "tool_use", "id": "toolu_01", "name": "memory", "input": {"command": "view", "path": "/memories"}}
    ])
}

fn second_answer() -> Value {
    json!([
        {"type": "tool_use", "id": "toolu_02", "name": "memory", "input": {"command": "view", "path": "/memories/customer_service_guidelines.xml"}}
    ])
}

/// The three request bodies of the example; `second_result` is the second tool_result block.
fn expected_bodies(extra: &Value, second_result: Value) -> Vec<Value> {
    let user = json!({"role": "user", "content": PROMPT});
    let turn1 = vec![user.clone()];
    let turn2 = vec![
        user.clone(),
        json!({"role": "assistant", "content": first_answer()}),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": LISTING}]}),
    ];
    let mut turn3 = turn2.clone();
    turn3.push(json!({"role": "assistant", "content": second_answer()}));
    turn3.push(json!({"role": "user", "content": [second_result]}));
    [turn1, turn2, turn3]
        .into_iter()
        .map(|messages| {
            let mut body = json!({
                "model": MODEL,
                "max_tokens": 4096,
                "messages": messages,
                "tools": [{"type": "memory_20250818", "name": "memory"}],
            });
            for (k, v) in extra.as_object().expect("object") {
                body[k] = v.clone();
            }
            body
        })
        .collect()
}

fn expected_request(body: Value) -> Value {
    json!({
        "method": "POST",
        "path": "/v1/messages",
        "headers": {
            "anthropic-version": "2023-06-01",
            "anthropic-beta": "context-management-2025-06-27",
            "content-type": "application/json",
            "x-api-key": KEY,
        },
        "body": body,
    })
}

#[tokio::test]
async fn plays_the_documentation_example() {
    let server = Scripted::start();
    let memfs = store_with_guidelines().await;
    let transcript = agent::run(&memfs, &config(&server), PROMPT).await.expect("run");

    let bodies =
        expected_bodies(&json!({}), json!({"type": "tool_result", "tool_use_id": "toolu_02", "content": FILE_VIEW}));
    let expected: Vec<Value> = bodies.iter().cloned().map(expected_request).collect();
    assert_json("requests", &Value::Array(server.requests()), &Value::Array(expected));

    assert_eq!(transcript.text, FINAL);
    assert_eq!(transcript.stop_reason, "end_turn");
    assert_eq!(transcript.requests, 3);
    assert_eq!((transcript.usage.input_tokens, transcript.usage.output_tokens), (600, 120));
    let mut messages = bodies[2]["messages"].as_array().expect("messages").clone();
    messages.push(json!({"role": "assistant", "content": [{"type": "text", "text": FINAL}]}));
    assert_json("transcript messages", &Value::Array(transcript.messages.clone()), &Value::Array(messages));
    let calls: Vec<Value> = transcript
        .tool_calls
        .iter()
        .map(|c| json!({"id": c.id, "name": c.name, "input": c.input, "content": c.content, "is_error": c.is_error}))
        .collect();
    assert_json(
        "tool calls",
        &Value::Array(calls),
        &json!([
            {"id": "toolu_01", "name": "memory", "input": {"command": "view", "path": "/memories"}, "content": LISTING, "is_error": false},
            {"id": "toolu_02", "name": "memory", "input": {"command": "view", "path": "/memories/customer_service_guidelines.xml"}, "content": FILE_VIEW, "is_error": false},
        ]),
    );
}

#[tokio::test]
async fn context_editing_system_prompt_and_error_results() {
    let server = Scripted::start();
    // No guidelines file: the second view fails, and its result says so with is_error.
    let memfs = Memfs::ephemeral(Dialect::Spec).expect("store");
    let mut config = config(&server);
    config.context_editing = true;
    config.system = Some("You are a support agent.".to_owned());
    config.max_tokens = 1024;
    config.base_url.push('/');
    let mut steps = Vec::new();
    let transcript = agent::run_observed(&memfs, &config, PROMPT, |step| {
        steps.push(match step {
            Event::ToolUse { id, name, input } => format!("use {id} {name} {input}"),
            Event::ToolResult { id, content, is_error } => format!("result {id} {is_error} {content}"),
            _ => unreachable!("no other step yet"),
        })
    })
    .await
    .expect("run");

    let empty_listing = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories";
    let missing = "The path /memories/customer_service_guidelines.xml does not exist. Please provide a valid path.";
    assert_eq!(
        steps,
        [
            r#"use toolu_01 memory {"command":"view","path":"/memories"}"#.to_owned(),
            format!("result toolu_01 false {empty_listing}"),
            r#"use toolu_02 memory {"command":"view","path":"/memories/customer_service_guidelines.xml"}"#.to_owned(),
            format!("result toolu_02 true {missing}"),
        ]
    );
    let extra = json!({
        "max_tokens": 1024,
        "system": "You are a support agent.",
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]}]},
    });
    let mut bodies = expected_bodies(
        &extra,
        json!({"type": "tool_result", "tool_use_id": "toolu_02", "content": missing, "is_error": true}),
    );
    for body in &mut bodies[1..] {
        body["messages"][2]["content"][0]["content"] = json!(empty_listing);
    }
    let expected: Vec<Value> = bodies.into_iter().map(expected_request).collect();
    assert_json("requests", &Value::Array(server.requests()), &Value::Array(expected));
    assert_eq!(transcript.text, FINAL);
}

#[tokio::test]
async fn the_turn_limit_stops_before_running_the_last_calls() {
    let server = Scripted::start();
    let memfs = store_with_guidelines().await;
    let mut config = config(&server);
    config.max_turns = 2;
    let mut steps = 0;
    let err = agent::run_observed(&memfs, &config, PROMPT, |_| steps += 1).await.expect_err("turn limit");
    assert!(matches!(err, AgentError::TurnLimit { turns: 2 }), "{err:?}");
    assert_eq!(err.to_string(), "the model still asked for tools after 2 requests, the limit (raise max_turns)");
    // The first call ran (use + result); the second answer's call did not.
    assert_eq!(steps, 2);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn api_errors_carry_the_api_message_and_never_the_key() {
    let server = Scripted::start();
    let memfs = store_with_guidelines().await;
    let mut config = config(&server);
    config.base_url = format!("{}/elsewhere", server.url);
    let err = agent::run(&memfs, &config, PROMPT).await.expect_err("404");
    let text = err.to_string();
    assert_eq!(
        text,
        "the Messages API answered 404 not_found_error: POST /elsewhere/v1/messages: no such endpoint (request-id req_scripted)"
    );
    assert!(!format!("{err:?}").contains(KEY), "{err:?}");
    assert!(matches!(err, AgentError::Api { status: 404, .. }));

    // Nothing listens there: a network error, naming the URL (retried, then reported).
    config.max_retries = 1;
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port();
    config.base_url = format!("http://127.0.0.1:{port}");
    let err = agent::run(&memfs, &config, PROMPT).await.expect_err("refused");
    assert_eq!(err.to_string(), format!("cannot reach the Messages API at http://127.0.0.1:{port}/v1/messages"));
    assert!(matches!(err, AgentError::Network { .. }), "{err:?}");
}

#[tokio::test]
async fn the_config_hides_the_key() {
    let config = AgentConfig::new(ApiKey::new(KEY).expect("key"), MODEL);
    let debug = format!("{config:?}");
    assert!(!debug.contains(KEY), "{debug}");
    assert!(debug.contains("api_key: ApiKey(****)"), "{debug}");
    assert_eq!(
        ApiKey::new("sk ant").expect_err("space").to_string(),
        "the API key is not usable: it holds characters other than visible ASCII (a space or a line break?)"
    );
    assert_eq!(ApiKey::new("").expect_err("empty").to_string(), "the API key is not usable: it is empty");
}

#[tokio::test]
async fn overloaded_requests_are_retried() {
    let server = Scripted::with_scenario("overloaded-once");
    let memfs = store_with_guidelines().await;
    let transcript = agent::run(&memfs, &config(&server), PROMPT).await.expect("run");
    assert_eq!((transcript.text.as_str(), transcript.requests), (FINAL, 3));
    // Each request twice: refused with 529 once, then answered.
    let bodies =
        expected_bodies(&json!({}), json!({"type": "tool_result", "tool_use_id": "toolu_02", "content": FILE_VIEW}));
    let expected: Vec<Value> = bodies.into_iter().flat_map(|b| [b.clone(), b]).map(expected_request).collect();
    assert_json("requests", &Value::Array(server.requests()), &Value::Array(expected));

    let server = Scripted::with_scenario("overloaded");
    let mut config = config(&server);
    config.max_retries = 1;
    let err = agent::run(&memfs, &config, PROMPT).await.expect_err("overloaded");
    assert_eq!(err.to_string(), "the Messages API answered 529 overloaded_error: Overloaded (request-id req_scripted)");
    assert_eq!(server.requests().len(), 2);
    config.max_retries = 0;
    agent::run(&memfs, &config, PROMPT).await.expect_err("overloaded");
    assert_eq!(server.requests().len(), 3);
}
