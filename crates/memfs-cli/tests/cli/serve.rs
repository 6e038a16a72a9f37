//! `memfs serve`: the real binary on 127.0.0.1 port 0, a tokens file, one request over a plain
//! socket, graceful stop on SIGTERM; and the refusals at start.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::channel;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::support::{assert_text, memfs_no_home as memfs, text};

const ALICE: &str = "alice-token-0123456789abcdef0123456789";
const BOB: &str = "bob-token-0123456789abcdef0123456789abc";

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

/// A running `memfs serve`, its address, what it wrote on stderr before serving, and the
/// lines it writes there after (the log).
struct Served {
    child: Child,
    addr: String,
    stderr: String,
    log: Arc<Mutex<Vec<String>>>,
    reader: Option<thread::JoinHandle<()>>,
}

fn serve(cmd: &mut Command) -> Served {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = channel();
    let log = Arc::new(Mutex::new(Vec::new()));
    let after = log.clone();
    let reader = thread::spawn(move || {
        let mut lines = Vec::new();
        let mut serving = false;
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if serving {
                after.lock().unwrap().push(line);
                continue;
            }
            serving = line.starts_with("memfs: serving on ");
            lines.push(line);
            if serving {
                let _ = tx.send(Ok(lines.join("\n")));
            }
        }
        if !serving {
            let _ = tx.send(Err(lines.join("\n")));
        }
    });
    let stderr = match rx.recv_timeout(Duration::from_secs(60)) {
        Ok(Ok(stderr)) => stderr,
        other => {
            let _ = child.kill();
            panic!("memfs serve did not start: {other:?}");
        }
    };
    let addr = stderr.rsplit_once("memfs: serving on http://").expect("the serving line").1.to_owned();
    Served { child, addr, stderr, log, reader: Some(reader) }
}

impl Served {
    /// One POST /v1/memory over a fresh connection: the status line and the body.
    fn post(&self, token: &str, body: &str) -> (String, String) {
        let (head, body) = self.post_full(token, body);
        (head.lines().next().unwrap_or_default().to_owned(), body)
    }

    /// One POST /v1/memory over a fresh connection: the whole head and the body.
    fn post_full(&self, token: &str, body: &str) -> (String, String) {
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
        (head.to_owned(), body.to_owned())
    }

    /// SIGTERM, then the exit status, stdout and the rest of stderr.
    fn stop(mut self) -> (std::process::ExitStatus, String) {
        let status = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().expect("kill");
        assert!(status.success());
        let mut stdout = String::new();
        self.child.stdout.take().expect("stdout").read_to_string(&mut stdout).expect("stdout");
        let status = self.child.wait().expect("wait");
        if let Some(reader) = self.reader.take() {
            reader.join().expect("the stderr reader");
        }
        (status, stdout)
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

/// A log line with its time (`TIME`), request id (`ID`) and duration (`D`) masked; checks
/// their shapes on the way.
fn mask(line: &str) -> String {
    let mut out = Vec::new();
    for word in line.split(' ') {
        let is_time = word.len() == 24
            && word.ends_with('Z')
            && word.as_bytes()[10] == b'T'
            && word[..4].bytes().all(|b| b.is_ascii_digit());
        if is_time {
            out.push("TIME".to_owned());
        } else if let Some(id) = word.strip_prefix("request=") {
            let (id, rest) = id.split_at(id.len().min(16));
            assert!(id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()), "request id in {line:?}");
            out.push(format!("request=ID{rest}"));
        } else if let Some(d) = word.strip_prefix("duration=").and_then(|d| d.strip_suffix('s')) {
            assert!(d.parse::<f64>().is_ok() && d.split_once('.').is_some_and(|(_, f)| f.len() == 3), "{line:?}");
            out.push("duration=D".to_owned());
        } else {
            out.push(word.to_owned());
        }
    }
    out.join(" ")
}

/// The value of a header in a response head.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|l| l.split_once(": ").filter(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v))
}

/// One access line per request, in the documented format; no content, path or token in it;
/// the id in the log is the one in the answer's `x-request-id`.
#[test]
fn one_access_line_per_request() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let tokens = tokens_file(dir.path(), &format!("alice {ALICE}\n"), 0o600);
    let served =
        serve(memfs().args(["--store", "memory://", "serve", "--http", "127.0.0.1:0", "--tokens"]).arg(&tokens));
    let (head, _) =
        served.post_full(ALICE, r#"{"command":"create","path":"/memories/secret-plan.md","file_text":"launch codes"}"#);
    let id = header(&head, "x-request-id").expect("x-request-id").to_owned();
    let view =
        r#"{"type":"tool_use","id":"t","name":"memory","input":{"command":"view","path":"/memories/secret-plan.md"}}"#;
    served.post(ALICE, view);
    served.post(ALICE, r#"{"command":"launch codes"}"#);
    served.post("wrong-token-0123456789abcdef0123456789", view);
    served.post(ALICE, "not json");
    let mut socket = TcpStream::connect(&served.addr).expect("connect");
    socket.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").expect("send");
    socket.read_to_string(&mut String::new()).expect("read");
    let log = served.log.clone();
    let (exit, _) = served.stop();
    assert!(exit.success());
    let log = log.lock().unwrap().clone();
    assert!(log[0].contains(&format!(" request={id} ")), "{log:?}");
    for line in &log {
        for secret in ["secret-plan", "launch", ALICE, "wrong-token", "/memories"] {
            assert!(!line.contains(secret), "{secret} in {line}");
        }
    }
    assert_text(
        "log",
        &log.iter().map(|l| mask(l)).collect::<Vec<_>>().join("\n"),
        "memfs: access TIME request=ID namespace=alice command=create status=200 duration=D
memfs: access TIME request=ID namespace=alice command=view status=200 duration=D
memfs: access TIME request=ID namespace=alice command=- status=200 duration=D
memfs: access TIME request=ID namespace=- command=- status=401 duration=D
memfs: access TIME request=ID namespace=alice command=- status=400 duration=D
memfs: access TIME request=ID namespace=- command=- status=200 duration=D
memfs: stopping",
    );
}

/// A tenant whose store fails (its log segment overwritten in the folder) gets a generic answer with
/// a request id and no server path; the server's log has the detail under the same id.
/// Issue 19: namespaces whose slot is kept outside memfs (an age recipient each) are served
/// with the identity alone, unlocked at start; another identity stops serve there, naming the
/// slot it tried.
#[test]
fn namespaces_kept_for_an_age_identity_are_unlocked_at_start() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let url = format!("file://{}", dir.path().join("store").display());
    let identity = |name: &str| {
        let identity = age::x25519::Identity::generate();
        let path = dir.path().join(name);
        let secret = age::secrecy::ExposeSecret::expose_secret(&identity.to_string()).to_owned();
        std::fs::write(&path, format!("{secret}\n")).expect("write the identity");
        (path, identity.to_public().to_string())
    };
    let (server, recipient) = identity("server.age");
    let (stranger, _) = identity("stranger.age");
    for namespace in ["alice", "bob"] {
        let init =
            run(memfs().args(["--store", &url, "--namespace", namespace, "init", "--age-recipient", &recipient]));
        assert!(init.status.success(), "{}", text(&init.stderr));
    }
    let tokens = tokens_file(dir.path(), &format!("alice {ALICE}\nbob {BOB}\n"), 0o600);
    let served = serve(
        memfs()
            .args(["--store", &url, "serve", "--http", "127.0.0.1:0", "--tokens"])
            .arg(&tokens)
            .arg("--age-identity")
            .arg(&server)
            .env("XDG_STATE_HOME", dir.path().join("state")),
    );
    let (status, body) = served.post(ALICE, r#"{"command":"create","path":"/memories/plan.md","file_text":"ship it"}"#);
    assert_text("status", &status, "HTTP/1.1 200 OK");
    assert_text("body", &body, r#"{"content":"File created successfully at: /memories/plan.md","is_error":false}"#);
    let (exit, _) = served.stop();
    assert!(exit.success(), "{exit:?}");
    let output = run(memfs()
        .args(["--store", &url, "serve", "--http", "127.0.0.1:0", "--tokens"])
        .arg(&tokens)
        .arg("--age-identity")
        .arg(&stranger));
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    assert_text(
        "stderr",
        &text(&output.stderr),
        &format!(
            "memfs: cannot serve namespace alice: store {url} (namespace alice): no key slot could be opened: key slot 1 (age): none of the age identities given is the one for {recipient}\n"
        ),
    );
}

#[test]
fn a_wrong_passphrase_stops_serve_at_start() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let url = format!("file://{}", dir.path().join("store").display());
    for namespace in ["alice", "bob"] {
        let init = run(memfs()
            .args(["--store", &url, "--namespace", namespace, "init"])
            .args(["--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"])
            .env("MEMFS_PASSPHRASE", "correct horse battery staple"));
        assert!(init.status.success(), "{}", text(&init.stderr));
    }
    let tokens = tokens_file(dir.path(), &format!("alice {ALICE}\nbob {BOB}\n"), 0o600);
    let output = run(memfs()
        .args(["--store", &url, "serve", "--http", "127.0.0.1:0", "--tokens"])
        .arg(&tokens)
        .env("MEMFS_PASSPHRASE", "wrong horse"));
    assert_eq!(output.status.code(), Some(1), "{}", text(&output.stderr));
    // Stopped at the first namespace (in name order), before listening: no `serving on` line.
    assert_text(
        "stderr",
        &text(&output.stderr),
        &format!("memfs: cannot serve namespace alice: store {url} (namespace alice): wrong passphrase or key file\n"),
    );
    assert_text("stdout", &text(&output.stdout), "");
}

#[test]
fn a_store_failure_is_coarse_for_the_tenant_and_detailed_in_the_log() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store = dir.path().join("store");
    let url = format!("file://{}", store.display());
    let tokens = tokens_file(dir.path(), &format!("alice {ALICE}\n"), 0o600);
    let served = serve(
        memfs()
            .args(["--store", &url, "serve", "--http", "127.0.0.1:0", "--tokens"])
            .arg(&tokens)
            .env("MEMFS_PASSPHRASE", "correct horse battery staple"),
    );
    // Made after the server started (stores present at start are unlocked then), and damaged
    // before the namespace's first request opens it.
    let init = run(memfs()
        .args(["--store", &url, "--namespace", "alice", "init"])
        .args(["--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"])
        .env("MEMFS_PASSPHRASE", "correct horse battery staple"));
    assert!(init.status.success(), "{}", text(&init.stderr));
    let segment = store.join("ns/alice/log/0000000000000001");
    std::fs::write(&segment, b"garbage garbage garbage garbage").expect("damage the log");
    let (head, body) = served.post_full(ALICE, r#"{"command":"view","path":"/memories"}"#);
    let id = header(&head, "x-request-id").expect("x-request-id").to_owned();
    assert_text("status", head.lines().next().unwrap_or_default(), "HTTP/1.1 503 Service Unavailable");
    assert_text(
        "body",
        &body,
        &format!(
            r#"{{"error":"cannot open the store of this token's namespace (request id {id}); the server's log has the detail"}}"#
        ),
    );
    let log = served.log.clone();
    let (exit, _) = served.stop();
    assert!(exit.success());
    let log = log.lock().unwrap().clone();
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(log[2], "memfs: stopping");
    assert_text(
        "store error",
        &log[0],
        &format!(
            "memfs: store error {} request={id} namespace=alice: store {url} (namespace alice): storage open of log failed: Generic LogStore error: {}: not a memfs log segment (bad magic)",
            &log[0][19..43],
            segment.display()
        ),
    );
    assert_eq!(mask(&log[0]).split(' ').nth(3), Some("TIME"), "{log:?}");
    assert_text(
        "access",
        &mask(&log[1]),
        "memfs: access TIME request=ID namespace=alice command=view status=503 duration=D",
    );
    assert!(log[1].contains(&format!("request={id} ")));
}

fn serve_with(dir: &Path, flags: &[&str]) -> Served {
    let tokens = tokens_file(dir, &format!("alice {ALICE}\n"), 0o600);
    serve(
        memfs()
            .args(["--store", "memory://", "serve", "--http", "127.0.0.1:0"])
            .args(flags)
            .arg("--tokens")
            .arg(&tokens),
    )
}

/// Reads until the server closes the connection; the bytes read, and how long it took.
fn read_until_closed(socket: &mut TcpStream) -> (Vec<u8>, Duration) {
    socket.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    let start = Instant::now();
    let mut bytes = Vec::new();
    let _ = socket.read_to_end(&mut bytes);
    (bytes, start.elapsed())
}

/// A client that sends half a request head is cut after --header-timeout.
#[test]
fn a_slow_header_is_cut_after_the_header_timeout() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let served = serve_with(dir.path(), &["--header-timeout", "300ms", "--idle-timeout", "60s"]);
    let mut socket = TcpStream::connect(&served.addr).expect("connect");
    socket.write_all(b"POST /v1/memory HTTP/1.1\r\nHost: x\r\n").expect("send half a head");
    let (bytes, took) = read_until_closed(&mut socket);
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(10), "{took:?}");
    assert_text("answer", &String::from_utf8_lossy(&bytes), "");
    // A connection that sends nothing at all is cut too.
    let mut silent = TcpStream::connect(&served.addr).expect("connect");
    let (_, took) = read_until_closed(&mut silent);
    assert!(took < Duration::from_secs(10), "{took:?}");
    let (exit, _) = served.stop();
    assert!(exit.success());
}

/// An idle keep-alive connection is closed after --idle-timeout (the header timeout, which
/// also runs while the server waits for the next request, is long here).
#[test]
fn an_idle_connection_is_closed_after_the_idle_timeout() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let served = serve_with(dir.path(), &["--header-timeout", "60s", "--idle-timeout", "300ms"]);
    let mut socket = TcpStream::connect(&served.addr).expect("connect");
    socket.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n").expect("send");
    socket.set_read_timeout(Some(Duration::from_secs(30))).expect("timeout");
    let mut response = Vec::new();
    let mut buf = [0u8; 1024];
    while !response.ends_with(b"{\"status\":\"ok\"}") {
        let n = socket.read(&mut buf).expect("read the answer");
        assert!(n > 0, "closed before the answer: {}", String::from_utf8_lossy(&response));
        response.extend_from_slice(&buf[..n]);
    }
    let (rest, took) = read_until_closed(&mut socket);
    assert!(rest.is_empty());
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(10), "{took:?}");
    let (exit, _) = served.stop();
    assert!(exit.success());
}

/// A client that stops half-way through its body is cut after --idle-timeout.
#[test]
fn a_stalled_body_is_cut_after_the_idle_timeout() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let served =
        serve_with(dir.path(), &["--header-timeout", "60s", "--idle-timeout", "300ms", "--request-timeout", "60s"]);
    let mut socket = TcpStream::connect(&served.addr).expect("connect");
    let head = format!(
        "POST /v1/memory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ALICE}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"command\""
    );
    socket.write_all(head.as_bytes()).expect("send a head and part of a body");
    let (_, took) = read_until_closed(&mut socket);
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(10), "{took:?}");
    let (exit, _) = served.stop();
    assert!(exit.success());
}

/// A request not answered within --request-timeout gets 503 (here: a body that never comes,
/// with a long idle timeout).
#[test]
fn a_request_over_the_request_timeout_is_answered_503() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let served = serve_with(dir.path(), &["--idle-timeout", "60s", "--request-timeout", "300ms"]);
    let mut socket = TcpStream::connect(&served.addr).expect("connect");
    let head = format!(
        "POST /v1/memory HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {ALICE}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{{"
    );
    socket.write_all(head.as_bytes()).expect("send");
    let (bytes, took) = read_until_closed(&mut socket);
    assert!(took >= Duration::from_millis(250) && took < Duration::from_secs(10), "{took:?}");
    let response = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").expect("an answer");
    assert_text("status", head.lines().next().unwrap_or_default(), "HTTP/1.1 503 Service Unavailable");
    assert_text(
        "body",
        body,
        r#"{"error":"the request took longer than the server's limit of 0.3 s; a command it carried may or may not have been applied"}"#,
    );
    let log = served.log.clone();
    let (exit, _) = served.stop();
    assert!(exit.success());
    assert_text(
        "log",
        &log.lock().unwrap().iter().map(|l| mask(l)).collect::<Vec<_>>().join("\n"),
        "memfs: access TIME request=ID namespace=alice command=- status=503 duration=D\nmemfs: stopping",
    );
}

/// With --max-connections 2, a third connection is not served until one of the two closes.
#[test]
fn connections_past_the_limit_wait() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let served =
        serve_with(dir.path(), &["--max-connections", "2", "--header-timeout", "60s", "--idle-timeout", "60s"]);
    let first = TcpStream::connect(&served.addr).expect("connect 1");
    let _second = TcpStream::connect(&served.addr).expect("connect 2");
    // Both are accepted by now (accepting takes the server a moment).
    thread::sleep(Duration::from_millis(300));
    let mut third = TcpStream::connect(&served.addr).expect("connect 3 (the kernel's backlog)");
    third.write_all(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").expect("send");
    third.set_read_timeout(Some(Duration::from_millis(700))).expect("timeout");
    let mut buf = [0u8; 64];
    let waited = third.read(&mut buf);
    assert!(waited.is_err(), "the third connection was served at once: {waited:?}");
    drop(first);
    let (bytes, _) = read_until_closed(&mut third);
    let response = String::from_utf8_lossy(&bytes).into_owned();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.ends_with("\r\n\r\n{\"status\":\"ok\"}"), "{response}");
    let (exit, _) = served.stop();
    assert!(exit.success());
}

/// A store that fails in the middle of a command (its log overwritten in the folder after the
/// server opened it): the tool answer names a request id and no server path; the log has the
/// detail under that id.
#[test]
fn a_store_failure_during_a_command_is_coarse_for_the_tenant() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let store = dir.path().join("store");
    let url = format!("file://{}", store.display());
    let passphrase = "correct horse battery staple";
    let init = run(memfs()
        .args(["--store", &url, "--namespace", "alice", "init"])
        .args(["--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"])
        .env("MEMFS_PASSPHRASE", passphrase));
    assert!(init.status.success(), "{}", text(&init.stderr));
    let mut exec = memfs()
        .args(["--store", &url, "--namespace", "alice", "exec"])
        .env("MEMFS_PASSPHRASE", passphrase)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn exec");
    exec.stdin
        .take()
        .expect("stdin")
        .write_all(b"{\"command\":\"create\",\"path\":\"/memories/a.md\",\"file_text\":\"kept\"}\n")
        .expect("write");
    assert!(exec.wait_with_output().expect("exec").status.success());
    let tokens = tokens_file(dir.path(), &format!("alice {ALICE}\n"), 0o600);
    let served = serve(
        memfs()
            .args(["--store", &url, "serve", "--http", "127.0.0.1:0", "--tokens"])
            .arg(&tokens)
            .env("MEMFS_PASSPHRASE", passphrase),
    );
    let (status, _) = served.post(ALICE, r#"{"command":"view","path":"/memories"}"#);
    assert_text("status", &status, "HTTP/1.1 200 OK");
    let segment = store.join("ns/alice/log/0000000000000001");
    std::fs::write(&segment, b"garbage").expect("damage the log");
    let (head, body) = served.post_full(ALICE, r#"{"command":"view","path":"/memories/a.md"}"#);
    let id = header(&head, "x-request-id").expect("x-request-id").to_owned();
    assert_text(
        "body",
        &body,
        &format!(
            r#"{{"content":"memfs: the store failed while running this command (request id {id}); the server's log has the detail","is_error":true}}"#
        ),
    );
    let log = served.log.clone();
    let (exit, _) = served.stop();
    assert!(exit.success());
    let log = log.lock().unwrap().clone();
    let failure = log.iter().find(|l| l.starts_with("memfs: store error ")).expect("a store error line");
    assert!(failure.contains(&format!(" request={id} ")), "{failure}");
    assert_text(
        "store error",
        &mask(failure),
        &format!(
            "memfs: store error TIME request=ID namespace=alice: store {url} (namespace alice): storage read of head failed: Generic LogStore error: {}: shorter (7 bytes) than a segment header (16 bytes)",
            segment.display()
        ),
    );
}

/// On S3 (moto): a namespace with a token but no store in the bucket. The tenant's answer names
/// a request id, not the bucket; the server's log has the detail. Skipped without
/// `scripts/emulators.sh` unless `MEMFS_TEST_CLOUD=required`.
#[test]
fn on_s3_a_store_failure_is_coarse_for_the_tenant() {
    let (Ok(endpoint), Ok(bucket)) = (std::env::var("MEMFS_TEST_S3_ENDPOINT"), std::env::var("MEMFS_TEST_S3_BUCKET"))
    else {
        assert_ne!(std::env::var("MEMFS_TEST_CLOUD").as_deref(), Ok("required"), "MEMFS_TEST_S3_ENDPOINT is not set");
        eprintln!("skipping S3: MEMFS_TEST_S3_ENDPOINT is not set (scripts/emulators.sh sets it)");
        return;
    };
    let mut id = [0u8; 8];
    getrandom::fill(&mut id).unwrap();
    let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let url = format!("s3://{bucket}/serve/{id}");
    let env = [
        ("AWS_ENDPOINT", endpoint.as_str()),
        ("AWS_ALLOW_HTTP", "true"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ACCESS_KEY_ID", "test"),
        ("AWS_SECRET_ACCESS_KEY", "test"),
        ("MEMFS_PASSPHRASE", "correct horse battery staple"),
    ];
    let init = run(memfs()
        .args(["--store", &url, "--namespace", "alice", "init"])
        .args(["--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"])
        .envs(env));
    assert!(init.status.success(), "{}", text(&init.stderr));
    let dir = tempfile::tempdir().expect("a temporary folder");
    let tokens = tokens_file(dir.path(), &format!("alice {ALICE}\nbob {BOB}\n"), 0o600);
    let served =
        serve(memfs().args(["--store", &url, "serve", "--http", "127.0.0.1:0", "--tokens"]).arg(&tokens).envs(env));
    let (status, _) = served.post(ALICE, r#"{"command":"view","path":"/memories"}"#);
    assert_text("alice", &status, "HTTP/1.1 200 OK");
    let (head, body) = served.post_full(BOB, r#"{"command":"view","path":"/memories"}"#);
    let request = header(&head, "x-request-id").expect("x-request-id").to_owned();
    assert_text(
        "body",
        &body,
        &format!(
            r#"{{"error":"cannot open the store of this token's namespace (request id {request}); the server's log has the detail"}}"#
        ),
    );
    let log = served.log.clone();
    let (exit, _) = served.stop();
    assert!(exit.success());
    let log = log.lock().unwrap().clone();
    let failure = log.iter().find(|l| l.starts_with("memfs: store error ")).expect("a store error line");
    assert!(failure.contains(&format!(" request={request} ")), "{failure}");
    assert_text(
        "store error",
        &mask(failure),
        &format!(
            "memfs: store error TIME request=ID namespace=bob: no memfs store at {url} (namespace bob) yet: create one with `memfs init`"
        ),
    );
}

/// A server whose stderr has gone (its terminal closed, the pipe's reader dead) still stops on
/// SIGTERM: the words it has for stderr are dropped, not a panic in the task that waits for the
/// signal (which would leave the server running).
#[test]
fn stops_on_sigterm_with_its_stderr_gone() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let url = format!("file://{}", dir.path().join("store").display());
    let tokens = tokens_file(dir.path(), &format!("alice {ALICE}\n"), 0o600);
    let mut child = memfs()
        .args(["--store", &url, "serve", "--http", "127.0.0.1:0", "--create-namespaces", "--tokens"])
        .arg(&tokens)
        .env("MEMFS_PASSPHRASE", "correct horse battery staple")
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
    let mut line = String::new();
    while !line.starts_with("memfs: serving on ") {
        line.clear();
        assert_ne!(stderr.read_line(&mut line).expect("read stderr"), 0, "memfs serve did not start");
    }
    drop(stderr);
    let status = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status().expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("memfs serve still running 30 s after SIGTERM, its stderr closed");
        }
        thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
}
