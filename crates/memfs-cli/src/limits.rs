//! The connection limits of the servers (`memfs serve`, `memfs mcp --http`, `memfs ui`): one
//! set of flags, with one set of defaults, flattened into each command's arguments so that the
//! three cannot drift apart.

use std::time::Duration;

use clap::Args;
use memfs::http::Limits;

use crate::parse_error::Refused;

/// Shown in each server's `--help`, after its other text.
pub(crate) const HELP: &str = "\
Limits of HTTP connections: at most --max-connections at once (more wait to be accepted); a
request's headers must arrive within --header-timeout of the connection's start or the
previous answer (so an idle keep-alive connection is closed after it); a connection that
moves no byte for --idle-timeout (a body stalled half-way) is closed, unless a command is
running on the store; a request that takes longer than --request-timeout is answered 503.";

/// The connection limit and timeouts.
#[derive(Debug, Args)]
pub(crate) struct LimitArgs {
    /// The most connections open at once; more wait to be accepted.
    #[arg(long, value_name = "N", default_value_t = Limits::DEFAULT_MAX_CONNECTIONS,
          value_parser = parse_max_connections)]
    pub(crate) max_connections: usize,

    /// How long a client has to send a request's headers (from the connection's start or the
    /// previous answer), such as 10s or 500ms.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_timeout)]
    pub(crate) header_timeout: Duration,

    /// Close a connection that moves no byte for this long (a body stalled half-way), unless a
    /// command is running on the store.
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_timeout)]
    pub(crate) idle_timeout: Duration,

    /// Answer 503 to a request not answered within this long (reading its body and running
    /// its command).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_timeout)]
    pub(crate) request_timeout: Duration,
}

impl LimitArgs {
    /// The limits the flags give.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max_connections: self.max_connections,
            header_timeout: self.header_timeout,
            idle_timeout: self.idle_timeout,
            request_timeout: self.request_timeout,
        }
    }
}

fn parse_max_connections(s: &str) -> Result<usize, Refused> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(Refused("expected a number of connections greater than 0, such as 256")),
    }
}

fn parse_timeout(s: &str) -> Result<Duration, Refused> {
    crate::value::parse_duration(s).and_then(|d| {
        if d.is_zero() { Err(Refused("expected a duration greater than 0, such as 30s, 500ms or 2m")) } else { Ok(d) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The defaults of the flags are the library's.
    #[test]
    fn the_defaults_are_the_librarys() {
        #[derive(clap::Parser)]
        struct Command {
            #[command(flatten)]
            limits: LimitArgs,
        }
        let parsed = <Command as clap::Parser>::try_parse_from(["memfs"]).expect("no flags");
        assert_eq!(parsed.limits.limits(), Limits::default());
    }
}
