//! `memfs serve`: the real binary on 127.0.0.1 port 0, a tokens file, one request over a plain
//! socket, graceful stop on SIGTERM; and the refusals at start.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::channel;
use std::thread;
use std::time::Duration;

use crate::support::{assert_text, text};

const ALICE: &str = "alice-token-0123456789abcdef0123456789";
const BOB: &str = "bob-token-0123456789abcdef0123456789abc";

/// The binary with a clean environment for the variables it reads.
fn memfs() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_memfs"));
    for var in [
        "MEMFS_STORE",
        "MEMFS_DIALECT",
        "MEMFS_PASSPHRASE",
        "MEMFS_KEY_FILE",
        "MEMFS_ACTOR",
        "MEMFS_NAMESPACE",
        "MEMFS_SERVE_TOKENS",
        "MEMFS_TODAY",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null()).output().expect("run memfs")
}

/// Writes a tokens file with `mode`.
fn tokens_file(dir: &Path, content: &str, mode: u32) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("tokens");
    std::fs::write(&path, content).expect("write the tokens file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
    path
}

/// A running `memfs serve`, its address, and what it wrote on stderr before serving.
struct Served {
    child: Child,
    addr: String,
    stderr: String,
}

fn serve(cmd: &mut Command) -> Served {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = channel();
    thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            let serving = line.starts_with("memfs: serving on ");
            lines.push(line);
            if serving {
                let _ = tx.send(Ok(lines.join("\n")));
                return;
            }
        }
        let _ = tx.send(Err(lines.join("\n")));
    });
    let stderr = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(stderr)) => stderr,
        other => {
            let _ = child.kill();
            panic!("memfs serve did not start: {other:?}");
        }
    };
    let addr = stderr.rsplit_once("memfs: serving on http://").expect("the serving line").1.to_owned();
    Served { child, addr, stderr }
}

impl Served {
    /// One POST /v1/memory over a fresh connection: the status line and the body.
    fn post(&self, token: &str, body: &str) -> (String, String) {
        let mut socket = TcpStream::connect(&self.addr).expect("connect");
        socket.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
        let request = format!(
            "POST /v1/memory HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        socket.write_all(request.as_bytes()).expect("send");
        let mut response = String::new();
        socket.read_to_string(&mut response).expect("read");
        let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
        (head.lines().next().unwrap_or_default().to_owned(), body.to_owned())
    }

    /// SIGTERM, then the exit status, stdout and the rest of stderr.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        let status = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().expect("kill");
        assert!(status.success());
        let mut stdout = String::new();
        self.child.stdout.take().expect("stdout").read_to_string(&mut stdout).expect("stdout");
        (self.child.wait().expect("wait"), stdout)
    }
}

#[test]
fn serves_namespaces_of_a_folder_store_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let url = format!("file://{}", dir.path().join("store").display());
    let tokens = tokens_file(dir.path(), &format!("# test\nalice {ALICE}\n"), 0o600);
    let served = serve(
        memfs()
            .args(["--store", &url, "serve", "--http", "127.0.0.1:0", "--create-namespaces", "--tokens"])
            .arg(&tokens)
            .env("MEMFS_PASSPHRASE", "correct horse battery staple")
            // The remembered commits go here, not into the real state folder.
            .env("XDG_STATE_HOME", dir.path().join("state"))
            .env("MEMFS_SERVE_TOKENS", format!("bob {BOB}")),
    );
    let port = served.addr.strip_prefix("127.0.0.1:").expect("127.0.0.1");
    assert_ne!(port, "0");
    assert_text(
        "stderr",
        &served.stderr,
        &format!(
            "memfs: created a new encrypted store at {url} (namespace alice)\nmemfs: created a new encrypted store at {url} (namespace bob)\nmemfs: serving on http://127.0.0.1:{port}"
        ),
    );
    let (status, body) = served.post(ALICE, r#"{"command":"create","path":"/memories/plan.md","file_text":"ship it"}"#);
    assert_text("status", &status, "HTTP/1.1 200 OK");
    assert_text("body", &body, r#"{"content":"File created successfully at: /memories/plan.md","is_error":false}"#);
    let view = r#"{"type":"tool_use","id":"toolu_9","name":"memory","input":{"command":"view","path":"/memories"}}"#;
    let (_, body) = served.post(BOB, view);
    assert_text(
        "bob's view",
        &body,
        r#"{"type":"tool_result","tool_use_id":"toolu_9","content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories","is_error":false}"#,
    );
    let (status, body) = served.post("wrong-token-0123456789abcdef0123456789", view);
    assert_text("status", &status, "HTTP/1.1 401 Unauthorized");
    assert_text("body", &body, r#"{"error":"invalid bearer token"}"#);

    let (exit, stdout) = served.stop();
    assert!(exit.success(), "{exit:?}");
    assert_text("stdout", &stdout, "");

    // The file is in alice's namespace on disk, and only there.
    let exec = |ns: &str| {
        let mut child = memfs()
            .args(["--store", &url, "--namespace", ns, "exec"])
            .env("MEMFS_PASSPHRASE", "correct horse battery staple")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn exec");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"{\"command\":\"view\",\"path\":\"/memories/plan.md\"}\n")
            .expect("write");
        text(&child.wait_with_output().expect("exec").stdout)
    };
    assert_text(
        "alice",
        &exec("alice"),
        "{\"content\":\"Here's the content of /memories/plan.md with line numbers:\\n     1\\tship it\",\"is_error\":false}\n",
    );
    assert_text(
        "bob",
        &exec("bob"),
        "{\"content\":\"The path /memories/plan.md does not exist. Please provide a valid path.\",\"is_error\":true}\n",
    );
}

#[test]
fn refuses_a_tokens_file_others_can_read() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let tokens = tokens_file(dir.path(), &format!("alice {ALICE}\n"), 0o644);
    let output = run(memfs().args(["--store", "memory://", "serve", "--http", "127.0.0.1:0", "--tokens"]).arg(&tokens));
    assert_eq!(output.status.code(), Some(1));
    let path = tokens.display();
    assert_text(
        "stderr",
        &text(&output.stderr),
        &format!(
            "memfs: the tokens file {path} can be read or written by others (mode 0644): it holds secrets; run chmod 600 {path}\n"
        ),
    );
    assert_text("stdout", &text(&output.stdout), "");
}

#[test]
fn refuses_an_address_beyond_loopback_without_the_opt_in() {
    let output = run(memfs()
        .args(["--store", "memory://", "serve", "--http", "0.0.0.0:0"])
        .env("MEMFS_SERVE_TOKENS", format!("alice {ALICE}")));
    assert_eq!(output.status.code(), Some(1));
    assert_text(
        "stderr",
        &text(&output.stderr),
        "memfs: --http 0.0.0.0:0: 0.0.0.0 is not a loopback address. The endpoint has no TLS, so tokens and memories would cross the network in clear; put it behind a TLS-terminating proxy and pass --allow-remote\n",
    );
}

#[test]
fn refuses_bad_tokens_and_settings_without_printing_a_token() {
    let cases: [(&[&str], Option<String>, String); 4] = [
        (
            &[],
            None,
            "memfs: memfs serve needs at least one token: --tokens FILE or MEMFS_SERVE_TOKENS, with `NAMESPACE TOKEN` lines (make one with `memfs serve --new-token NAMESPACE`)\n".to_owned(),
        ),
        (
            &[],
            Some(format!("alice {ALICE}\nbob {ALICE}")),
            "memfs: MEMFS_SERVE_TOKENS line 2: this token is already given on MEMFS_SERVE_TOKENS line 1 (a token is bound to one namespace)\n".to_owned(),
        ),
        (
            &[],
            Some("alice too-short-a-token".to_owned()),
            "memfs: MEMFS_SERVE_TOKENS line 1: the token is shorter than 32 characters\n".to_owned(),
        ),
        (
            &["--namespace", "alice"],
            Some(format!("alice {ALICE}")),
            "memfs: memfs serve takes its namespaces from the tokens, not from --namespace or MEMFS_NAMESPACE\n".to_owned(),
        ),
    ];
    for (flags, env, expected) in cases {
        let mut cmd = memfs();
        cmd.args(["--store", "memory://"]).args(flags).args(["serve", "--http", "127.0.0.1:0"]);
        if let Some(env) = &env {
            cmd.env("MEMFS_SERVE_TOKENS", env);
        }
        let output = run(&mut cmd);
        assert_eq!(output.status.code(), Some(1), "{flags:?} {env:?}");
        assert_text("stderr", &text(&output.stderr), &expected);
    }
    // A persistent store needs the credential that unlocks its namespaces.
    let output = run(memfs()
        .args(["--store", "file:///nonexistent/memfs-store", "serve", "--http", "127.0.0.1:0"])
        .env("MEMFS_SERVE_TOKENS", format!("alice {ALICE}")));
    assert_eq!(output.status.code(), Some(1));
    assert_text(
        "stderr",
        &text(&output.stderr),
        "memfs: the namespaces of file:///nonexistent/memfs-store are encrypted: give the passphrase (MEMFS_PASSPHRASE, --passphrase-file) or the key file (--key-file) that unlocks them\n",
    );
}

#[test]
fn new_token_prints_one_line_that_serve_accepts() {
    let output = run(memfs().args(["serve", "--new-token", "team-a"]));
    assert!(output.status.success());
    let line = text(&output.stdout);
    let token = line.strip_prefix("team-a memfs_").and_then(|t| t.strip_suffix('\n')).expect("a token line");
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()), "{token}");
    assert_text("stderr", &text(&output.stderr), "");
    let again = text(&run(memfs().args(["serve", "--new-token", "team-a"])).stdout);
    assert_ne!(line, again);
    // The line serves as is.
    let dir = tempfile::tempdir().expect("a temporary folder");
    let tokens = tokens_file(dir.path(), &line, 0o600);
    let served =
        serve(memfs().args(["--store", "memory://", "serve", "--http", "127.0.0.1:0", "--tokens"]).arg(&tokens));
    let (status, body) = served.post(&format!("memfs_{token}"), r#"{"command":"view","path":"/memories"}"#);
    assert_text("status", &status, "HTTP/1.1 200 OK");
    assert_text(
        "body",
        &body,
        r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories","is_error":false}"#,
    );
    let (exit, _) = served.stop();
    assert!(exit.success());

    let output = run(memfs().args(["serve", "--new-token", "Team A"]));
    assert_eq!(output.status.code(), Some(1));
    assert_text(
        "stderr",
        &text(&output.stderr),
        "memfs: --new-token: namespace \"Team A\" is not valid: use 1 to 64 lowercase letters, digits, `-` and `_`, starting with a letter or digit\n",
    );
    assert_text("stdout", &text(&output.stdout), "");
}
