//! The long-running servers (`memfs serve`, `memfs mcp`, `memfs ui`) hold the store's keys for
//! as long as they run: none of them leaves a core dump of its memory (issue 41, criterion 6).
//! Linux only: it reads `/proc`.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc::channel;
use std::thread;
use std::time::{Duration, Instant};

use crate::flood::in_shell;
use crate::support::{key_file_store, memfs};

/// The fields of a `/proc/PID/limits` line after its name, such as `["0", "0", "bytes"]`.
fn limit(pid: u32, name: &str) -> Vec<String> {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("/proc/PID/limits");
    let line = limits.lines().find_map(|l| l.strip_prefix(name)).unwrap_or_else(|| panic!("{name} in {limits}"));
    line.split_whitespace().map(str::to_owned).collect()
}

/// The real user and group ids of a process (`Uid:` and `Gid:` of `/proc/PID/status`).
fn ids(pid: u32) -> (u32, u32) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let id = |key: &str| -> u32 {
        let line = status.lines().find_map(|l| l.strip_prefix(key)).expect("an id line");
        line.split_whitespace().next().expect("the real id").parse().expect("a number")
    };
    (id("Uid:"), id("Gid:"))
}

/// Criterion 6: each server, started with core dumps allowed (`ulimit -c unlimited`), turns
/// them off before it unlocks the store: its core file size limit is 0 (soft and hard), it is
/// not dumpable (Linux shows the `/proc/PID` files of such a process as root's, whatever its
/// own ids), and killed by a signal that dumps core (SIGQUIT) it leaves no core file and the
/// kernel reports none. As root, the server runs under another group, so that its own ids are
/// not root's and the owner of its `/proc` files tells the two states apart.
#[test]
fn the_servers_leave_no_core_dump() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::ExitStatusExt;

    let dir = tempfile::tempdir().expect("a temporary folder");
    let dir = dir.path();
    let store = key_file_store(dir);
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "alice alice-token-0123456789abcdef0123456789\n").expect("tokens");
    std::fs::set_permissions(&tokens, std::os::unix::fs::PermissionsExt::from_mode(0o600)).expect("chmod");
    let tokens = tokens.display().to_string();
    let key = dir.join("key").display().to_string();
    let serve_url = format!("file://{}", dir.join("served").display());
    let servers: [(&str, Vec<&str>, &str); 4] = [
        (
            "serve",
            vec!["--store", &serve_url, "--key-file", &key, "serve", "--http", "127.0.0.1:0", "--create-namespaces"],
            "memfs: serving on ",
        ),
        ("mcp --http", vec!["mcp", "--http", "127.0.0.1:0", "--tokens", &tokens], "memfs: MCP over streamable HTTP"),
        ("mcp (stdio)", vec!["mcp"], ""),
        ("ui", vec!["ui", "--http", "127.0.0.1:0"], "memfs ui: "),
    ];
    let root = running_as_root();
    for (name, args, ready) in servers {
        let work = dir.join(name.replace(' ', "-").replace(['(', ')'], ""));
        std::fs::create_dir_all(&work).expect("a folder for its core file");
        let mut cmd = memfs(dir);
        if name != "serve" {
            cmd.args(&store);
        }
        cmd.args(&args).env("MEMFS_SERVE_TOKENS", "alice alice-token-0123456789abcdef0123456789");
        cmd.current_dir(&work);
        let mut cmd = in_shell(&cmd, "ulimit -c unlimited");
        if root {
            let mut setpriv = Command::new("setpriv");
            setpriv.args(["--regid", "65534", "--clear-groups"]).arg(cmd.get_program()).args(cmd.get_args());
            for (k, v) in cmd.get_envs() {
                match v {
                    Some(v) => setpriv.env(k, v),
                    None => setpriv.env_remove(k),
                };
            }
            setpriv.current_dir(&work);
            cmd = setpriv;
        }
        // stdin stays open: `memfs mcp` on stdio serves until its end.
        let child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
        let mut child = Stopped(child);
        let child = &mut child.0;
        let pid = child.id();
        let stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let (tx, rx) = channel();
        thread::spawn(move || {
            for line in stderr.lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        if ready.is_empty() {
            // On stdio nothing is printed: an answered `initialize` says it runs.
            let stdin = child.stdin.as_mut().expect("stdin");
            let hello = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
            stdin.write_all(format!("{hello}\n").as_bytes()).expect("initialize");
            let mut answer = String::new();
            BufReader::new(child.stdout.as_mut().expect("stdout")).read_line(&mut answer).expect("an answer");
            assert!(answer.contains("\"result\""), "{name}: {answer}");
        } else {
            let started = Instant::now();
            loop {
                let line = rx.recv_timeout(Duration::from_secs(60)).unwrap_or_else(|_| panic!("{name} starts"));
                if line.starts_with(ready) {
                    break;
                }
                assert!(started.elapsed() < Duration::from_secs(60), "{name}: {line}");
            }
        }

        assert_eq!(limit(pid, "Max core file size"), ["0", "0", "bytes"], "{name}: RLIMIT_CORE");
        let own = ids(pid);
        assert_ne!(own, (0, 0), "{name}: its own ids must not be root's for the next check to mean anything");
        let proc_file = std::fs::metadata(format!("/proc/{pid}/status")).expect("stat /proc/PID/status");
        assert_eq!((proc_file.uid(), proc_file.gid()), (0, 0), "{name}: not dumpable (its ids are {own:?})");

        let killed = Command::new("kill").args(["-QUIT", &pid.to_string()]).status().expect("kill");
        assert!(killed.success());
        let status = child.wait().expect("wait");
        assert_eq!(status.signal(), Some(3), "{name}: killed by SIGQUIT: {status:?}");
        assert!(!status.core_dumped(), "{name}: the kernel dumped its core");
        let left: Vec<_> =
            std::fs::read_dir(&work).expect("its folder").map(|e| e.expect("entry").file_name()).collect();
        assert!(left.is_empty(), "{name}: files left in its folder: {left:?}");
    }
}

/// A server that a failing test stops all the same (killed; after a clean end, nothing to do).
struct Stopped(std::process::Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether the tests run as root (the owner of a file they create).
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::NamedTempFile::new().expect("a probe file");
    probe.as_file().metadata().expect("its metadata").uid() == 0
}
