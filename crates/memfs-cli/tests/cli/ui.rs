//! `memfs ui` (issue 21) through the real binary on 127.0.0.1 port 0, over plain sockets: who
//! is refused (no session, a used or wrong token, another host, another origin, a write
//! without the session's header), and that a refused request changes nothing; that whatever
//! the browser holds for the viewer's host (its cookies) opens nothing without the page's
//! session header (issue 41, A4); that connections that never finish their headers do not
//! lock the person out (A5); an edit over the version it started from, and one over a version
//! an agent replaced meanwhile (409, nothing overwritten); each checked through `memfs cat`
//! and `memfs log --json`. The page itself is driven in a real browser by tests/ui
//! (scripts/test-ui.sh).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::flood::{assert_all_closed, in_shell, stall};
use crate::support::{assert_text, key_file_store, lines_of, memfs, run, succeeds, text};

fn exec(dir: &Path, store: &[String], actor: &str, lines: &str) -> String {
    succeeds("exec", &run(memfs(dir).args(store).args(["--actor", actor, "exec"]), lines))
}

/// A running `memfs ui` and the address it printed.
struct Ui {
    child: Child,
    addr: String,
    token: String,
}

/// A test that fails stops its server all the same.
impl Drop for Ui {
    fn drop(&mut self) {
        // After `stop` the child is gone already: nothing to do.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Ui {
    fn start(dir: &Path, store: &[String]) -> Self {
        Self::start_with(dir, store, &[], "true")
    }

    /// `memfs ui` with `flags`, started by `sh` after `setup` (such as a `ulimit`).
    fn start_with(dir: &Path, store: &[String], flags: &[&str], setup: &str) -> Self {
        let mut cmd = memfs(dir);
        cmd.args(store).args(["--actor", "alice", "ui", "--http", "127.0.0.1:0"]).args(flags);
        let mut child = in_shell(&cmd, setup)
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
        socket.set_read_timeout(Some(Duration::from_secs(30))).expect("read timeout");
        let mut answer = Vec::new();
        socket.read_to_end(&mut answer).expect("the answer, within 30 s");
        let answer = text(&answer);
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
        (status.to_owned(), headers.to_lowercase(), body.to_owned())
    }

    /// The page's first request: the printed token traded for the session's secret.
    fn open_session(&self) -> String {
        let body = json!({"token": self.token}).to_string();
        let (status, headers, body) = self.send("POST", "/api/session", &[("content-type", "application/json")], &body);
        assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
        assert_eq!(header(&headers, "set-cookie"), None, "no cookie");
        let session =
            serde_json::from_str::<Value>(&body).expect("JSON")["session"].as_str().expect("a secret").to_owned();
        assert!(session.starts_with("memfs_") && session != self.token, "{session}");
        session
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
    let store = key_file_store(dir);
    exec(
        dir,
        &store,
        "agent-1",
        "{\"command\":\"create\",\"path\":\"/memories/notes.md\",\"file_text\":\"hello\\n\"}\n",
    );
    let ui = Ui::start(dir, &store);
    let port = ui.addr.strip_prefix("127.0.0.1:").unwrap().to_owned();
    let json = ("content-type", "application/json");

    // No session: the API. The page itself holds no secret (it reads the token from its
    // address), with the security headers.
    let (status, headers, body) = ui.send("GET", "/api/tree", &[], "");
    assert_text(
        "no session",
        &format!("{status} {body}"),
        r#"HTTP/1.1 401 Unauthorized {"error":"no session: open the address memfs ui printed"}"#,
    );
    assert_eq!(
        header(&headers, "content-security-policy"),
        Some("default-src 'self'; frame-ancestors 'none'; form-action 'self'")
    );
    let (status, headers, body) = ui.send("GET", "/", &[], "");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains(r#"<script src="/app.js" defer></script>"#), "{body}");
    assert_eq!(header(&headers, "set-cookie"), None);
    // A wrong token; the token as a cookie, a query or a session.
    let open = |token: &str| ui.send("POST", "/api/session", &[json], &json!({ "token": token }).to_string());
    let refused = r#"HTTP/1.1 403 Forbidden {"error":"this address was already used, or its token is wrong: stop memfs ui and start it again for a new one"}"#;
    let (status, _, body) = open(&format!("memfs_{}", "0".repeat(64)));
    assert_text("a wrong token", &format!("{status} {body}"), refused);
    for (path, headers) in [
        (format!("/api/tree?token={}", ui.token), vec![]),
        ("/api/tree".to_owned(), vec![("cookie", format!("memfs_ui={}", ui.token))]),
        ("/api/tree".to_owned(), vec![("x-memfs-session", ui.token.clone())]),
    ] {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (status, _, _) = ui.send("GET", &path, &headers, "");
        assert_eq!(status, "HTTP/1.1 401 Unauthorized", "{path} {headers:?}");
    }
    // A page of another site, or one that rebinds its name to loopback, with the token.
    let token = json!({"token": ui.token}).to_string();
    let (status, _, body) = ui.send("POST", "/api/session", &[json, ("origin", "http://evil.example")], &token);
    assert_text(
        "another origin",
        &format!("{status} {body}"),
        r#"HTTP/1.1 403 Forbidden {"error":"requests from other sites are refused"}"#,
    );
    let (status, _, body) = ui.send("POST", "/api/session", &[json, ("host", &format!("evil.example:{port}"))], &token);
    assert_text(
        "another host",
        &format!("{status} {body}"),
        r#"HTTP/1.1 421 Misdirected Request {"error":"this server answers only at the address memfs ui printed"}"#,
    );
    // Not JSON.
    let (status, _, _) = ui.send("POST", "/api/session", &[("content-type", "text/plain")], &token);
    assert_eq!(status, "HTTP/1.1 415 Unsupported Media Type");
    // The token, once: the session's secret, then the token no longer works.
    let session = ui.open_session();
    let (status, _, body) = open(&ui.token);
    assert_text("a second use of the token", &format!("{status} {body}"), refused);

    let with_session = [("x-memfs-session", session.as_str())];
    let (status, _, body) = ui.send("GET", "/api/session", &with_session, "");
    assert_eq!(status, "HTTP/1.1 200 OK");
    let info: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(info["actor"], "alice");
    assert_eq!(info.get("csrf"), None, "no second secret: the session's header is what no other site can send");
    // The session's secret from another host or origin is refused all the same.
    let (status, _, _) =
        ui.send("GET", "/api/tree", &[with_session[0], ("host", &format!("localhost.evil:{port}"))], "");
    assert_eq!(status, "HTTP/1.1 421 Misdirected Request");
    let (status, _, _) = ui.send("GET", "/api/tree", &[with_session[0], ("origin", "http://127.0.0.1:1")], "");
    assert_eq!(status, "HTTP/1.1 403 Forbidden");
    // Writes: without the session's header, with a wrong one, not JSON, from another site.
    let delete = r#"{"path":"/memories/notes.md"}"#;
    let no_session = r#"HTTP/1.1 401 Unauthorized {"error":"no session: open the address memfs ui printed"}"#;
    for (headers, expected) in [
        (vec![json], no_session),
        (vec![json, ("x-memfs-session", "memfs_guess")], no_session),
        (
            vec![with_session[0], ("content-type", "text/plain")],
            r#"HTTP/1.1 415 Unsupported Media Type {"error":"a write takes a JSON body (application/json)"}"#,
        ),
        (
            vec![with_session[0], json, ("origin", "http://evil.example")],
            r#"HTTP/1.1 403 Forbidden {"error":"requests from other sites are refused"}"#,
        ),
    ] {
        let (status, _, body) = ui.send("POST", "/api/delete", &headers, delete);
        assert_text("a refused write", &format!("{status} {body}"), expected);
    }
    assert_text("the file", &cat(dir, &store, "/memories/notes.md"), "hello\n");
    assert_eq!(commits(dir, &store), [("agent-1".to_owned(), "create".to_owned())]);

    // With all of it, the write is a commit by the session's actor.
    let (status, _, body) = ui.send("POST", "/api/delete", &[with_session[0], json], delete);
    assert_text(
        "the write",
        &format!("{status} {body}"),
        r#"HTTP/1.1 200 OK {"message":"Successfully deleted /memories/notes.md","ok":true}"#,
    );
    assert_eq!(commits(dir, &store).last().unwrap(), &("alice".to_owned(), "delete".to_owned()));
    ui.stop();
}

/// A4: a program serving pages on another port of 127.0.0.1 gets, from a browser that opened
/// the viewer, every cookie the browser keeps for the host 127.0.0.1 (cookies are scoped by
/// host, not port, and every loopback port is the same site). Here the attacker holds every
/// cookie any answer of the viewer set while its page opened its session, and replays them
/// as curl would (no `Origin`): nothing is read and nothing is written. The session is the
/// page's header, which only a script of the viewer's own origin (port included) can read.
#[test]
fn the_browsers_cookies_alone_open_nothing() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let dir = dir.path();
    let store = key_file_store(dir);
    exec(
        dir,
        &store,
        "agent-1",
        "{\"command\":\"create\",\"path\":\"/memories/notes.md\",\"file_text\":\"hello\\n\"}\n",
    );
    let ui = Ui::start(dir, &store);
    // What the browser does when the printed address is opened (both ways memfs ui has had of
    // opening a session: the address itself, then the page's exchange), keeping every cookie
    // set on the way.
    let mut jar: Vec<String> = Vec::new();
    let mut keep = |headers: &str| {
        jar.extend(
            headers
                .lines()
                .filter_map(|l| l.strip_prefix("set-cookie:"))
                .map(|c| c.trim().split(';').next().unwrap_or_default().to_owned()),
        );
    };
    let (_, headers, _) = ui.send("GET", &format!("/?token={}", ui.token), &[], "");
    keep(&headers);
    let body = json!({"token": ui.token}).to_string();
    let (_, headers, _) = ui.send("POST", "/api/session", &[("content-type", "application/json")], &body);
    keep(&headers);
    let cookie = jar.join("; ");

    // The attacker's replay: reads, the CSRF value of old, and a write.
    let with_cookie = [("cookie", cookie.as_str())];
    for path in ["/api/tree", "/api/session", "/api/file?path=/memories/notes.md", "/api/log", "/api/stats"] {
        let (status, _, body) = ui.send("GET", path, &with_cookie, "");
        assert_text(
            path,
            &format!("{status} {body}"),
            r#"HTTP/1.1 401 Unauthorized {"error":"no session: open the address memfs ui printed"}"#,
        );
    }
    let create = json!({"path": "/memories/planted.md", "text": "from another port"}).to_string();
    let (status, _, body) =
        ui.send("POST", "/api/create", &[with_cookie[0], ("content-type", "application/json")], &create);
    assert_text(
        "a write",
        &format!("{status} {body}"),
        r#"HTTP/1.1 401 Unauthorized {"error":"no session: open the address memfs ui printed"}"#,
    );
    let planted = run(memfs(dir).args(&store).args(["cat", "/memories/planted.md"]), "");
    assert_eq!(planted.status.code(), Some(1), "nothing planted: {}", text(&planted.stdout));
    assert_eq!(commits(dir, &store), [("agent-1".to_owned(), "create".to_owned())]);
    ui.stop();
}

/// A5: connections that never finish their headers, more than --max-connections and more
/// than the server may hold open (`ulimit -n 160`: the issue's 1,100 connections against the
/// usual limit of 1,024 files, scaled down), do not lock the person out: each is closed once
/// its --header-timeout runs out, and the page's requests are answered meanwhile. (Under
/// plain `axum::serve` every stalled connection stayed open and the page's timed out.)
#[test]
fn stalled_connections_are_cut_and_the_page_is_still_answered() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let dir = dir.path();
    let store = key_file_store(dir);
    exec(
        dir,
        &store,
        "agent-1",
        "{\"command\":\"create\",\"path\":\"/memories/notes.md\",\"file_text\":\"hello\\n\"}\n",
    );
    let flags = ["--max-connections", "100", "--header-timeout", "1s"];
    let ui = Ui::start_with(dir, &store, &flags, "ulimit -n 160");
    let started = Instant::now();
    let head = format!("GET /api/tree HTTP/1.1\r\nhost: {}\r\n", ui.addr);
    let stalled = stall(&ui.addr, 300, &head, started + Duration::from_secs(20));

    let session = ui.open_session();
    let (status, _, body) = ui.send("GET", "/api/file?path=/memories/notes.md", &[("x-memfs-session", &session)], "");
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert_eq!(serde_json::from_str::<Value>(&body).expect("JSON")["text"], "hello\n");
    assert!(started.elapsed() < Duration::from_secs(20), "answered after {:?}", started.elapsed());
    // 300 connections, 100 at a time, 1 s each: all closed well within 20 s.
    assert_all_closed(stalled, started + Duration::from_secs(20));
    ui.stop();
}

#[test]
fn an_edit_never_overwrites_what_an_agent_wrote_meanwhile() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let dir = dir.path();
    let store = key_file_store(dir);
    exec(
        dir,
        &store,
        "agent-1",
        "{\"command\":\"create\",\"path\":\"/memories/plan.md\",\"file_text\":\"one\\ntwo\\n\"}\n",
    );
    let ui = Ui::start(dir, &store);
    let session = ui.open_session();
    let write = [("x-memfs-session", session.as_str()), ("content-type", "application/json")];

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
    let store = key_file_store(dir);
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
