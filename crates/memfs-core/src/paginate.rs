//! Read pagination: a `view` answer longer than the policy's `view-max-chars` is cut on a line
//! boundary and ends with a line naming the `view_range` that shows the next part.
//!
//! Characters are Unicode scalar values (what Python's `len` counts). The cut answer, note
//! included, never exceeds the maximum. A file view is cut after the last whole line that
//! fits; the note gives `[next line, last line asked for]`, so following notes pages through
//! the requested range with nothing lost and nothing repeated. A single line longer than a page
//! cannot be split by `view_range`: its first characters are shown and the note says so.
//! A directory listing is paged the same way by entries: `view_range` on a directory selects
//! entries (the header and the directory's own row are always shown), and a cut listing's note
//! names the `view_range` of the next entries, so every entry of any directory can be reached.
//! (Reaching every entry wins over the maximum in one case: when the first entry asked for does
//! not fit beside the header, which takes paths of thousands of characters, it is shown anyway.)
//!
//! Errors are bounded by the same maximum: a `str_replace` match list keeps the lines that fit
//! and counts the rest, and any longer error (one that echoes a long `old_str`) is cut.

use crate::dialect::Dialect;
use crate::render::{self, ListingRow, ToolError};
use crate::text;

/// A file view of `lines` (numbered from `first`) within `max` characters.
pub(crate) fn file(path: &str, lines: &[&str], first: usize, max: u64) -> String {
    let full = render::file_view(path, &text::numbered(lines, first));
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    // Nothing selected is never cut (the policy's minimum leaves room for any header).
    if full.chars().count() <= max || lines.is_empty() {
        return full;
    }
    let last_asked = first + lines.len() - 1;
    let header = render::file_view(path, "");
    let fixed = header.chars().count() + 1; // the header and the newline before the note
    // Whole lines while they and the note that would follow them fit.
    let (mut used, mut shown) = (0usize, 0usize);
    for (i, line) in lines.iter().enumerate() {
        // A numbered line: the number, a tab, the text, and the newline before the next one.
        let cost = text::LINE_NUMBER_WIDTH.max(digits(first + i)) + 1 + line.chars().count() + usize::from(i > 0);
        let note_len = note(max, first, first + i, last_asked, None).chars().count();
        if fixed + used + cost + note_len > max {
            break;
        }
        used += cost;
        shown += 1;
    }
    if shown == 0 {
        // One line longer than a page: show what fits of it.
        let line = lines[0];
        let len = line.chars().count();
        let widest = note(max, first, first, last_asked, Some((len, len))).chars().count();
        let room = max.saturating_sub(fixed + text::LINE_NUMBER_WIDTH.max(digits(first)) + 1 + widest);
        let cut: String = line.chars().take(room).collect();
        let body = text::numbered(&[cut.as_str()], first);
        let shown_chars = cut.chars().count();
        return format!("{header}{body}\n{}", note(max, first, first, last_asked, Some((len, shown_chars))));
    }
    let body = text::numbered(&lines[..shown], first);
    format!("{header}{body}\n{}", note(max, first, first + shown - 1, last_asked, None))
}

/// The last line of a cut file view. `long`: the one line shown was cut, (its length, shown).
fn note(max: usize, first: usize, last_shown: usize, last_asked: usize, long: Option<(usize, usize)>) -> String {
    let next = if last_shown < last_asked {
        format!(" To see the next part, view this file with view_range [{}, {last_asked}].", last_shown + 1)
    } else {
        String::new()
    };
    match long {
        None => format!("(Cut at {max} characters: lines {first}-{last_shown} of {first}-{last_asked} shown.{next})"),
        Some((len, shown)) => format!(
            "(Cut at {max} characters: line {first} has {len} characters and only its first {shown} are shown; \
             view_range cannot show the rest of a line.{next})"
        ),
    }
}

/// A directory listing of `rows` (numbered from `first` among the directory's entries) within
/// `max` characters.
pub(crate) fn listing(
    path: &str,
    dir_size: u64,
    rows: &[ListingRow],
    first: usize,
    max: u64,
    dialect: Dialect,
) -> String {
    let full = render::dir_view(path, dir_size, rows, dialect);
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    if full.chars().count() <= max || rows.is_empty() {
        return full;
    }
    let last_asked = first + rows.len() - 1;
    let mut out = render::dir_view(path, dir_size, &[], dialect);
    let mut used = out.chars().count();
    let mut shown = 0;
    for (i, row) in rows.iter().enumerate() {
        let line = render::listing_row(path, row, dialect);
        let cost = line.chars().count() + 1;
        let note_len = listing_note(max, first, first + i, last_asked).chars().count() + 1;
        // One entry at least, so that following the notes always gets further (only a path
        // near the length limit makes a row that long).
        if shown > 0 && used + cost + note_len > max {
            break;
        }
        out.push('\n');
        out.push_str(&line);
        used += cost;
        shown += 1;
    }
    if shown == rows.len() {
        // The one entry asked for, longer than the page: shown whole, as it can be shown no other way.
        return out;
    }
    format!("{out}\n{}", listing_note(max, first, first + shown - 1, last_asked))
}

/// The last line of a cut directory listing.
fn listing_note(max: usize, first: usize, last_shown: usize, last_asked: usize) -> String {
    format!(
        "(Cut at {max} characters: entries {first}-{last_shown} of {first}-{last_asked} shown. To see the next \
         part, view this directory with view_range [{}, {last_asked}].)",
        last_shown + 1
    )
}

/// The `str_replace` error for several occurrences, listing the lines that fit in `max`
/// characters (all of them under no maximum) and counting the rest.
pub(crate) fn multiple_matches(
    old_str: &str,
    mut lines: Vec<usize>,
    more: usize,
    max: Option<u64>,
    dialect: Dialect,
) -> ToolError {
    let error =
        |lines: Vec<usize>, more: usize| ToolError::MultipleMatches { old_str: old_str.to_owned(), lines, more };
    let Some(max) = max else { return error(lines, more) };
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    if more == 0 && error(lines.clone(), 0).render(dialect).chars().count() <= max {
        return error(lines, 0);
    }
    // The message with no line listed and every occurrence counted: the count at its end only
    // gets shorter as lines are listed.
    let total = lines.len() + more;
    let mut used = error(Vec::new(), total).render(dialect).chars().count();
    let mut shown = 0;
    for &line in &lines {
        let cost = digits(line) + 2; // the number and the ", " after it
        if used + cost > max {
            break;
        }
        used += cost;
        shown += 1;
    }
    lines.truncate(shown);
    error(lines, total - shown)
}

/// How many match lines are worth keeping for a maximum of `max` characters: each listed line
/// takes at least three (a digit and `, `).
pub(crate) fn matches_to_keep(max: Option<u64>) -> usize {
    max.map_or(usize::MAX, |max| usize::try_from(max / 3 + 1).unwrap_or(usize::MAX))
}

/// An error answer within `max` characters: its first characters and a note.
pub(crate) fn error(text: String, max: Option<u64>) -> String {
    let Some(max) = max else { return text };
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    let len = text.chars().count();
    if len <= max {
        return text;
    }
    let note = |shown: usize| {
        format!("(Cut at {max} characters: this message has {len} characters and only its first {shown} are shown.)")
    };
    let room = max.saturating_sub(note(max).chars().count() + 1);
    let cut: String = text.chars().take(room).collect();
    format!("{cut}\n{}", note(room))
}

fn digits(n: usize) -> usize {
    n.to_string().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages through a file by following each note: every line once, in order, and every
    /// answer within the maximum.
    #[test]
    fn following_notes_shows_every_line_once() {
        let content: String = (1..=3000).map(|i| format!("line {i} {}\n", "x".repeat(i % 97))).collect();
        let lines = text::view_lines(&content);
        let max = 16_000;
        let (mut seen, mut start, mut pages) = (Vec::new(), 1usize, 0);
        loop {
            let out = file("/memories/big.txt", &lines[start - 1..], start, max);
            assert!(out.chars().count() <= max as usize, "{} > {max}", out.chars().count());
            pages += 1;
            let mut body: Vec<&str> = out.lines().skip(1).collect();
            let last = body.pop().unwrap();
            if !last.starts_with("(Cut at") {
                body.push(last);
            }
            for l in &body {
                let (n, text) = l.trim_start().split_once('\t').unwrap();
                seen.push((n.parse::<usize>().unwrap(), text.to_owned()));
            }
            let Some(i) = last.find("view_range [") else { break };
            let rest = &last[i + 12..];
            start = rest[..rest.find(',').unwrap()].parse().unwrap();
            assert_eq!(rest[rest.find(", ").unwrap() + 2..].trim_end_matches("].)"), lines.len().to_string());
        }
        assert!(pages > 5, "{pages}");
        let want: Vec<(usize, String)> = lines.iter().enumerate().map(|(i, l)| (i + 1, (*l).to_owned())).collect();
        assert_eq!(seen, want);
    }

    #[test]
    fn exactly_at_the_limit_is_whole_and_one_over_is_cut() {
        let line = "x".repeat(93); // 100 characters with its number, tab and newline
        let lines = vec![line.as_str(); 200];
        let whole = file("/memories/f", &lines, 1, u64::MAX);
        let n = whole.chars().count() as u64;
        assert_eq!(file("/memories/f", &lines, 1, n), whole);
        let cut = file("/memories/f", &lines, 1, n - 1);
        assert!((cut.chars().count() as u64) < n);
        assert!(
            cut.ends_with(
                "(Cut at 20251 characters: lines 1-198 of 1-200 shown. To see the next part, view this file \
                 with view_range [199, 200].)"
            ),
            "{}",
            &cut[cut.len() - 200..]
        );
    }

    #[test]
    fn a_line_longer_than_a_page() {
        let long = "é".repeat(20_000);
        let out = file("/memories/f", &[long.as_str(), "next"], 1, 16_000);
        assert!(out.chars().count() <= 16_000);
        assert!(
            out.ends_with(
                "(Cut at 16000 characters: line 1 has 20000 characters and only its first 15745 are shown; \
                 view_range cannot show the rest of a line. To see the next part, view this file with view_range \
                 [2, 2].)"
            ),
            "{}",
            out.chars().rev().take(300).collect::<String>()
        );
    }

    /// Pages through a listing by following each note: every row once, in order, every answer
    /// within the maximum, in every dialect.
    #[test]
    fn following_listing_notes_shows_every_entry_once() {
        let rows: Vec<ListingRow> =
            (0..3000).map(|i| ListingRow { size: i, rel: format!("{i:04}{}", "n".repeat(i as usize % 41)) }).collect();
        for dialect in Dialect::ALL {
            let (mut seen, mut next, mut pages) = (Vec::new(), Some(1usize), 0);
            while let Some(start) = next {
                let out = listing("/memories/d", 4096, &rows[start - 1..], start, 10_000, dialect);
                assert!(out.chars().count() <= 10_000);
                pages += 1;
                let mut body: Vec<&str> = out.split('\n').skip(2).collect();
                next = None;
                if body.last().is_some_and(|l| l.starts_with("(Cut at 10000 characters: entries ")) {
                    let note = body.pop().unwrap();
                    let range = note.split("view_range [").nth(1).unwrap().trim_end_matches("].)");
                    let (a, b) = range.split_once(", ").unwrap();
                    assert_eq!(b, "3000");
                    next = Some(a.parse().unwrap());
                    assert!(note.starts_with(&format!(
                        "(Cut at 10000 characters: entries {start}-{} of {start}-3000 shown.",
                        start + body.len() - 1
                    )));
                }
                seen.extend(body.iter().map(|l| l.split_once("/memories/d/").unwrap().1.to_owned()));
            }
            assert!(pages > 5, "{pages}");
            assert_eq!(seen, rows.iter().map(|r| r.rel.clone()).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_match_list_fits_and_counts_the_rest() {
        let lines: Vec<usize> = (1..=5000).collect();
        for (max, dialect) in [10_000u64, 12_345, 16_000].into_iter().flat_map(|m| Dialect::ALL.map(|d| (m, d))) {
            let e = multiple_matches("ab", lines.clone(), 100_000, Some(max), dialect);
            let text = e.render(dialect);
            assert!(text.chars().count() <= max as usize, "{max} {dialect}");
            // Within a line of the maximum: the longest line number takes 4 digits and `, `.
            assert!(text.chars().count() + 6 > max as usize, "{max} {dialect}");
            let ToolError::MultipleMatches { lines: shown, more, .. } = e else { panic!() };
            assert_eq!(shown.len() + more, 105_000);
            assert!(text.ends_with(&format!(", … and {more} more. Please ensure it is unique")));
        }
        // Under the maximum, or with none: every line, the SDK's text.
        let e = multiple_matches("ab", vec![1, 2, 2], 0, Some(10_000), Dialect::PythonSdk);
        assert_eq!(e, ToolError::MultipleMatches { old_str: "ab".into(), lines: vec![1, 2, 2], more: 0 });
        let e = multiple_matches("ab", lines.clone(), 0, None, Dialect::PythonSdk);
        assert_eq!(e, ToolError::MultipleMatches { old_str: "ab".into(), lines, more: 0 });
    }

    #[test]
    fn a_long_error_is_cut_within_the_maximum() {
        let text = "é".repeat(10_001);
        let out = error(text.clone(), Some(10_000));
        // Room is kept for a shown count as wide as the maximum: one character is left over.
        assert_eq!(out.chars().count(), 9_999);
        assert_eq!(
            out,
            format!(
                "{}\n(Cut at 10000 characters: this message has 10001 characters and only its first 9903 are shown.)",
                "é".repeat(9_903)
            )
        );
        assert_eq!(error(text.clone(), Some(10_001)), text);
        assert_eq!(error(text.clone(), None), text);
    }
}
