//! Text algorithms of the memory tool, reproducing the SDKs step by step: the Python SDK's
//! (`anthropic==2.10.0`, `_beta_builtin_memory_tool.py`), which the `spec` dialect follows too,
//! and where they differ the TypeScript SDK's (`@anthropic-ai/sdk@1.12.0`,
//! `tools/memory/node.ts`). Files are read as UTF-8 with no newline translation: a `\r` stays
//! part of its line.

use crate::dialect::Dialect;

/// Lines above this count make `view` refuse the file (`MAX_LINES` in the SDK).
pub const MAX_LINES: usize = 999_999;

/// Width of the right-aligned line number (`len(str(MAX_LINES))`).
pub const LINE_NUMBER_WIDTH: usize = 6;

/// The lines `view` shows: `content.split("\n")`, so a trailing newline yields a final empty
/// line and an empty file one empty line.
pub fn view_lines(content: &str) -> Vec<&str> {
    content.split('\n').collect()
}

/// Formats `lines` as `{n:>6}\t{line}` joined by `\n`, numbering from `first`.
pub fn numbered(lines: &[&str], first: usize) -> String {
    let mut out = String::with_capacity(lines.iter().map(|l| l.len() + LINE_NUMBER_WIDTH + 2).sum());
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("{:>width$}\t", first + i, width = LINE_NUMBER_WIDTH));
        out.push_str(line);
    }
    out
}

/// Which lines a `view_range` selects, as a half-open index range plus the first line number.
///
/// Applied only when the range has exactly two elements (otherwise the whole file). The start
/// index is `max(1, start) - 1`; the end is the line count for `-1`, else `end` itself, applied
/// with Python slice semantics: a negative end counts from the back, everything clamps, and a
/// start past the end selects nothing. No range is ever an error.
pub fn select(len: usize, view_range: Option<&[i128]>) -> (usize, usize) {
    let Some(&[start, end]) = view_range else { return (0, len) };
    let len_i = i128::try_from(len).unwrap_or(i128::MAX);
    let start = (start.max(1) - 1).min(len_i);
    let end = if end == -1 { len_i } else { end };
    let end = if end < 0 { (end + len_i).max(0) } else { end.min(len_i) };
    // Both values are now within 0..=len.
    let (start, end) = (start as usize, end as usize);
    (start, end.max(start))
}

/// Why a `str_replace` did not happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplaceError {
    /// `old_str` does not occur (in `typescript-sdk`: in no line).
    NotFound,
    /// `old_str` occurs more than once (counted without overlap; in `typescript-sdk`, in more
    /// than one line).
    Multiple {
        /// The 1-based line of each occurrence found with an overlapping search, duplicates
        /// kept (in `typescript-sdk`, each line holding one, once), up to the number asked for.
        lines: Vec<usize>,
        /// Occurrences (lines) found beyond those in `lines`.
        more: usize,
    },
}

/// Replaces the single occurrence of `old` in `content`. Returns the new content and the
/// 0-based line index where the match started. On several occurrences, the lines of the
/// first `keep` are returned and the rest only counted, so an error about a huge file stays
/// small in memory.
///
/// `typescript-sdk` counts lines, not occurrences: the lines of `content.split("\n")` that
/// contain `old`. One such line is a unique match, and its first occurrence is replaced even
/// when the line holds several; an `old` with a `\n` is in no line, so it never matches; the
/// error lists each line once.
pub fn replace_unique(
    content: &str,
    old: &str,
    new: &str,
    keep: usize,
    dialect: Dialect,
) -> Result<(String, usize), ReplaceError> {
    if dialect == Dialect::TypescriptSdk {
        return replace_in_one_line(content, old, new, keep);
    }
    // `str::matches` counts like Python's `str.count`: non-overlapping, and an empty pattern
    // matches at every character boundary (len + 1 times).
    let count = content.matches(old).take(2).count();
    match count {
        0 => Err(ReplaceError::NotFound),
        1 => {
            let pos = content.find(old).unwrap_or(0);
            let line = newlines(&content[..pos]);
            Ok((content.replacen(old, new, 1), line))
        }
        _ => {
            let (mut lines, mut more) = (Vec::new(), 0);
            let mut from = 0;
            // The line of the last match, and the byte offset it was counted up to. Counting
            // incrementally keeps this linear: recounting `content[..pos]` at every match is
            // quadratic, and an empty `old_str` matches at every character (a 200 KB file took
            // seconds).
            let (mut line, mut counted) = (1, 0);
            // Overlapping search: resume one character after each match start.
            while let Some(rel) = content[from..].find(old) {
                let pos = from + rel;
                if lines.len() < keep {
                    line += newlines(&content[counted..pos]);
                    counted = pos;
                    lines.push(line);
                } else {
                    more += 1;
                }
                match content[pos..].chars().next() {
                    Some(c) => from = pos + c.len_utf8(),
                    None => break,
                }
            }
            Err(ReplaceError::Multiple { lines, more })
        }
    }
}

/// [`replace_unique`] the TypeScript SDK's way: by the lines that contain `old`.
fn replace_in_one_line(content: &str, old: &str, new: &str, keep: usize) -> Result<(String, usize), ReplaceError> {
    let (mut first, mut lines, mut more) = (None, Vec::new(), 0);
    for (index, line) in content.split('\n').enumerate() {
        if line.contains(old) {
            first.get_or_insert(index);
            if lines.len() < keep {
                lines.push(index + 1);
            } else {
                more += 1;
            }
        }
    }
    match (first, lines.len() + more) {
        (None, _) => Err(ReplaceError::NotFound),
        // The one line holding `old` holds its first occurrence in the content.
        (Some(index), 1) => Ok((content.replacen(old, new, 1), index)),
        _ => Err(ReplaceError::Multiple { lines, more }),
    }
}

/// The snippet after a replacement: lines `max(0, idx-2)+1 ..= min(len, idx+3)` of the new
/// content split on `\n`, numbered.
pub fn snippet(new_content: &str, changed_line: usize) -> String {
    let lines = view_lines(new_content);
    let start = changed_line.saturating_sub(2);
    let end = lines.len().min(changed_line + 3);
    numbered(&lines[start..end.max(start)], start + 1)
}

/// The line count `insert` checks against: lines split on `\n`, without the empty tail a
/// trailing newline leaves (`_split_lines_keeping_cr`); in `typescript-sdk`, with it (plain
/// `split("\n")`: `"a\nb\n"` has 3 lines).
pub fn insert_line_count(content: &str, dialect: Dialect) -> usize {
    insert_lines(content, dialect).len()
}

fn insert_lines(content: &str, dialect: Dialect) -> Vec<&str> {
    let mut lines: Vec<&str> = content.split('\n').collect();
    if dialect != Dialect::TypescriptSdk && lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// Inserts `text`, with its trailing `\n`s stripped, as a new line at index `at`; joins with
/// `\n` and ends the file with a newline. Returns `Err(line_count)` when `at` is out of range.
///
/// `typescript-sdk` strips one trailing `\n` (`replace(/\n$/, "")`) and adds no newline: the
/// lines of [`insert_line_count`] joined with `\n`, so a file that ended with one still does
/// (the empty last line stays last) and one that did not still does not.
pub fn insert(content: &str, at: i128, text: &str, dialect: Dialect) -> Result<String, usize> {
    let mut lines = insert_lines(content, dialect);
    let n = lines.len();
    let at = usize::try_from(at).ok().filter(|&a| a <= n).ok_or(n)?;
    let ts = dialect == Dialect::TypescriptSdk;
    lines.insert(at, if ts { text.strip_suffix('\n').unwrap_or(text) } else { text.trim_end_matches('\n') });
    let mut out = lines.join("\n");
    if !ts && !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

fn newlines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: usize = usize::MAX;
    const PY: Dialect = Dialect::PythonSdk;
    const TS: Dialect = Dialect::TypescriptSdk;

    fn multiple(lines: &[usize]) -> ReplaceError {
        ReplaceError::Multiple { lines: lines.to_vec(), more: 0 }
    }

    #[test]
    fn view_range_edges_match_python_slices() {
        // "line1\nline2\nline3\n" has 4 view lines.
        let cases: [(&[i128], (usize, usize)); 10] = [
            (&[1, 2], (0, 2)),
            (&[2, -1], (1, 4)),
            (&[0, 1], (0, 1)),
            (&[-5, 2], (0, 2)),
            (&[3, 1], (2, 2)),
            (&[2, 100], (1, 4)),
            (&[10, 20], (4, 4)),
            (&[2, -2], (1, 2)),
            (&[1, -10], (0, 0)),
            (&[i128::from(i64::MIN), i128::from(u64::MAX)], (0, 4)),
        ];
        for (range, want) in cases {
            assert_eq!(select(4, Some(range)), want, "{range:?}");
        }
        assert_eq!(select(4, Some(&[2])), (0, 4));
        assert_eq!(select(4, Some(&[1, 2, 3])), (0, 4));
        assert_eq!(select(4, None), (0, 4));
    }

    #[test]
    fn replace_counts_like_python() {
        assert_eq!(replace_unique("aaa", "aa", "b", ALL, PY), Ok(("ba".into(), 0)));
        assert_eq!(replace_unique("aaaa", "aa", "b", ALL, PY), Err(multiple(&[1, 1, 1])));
        assert_eq!(replace_unique("ab ab\ncd", "ab", "X", ALL, PY), Err(multiple(&[1, 1])));
        assert_eq!(replace_unique("", "", "new", ALL, PY), Ok(("new".into(), 0)));
        assert_eq!(replace_unique("a\nb", "", "x", ALL, PY), Err(multiple(&[1, 1, 2, 2])));
        assert_eq!(replace_unique("é\né", "", "x", ALL, PY), Err(multiple(&[1, 1, 2, 2])));
        assert_eq!(replace_unique("x", "y", "z", ALL, PY), Err(ReplaceError::NotFound));
        assert_eq!(replace_unique("a\nb\nc$", "c$", "$1", ALL, PY), Ok(("a\nb\n$1".into(), 2)));
        assert_eq!(replace_unique("x\nab\n\nab ab", "ab", "-", ALL, PY), Err(multiple(&[2, 4, 4])));
    }

    #[test]
    fn multiple_match_lines_are_linear() {
        // An empty old_str matches at every character; numbering them used to be quadratic.
        let content = "line\n".repeat(100_000);
        let Err(ReplaceError::Multiple { lines, more: 0 }) = replace_unique(&content, "", "x", ALL, PY) else {
            panic!()
        };
        assert_eq!(lines.len(), content.len() + 1);
        assert_eq!((lines[0], lines[4], lines[5], *lines.last().unwrap()), (1, 1, 2, 100_001));
    }

    #[test]
    fn multiple_match_lines_past_keep_are_only_counted() {
        let content = "ab\nab ab\nab";
        assert_eq!(
            replace_unique(content, "ab", "x", 2, PY),
            Err(ReplaceError::Multiple { lines: vec![1, 2], more: 2 })
        );
        assert_eq!(replace_unique(content, "ab", "x", 0, PY), Err(ReplaceError::Multiple { lines: vec![], more: 4 }));
    }

    #[test]
    fn snippet_windows() {
        let content: Vec<String> = (1..=10).map(|i| format!("L{i}")).collect();
        let edited = content.join("\n").replace("L5", "FIVE\nFIVE-B\nFIVE-C");
        assert_eq!(snippet(&edited, 4), "     3\tL3\n     4\tL4\n     5\tFIVE\n     6\tFIVE-B\n     7\tFIVE-C");
        assert_eq!(snippet("only", 0), "     1\tonly");
        assert_eq!(snippet("a\nb\nc", 2), "     1\ta\n     2\tb\n     3\tc");
    }

    #[test]
    fn insert_like_the_sdk() {
        assert_eq!(insert("a\nb", 0, "first\n\n", PY), Ok("first\na\nb\n".into()));
        assert_eq!(insert("first\na\nb\n", 3, "last", PY), Ok("first\na\nb\nlast\n".into()));
        assert_eq!(insert("", 0, "X", PY), Ok("X\n".into()));
        assert_eq!(insert("a\nb\n", 2, "c", PY), Ok("a\nb\nc\n".into()));
        assert_eq!(insert("a\nb\n", 3, "c", PY), Err(2));
        assert_eq!(insert("a\nb", -1, "c", PY), Err(2));
        assert_eq!(insert("a\r\nb", 1, "c", PY), Ok("a\r\nc\nb\n".into()));
        assert_eq!(insert("a\nb", 2, "", PY), Ok("a\nb\n".into()));
        assert_eq!(insert("\n", 0, "", PY), Ok("\n".into()));
        assert_eq!(insert_line_count("\n", PY), 1);
        assert_eq!(insert_line_count("", PY), 0);
    }

    /// Exact results of `@anthropic-ai/sdk@1.12.0`'s `str_replace` (Node.js 20): lines that
    /// contain `old_str`, not occurrences.
    #[test]
    fn replace_by_line_like_the_typescript_sdk() {
        // Two occurrences on one line: the first is replaced.
        assert_eq!(
            replace_unique("single line dup dup", "dup", "$& $1", ALL, TS),
            Ok(("single line $& $1 dup".into(), 0))
        );
        // Occurrences on two lines: each line listed once.
        assert_eq!(replace_unique("dup dup\nx dup\nline3\n", "dup", "Q", ALL, TS), Err(multiple(&[1, 2])));
        // An old_str spanning lines is in no line.
        assert_eq!(replace_unique("x Q\nline3", "x Q\nline3", "Z", ALL, TS), Err(ReplaceError::NotFound));
        // The empty old_str is in every line: the line list, or a prefix of a one-line file.
        assert_eq!(replace_unique("a\nb\nc\n", "", "Z", ALL, TS), Err(multiple(&[1, 2, 3, 4])));
        assert_eq!(replace_unique("single", "", "<", ALL, TS), Ok(("<single".into(), 0)));
        assert_eq!(replace_unique("", "", "new", ALL, TS), Ok(("new".into(), 0)));
        // The changed line is the matching line's index.
        assert_eq!(replace_unique("one\r\na\nb\n", "\r", "R", ALL, TS), Ok(("oneR\na\nb\n".into(), 0)));
        assert_eq!(replace_unique("a\nb\nc$", "c$", "$1", ALL, TS), Ok(("a\nb\n$1".into(), 2)));
        // Lines past `keep` are counted; a unique match needs no room in the list.
        assert_eq!(
            replace_unique("ab\nab ab\nab", "ab", "x", 2, TS),
            Err(ReplaceError::Multiple { lines: vec![1, 2], more: 1 })
        );
        assert_eq!(replace_unique("x\nab ab", "ab", "y", 0, TS), Ok(("x\ny ab".into(), 1)));
    }

    /// Exact results of `@anthropic-ai/sdk@1.12.0`'s `insert` (Node.js 20).
    #[test]
    fn insert_like_the_typescript_sdk() {
        // Files as the TS SDK left them after each insert, and the errors' line counts.
        assert_eq!(insert("", 1, "X", TS), Ok("\nX".into()));
        assert_eq!(insert("", 0, "X", TS), Ok("X\n".into()));
        assert_eq!(insert("a\nb\nc\n", 4, "last", TS), Ok("a\nb\nc\n\nlast".into()));
        assert_eq!(insert("a\nb\nc\n\nlast", 0, "one\r\n", TS), Ok("one\r\na\nb\nc\n\nlast".into()));
        assert_eq!(insert("a\nb\n", 2, "end\n\n", TS), Ok("a\nb\nend\n\n".into()));
        assert_eq!(insert("a\nb", 1, "\n", TS), Ok("a\n\nb".into()));
        assert_eq!(insert("a\nb\nc\n", 5, "x", TS), Err(4));
        assert_eq!(insert("a\nb\nc\n", -1, "x", TS), Err(4));
        assert_eq!(insert_line_count("a\nb\n", TS), 3);
        assert_eq!(insert_line_count("", TS), 1);
    }
}
