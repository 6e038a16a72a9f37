//! Value parsers of flags that several subcommands take. Their refusals are fixed text
//! ([`Refused`]), so an argument error never quotes what was typed.

use std::time::Duration;

use memfs::Dialect;

use crate::parse_error::Refused;

/// A dialect name (`exec --dialect`, `mcp --dialect`).
pub(crate) fn parse_dialect(s: &str) -> Result<Dialect, Refused> {
    s.parse().map_err(|_| Refused("expected `spec`, `python-sdk` or `typescript-sdk`"))
}

/// A memory budget (`--cache-memory`): a size as the policy writes one (`64MiB`, `512MB`), at
/// least 1MiB.
pub(crate) fn parse_memory(s: &str) -> Result<usize, Refused> {
    memfs::parse_bytes(s)
        .filter(|&n| n >= 1 << 20)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(Refused("expected a size of at least 1MiB, such as 64MiB or 512MiB"))
}

/// A size of at least one byte, such as `64MiB` or `4096` (`exec --max-line-bytes`).
pub(crate) fn parse_line_bound(s: &str) -> Result<usize, Refused> {
    memfs::parse_bytes(s)
        .filter(|&n| n >= 1)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or(Refused("expected a size such as 64MiB, 512MiB or 4096 (bytes)"))
}

/// `30s`, `500ms`, `2m` (`--max-staleness`, `serve --request-timeout`): the grammar of a cloud
/// store's `timeout=` option, parsed by the same function so that one duration reads the same
/// on the command line and in a `--store-option`. (`humantime` would accept more, `1h 30m`,
/// which the store options refuse.)
pub(crate) fn parse_duration(s: &str) -> Result<Duration, Refused> {
    memfs_store::cloud::parse_duration(s).ok_or(Refused("expected a duration such as 30s, 500ms or 2m"))
}
