//! The attacker's side of the connection-flood tests (issue 41, A5) that `ui.rs` and `mcp.rs`
//! run against their servers: connections that never finish their headers; and a server
//! started under a `ulimit`.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

/// `cmd` run by `sh` after `setup` (such as `ulimit -n 160`), as the same process (`exec`):
/// its arguments, environment and folder kept.
pub(crate) fn in_shell(cmd: &Command, setup: &str) -> Command {
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(format!("{setup} && exec \"$0\" \"$@\"")).arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => shell.env(k, v),
            None => shell.env_remove(k),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        shell.current_dir(dir);
    }
    shell
}

/// `count` connections to `addr`, each sending `head` (the start of a request's headers, never
/// finished) and then nothing, as an attacker holding the server's connections does. Each
/// must be taken (accepted, or queued by the kernel) before `deadline`: a server that holds
/// every connection it accepted and can accept no more fills its queue, and the next
/// connection waits for ever.
pub(crate) fn stall(addr: &str, count: usize, head: &str, deadline: Instant) -> Vec<TcpStream> {
    let addr: std::net::SocketAddr = addr.parse().expect("an IP:PORT");
    (0..count)
        .map(|i| {
            let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
            let mut socket = TcpStream::connect_timeout(&addr, left).unwrap_or_else(|e| {
                panic!("connection {i} of {count} was not taken in time ({e}): the server takes no more")
            });
            // Written into the socket's buffer: it goes out once the server accepts.
            socket.write_all(head.as_bytes()).expect("half a head");
            socket
        })
        .collect()
}

/// Asserts that the server closed every one of `stalled` (sending nothing) by `deadline`.
pub(crate) fn assert_all_closed(stalled: Vec<TcpStream>, deadline: Instant) {
    let count = stalled.len();
    let mut open = 0;
    for mut socket in stalled {
        let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
        socket.set_read_timeout(Some(left)).expect("read timeout");
        let mut buf = [0u8; 256];
        match socket.read(&mut buf) {
            Ok(0) => {}
            Ok(n) => panic!("a stalled connection got an answer: {:?}", String::from_utf8_lossy(&buf[..n])),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
            Err(_) => open += 1,
        }
    }
    assert_eq!(open, 0, "{open} of {count} stalled connections were still open at the deadline");
}
