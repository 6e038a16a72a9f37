//! Searching the live tree's file names and contents, in memfs, over decrypted content
//! (`memfs ui`): nothing is sent anywhere, and nothing is written (no last-access day either:
//! a search is not a use of the files it reads).

use memfs_core::{DirRef, Node, ROOT};

use crate::engine::Memfs;
use crate::error::Error;

/// The longest line of a match kept, in characters; longer ones are cut around the match.
const LINE_CHARS: usize = 240;

/// What a search found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Found {
    /// The files whose path contains the query, in tree order.
    pub names: Vec<String>,
    /// The lines that contain it, in tree order, at most the limit asked for.
    pub lines: Vec<FoundLine>,
    /// More lines matched than the limit.
    pub truncated: bool,
}

/// A line that contains the query.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct FoundLine {
    /// The file's path.
    pub path: String,
    /// The line's number, from 1.
    pub line: usize,
    /// The line (at most 240 characters of it, around the match).
    pub text: String,
}

impl Memfs {
    /// The live files whose path, and the lines whose text, contain `query` (ignoring case), at
    /// most `max_lines` lines. An empty query finds nothing.
    pub async fn search(&self, query: &str, max_lines: usize) -> Result<Found, Error> {
        let mut found = Found::default();
        let needle = query.to_lowercase();
        if needle.is_empty() {
            return Ok(found);
        }
        let head = self.repository().head().await.map_err(|e| self.store_error(e))?;
        // Depth first in tree order: a directory's entries go on the stack last first.
        let mut waiting: Vec<(String, Node)> = Vec::new();
        self.push(ROOT, head.tree.root(), &mut waiting).await?;
        while let Some((path, node)) = waiting.pop() {
            match node {
                Node::Dir(d) => self.push(&path, &d, &mut waiting).await?,
                Node::File(f) => {
                    if path.to_lowercase().contains(&needle) {
                        found.names.push(path.clone());
                    }
                    if found.truncated {
                        continue;
                    }
                    let bytes = self.repository().blob(&f.id).await.map_err(|e| self.store_error(e))?;
                    for (n, line) in String::from_utf8_lossy(&bytes).split('\n').enumerate() {
                        let lower = line.to_lowercase();
                        let Some(at) = lower.find(&needle) else { continue };
                        if found.lines.len() == max_lines {
                            found.truncated = true;
                            break;
                        }
                        found.lines.push(FoundLine { path: path.clone(), line: n + 1, text: around(line, &lower, at) });
                    }
                }
            }
        }
        Ok(found)
    }

    async fn push(&self, path: &str, dir: &DirRef, waiting: &mut Vec<(String, Node)>) -> Result<(), Error> {
        let loaded = self.load(dir).await?;
        let entries: Vec<_> = loaded.entries().map(|(name, node)| (format!("{path}/{name}"), node.clone())).collect();
        waiting.extend(entries.into_iter().rev());
        Ok(())
    }
}

/// At most [`LINE_CHARS`] characters of `line` around the match at byte `at` of its lower-case
/// form `lower` (the two differ in length only for a few characters; then the line's start).
fn around(line: &str, lower: &str, at: usize) -> String {
    if line.chars().count() <= LINE_CHARS {
        return line.to_owned();
    }
    let at = if lower.len() == line.len() { lower[..at].chars().count() } else { 0 };
    let start = at.saturating_sub(LINE_CHARS / 3);
    line.chars().skip(start).take(LINE_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;
    use serde_json::json;

    #[tokio::test]
    async fn names_then_lines_in_tree_order_ignoring_case() {
        let memfs = Memfs::ephemeral(Dialect::Spec).unwrap();
        for (path, text) in [
            ("/memories/b/Notes.md", "first\nthe NOTE here\n"),
            ("/memories/a.md", "a note\nnothing\nnotes again"),
            ("/memories/c.md", "unrelated"),
        ] {
            let r = memfs.call(&json!({"command": "create", "path": path, "file_text": text})).await;
            assert!(!r.is_error, "{r:?}");
        }
        let found = memfs.search("note", 10).await.unwrap();
        assert_eq!(found.names, ["/memories/b/Notes.md"]);
        let lines: Vec<_> = found.lines.iter().map(|l| (l.path.as_str(), l.line, l.text.as_str())).collect();
        assert_eq!(
            lines,
            [
                ("/memories/a.md", 1, "a note"),
                ("/memories/a.md", 3, "notes again"),
                ("/memories/b/Notes.md", 2, "the NOTE here")
            ]
        );
        assert!(!found.truncated);
        let few = memfs.search("NOTE", 2).await.unwrap();
        assert_eq!((few.lines.len(), few.truncated), (2, true));
        assert_eq!(memfs.search("", 10).await.unwrap(), Found::default());
    }

    #[test]
    fn long_lines_are_cut_around_the_match() {
        let line = format!("{}needle{}", "x".repeat(500), "y".repeat(500));
        let cut = around(&line, &line, 500);
        assert_eq!(cut.chars().count(), LINE_CHARS);
        assert!(cut.starts_with(&"x".repeat(LINE_CHARS / 3)) && cut[LINE_CHARS / 3..].starts_with("needle"), "{cut}");
    }
}
