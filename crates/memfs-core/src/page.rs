//! Read pagination: a `view` answer longer than the policy's `view-max-chars` is cut on a line
//! boundary and ends with a line naming the `view_range` that shows the next part.
//!
//! Characters are Unicode scalar values (what Python's `len` counts). The cut answer, note
//! included, never exceeds the maximum. A file view is cut after the last whole line that
//! fits; the note gives `[next line, last line asked for]`, so following notes pages through
//! the requested range with nothing lost and nothing repeated. A single line longer than a page
//! cannot be split by `view_range`: its first characters are shown and the note says so.
//! A directory listing is cut after the last whole row that fits.

use crate::render;
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

/// A directory listing of `rows` rows within `max` characters.
pub(crate) fn listing(view: String, rows: usize, max: u64) -> String {
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    if view.chars().count() <= max {
        return view;
    }
    let note = |shown: usize| {
        format!("(Cut at {max} characters: {shown} of {rows} entries shown. View a subdirectory to see its entries.)")
    };
    let budget = max.saturating_sub(note(rows).chars().count() + 1);
    // The header and the directory's own row come first; then one row per line.
    let mut lines = view.split('\n');
    let mut out = String::new();
    let mut used = 0;
    for head in lines.by_ref().take(2) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(head);
        used += head.chars().count() + 1;
    }
    let mut shown = 0;
    for line in lines {
        let cost = line.chars().count() + 1;
        if used + cost > budget {
            break;
        }
        out.push('\n');
        out.push_str(line);
        used += cost;
        shown += 1;
    }
    format!("{out}\n{}", note(shown))
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
}
