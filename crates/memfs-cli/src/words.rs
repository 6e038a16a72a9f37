//! Words that several commands' reports share: times, one-line text, counts with their noun,
//! commit references, and the change lines of a commit.

use std::fmt::Write as _;

use jiff::Timestamp;
use memfs::Change;
use memfs::history::CommitRecord;

/// A commit time as `log` shows it: RFC 3339 in UTC, to the second (the fraction is dropped).
pub(crate) fn format_time(time_ms: u64) -> String {
    let ms = i64::try_from(time_ms).unwrap_or(i64::MAX);
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Err(_) => format!("{time_ms}ms"),
    }
}

/// `s` with control characters (a newline in an actor name or a policy value) escaped, so
/// that one entry stays on its lines and cannot imitate another.
pub(crate) fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// `1 file`, `2 files`.
pub(crate) fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A span of kept commits: `0 commits`, `1 commit (@7)`, `3 commits (@5 to @7)`.
pub(crate) fn generations(n: u64, oldest: u64, newest: u64) -> String {
    match n {
        0 => plural(0, "commit", "commits"),
        1 => format!("1 commit (@{newest})"),
        n => format!("{n} commits (@{oldest} to @{newest})"),
    }
}

/// `@GEN (ID12)`.
pub(crate) fn commit_ref(c: &CommitRecord) -> String {
    format!("@{} ({})", c.generation, c.short_id())
}

/// A change as `log`, `restore`, `undo` and `import` show it: `A path`, `M path`, `D path` or
/// `R from -> to`.
pub(crate) fn change_line(change: &Change) -> String {
    match change {
        Change::Created { path } => format!("A {path}"),
        Change::Modified { path } => format!("M {path}"),
        Change::Deleted { path } => format!("D {path}"),
        Change::Renamed { from, to } => format!("R {from} -> {to}"),
    }
}

/// One indented line per change, as `memfs log` writes them: `  A /memories/a.md`.
pub(crate) fn change_lines(out: &mut String, changes: &[Change]) {
    for change in changes {
        let _ = writeln!(out, "  {}", change_line(change));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_times() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(1_748_779_200_123), "2025-06-01T12:00:00Z");
    }
}
