//! Words that several commands' reports share: counts with their noun, commit references, and
//! the change lines of a new commit.

use std::fmt::Write as _;

use memfs::history::CommitRecord;

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

/// One indented line per change, as `memfs log` writes them: `  A /memories/a.md`.
pub(crate) fn change_lines(out: &mut String, changes: &[memfs::Change]) {
    for change in changes {
        let _ = writeln!(out, "  {}", memfs::history::change_line(change));
    }
}
