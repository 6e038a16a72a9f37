//! `memfs agent` end to end: the real binary against the scripted Messages API server
//! (`tests/scripted/messages_server.py`, Python standard library only), which plays the memory
//! tool documentation's example (view `/memories`, view a file, answer) and records every
//! request. Asserted exactly: stdout, stderr, and each request's headers and JSON body.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::{Value, json};

use crate::support::{self, assert_text, text};

const KEY: &str = "sk-ant-cli-test-9876543210";
const PASSPHRASE: &str = "agent test passphrase";
const MODEL: &str = "claude-opus-4-7";
const PROMPT: &str = "Help me respond to this customer service ticket.";
const GUIDELINES: &str = "<guidelines>\n<addressing_customers>\n- Always address customers by their first name\n- Use empathetic language\n</addressing_customers>\n</guidelines>\n";
const LISTING: &str = "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories\n147B\t/memories/customer_service_guidelines.xml";
const FILE_VIEW: &str = "Here's the content of /memories/customer_service_guidelines.xml with line numbers:\n     1\t<guidelines>\n     2\t<addressing_customers>\n     3\t- Always address customers by their first name\n     4\t- Use empathetic language\n     5\t</addressing_customers>\n     6\t</guidelines>\n     7\t";
const FINAL: &str =
    "Based on your customer service guidelines, I can help you craft a response. Please share the ticket details...";

/// The scripted server, stopped when dropped (its stdin closes, then it is killed).
struct Scripted {
    child: Child,
    url: String,
    record: PathBuf,
}

impl Scripted {
    fn start(dir: &Path, scenario: &str) -> Self {
        Scripted::start_with(dir, scenario, &[])
    }

    fn start_with(dir: &Path, scenario: &str, extra: &[&str]) -> Self {
        let record = dir.join(format!("requests-{scenario}-{}.jsonl", extra.len()));
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/scripted/messages_server.py");
        let mut child = Command::new("python3")
            .arg(script)
            .arg("--record")
            .arg(&record)
            .args(["--scenario", scenario])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start python3 tests/scripted/messages_server.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("read the URL line");
        let url = line.trim_end().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "unexpected first line {line:?}");
        Scripted { child, url, record }
    }

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

/// A store holding the documentation example's guidelines file, and the scripted server.
struct Setup {
    root: tempfile::TempDir,
    server: Scripted,
}

impl Setup {
    fn new() -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        let server = Scripted::start(root.path(), "docs-example");
        let setup = Setup { root, server };
        let out = setup
            .memfs()
            .args(["init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"])
            .output()
            .expect("init");
        assert!(out.status.success(), "init: {}", text(&out.stderr));
        let create =
            json!({"command": "create", "path": "/memories/customer_service_guidelines.xml", "file_text": GUIDELINES});
        let mut child =
            setup.memfs().arg("exec").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("spawn exec");
        child.stdin.take().expect("stdin").write_all(format!("{create}\n").as_bytes()).expect("write");
        let out = child.wait_with_output().expect("exec");
        assert_text(
            "exec",
            &text(&out.stdout),
            "{\"content\":\"File created successfully at: /memories/customer_service_guidelines.xml\",\"is_error\":false}\n",
        );
        setup
    }

    /// The binary on this setup's store, with the API pointed at the scripted server.
    fn memfs(&self) -> Command {
        let root = self.root.path();
        let mut cmd = support::memfs(root);
        cmd.env("MEMFS_PASSPHRASE", PASSPHRASE)
            .env("MEMFS_STORE", format!("file://{}", root.join("store").display()))
            .env("ANTHROPIC_API_KEY", KEY)
            .env("ANTHROPIC_BASE_URL", &self.server.url)
            .stdin(Stdio::null());
        cmd
    }

    fn agent(&self, args: &[&str]) -> Output {
        self.memfs().arg("agent").args(args).output().expect("run memfs agent")
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

/// The three requests of the example, each body with the fields of `extra` added.
fn expected_requests(extra: Value) -> Value {
    let user = json!({"role": "user", "content": PROMPT});
    let first = json!({"role": "assistant", "content": [
        {"type": "text", "text": "I'll help you respond to the customer service ticket. Let me check my memory for any previous context."},
        {"type": "tool_use", "id": "toolu_01", "name": "memory", "input": {"command": "view", "path": "/memories"}}
    ]});
    let second = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_02", "name": "memory", "input": {"command": "view", "path": "/memories/customer_service_guidelines.xml"}}
    ]});
    let result1 =
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": LISTING}]});
    let result2 =
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_02", "content": FILE_VIEW}]});
    let conversations = [
        vec![user.clone()],
        vec![user.clone(), first.clone(), result1.clone()],
        vec![user, first, result1, second, result2],
    ];
    let requests = conversations
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
        })
        .collect();
    Value::Array(requests)
}

#[test]
fn plays_the_documentation_example() {
    let setup = Setup::new();
    let out = setup.agent(&["--model", MODEL, PROMPT]);
    assert_text("stderr", &text(&out.stderr), "");
    assert!(out.status.success());
    assert_text("stdout", &text(&out.stdout), &format!("{FINAL}\n"));
    assert_json("requests", &Value::Array(setup.server.requests()), &expected_requests(json!({})));
}

#[test]
fn context_editing_verbose_and_options() {
    let setup = Setup::new();
    let out = setup
        .memfs()
        .env("MEMFS_AGENT_MODEL", MODEL)
        .args(["agent", "--context-editing", "-v", "--max-tokens", "1000", "--system", "Be brief.", PROMPT])
        .output()
        .expect("run memfs agent");
    assert_text(
        "stderr",
        &text(&out.stderr),
        &format!(
            "[tool_use toolu_01] memory {{\"command\":\"view\",\"path\":\"/memories\"}}\n\
             [tool_result toolu_01] {LISTING}\n\
             [tool_use toolu_02] memory {{\"command\":\"view\",\"path\":\"/memories/customer_service_guidelines.xml\"}}\n\
             [tool_result toolu_02] {FILE_VIEW}\n"
        ),
    );
    assert!(out.status.success());
    assert_text("stdout", &text(&out.stdout), &format!("{FINAL}\n"));
    let extra = json!({
        "max_tokens": 1000,
        "system": "Be brief.",
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919", "exclude_tools": ["memory"]}]},
    });
    assert_json("requests", &Value::Array(setup.server.requests()), &expected_requests(extra));
}

#[test]
fn a_missing_api_key_is_reported_before_anything_is_sent() {
    let setup = Setup::new();
    for key in [None, Some("")] {
        let mut cmd = setup.memfs();
        match key {
            None => cmd.env_remove("ANTHROPIC_API_KEY"),
            Some(k) => cmd.env("ANTHROPIC_API_KEY", k),
        };
        let out = cmd.args(["agent", "--model", MODEL, PROMPT]).output().expect("run memfs agent");
        assert_eq!(out.status.code(), Some(1));
        assert_text("stdout", &text(&out.stdout), "");
        assert_text(
            "stderr",
            &text(&out.stderr),
            "memfs: ANTHROPIC_API_KEY is not set: set it to your Anthropic API key\n",
        );
    }
    let out = setup.memfs().args(["agent", PROMPT]).output().expect("run memfs agent");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr)
            .starts_with("error: the following required arguments were not provided:\n  --model <MODEL>\n")
    );
    assert_eq!(setup.server.requests().len(), 0);
}

#[test]
fn api_errors_are_reported_without_the_key() {
    let setup = Setup::new();
    let base = format!("{}/elsewhere", setup.server.url);
    let out =
        setup.memfs().env("ANTHROPIC_BASE_URL", &base).args(["agent", "--model", MODEL, PROMPT]).output().expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert_text("stdout", &text(&out.stdout), "");
    assert_text(
        "stderr",
        &text(&out.stderr),
        "memfs: the Messages API answered 404 not_found_error: POST /elsewhere/v1/messages: no such endpoint (request-id req_scripted)\n",
    );
    let requests = setup.server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["path"], "/elsewhere/v1/messages");

    // The request limit: the second answer still asks for a tool.
    let out = setup.agent(&["--model", MODEL, "--max-turns", "2", PROMPT]);
    assert_eq!(out.status.code(), Some(1));
    assert_text("stdout", &text(&out.stdout), "");
    assert_text(
        "stderr",
        &text(&out.stderr),
        "memfs: the model still asked for tools after 2 requests, the limit (raise max_turns; memfs agent --max-turns N)\n",
    );
    assert_eq!(setup.server.requests().len(), 3);

    let out = setup
        .memfs()
        .env("ANTHROPIC_BASE_URL", "ftp://host")
        .args(["agent", "--model", MODEL, PROMPT])
        .output()
        .expect("run");
    assert_text(
        "stderr",
        &text(&out.stderr),
        "memfs: the base URL ftp://host is not usable: expected an http:// or https:// URL\n",
    );

    // An overloaded API: retried --max-retries times, then reported.
    let overloaded = Scripted::start(setup.root.path(), "overloaded");
    let out = setup
        .memfs()
        .env("ANTHROPIC_BASE_URL", &overloaded.url)
        .args(["agent", "--model", MODEL, "--max-retries", "1", PROMPT])
        .output()
        .expect("run");
    assert_text(
        "stderr",
        &text(&out.stderr),
        "memfs: the Messages API answered 529 overloaded_error: Overloaded (request-id req_scripted)\n",
    );
    assert_eq!(overloaded.requests().len(), 2);
}

/// V4: a 307 from the configured endpoint to another origin. memfs does not follow it: the
/// error names the status and the target, and the second server receives nothing (no key, no
/// conversation).
#[test]
fn a_redirect_is_never_followed() {
    let setup = Setup::new();
    let elsewhere = Scripted::start(setup.root.path(), "docs-example");
    let target = elsewhere.url.replace("127.0.0.1", "localhost");
    let redirecting = Scripted::start_with(setup.root.path(), "docs-example", &["--redirect-to", &target]);
    let out = setup
        .memfs()
        .env("ANTHROPIC_BASE_URL", &redirecting.url)
        .args(["agent", "--model", MODEL, PROMPT])
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(1));
    assert_text("stdout", &text(&out.stdout), "");
    assert_text(
        "stderr",
        &text(&out.stderr),
        &format!(
            "memfs: the Messages API answered 307 with a redirect to {target}/v1/messages: memfs does not follow redirects (set ANTHROPIC_BASE_URL to the address you trust)\n"
        ),
    );
    assert_eq!(redirecting.requests().len(), 1, "the redirecting server got one request, not retried");
    assert_eq!(elsewhere.requests().len(), 0, "the redirect target received a request");
}

/// Plain http:// to a host other than loopback is refused before anything is sent; loopback
/// (the scripted server) and https:// are accepted.
#[test]
fn plain_http_is_refused_except_to_loopback() {
    let setup = Setup::new();
    for base in ["http://example.com", "http://10.1.2.3:8080/api"] {
        let out = setup
            .memfs()
            .env("ANTHROPIC_BASE_URL", base)
            .args(["agent", "--model", MODEL, PROMPT])
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(1));
        assert_text("stdout", &text(&out.stdout), "");
        assert_text(
            "stderr",
            &text(&out.stderr),
            &format!(
                "memfs: the base URL {base} is not usable: plain http:// is accepted only for a loopback host (localhost, 127.0.0.1, [::1]); use https://\n"
            ),
        );
    }
    // https:// passes the check: the request is made (and fails to connect, nothing listens).
    let out = setup
        .memfs()
        .env("ANTHROPIC_BASE_URL", "https://127.0.0.1:1")
        .args(["agent", "--model", MODEL, "--max-retries", "0", PROMPT])
        .output()
        .expect("run");
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("memfs: cannot reach the Messages API at https://127.0.0.1:1/v1/messages: "),
        "stderr: {stderr}"
    );
    // Loopback over http: the whole conversation.
    let out = setup.agent(&["--model", MODEL, PROMPT]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_text("stdout", &text(&out.stdout), &format!("{FINAL}\n"));
    assert_eq!(setup.server.requests().len(), 3);
}
