//! View pagination at `view-max-chars`, in both dialects: a file view is cut after the last
//! whole line that fits with its note, whose `view_range` shows the next part; a listing is cut
//! after the last whole row; no answer exceeds the maximum, whatever the path's length.

use memfs::Dialect;
use serde_json::json;

use crate::safeguards::{DIALECTS, Store, create, created, view, view_range};
use crate::support::listing_header;

const HEADER_P: &str = "Here's the content of /memories/p.txt with line numbers:\n";

/// Numbered lines as a view shows them.
fn numbered(lines: &[String], first: usize) -> String {
    let rows: Vec<String> = lines.iter().enumerate().map(|(i, l)| format!("{:>6}\t{l}", first + i)).collect();
    rows.join("\n")
}

/// 158 lines of 92 characters and a last one of `last` characters (two bytes each): with the
/// 57-character header, a view is `56 + 100 * 158 + 8 + last` characters long.
fn paged_lines(last: usize) -> Vec<String> {
    let mut lines: Vec<String> = (0..158).map(|i| format!("{i:03}{}", "é".repeat(89))).collect();
    lines.push("ü".repeat(last));
    lines
}

#[tokio::test]
async fn pagination_default_is_16000_characters_whole_at_the_limit_cut_one_over() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        assert_eq!(s.fs.policy().await.unwrap().view_max_chars, Some(16_000));

        // Exactly 16,000 characters (over 31,000 bytes): whole.
        let lines = paged_lines(136);
        let whole = format!("{HEADER_P}{}", numbered(&lines, 1));
        assert_eq!(whole.chars().count(), 16_000);
        s.ok(create("/memories/p.txt", &lines.join("\n")), &created("/memories/p.txt")).await;
        s.ok(view("/memories/p.txt"), &whole).await;

        // One more: cut after line 158, which leaves room for the note.
        s.ok(json!({"command": "delete", "path": "/memories/p.txt"}), "Successfully deleted /memories/p.txt").await;
        let lines = paged_lines(137);
        assert_eq!(format!("{HEADER_P}{}", numbered(&lines, 1)).chars().count(), 16_001);
        s.ok(create("/memories/p.txt", &lines.join("\n")), &created("/memories/p.txt")).await;
        let cut = format!(
            "{HEADER_P}{}\n(Cut at 16000 characters: lines 1-158 of 1-159 shown. To see the next part, view this file \
             with view_range [159, 159].)",
            numbered(&lines[..158], 1)
        );
        s.ok(view("/memories/p.txt"), &cut).await;
        // The note's range shows the rest.
        s.ok(view_range("/memories/p.txt", 159, 159), &format!("{HEADER_P}{}", numbered(&lines[158..], 159))).await;
        // A range that fits is whole; a range that does not is cut within it.
        s.ok(view_range("/memories/p.txt", 2, 3), &format!("{HEADER_P}{}", numbered(&lines[1..3], 2))).await;
    }
}

#[tokio::test]
async fn pagination_a_view_range_is_cut_within_the_range() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        let lines: Vec<String> = (1..=400).map(|i| format!("{i:03}{}", "ß".repeat(89))).collect();
        s.ok(create("/memories/p.txt", &lines.join("\n")), &created("/memories/p.txt")).await;
        let first = format!(
            "{HEADER_P}{}\n(Cut at 16000 characters: lines 100-257 of 100-300 shown. To see the next part, view this \
             file with view_range [258, 300].)",
            numbered(&lines[99..257], 100)
        );
        s.ok(view_range("/memories/p.txt", 100, 300), &first).await;
        s.ok(view_range("/memories/p.txt", 258, 300), &format!("{HEADER_P}{}", numbered(&lines[257..300], 258))).await;
        // `-1` is the last line, and the note names it.
        s.ok(view_range("/memories/p.txt", 300, -1), &format!("{HEADER_P}{}", numbered(&lines[299..], 300))).await;
        let head = format!(
            "{HEADER_P}{}\n(Cut at 16000 characters: lines 1-158 of 1-400 shown. To see the next part, view this file \
             with view_range [159, 400].)",
            numbered(&lines[..158], 1)
        );
        s.ok(view_range("/memories/p.txt", 1, -1), &head).await;
    }
}

/// Following each note's `view_range` through a ~240 KB file of non-ASCII lines shows every line
/// exactly once, in order, each answer within 16,000 characters.
#[tokio::test]
async fn pagination_following_the_notes_shows_every_line_once() {
    let lines: Vec<String> =
        (1..=2000).map(|i| format!("{i}: {}", "ñ€😀x".repeat(i % 23))).chain([String::new()]).collect();
    let content = lines.join("\n"); // ends with a newline: the last line is empty
    assert!((200_000..300_000).contains(&content.len()), "{} bytes", content.len());
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        s.ok(create("/memories/big.txt", &content), &created("/memories/big.txt")).await;
        let header = "Here's the content of /memories/big.txt with line numbers:\n";
        let (mut seen, mut next, mut pages) = (Vec::<(usize, String)>::new(), None::<usize>, 0);
        loop {
            let input = match next {
                None => view("/memories/big.txt"),
                Some(start) => view_range("/memories/big.txt", start as i64, 2001),
            };
            let out = s.call(&input).await;
            assert!(!out.is_error, "{}", out.content);
            assert!(out.content.chars().count() <= 16_000, "page {pages}: {} characters", out.content.chars().count());
            pages += 1;
            let body = out.content.strip_prefix(header).expect("a file view");
            let mut rows: Vec<&str> = body.split('\n').collect();
            let note = rows.last().filter(|r| r.starts_with("(Cut at")).map(|r| (*r).to_owned());
            if note.is_some() {
                rows.pop();
            }
            let first_here = seen.len() + 1;
            for row in &rows {
                let (n, text) = row.split_once('\t').expect("a numbered line");
                seen.push((n.trim_start().parse().unwrap(), text.to_owned()));
            }
            let Some(note) = note else { break };
            let last_here = seen.len();
            assert_eq!(
                note,
                format!(
                    "(Cut at 16000 characters: lines {first_here}-{last_here} of {first_here}-2001 shown. To see the \
                     next part, view this file with view_range [{}, 2001].)",
                    last_here + 1
                )
            );
            next = Some(last_here + 1);
        }
        assert!(pages > 5, "{pages} pages");
        let want: Vec<(usize, String)> = lines.iter().enumerate().map(|(i, l)| (i + 1, l.clone())).collect();
        assert!(seen == want, "[{dialect}] {} lines seen, {} in the file", seen.len(), want.len());
    }
}

#[tokio::test]
async fn pagination_a_line_longer_than_a_page() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        let long = "é".repeat(20_000);
        s.ok(create("/memories/f", &format!("{long}\nnext")), &created("/memories/f")).await;
        let shown: String = long.chars().take(15_745).collect();
        s.ok(
            view("/memories/f"),
            &format!(
                "Here's the content of /memories/f with line numbers:\n     1\t{shown}\n(Cut at 16000 characters: line \
                 1 has 20000 characters and only its first 15745 are shown; view_range cannot show the rest of a \
                 line. To see the next part, view this file with view_range [2, 2].)"
            ),
        )
        .await;
        s.ok(view_range("/memories/f", 2, 2), "Here's the content of /memories/f with line numbers:\n     2\tnext")
            .await;
    }
}

#[tokio::test]
async fn pagination_none_shows_everything() {
    let lines: Vec<String> = (1..=2000).map(|i| format!("{i}: {}", "ñ€😀x".repeat(i % 23))).collect();
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        s.set("view-max-chars", "none").await;
        s.ok(create("/memories/big.txt", &lines.join("\n")), &created("/memories/big.txt")).await;
        s.ok(
            view("/memories/big.txt"),
            &format!("Here's the content of /memories/big.txt with line numbers:\n{}", numbered(&lines, 1)),
        )
        .await;
        // And a listing of any length (200 rows of 102 characters).
        let mut listing = format!(
            "{}\n{}\t/memories/d",
            listing_header("/memories/d", dialect),
            if dialect == Dialect::Spec { "4.0K" } else { "4K" }
        );
        for i in 0..200 {
            let path = format!("/memories/d/{i:03}-{}.md", "x".repeat(79));
            s.ok(create(&path, "a"), &created(&path)).await;
            listing.push_str(&format!("\n1B\t{path}"));
        }
        assert!(listing.chars().count() > 20_000);
        s.ok(view("/memories/d"), &listing).await;
    }
}

/// A long listing is cut after the last whole row that fits with the note: 200 rows of 100
/// characters, of which 156 fit (155 in `spec`), and the note's `view_range` shows the rest.
#[tokio::test]
async fn pagination_a_long_listing_is_cut_with_its_note() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        let names: Vec<String> = (0..200).map(|i| format!("{i:03}-{}.md", "x".repeat(80))).collect();
        for name in &names {
            s.call(&create(&format!("/memories/{name}"), "a")).await;
        }
        let root = match dialect {
            Dialect::Spec => "4.0K\t/memories",
            Dialect::PythonSdk | Dialect::TypescriptSdk => "4K\t/memories",
        };
        let rows: Vec<String> = names.iter().map(|n| format!("1B\t/memories/{n}")).collect();
        assert_eq!(rows[0].chars().count(), 100);
        // The spec header and root row are 20 characters longer: one row fewer fits.
        let n = if dialect == Dialect::Spec { 155 } else { 156 };
        let expected = format!(
            "{}\n{root}\n{}\n(Cut at 16000 characters: entries 1-{n} of 1-200 shown. To see the next part, view \
             this directory with view_range [{}, 200].)",
            listing_header("/memories", dialect),
            rows[..n].join("\n"),
            n + 1
        );
        assert!(expected.chars().count() <= 16_000);
        s.ok(view("/memories"), &expected).await;
        // The next row would not have fitted with the note.
        assert!(expected.chars().count() + 101 > 16_000);
        // The note's range shows the rest, whole.
        let rest = format!("{}\n{root}\n{}", listing_header("/memories", dialect), rows[n..].join("\n"));
        s.ok(view_range("/memories", n as i64 + 1, 200), &rest).await;
    }
}

/// The longest path allowed (4,096 bytes; names of 255 bytes at most) at the smallest maximum
/// (10,000 characters, which leaves room for any header): a file view, a `view_range` that
/// selects nothing, and the listing of the file's directory (whose header names the directory
/// twice) all stay within the maximum.
#[tokio::test]
async fn pagination_the_longest_path_at_the_smallest_maximum() {
    // "/memories", 15 names of 255 bytes and one of 246, each after a `/`.
    let names: Vec<String> = (b'a'..b'p').map(|c| char::from(c).to_string().repeat(255)).collect();
    let dir = format!("/memories/{}", names.join("/"));
    let path = format!("{dir}/{}", "z".repeat(246));
    assert_eq!((dir.len(), path.len()), (3849, 4096));
    // 100 lines of 100 characters: 10,100 without the header.
    let lines: Vec<String> = (1..=100).map(|i| format!("{i:03} {}", "é".repeat(96))).collect();
    let header = format!("Here's the content of {path} with line numbers:\n");
    assert_eq!(header.chars().count(), 4138);
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        s.set("view-max-chars", "10000").await;
        s.ok(create(&path, &lines.join("\n")), &created(&path)).await;
        s.refused(create(&format!("{path}x"), "x"), "Invalid path: it is 4097 bytes long, the limit is 4096 bytes")
            .await;
        // The file view: as many whole lines as fit with the note.
        let cut = format!(
            "{header}{}\n(Cut at 10000 characters: lines 1-53 of 1-100 shown. To see the next part, view this file \
             with view_range [54, 100].)",
            numbered(&lines[..53], 1)
        );
        // 9,979 characters; one more line (108) would not fit.
        assert_eq!(cut.chars().count(), 9979);
        s.ok(view(&path), &cut).await;
        // The line after the last one: nothing selected, the header alone.
        s.ok(view_range(&path, 101, -1), &header).await;
        // The listing: the header and the directory's own row leave no room for the file's row,
        // which is shown all the same, whole, so that the file can be found: the one answer
        // over the maximum (by at most one row of a path this long).
        let root = match dialect {
            Dialect::Spec => "4.0K",
            Dialect::PythonSdk | Dialect::TypescriptSdk => "4K",
        };
        let bytes = lines.join("\n").len() as u64;
        let size = match dialect {
            Dialect::Spec => memfs_core::size::spec(bytes),
            Dialect::PythonSdk => memfs_core::size::python_sdk(bytes),
            Dialect::TypescriptSdk => memfs_core::size::typescript_sdk(bytes),
        };
        let listing = format!("{}\n{root}\t{dir}\n{size}\t{path}", listing_header(&dir, dialect));
        s.ok(view(&dir), &listing).await;
        assert!(listing.chars().count() > 10_000);
        for out in [view(&path), view_range(&path, 101, -1)] {
            let n = s.call(&out).await.content.chars().count();
            assert!(n <= 10_000, "[{dialect}] {out}: {n} characters");
        }
    }
}
