//! The store's safeguards at their edges, in both dialects: the size limits (`max-file-bytes`,
//! `max-files`, `max-store-bytes`), the default policy's transparency and policy changes; and
//! the harness the other safeguard modules share (`sensitive_filter`, `pagination`,
//! `expiration`).
//!
//! Every answer is compared exactly. Every refusal is checked to change nothing: the head's
//! generation, the stored tree (every file's content, size and last-access day, hidden files
//! included), the policy, and the listing in the store's dialect are the same before and after.

use std::path::PathBuf;
use std::sync::Arc;

use memfs::StateDir;
use memfs::history::{Operation, PolicyChange, Record};
use memfs::{Credential, Dialect, KdfParams, Memfs, OpenOptions, Policy, ToolResult};
use memfs_core::{Command, Dir, DirRef, MapResolver, Node, Tree};
use memfs_store::{EncryptedRepository, Repository};
use serde_json::{Value, json};

use crate::support::check_text;

/// Both dialects, in turn.
pub(crate) const DIALECTS: [Dialect; 2] = [Dialect::Spec, Dialect::PythonSdk];

/// Today in these tests, unless a test moves on: day 20000 (2024-10-04).
pub(crate) const DAY: u32 = 20_000;

/// Fake secrets (well-formed, never issued) and the custom rule of the brief.
pub(crate) const AWS_KEY: &str = "AKIA2E3MPLZQ7WX4KT5N";
pub(crate) const GITHUB_TOKEN: &str = "ghp_MyWuUFjsUNPjc01T5GOBUSZGi6HWGK10Zb0R";
pub(crate) const EMPLOYEE_ID: &str = "EMP-004211";
pub(crate) const EMPLOYEE_RULE: &str = r"\bEMP-\d{6}\b";
pub(crate) const SECRETS: [&str; 3] = [AWS_KEY, GITHUB_TOKEN, EMPLOYEE_ID];

pub(crate) fn fresh_repo() -> Arc<EncryptedRepository> {
    Arc::new(EncryptedRepository::ephemeral().expect("memory:// opens"))
}

/// An engine on an encrypted in-memory repository, answering in one dialect, with today fixed.
/// Several `Store`s may share one repository (one per day, or one per process).
pub(crate) struct Store {
    pub(crate) fs: Memfs,
    pub(crate) dialect: Dialect,
}

impl Store {
    /// A new empty store on [`DAY`].
    pub(crate) fn new(dialect: Dialect) -> Self {
        Store::on(&fresh_repo(), dialect, DAY)
    }

    /// An engine over `repo` whose today is `day`.
    pub(crate) fn on(repo: &Arc<EncryptedRepository>, dialect: Dialect, day: u32) -> Self {
        Store { fs: Memfs::with_repository(repo.clone(), dialect).with_today(Some(day)), dialect }
    }

    pub(crate) async fn call(&self, input: &Value) -> ToolResult {
        self.fs.call_with(input, self.dialect).await
    }

    pub(crate) async fn expect(&self, input: Value, is_error: bool, expected: &str) {
        let result = self.call(&input).await;
        let shown: String = input.to_string().chars().take(300).collect();
        let what = format!("[{}] {shown}", self.dialect);
        check_text(&what, &result.content, expected);
        assert_eq!(result.is_error, is_error, "{what}: is_error of \"{}\"", result.content.escape_debug());
    }

    /// Runs `input`, which must succeed with exactly `expected`.
    pub(crate) async fn ok(&self, input: Value, expected: &str) {
        self.expect(input, false, expected).await;
    }

    /// Runs `input`, which must fail with exactly `expected` and change nothing at all.
    pub(crate) async fn refused(&self, input: Value, expected: &str) {
        let before = self.state().await;
        self.expect(input.clone(), true, expected).await;
        let after = self.state().await;
        check_text(&format!("[{}] state after refused {input}", self.dialect), &after, &before);
    }

    pub(crate) async fn generation(&self) -> u64 {
        self.fs.repository().head().await.expect("head").generation
    }

    /// Sets a policy key, which must commit exactly one generation.
    pub(crate) async fn set(&self, key: &str, value: &str) {
        let before = self.generation().await;
        let changed = self.fs.set_policy(key, value).await.unwrap_or_else(|e| panic!("set {key} {value}: {e}"));
        assert_eq!(changed.generation, Some(before + 1), "set {key} {value}");
        assert_eq!(self.generation().await, before + 1, "set {key} {value}");
    }

    /// A stored file's content, read from the repository (no `view`: no pagination, no access).
    pub(crate) async fn file(&self, path: &str) -> Option<String> {
        let repo = self.fs.repository();
        let head = repo.head().await.expect("head");
        let rel = path.strip_prefix("/memories/").expect("a path below /memories");
        let mut dir = load(repo.as_ref(), head.tree.root()).await;
        let names: Vec<&str> = rel.split('/').collect();
        for (i, name) in names.iter().enumerate() {
            let (_, node) = dir.entries().find(|(n, _)| n.as_str() == *name)?;
            match node {
                Node::File(f) if i + 1 == names.len() => {
                    let bytes = repo.blob(&f.id).await.expect("blob");
                    return Some(String::from_utf8(bytes.to_vec()).expect("UTF-8"));
                }
                Node::Dir(d) if i + 1 < names.len() => dir = load(repo.as_ref(), d).await,
                _ => return None,
            }
        }
        None
    }

    /// The whole stored tree, one line per entry in pre-order: directories with a trailing
    /// `/`, files with size, last-access day (relative to [`DAY`]) and content.
    pub(crate) async fn dump(&self) -> String {
        let repo = self.fs.repository();
        let head = repo.head().await.expect("head");
        let mut out = String::new();
        let mut stack = vec![("/memories".to_owned(), head.tree.root().clone())];
        while let Some((at, dir)) = stack.pop() {
            out.push_str(&format!("{at}/\n"));
            let dir = load(repo.as_ref(), &dir).await;
            let mut subdirs = Vec::new();
            for (name, node) in dir.entries() {
                let path = format!("{at}/{name}");
                match node {
                    Node::File(f) => {
                        let bytes = repo.blob(&f.id).await.expect("blob");
                        let day = i64::from(f.accessed) - i64::from(DAY);
                        out.push_str(&format!(
                            "{path} {}B day{day:+} = {:?}\n",
                            f.size,
                            String::from_utf8_lossy(&bytes)
                        ));
                    }
                    Node::Dir(d) => subdirs.push((path, d.clone())),
                }
            }
            stack.extend(subdirs.into_iter().rev());
        }
        out
    }

    /// Everything a refusal must leave alone.
    pub(crate) async fn state(&self) -> String {
        let policy = self.fs.policy().await.expect("policy");
        let listing = self.call(&json!({"command": "view", "path": "/memories"})).await;
        format!(
            "generation {}\n{}--- policy\n{policy}--- listing (is_error {})\n{}",
            self.generation().await,
            self.dump().await,
            listing.is_error,
            listing.content
        )
    }
}

async fn load(repo: &dyn Repository, dir: &DirRef) -> Arc<Dir> {
    match dir.dir() {
        Some(d) => d.clone(),
        None => repo.dir(&dir.id().expect("stored")).await.expect("directory"),
    }
}

pub(crate) fn create(path: &str, text: &str) -> Value {
    json!({"command": "create", "path": path, "file_text": text})
}

pub(crate) fn replace(path: &str, old: &str, new: &str) -> Value {
    json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new})
}

pub(crate) fn insert(path: &str, line: i64, text: &str) -> Value {
    json!({"command": "insert", "path": path, "insert_line": line, "insert_text": text})
}

pub(crate) fn view(path: &str) -> Value {
    json!({"command": "view", "path": path})
}

pub(crate) fn view_range(path: &str, start: i64, end: i64) -> Value {
    json!({"command": "view", "path": path, "view_range": [start, end]})
}

pub(crate) fn created(path: &str) -> String {
    format!("File created successfully at: {path}")
}

/// The `str_replace` answer for a snippet of `lines` numbered from `first`.
pub(crate) fn edited(first: usize, lines: &[&str]) -> String {
    let numbered: Vec<String> = lines.iter().enumerate().map(|(i, l)| format!("{:>6}\t{l}", first + i)).collect();
    format!(
        "The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{}",
        numbered.join("\n")
    )
}

pub(crate) fn inserted(path: &str) -> String {
    format!("The file {path} has been edited.")
}

pub(crate) fn file_too_large(path: &str, size: u64, limit: u64) -> String {
    format!(
        "Cannot write {path}: the file would be {size} bytes, over this store's limit of {limit} bytes per file \
         (max-file-bytes). Nothing was written."
    )
}

/// The max-files refusal; `holds` and `limit` are counted as the message counts them (`1 file`,
/// `3 files`).
pub(crate) fn too_many_files(path: &str, holds: &str, limit: &str) -> String {
    format!("Cannot create {path}: the store holds {holds} and its limit is {limit} (max-files). Nothing was written.")
}

pub(crate) fn store_full(path: &str, after: u64, now: u64, limit: u64) -> String {
    format!(
        "Cannot write {path}: the store would hold {after} bytes of files (it holds {now}), over its limit of \
         {limit} bytes (max-store-bytes). Nothing was written."
    )
}

pub(crate) fn warned(message: &str, summary: &str) -> String {
    format!(
        "{message}\n\nWarning: the text written looks like it contains sensitive data ({summary}). It was stored as \
         given; memory files should not hold secrets."
    )
}

pub(crate) fn redacted(message: &str, summary: &str) -> String {
    format!(
        "{message}\n\nNote: the text looked like it contained sensitive data ({summary}). Each finding was replaced \
         with a [REDACTED:<detector>] marker before it was written."
    )
}

pub(crate) fn rejected(path: &str, summary: &str) -> String {
    format!(
        "Cannot write {path}: the text looks like it contains sensitive data ({summary}). This store's policy \
         rejects it (sensitive = reject), so nothing was written. Remove it and try again."
    )
}

/// `File {path} already exists`, per dialect.
pub(crate) fn already_exists(path: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::Spec | Dialect::TypescriptSdk => format!("Error: File {path} already exists"),
        Dialect::PythonSdk => format!("File {path} already exists"),
    }
}

/// The insert-line error, per dialect.
pub(crate) fn insert_out_of_range(line: i64, n_lines: usize, dialect: Dialect) -> String {
    match dialect {
        Dialect::Spec | Dialect::TypescriptSdk => format!(
            "Error: Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, \
             {n_lines}]"
        ),
        Dialect::PythonSdk => {
            format!("Invalid `insert_line` parameter: {line}. It should be within the range [0, {n_lines}].")
        }
    }
}

// --- max-file-bytes ---------------------------------------------------------------------------

#[tokio::test]
async fn max_file_bytes_at_the_limit_and_one_over() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        s.set("max-file-bytes", "100").await;

        // create: bytes, not characters (é is two bytes).
        let at_limit = "é".repeat(50);
        s.ok(create("/memories/a.txt", &at_limit), &created("/memories/a.txt")).await;
        let over = format!("{at_limit}x");
        s.refused(create("/memories/b.txt", &over), &file_too_large("/memories/b.txt", 101, 100)).await;
        s.refused(create("/memories/new/b.txt", &over), &file_too_large("/memories/new/b.txt", 101, 100)).await;
        // The command's own errors come first.
        s.refused(create("/memories/a.txt", &over), &already_exists("/memories/a.txt", dialect)).await;

        // str_replace: 90 → 100 bytes succeeds, 100 → 101 is refused.
        let c = format!("start:{}", "x".repeat(84));
        s.ok(create("/memories/c.txt", &c), &created("/memories/c.txt")).await;
        let c100 = format!("start:0123456789{}", "x".repeat(84));
        s.ok(replace("/memories/c.txt", "start:", "start:0123456789"), &edited(1, &[&c100])).await;
        assert_eq!(s.file("/memories/c.txt").await.as_deref(), Some(c100.as_str()));
        s.refused(replace("/memories/c.txt", "start:", "start:!"), &file_too_large("/memories/c.txt", 101, 100)).await;
        s.refused(
            replace("/memories/c.txt", "absent", "xx"),
            "No replacement was performed, old_str `absent` did not appear verbatim in /memories/c.txt.",
        )
        .await;

        // insert: 90 → 100 bytes succeeds; an empty line (one more byte) is refused.
        s.ok(create("/memories/d.txt", &format!("{}\n", "y".repeat(89))), &created("/memories/d.txt")).await;
        s.ok(insert("/memories/d.txt", 1, "zzzzzzzzz"), &inserted("/memories/d.txt")).await;
        let d100 = format!("{}\nzzzzzzzzz\n", "y".repeat(89));
        assert_eq!(s.file("/memories/d.txt").await.as_deref(), Some(d100.as_str()));
        s.refused(insert("/memories/d.txt", 0, ""), &file_too_large("/memories/d.txt", 101, 100)).await;
        s.refused(insert("/memories/d.txt", 9, "w"), &insert_out_of_range(9, 2, dialect)).await;
    }
}

#[tokio::test]
async fn max_file_bytes_lowered_a_file_over_it_may_still_shrink() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        let c = format!("start:0123456789{}", "x".repeat(84)); // 100 bytes
        s.ok(create("/memories/c.txt", &c), &created("/memories/c.txt")).await;
        s.ok(create("/memories/d.txt", &format!("{}\n", "y".repeat(99))), &created("/memories/d.txt")).await;
        s.set("max-file-bytes", "50").await;

        // Shrinking, though still over: allowed; the same size: allowed; growing: refused.
        let c86 = format!("s:{}", "x".repeat(84));
        s.ok(replace("/memories/c.txt", "start:0123456789", "s:"), &edited(1, &[&c86])).await;
        let t86 = format!("t:{}", "x".repeat(84));
        s.ok(replace("/memories/c.txt", "s:", "t:"), &edited(1, &[&t86])).await;
        s.refused(replace("/memories/c.txt", "t:", "t::"), &file_too_large("/memories/c.txt", 87, 50)).await;
        s.refused(insert("/memories/d.txt", 0, "w"), &file_too_large("/memories/d.txt", 102, 50)).await;
        // Renaming and reading a file over the limit are not writes of its content.
        s.ok(
            json!({"command": "rename", "old_path": "/memories/d.txt", "new_path": "/memories/big/d.txt"}),
            "Successfully renamed /memories/d.txt to /memories/big/d.txt",
        )
        .await;
        let y99 = "y".repeat(99);
        s.ok(
            view("/memories/big/d.txt"),
            &format!("Here's the content of /memories/big/d.txt with line numbers:\n     1\t{y99}\n     2\t"),
        )
        .await;
        // New files obey the lowered limit exactly.
        s.refused(create("/memories/e.txt", &"e".repeat(51)), &file_too_large("/memories/e.txt", 51, 50)).await;
        s.ok(create("/memories/e.txt", &"e".repeat(50)), &created("/memories/e.txt")).await;
        // Limit 0: only empty files.
        s.set("max-file-bytes", "0").await;
        s.ok(create("/memories/empty.txt", ""), &created("/memories/empty.txt")).await;
        s.refused(insert("/memories/empty.txt", 0, ""), &file_too_large("/memories/empty.txt", 1, 0)).await;
    }
}

// --- max-files --------------------------------------------------------------------------------

#[tokio::test]
async fn max_files_the_nth_file_fits_and_the_next_does_not() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        s.set("max-files", "3").await;
        for name in ["a", "b", ".hidden"] {
            let path = format!("/memories/{name}.txt");
            s.ok(create(&path, name), &created(&path)).await;
        }
        // Hidden files count: the store holds three.
        s.refused(create("/memories/d.txt", "d"), &too_many_files("/memories/d.txt", "3 files", "3 files")).await;
        // No parent directory is left behind by the refusal.
        s.refused(create("/memories/sub/d.txt", "d"), &too_many_files("/memories/sub/d.txt", "3 files", "3 files"))
            .await;
        // Edits and renames of existing files do not add files.
        s.ok(replace("/memories/a.txt", "a", "A"), &edited(1, &["A"])).await;
        s.ok(insert("/memories/b.txt", 1, "more"), &inserted("/memories/b.txt")).await;
        s.ok(
            json!({"command": "rename", "old_path": "/memories/b.txt", "new_path": "/memories/sub/b.txt"}),
            "Successfully renamed /memories/b.txt to /memories/sub/b.txt",
        )
        .await;
        // After a delete, a create fits again, and the one after it does not.
        s.ok(json!({"command": "delete", "path": "/memories/a.txt"}), "Successfully deleted /memories/a.txt").await;
        s.ok(create("/memories/d.txt", "d"), &created("/memories/d.txt")).await;
        s.refused(create("/memories/e.txt", "e"), &too_many_files("/memories/e.txt", "3 files", "3 files")).await;
        // Deleting a directory frees each file in it.
        s.ok(json!({"command": "delete", "path": "/memories/sub"}), "Successfully deleted /memories/sub").await;
        s.ok(create("/memories/e.txt", "e"), &created("/memories/e.txt")).await;
        // Lowered below the count: edits still work, creates are refused.
        s.set("max-files", "1").await;
        s.ok(replace("/memories/e.txt", "e", "E"), &edited(1, &["E"])).await;
        s.refused(create("/memories/f.txt", "f"), &too_many_files("/memories/f.txt", "3 files", "1 file")).await;
        s.set("max-files", "0").await;
        s.refused(create("/memories/f.txt", "f"), &too_many_files("/memories/f.txt", "3 files", "0 files")).await;
        s.ok(json!({"command": "delete", "path": "/memories/d.txt"}), "Successfully deleted /memories/d.txt").await;
    }
}

// --- max-store-bytes --------------------------------------------------------------------------

#[tokio::test]
async fn max_store_bytes_at_the_limit_and_one_over() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        s.set("max-store-bytes", "100").await;
        let (a60, a70, a71) = ("a".repeat(60), "a".repeat(70), "a".repeat(71));
        s.ok(create("/memories/a.txt", &a60), &created("/memories/a.txt")).await;
        s.ok(create("/memories/b.txt", &"b".repeat(30)), &created("/memories/b.txt")).await;
        // str_replace to exactly 100 bytes, then one over.
        s.ok(replace("/memories/a.txt", &a60, &a70), &edited(1, &[&a70])).await;
        s.refused(replace("/memories/a.txt", &a70, &a71), &store_full("/memories/a.txt", 101, 100, 100)).await;
        s.ok(replace("/memories/a.txt", &a70, &a60), &edited(1, &[&a60])).await;
        // insert to exactly 100 bytes (30 + "\n" + 8 + "\n"), then one more byte.
        s.ok(insert("/memories/b.txt", 1, "cccccccc"), &inserted("/memories/b.txt")).await;
        s.refused(insert("/memories/b.txt", 0, ""), &store_full("/memories/b.txt", 101, 100, 100)).await;
        // create: an empty file adds no bytes; one byte more is refused.
        s.ok(create("/memories/c.txt", ""), &created("/memories/c.txt")).await;
        s.refused(create("/memories/d.txt", "x"), &store_full("/memories/d.txt", 101, 100, 100)).await;
        // Both limits broken: the file's is named first.
        s.set("max-file-bytes", "80").await;
        s.refused(replace("/memories/a.txt", &a60, &"a".repeat(81)), &file_too_large("/memories/a.txt", 81, 80)).await;

        // Lowered below what the store holds: shrinking and same-size edits pass, growth does not.
        s.set("max-store-bytes", "50").await;
        let a59 = "a".repeat(59);
        s.ok(replace("/memories/a.txt", &a60, &a59), &edited(1, &[&a59])).await;
        let z59 = "z".repeat(59);
        s.ok(replace("/memories/a.txt", &a59, &z59), &edited(1, &[&z59])).await;
        s.refused(replace("/memories/a.txt", &z59, &a60), &store_full("/memories/a.txt", 100, 99, 50)).await;
        s.refused(insert("/memories/b.txt", 0, "x"), &store_full("/memories/b.txt", 101, 99, 50)).await;
        s.refused(create("/memories/d.txt", "x"), &store_full("/memories/d.txt", 100, 99, 50)).await;
        s.ok(json!({"command": "delete", "path": "/memories/b.txt"}), "Successfully deleted /memories/b.txt").await;
        s.refused(create("/memories/d.txt", "x"), &store_full("/memories/d.txt", 60, 59, 50)).await;
    }
}

// --- the default policy is transparent --------------------------------------------------------

/// A normal session: every command, successes and errors, nested directories, a hidden file,
/// `node_modules`, non-ASCII text, a 12 KB file, and AWS's documented placeholder key.
fn normal_session() -> Vec<Value> {
    let notes = "# memfs\n\n- encrypted store\n- Größe: 1 MiB par défaut\n- 日本語のメモ\n";
    let long: String = (1..=150).map(|i| format!("entry {i}: {}\n", "lorem ipsum ".repeat(6))).collect();
    vec![
        view("/memories"),
        create("/memories/user/preferences.md", "# Preferences\n- tabs\n- AWS docs key AKIAIOSFODNN7EXAMPLE\n"),
        create("/memories/projects/memfs/notes.md", notes),
        create("/memories/node_modules/pkg.json", "{}"),
        create("/memories/.hidden", "h"),
        create("/memories/log.md", &long),
        view("/memories"),
        view("/memories/projects"),
        view("/memories/projects/memfs/notes.md"),
        view_range("/memories/projects/memfs/notes.md", 2, 4),
        view_range("/memories/projects/memfs/notes.md", 3, -1),
        view("/memories/log.md"),
        view_range("/memories/log.md", 140, 200),
        replace("/memories/projects/memfs/notes.md", "encrypted store", "encrypted, versioned store"),
        replace("/memories/projects/memfs/notes.md", "absent", "x"),
        replace("/memories/log.md", "lorem", "x"),
        replace("/memories/missing.md", "a", "b"),
        replace("/memories/projects", "a", "b"),
        insert("/memories/projects/memfs/notes.md", 0, "<!-- top -->"),
        insert("/memories/projects/memfs/notes.md", 6, "last\n"),
        insert("/memories/projects/memfs/notes.md", 99, "x"),
        insert("/memories/nope.md", 0, "x"),
        create("/memories/user/preferences.md", "again"),
        json!({"command": "rename", "old_path": "/memories/log.md", "new_path": "/memories/archive/log.md"}),
        json!({"command": "rename", "old_path": "/memories/gone.md", "new_path": "/memories/x.md"}),
        json!({"command": "rename", "old_path": "/memories/user", "new_path": "/memories/projects"}),
        view("/memories"),
        json!({"command": "delete", "path": "/memories/archive/log.md"}),
        json!({"command": "delete", "path": "/memories/archive/log.md"}),
        json!({"command": "delete", "path": "/memories"}),
        view("/memories/archive/log.md"),
        view("/etc/passwd"),
        view("/memories"),
        view("/memories/projects/memfs/notes.md"),
    ]
}

#[tokio::test]
async fn default_policy_answers_as_unlimited() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        assert_eq!(*s.fs.policy().await.unwrap(), Policy::default());
        let (mut tree, mut plain) = (Tree::empty(), MapResolver::new());
        let (mut errors, mut mutations) = (0, 0);
        for input in normal_session() {
            let command = Command::from_input(&input).unwrap();
            let reference = memfs_core::execute(&command, &tree, dialect, &plain).expect("all in memory");
            if let Some(m) = reference.mutation {
                tree = m.tree;
                plain.keep(m.blobs);
                mutations += 1;
            }
            errors += usize::from(reference.result.is_error);
            s.expect(input, reference.result.is_error, &reference.result.content).await;
        }
        assert_eq!((errors, mutations), (13, 10), "[{dialect}] the session exercises errors and successes");
        assert_eq!(s.generation().await, 10);
    }
}

// --- policy changes ---------------------------------------------------------------------------

const DEFAULT_SETTINGS: &str = "max-file-bytes       16777216\nmax-store-bytes      1073741824\n\
                                max-files            100000\nview-max-chars       16000\nsensitive            warn\n\
                                expire-unused-after  off\n";

#[tokio::test]
async fn policy_set_unset_get_round_trip() {
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        s.ok(create("/memories/a.txt", "a"), &created("/memories/a.txt")).await;
        assert_eq!(s.fs.policy().await.unwrap().to_string(), DEFAULT_SETTINGS);

        for (key, value, shown) in [
            ("max-file-bytes", "64KiB", "65536"),
            ("max-store-bytes", "2 MB", "2000000"),
            ("max-files", "none", "none"),
            ("view-max-chars", "10000", "10000"),
            ("sensitive", "redact", "redact"),
            ("expire-unused-after", "90d", "90d"),
            ("rule.employee-id", EMPLOYEE_RULE, EMPLOYEE_RULE),
        ] {
            let before = s.generation().await;
            let changed = s.fs.set_policy(key, value).await.unwrap();
            assert_eq!(changed.generation, Some(before + 1), "{key}");
            assert_eq!(s.generation().await, before + 1, "{key}");
            assert_eq!(changed.policy.get(key).unwrap(), shown, "{key}");
            assert_eq!(s.fs.policy().await.unwrap().get(key).unwrap(), shown, "{key}");
            // The commit records the value as it reads back, and changes no file.
            let head = s.fs.resolve("HEAD").await.unwrap();
            let set = PolicyChange::Set { set: key.to_owned(), value: shown.to_owned() };
            assert_eq!(head.record(), Record::from(Operation::Policy(set)));
            assert_eq!(head.changes, []);
            // The same value again, in any spelling: no commit.
            for same in [value, shown] {
                let again = s.fs.set_policy(key, same).await.unwrap();
                assert_eq!(again.generation, None, "{key} {same}");
                assert_eq!(s.generation().await, before + 1, "{key} {same}");
            }
        }
        assert_eq!(
            s.fs.policy().await.unwrap().to_string(),
            format!(
                "max-file-bytes       65536\nmax-store-bytes      2000000\nmax-files            none\n\
                 view-max-chars       10000\nsensitive            redact\nexpire-unused-after  90d\n\
                 rule.employee-id     {EMPLOYEE_RULE}\n"
            )
        );

        for key in [
            "max-file-bytes",
            "max-store-bytes",
            "max-files",
            "view-max-chars",
            "sensitive",
            "expire-unused-after",
            "rule.employee-id",
        ] {
            let before = s.generation().await;
            let changed = s.fs.unset_policy(key).await.unwrap();
            assert_eq!(changed.generation, Some(before + 1), "unset {key}");
            assert_eq!(s.generation().await, before + 1, "unset {key}");
            let head = s.fs.resolve("HEAD").await.unwrap();
            let unset = PolicyChange::Unset { unset: key.to_owned() };
            assert_eq!(head.record(), Record::from(Operation::Policy(unset)));
            if key.starts_with("rule.") {
                continue;
            }
            // Unsetting a default: no commit.
            assert_eq!(s.fs.unset_policy(key).await.unwrap().generation, None, "unset {key} again");
            assert_eq!(s.generation().await, before + 1, "unset {key} again");
        }
        assert_eq!(*s.fs.policy().await.unwrap(), Policy::default());
        assert_eq!(s.fs.policy().await.unwrap().to_string(), DEFAULT_SETTINGS);
        // Setting a default value explicitly commits nothing either.
        let before = s.generation().await;
        assert_eq!(s.fs.set_policy("max-files", "100000").await.unwrap().generation, None);
        assert_eq!(s.fs.set_policy("sensitive", "warn").await.unwrap().generation, None);
        assert_eq!(s.generation().await, before);
        // The tree was never touched.
        assert_eq!(s.file("/memories/a.txt").await.as_deref(), Some("a"));
    }
}

#[tokio::test]
async fn policy_invalid_values_and_unknown_keys_change_nothing() {
    const SIZE: &str = "a number of bytes (suffixes KiB, MiB, GiB, KB, MB, GB) or `none` for no limit";
    const COUNT: &str = "a whole number or `none` for no limit";
    const VIEW_MAX: &str = "a whole number of characters, at least 10000, or `none` for no limit";
    const UNKNOWN: &str = "expected max-file-bytes, max-store-bytes, max-files, view-max-chars, sensitive, expire-unused-after or rule.NAME";
    let long_pattern = "a".repeat(4097);
    let cases: Vec<(&str, &str, String)> = vec![
        ("max-file-bytes", "-1", format!("invalid value `-1` for max-file-bytes: {SIZE}")),
        ("max-file-bytes", "1.5KiB", format!("invalid value `1.5KiB` for max-file-bytes: {SIZE}")),
        ("max-file-bytes", "10kb", format!("invalid value `10kb` for max-file-bytes: {SIZE}")),
        ("max-store-bytes", "99999999999GiB", format!("invalid value `99999999999GiB` for max-store-bytes: {SIZE}")),
        ("max-store-bytes", "", format!("invalid value `` for max-store-bytes: {SIZE}")),
        ("max-files", "lots", format!("invalid value `lots` for max-files: {COUNT}")),
        ("max-files", "+5", format!("invalid value `+5` for max-files: {COUNT}")),
        // At least 10000: room for any view's header (a path of up to 4,096 bytes) and its note.
        ("view-max-chars", "9999", format!("invalid value `9999` for view-max-chars: {VIEW_MAX}")),
        ("view-max-chars", "1000", format!("invalid value `1000` for view-max-chars: {VIEW_MAX}")),
        ("view-max-chars", "0", format!("invalid value `0` for view-max-chars: {VIEW_MAX}")),
        ("sensitive", "Warn", "invalid value `Warn` for sensitive: off, warn, redact or reject".to_owned()),
        (
            "expire-unused-after",
            "0d",
            "invalid value `0d` for expire-unused-after: a number of days such as `90d`, or `off`".to_owned(),
        ),
        (
            "expire-unused-after",
            "90",
            "invalid value `90` for expire-unused-after: a number of days such as `90d`, or `off`".to_owned(),
        ),
        ("rule.x", "a*", "custom rule \"x\": the pattern can match the empty string".to_owned()),
        ("rule.x", &long_pattern, "custom rule \"x\": the pattern is longer than 4096 bytes".to_owned()),
        // A rule that finds the markers redaction writes would find its own work.
        (
            "rule.x",
            "REDACTED",
            "custom rule \"x\": the pattern matches the [REDACTED:…] markers that redaction writes".to_owned(),
        ),
        (
            "rule.bad name",
            "x",
            "custom rule name \"bad name\" is invalid: use 1 to 64 ASCII letters, digits, '-', '_' or '.'".to_owned(),
        ),
        (
            "rule.",
            "x",
            "custom rule name \"\" is invalid: use 1 to 64 ASCII letters, digits, '-', '_' or '.'".to_owned(),
        ),
        ("colour", "red", format!("unknown policy key `colour`: {UNKNOWN}")),
        ("Max-Files", "1", format!("unknown policy key `Max-Files`: {UNKNOWN}")),
    ];
    for dialect in DIALECTS {
        let s = Store::new(dialect);
        s.ok(create("/memories/a.txt", "a"), &created("/memories/a.txt")).await;
        s.set("max-files", "7").await;
        s.set("rule.kept", "KEPT-[0-9]+").await;
        let before = s.state().await;
        for (key, value, expected) in &cases {
            let err = s.fs.set_policy(key, value).await.expect_err(key);
            check_text(&format!("set {key} {value}"), &err.to_string(), expected);
            check_text(&format!("state after set {key}"), &s.state().await, &before);
        }
        for (key, expected) in [
            ("colour", format!("unknown policy key `colour`: {UNKNOWN}")),
            ("rule.none", "no custom rule named `none`".to_owned()),
        ] {
            let err = s.fs.unset_policy(key).await.expect_err(key);
            check_text(&format!("unset {key}"), &err.to_string(), &expected);
            check_text(&format!("state after unset {key}"), &s.state().await, &before);
        }
        let invalid_pattern = s.fs.set_policy("rule.x", "EMP-(").await.expect_err("unclosed group").to_string();
        assert!(invalid_pattern.starts_with("custom rule \"x\": invalid pattern: "), "{invalid_pattern}");
        check_text("state after an invalid pattern", &s.state().await, &before);
    }
}

/// A unique empty directory under the system's temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
        let path = std::env::temp_dir().join(format!("memfs-safeguards-{tag}-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn passphrase() -> Credential {
    Credential::passphrase("correct horse battery staple".to_owned())
}

/// Opens the local store at `url` (made by [`Memfs::init`]) as another process would.
async fn open_local(url: &str, dialect: Dialect) -> Store {
    let options = OpenOptions {
        dialect,
        credential: Some(passphrase()),
        today: Some(DAY),
        state_dir: StateDir::Off,
        ..OpenOptions::default()
    };
    Store { fs: Memfs::open(url, options).await.unwrap(), dialect }
}

#[tokio::test]
async fn policy_persists_when_a_local_store_is_reopened() {
    for dialect in DIALECTS {
        let tmp = TempDir::new(&dialect.to_string());
        let url = format!("file://{}/store", tmp.0.display());
        Memfs::init(&url, &passphrase(), KdfParams::new(8, 1, 1).unwrap()).await.unwrap();
        let s = open_local(&url, dialect).await;
        s.set("max-files", "1").await;
        s.set("sensitive", "reject").await;
        s.set("rule.employee-id", EMPLOYEE_RULE).await;
        s.set("expire-unused-after", "30d").await;
        s.ok(create("/memories/a.txt", "a"), &created("/memories/a.txt")).await;
        let policy = s.fs.policy().await.unwrap();
        drop(s);

        let s = open_local(&url, dialect).await;
        assert_eq!(s.fs.policy().await.unwrap(), policy);
        assert_eq!(s.generation().await, 5);
        s.refused(create("/memories/b.txt", "b"), &too_many_files("/memories/b.txt", "1 file", "1 file")).await;
        s.refused(
            replace("/memories/a.txt", "a", "EMP-000001"),
            &rejected("/memories/a.txt", "1 finding: custom:employee-id (line 1)"),
        )
        .await;
        // A second engine on the same store sees a change at once: the policy is the head's.
        let other = open_local(&url, dialect).await;
        other.set("max-files", "2").await;
        s.ok(create("/memories/b.txt", "b"), &created("/memories/b.txt")).await;
    }
}
