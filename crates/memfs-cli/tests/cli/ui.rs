//! `memfs ui` (issue 21) through the real binary on 127.0.0.1 port 0, over plain sockets: who
//! is refused (no session, a used or wrong token, another host, another origin, a write
//! without the page's CSRF header), and that a refused request changes nothing; an edit over
//! the version it started from, and one over a version an agent replaced meanwhile (409,
//! nothing overwritten); each checked through `memfs cat` and `memfs log --json`. The page
//! itself is driven in a real browser by tests/ui (scripts/test-ui.sh).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::{assert_text, lines_of, memfs, run, succeeds, text};

/// A store made by `memfs init` with a key file, in `dir`.
fn store(dir: &Path) -> Vec<String> {
    let args = vec![
        "--store".to_owned(),
        format!("file://{}", dir.join("store").display()),
        "--key-file".to_owned(),
        dir.join("key").display().to_string(),
    ];
    succeeds("init", &run(memfs(dir).args(&args).arg("init"), ""));
    args
}

fn exec(dir: &Path, store: &[String], actor: &str, lines: &str) -> String {
    succeeds("exec", &run(memfs(dir).args(store).args(["--actor", actor, "exec"]), lines))
}

/// A running `memfs ui` and the address it printed.
struct Ui {
    child: Child,
    addr: String,
    token: String,
}

impl Ui {
    fn start(dir: &Path, store: &[String]) -> Self {
        let mut child = memfs(dir)
            .args(store)
            .args(["--actor", "alice", "ui", "--http", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn memfs ui");
        let lines = lines_of(child.stdout.take().expect("stdout"));
        let url = lines.recv_timeout(Duration::from_secs(60)).expect("memfs ui prints its address");
        let rest = url.strip_prefix("http://").expect("an http address");
        let (addr, token) = rest.split_once("/?token=").expect("a token in the address");
        assert!(addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"), "{url}");
        assert!(token.starts_with("memfs_") && token.len() == 70, "{url}");
        Ui { child, addr: addr.to_owned(), token: token.to_owned() }
    }

    /// One request on its own connection: the status line, the headers and the body.
    fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> (String, String, String) {
        let mut socket = TcpStream::connect(&self.addr).expect("connect");
        let mut request =
            format!("{method} {path} HTTP/1.1\r\nconnection: close\r\ncontent-length: {}\r\n", body.len());
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            request.push_str(&format!("host: {}\r\n", self.addr));
        }
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(body);
        socket.write_all(request.as_bytes()).expect("send");
        let mut answer = Vec::new();
        socket.read_to_end(&mut answer).expect("read the answer");
        let answer = text(&answer);
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
        (status.to_owned(), headers.to_lowercase(), body.to_owned())
    }

    fn stop(mut self) {
        let sent = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status().expect("kill");
        assert!(sent.success());
        let status = self.child.wait().expect("wait for memfs ui");
        assert!(status.success(), "{status:?}");
    }
}

fn header<'h>(headers: &'h str, name: &str) -> Option<&'h str> {
    headers.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':').map(str::trim))
}

/// The commits as `memfs log --json` gives them, oldest first: (actor, command name).
fn commits(dir: &Path, store: &[String]) -> Vec<(String, String)> {
    let out = succeeds("log", &run(memfs(dir).args(store).args(["log", "--json"]), ""));
    let mut all: Vec<(String, String)> = out
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a JSON line");
            (v["actor"].as_str().unwrap().to_owned(), v["command"]["command"].as_str().unwrap().to_owned())
        })
        .collect();
    all.reverse();
    all
}

fn cat(dir: &Path, store: &[String], path: &str) -> String {
    succeeds("cat", &run(memfs(dir).args(store).args(["cat", path]), ""))
}

#[test]
fn strangers_are_refused_and_change_nothing() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let dir = dir.path();
    let store = store(dir);
    exec(
        dir,
        &store,
        "agent-1",
        "{\"command\":\"create\",\"path\":\"/memories/notes.md\",\"file_text\":\"hello\\n\"}\n",
    );
    let ui = Ui::start(dir, &store);
    let port = ui.addr.strip_prefix("127.0.0.1:").unwrap().to_owned();

    // No session: the API and the page.
    let (status, headers, body) = ui.send("GET", "/api/tree", &[], "");
    assert_text(
        "no cookie",
        &format!("{status} {body}"),
        r#"HTTP/1.1 401 Unauthorized {"error":"no session: open the address memfs ui printed"}"#,
    );
    assert_eq!(
        header(&headers, "content-security-policy"),
        Some("default-src 'self'; frame-ancestors 'none'; form-action 'self'")
    );
    let (status, _, body) = ui.send("GET", "/", &[], "");
    assert_eq!(status, "HTTP/1.1 401 Unauthorized");
    assert!(body.contains("No session. Open the address"), "{body}");
    // A wrong token.
    let wrong = format!("/?token=memfs_{}", "0".repeat(64));
    let (status, _, _) = ui.send("GET", &wrong, &[], "");
    assert_eq!(status, "HTTP/1.1 403 Forbidden");
    // A page of another site, or one that rebinds its name to loopback, with the token.
    let with_token = format!("/?token={}", ui.token);
    let (status, _, body) = ui.send("GET", &with_token, &[("origin", "http://evil.example")], "");
    assert_text(
        "another origin",
        &format!("{status} {body}"),
        r#"HTTP/1.1 403 Forbidden {"error":"requests from other sites are refused"}"#,
    );
    let (status, _, body) = ui.send("GET", &with_token, &[("host", &format!("evil.example:{port}"))], "");
    assert_text(
        "another host",
        &format!("{status} {body}"),
        r#"HTTP/1.1 421 Misdirected Request {"error":"this server answers only at the address memfs ui printed"}"#,
    );
    // The token, once: a session cookie, then the token no longer works.
    let (status, headers, _) = ui.send("GET", &with_token, &[], "");
    assert_eq!(status, "HTTP/1.1 303 See Other");
    assert_eq!(header(&headers, "location"), Some("/"));
    let set = header(&headers, "set-cookie").expect("a session cookie").to_owned();
    let cookie = set.split(';').next().unwrap().to_owned();
    assert!(set.ends_with("; httponly; samesite=strict; path=/"), "{set}");
    assert!(!cookie.contains(&ui.token), "the cookie is not the token");
    let (status, _, _) = ui.send("GET", &with_token, &[], "");
    assert_eq!(status, "HTTP/1.1 403 Forbidden", "a second use of the token");
    // The token is no session.
    let (status, _, _) = ui.send("GET", "/api/tree", &[("cookie", &format!("memfs_ui={}", ui.token))], "");
    assert_eq!(status, "HTTP/1.1 401 Unauthorized");

    let with_cookie = [("cookie", cookie.as_str())];
    let (status, _, body) = ui.send("GET", "/api/session", &with_cookie, "");
    assert_eq!(status, "HTTP/1.1 200 OK");
    let session: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(session["actor"], "alice");
    let csrf = session["csrf"].as_str().expect("csrf").to_owned();
    // The session's cookie from another host or origin is refused all the same.
    let (status, _, _) =
        ui.send("GET", "/api/tree", &[with_cookie[0], ("host", &format!("localhost.evil:{port}"))], "");
    assert_eq!(status, "HTTP/1.1 421 Misdirected Request");
    let (status, _, _) = ui.send("GET", "/api/tree", &[with_cookie[0], ("origin", "http://127.0.0.1:1")], "");
    assert_eq!(status, "HTTP/1.1 403 Forbidden");
    // Writes: without the CSRF header, with a wrong one, not JSON; a cross-site form.
    let delete = r#"{"path":"/memories/notes.md"}"#;
    let json = ("content-type", "application/json");
    for (headers, expected) in [
        (
            vec![with_cookie[0], json],
            r#"HTTP/1.1 403 Forbidden {"error":"a write needs the page's x-memfs-csrf header"}"#,
        ),
        (
            vec![with_cookie[0], json, ("x-memfs-csrf", "memfs_guess")],
            r#"HTTP/1.1 403 Forbidden {"error":"a write needs the page's x-memfs-csrf header"}"#,
        ),
        (
            vec![with_cookie[0], ("x-memfs-csrf", &csrf), ("content-type", "text/plain")],
            r#"HTTP/1.1 415 Unsupported Media Type {"error":"a write takes a JSON body (application/json)"}"#,
        ),
        (
            vec![with_cookie[0], json, ("x-memfs-csrf", &csrf), ("origin", "http://evil.example")],
            r#"HTTP/1.1 403 Forbidden {"error":"requests from other sites are refused"}"#,
        ),
    ] {
        let (status, _, body) = ui.send("POST", "/api/delete", &headers, delete);
        assert_text("a refused write", &format!("{status} {body}"), expected);
    }
    assert_text("the file", &cat(dir, &store, "/memories/notes.md"), "hello\n");
    assert_eq!(commits(dir, &store), [("agent-1".to_owned(), "create".to_owned())]);

    // With all of it, the write is a commit by the session's actor.
    let (status, _, body) = ui.send("POST", "/api/delete", &[with_cookie[0], json, ("x-memfs-csrf", &csrf)], delete);
    assert_text(
        "the write",
        &format!("{status} {body}"),
        r#"HTTP/1.1 200 OK {"message":"Successfully deleted /memories/notes.md","ok":true}"#,
    );
    assert_eq!(commits(dir, &store).last().unwrap(), &("alice".to_owned(), "delete".to_owned()));
    ui.stop();
}

#[test]
fn an_edit_never_overwrites_what_an_agent_wrote_meanwhile() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let dir = dir.path();
    let store = store(dir);
    exec(
        dir,
        &store,
        "agent-1",
        "{\"command\":\"create\",\"path\":\"/memories/plan.md\",\"file_text\":\"one\\ntwo\\n\"}\n",
    );
    let ui = Ui::start(dir, &store);
    let (_, headers, _) = ui.send("GET", &format!("/?token={}", ui.token), &[], "");
    let cookie = header(&headers, "set-cookie").unwrap().split(';').next().unwrap().to_owned();
    let (_, _, body) = ui.send("GET", "/api/session", &[("cookie", &cookie)], "");
    let csrf = serde_json::from_str::<Value>(&body).unwrap()["csrf"].as_str().unwrap().to_owned();
    let write = [("cookie", cookie.as_str()), ("content-type", "application/json"), ("x-memfs-csrf", csrf.as_str())];

    let (_, _, body) = ui.send("GET", "/api/file?path=/memories/plan.md", &[write[0]], "");
    let file: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(file["text"], "one\ntwo\n");
    let opened = file["version"].as_str().unwrap().to_owned();

    // The person edits; meanwhile the agent changes the file.
    exec(
        dir,
        &store,
        "agent-1",
        "{\"command\":\"str_replace\",\"path\":\"/memories/plan.md\",\"old_str\":\"two\",\"new_str\":\"TWO\"}\n",
    );
    let edit = |base: &str, text: &str| {
        let body = serde_json::json!({"path": "/memories/plan.md", "base": base, "text": text}).to_string();
        let (status, _, body) = ui.send("POST", "/api/edit", &write, &body);
        (status, serde_json::from_str::<Value>(&body).unwrap())
    };
    let (status, refused) = edit(&opened, "one\ntwo\nthree\n");
    assert_eq!(status, "HTTP/1.1 409 Conflict");
    assert_eq!(refused["error"], "the file changed since you opened it");
    assert_eq!(refused["current"], "one\nTWO\n");
    assert_text("nothing overwritten", &cat(dir, &store, "/memories/plan.md"), "one\nTWO\n");

    // Merged against the version the conflict named: saved, as a str_replace by alice.
    let (status, saved) = edit(refused["version"].as_str().unwrap(), "one\nTWO\nthree\n");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        saved["message"],
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tone\n     2\tTWO\n     3\tthree\n     4\t"
    );
    assert_text("merged", &cat(dir, &store, "/memories/plan.md"), "one\nTWO\nthree\n");
    let log = commits(dir, &store);
    assert_eq!(log.last().unwrap(), &("alice".to_owned(), "str_replace".to_owned()));
    assert_eq!(log.len(), 3);
    // The version the save answered is the one it wrote: an edit from it goes through.
    let (status, _) = edit(saved["version"].as_str().unwrap(), "one\n");
    assert_eq!(status, "HTTP/1.1 200 OK");
    // A file deleted meanwhile: 409, and nothing comes back.
    exec(dir, &store, "agent-1", "{\"command\":\"delete\",\"path\":\"/memories/plan.md\"}\n");
    let (status, refused) = edit(saved["version"].as_str().unwrap(), "again\n");
    assert_eq!(status, "HTTP/1.1 409 Conflict");
    assert_eq!(refused["error"], "the file was deleted or moved since you opened it");
    assert_eq!(commits(dir, &store).len(), 5);
    ui.stop();
}

#[test]
fn refuses_an_address_the_page_cannot_guard() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let dir = dir.path();
    let store = store(dir);
    for (addr, expected) in [
        (
            "0.0.0.0:0",
            "memfs: --http 0.0.0.0:0: name the one address the browser will use (the page refuses requests that name another host)\n",
        ),
        (
            "192.0.2.1:0",
            "memfs: --http 192.0.2.1:0: 192.0.2.1 is not a loopback address. memfs ui has no TLS, so the session and the memories would cross the network in clear; put it behind a TLS-terminating proxy and pass --allow-remote\n",
        ),
    ] {
        let out = run(memfs(dir).args(&store).args(["ui", "--http", addr]), "");
        assert_eq!(out.status.code(), Some(1), "{addr}");
        assert_text(addr, &text(&out.stderr), expected);
        assert_text("stdout", &text(&out.stdout), "");
    }
}
