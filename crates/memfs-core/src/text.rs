//! Text algorithms of the memory tool, reproducing the Python SDK (`anthropic==2.10.0`,
//! `_beta_builtin_memory_tool.py`) step by step. Files are read as UTF-8 with no newline
//! translation: a `\r` stays part of its line.

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
    /// `old_str` does not occur.
    NotFound,
    /// `old_str` occurs more than once (counted without overlap).
    Multiple {
        /// The 1-based line of each occurrence found with an overlapping search, duplicates
        /// kept, up to the number asked for.
        lines: Vec<usize>,
        /// Occurrences found beyond those in `lines`.
        more: usize,
    },
}

/// Replaces the single occurrence of `old` in `content`. Returns the new content and the
/// 0-based line index where the match started. On several occurrences, the lines of the
/// first `keep` are returned and the rest only counted, so an error about a huge file stays
/// small in memory.
pub fn replace_unique(content: &str, old: &str, new: &str, keep: usize) -> Result<(String, usize), ReplaceError> {
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

/// The snippet after a replacement: lines `max(0, idx-2)+1 ..= min(len, idx+3)` of the new
/// content split on `\n`, numbered.
pub fn snippet(new_content: &str, changed_line: usize) -> String {
    let lines = view_lines(new_content);
    let start = changed_line.saturating_sub(2);
    let end = lines.len().min(changed_line + 3);
    numbered(&lines[start..end.max(start)], start + 1)
}

/// The line count `insert` checks against: lines split on `\n`, without the empty tail a
/// trailing newline leaves (`_split_lines_keeping_cr`).
pub fn insert_line_count(content: &str) -> usize {
    insert_lines(content).len()
}

fn insert_lines(content: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = content.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// Inserts `text`, with its trailing `\n`s stripped, as a new line at index `at`; joins with
/// `\n` and ends the file with a newline. Returns `Err(line_count)` when `at` is out of range.
pub fn insert(content: &str, at: i128, text: &str) -> Result<String, usize> {
    let mut lines = insert_lines(content);
    let n = lines.len();
    let at = usize::try_from(at).ok().filter(|&a| a <= n).ok_or(n)?;
    lines.insert(at, text.trim_end_matches('\n'));
    let mut out = lines.join("\n");
    if !out.ends_with('\n') {
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
        assert_eq!(replace_unique("aaa", "aa", "b", ALL), Ok(("ba".into(), 0)));
        assert_eq!(replace_unique("aaaa", "aa", "b", ALL), Err(multiple(&[1, 1, 1])));
        assert_eq!(replace_unique("ab ab\ncd", "ab", "X", ALL), Err(multiple(&[1, 1])));
        assert_eq!(replace_unique("", "", "new", ALL), Ok(("new".into(), 0)));
        assert_eq!(replace_unique("a\nb", "", "x", ALL), Err(multiple(&[1, 1, 2, 2])));
        assert_eq!(replace_unique("é\né", "", "x", ALL), Err(multiple(&[1, 1, 2, 2])));
        assert_eq!(replace_unique("x", "y", "z", ALL), Err(ReplaceError::NotFound));
        assert_eq!(replace_unique("a\nb\nc$", "c$", "$1", ALL), Ok(("a\nb\n$1".into(), 2)));
        assert_eq!(replace_unique("x\nab\n\nab ab", "ab", "-", ALL), Err(multiple(&[2, 4, 4])));
    }

    #[test]
    fn multiple_match_lines_are_linear() {
        // An empty old_str matches at every character; numbering them used to be quadratic.
        let content = "line\n".repeat(100_000);
        let Err(ReplaceError::Multiple { lines, more: 0 }) = replace_unique(&content, "", "x", ALL) else { panic!() };
        assert_eq!(lines.len(), content.len() + 1);
        assert_eq!((lines[0], lines[4], lines[5], *lines.last().unwrap()), (1, 1, 2, 100_001));
    }

    #[test]
    fn multiple_match_lines_past_keep_are_only_counted() {
        let content = "ab\nab ab\nab";
        assert_eq!(replace_unique(content, "ab", "x", 2), Err(ReplaceError::Multiple { lines: vec![1, 2], more: 2 }));
        assert_eq!(replace_unique(content, "ab", "x", 0), Err(ReplaceError::Multiple { lines: vec![], more: 4 }));
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
        assert_eq!(insert("a\nb", 0, "first\n\n"), Ok("first\na\nb\n".into()));
        assert_eq!(insert("first\na\nb\n", 3, "last"), Ok("first\na\nb\nlast\n".into()));
        assert_eq!(insert("", 0, "X"), Ok("X\n".into()));
        assert_eq!(insert("a\nb\n", 2, "c"), Ok("a\nb\nc\n".into()));
        assert_eq!(insert("a\nb\n", 3, "c"), Err(2));
        assert_eq!(insert("a\nb", -1, "c"), Err(2));
        assert_eq!(insert("a\r\nb", 1, "c"), Ok("a\r\nc\nb\n".into()));
        assert_eq!(insert("a\nb", 2, ""), Ok("a\nb\n".into()));
        assert_eq!(insert("\n", 0, ""), Ok("\n".into()));
        assert_eq!(insert_line_count("\n"), 1);
        assert_eq!(insert_line_count(""), 0);
    }
}
