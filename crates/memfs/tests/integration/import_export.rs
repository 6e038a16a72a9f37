//! `Memfs::import` and `Memfs::export`: a plain tree in and out as one commit, exactly; clashes,
//! invalid entries and the store's policy refuse the whole import and change nothing.

use memfs::history::{CommitRecord, Operation, Record};
use memfs::{ConflictKind, Dialect, Entry, Error, ImportOptions, Imported};
use memfs_core::Change;

use crate::safeguards::{AWS_KEY, Store, create, created, file_too_large, rejected};
use crate::support::check_text;

fn dir(path: &str) -> Entry {
    Entry::Dir { path: path.to_owned() }
}

fn file(path: &str, text: &str) -> Entry {
    Entry::File { path: path.to_owned(), text: text.to_owned() }
}

fn from(source: &str) -> ImportOptions {
    ImportOptions { overwrite: false, source: source.to_owned(), dry_run: false }
}

fn overwriting(source: &str) -> ImportOptions {
    ImportOptions { overwrite: true, source: source.to_owned(), dry_run: false }
}

/// A tree with what a round trip must keep: nesting, an empty directory, a hidden file, an
/// empty file, `\r\n`, no final newline, non-ASCII names and text; in export order (depth
/// first, names in byte order, a directory before what it holds).
fn sample() -> Vec<Entry> {
    vec![
        file("/memories/.hidden", "dot file\n"),
        dir("/memories/empty"),
        file("/memories/notes.md", "# Notes\r\nline two\r\n"),
        dir("/memories/projects"),
        dir("/memories/projects/deep"),
        file("/memories/projects/deep/x.txt", "no final newline"),
        file("/memories/projects/empty.txt", ""),
        file("/memories/projects/ünï cödé.md", "Grüße, 世界\n"),
    ]
}

fn changes(store: &[&str]) -> Vec<Change> {
    store.iter().map(|p| Change::Created { path: (*p).to_owned() }).collect()
}

async fn import(s: &Store, entries: &[Entry], options: &ImportOptions) -> Result<Imported, Error> {
    s.fs.import(entries, options, &()).await
}

async fn log(s: &Store) -> Vec<CommitRecord> {
    s.fs.log(None, None).await.expect("log")
}

/// Runs an import that must fail, checks its message, and that nothing changed.
async fn refused(s: &Store, entries: &[Entry], options: &ImportOptions, message: &str) -> Error {
    let before = s.state().await;
    let e = import(s, entries, options).await.expect_err("the import must be refused");
    check_text("refusal", &e.to_string(), message);
    check_text("state after a refused import", &s.state().await, &before);
    e
}

#[tokio::test]
async fn round_trip_is_exact_and_one_commit() {
    let s = Store::new(Dialect::Spec);
    let imported = import(&s, &sample(), &from("memories")).await.expect("import");
    let files = [
        "/memories/.hidden",
        "/memories/notes.md",
        "/memories/projects/deep/x.txt",
        "/memories/projects/empty.txt",
        "/memories/projects/ünï cödé.md",
    ];
    assert_eq!(imported.generation, Some(1));
    assert_eq!(imported.changes, changes(&files));
    assert_eq!((imported.new_dirs, imported.unchanged), (3, 0));
    assert!(imported.notes.is_empty(), "{:?}", imported.notes);

    let commits = log(&s).await;
    assert_eq!(commits.len(), 1);
    check_text("recorded command", &commits[0].command, r#"{"command":"import","files":5,"from":"memories"}"#);
    assert_eq!(commits[0].record(), Record::from(Operation::Import { files: 5, from: "memories".into() }));
    assert_eq!(commits[0].changes, changes(&files));

    let exported = s.fs.export(&()).await.expect("export");
    assert_eq!(exported.generation, 1);
    assert_eq!(exported.entries, sample());
    // Imported files count as used today, as created ones do.
    check_text(
        "stored tree",
        &s.dump().await,
        "/memories/\n/memories/.hidden 9B day+0 = \"dot file\\n\"\n/memories/notes.md 19B day+0 = \"# \
         Notes\\r\\nline two\\r\\n\"\n/memories/empty/\n/memories/projects/\n/memories/projects/empty.txt 0B \
         day+0 = \"\"\n/memories/projects/ünï cödé.md 16B day+0 = \"Grüße, 世界\\n\"\n/memories/projects/deep/\n\
         /memories/projects/deep/x.txt 16B day+0 = \"no final newline\"\n",
    );

    // Into another store and out again.
    let t = Store::new(Dialect::PythonSdk);
    import(&t, &exported.entries, &from("copy")).await.expect("import the export");
    assert_eq!(t.fs.export(&()).await.expect("export").entries, sample());

    // The same again changes nothing and commits nothing, with overwrite.
    let again = import(&s, &sample(), &overwriting("memories")).await.expect("import again");
    assert_eq!((again.generation, again.changes.len(), again.new_dirs, again.unchanged), (None, 0, 0, 5));
    assert_eq!(log(&s).await.len(), 1);
    // An empty import too.
    assert_eq!(import(&s, &[], &from("nothing")).await.expect("empty import").generation, None);
    assert_eq!(log(&s).await.len(), 1);
}

#[tokio::test]
async fn existing_files_refuse_the_import_unless_overwritten() {
    let s = Store::new(Dialect::Spec);
    s.ok(create("/memories/a.md", "old a\n"), &created("/memories/a.md")).await;
    s.ok(create("/memories/d/b.md", "old b\n"), &created("/memories/d/b.md")).await;
    s.ok(create("/memories/f", "a file\n"), &created("/memories/f")).await;
    let entries =
        [file("/memories/a.md", "new a\n"), file("/memories/d/b.md", "old b\n"), file("/memories/c.md", "c\n")];
    let e = refused(
        &s,
        &entries,
        &from("in"),
        "nothing was imported: 2 paths clash with the store:\n  /memories/a.md already exists\n  /memories/d/b.md \
         already exists",
    )
    .await;
    let Error::ImportConflicts { conflicts } = e else { panic!("not ImportConflicts: {e:?}") };
    assert!(conflicts.iter().all(|c| c.kind == ConflictKind::FileExists));

    // A clash of kinds is refused even with overwrite, and every clash is listed.
    let mixed = [
        file("/memories/a.md", "new a\n"),
        file("/memories/d", "a file where a directory is\n"),
        dir("/memories/f"),
        file("/memories/f/g/h.md", "below a file\n"),
    ];
    refused(
        &s,
        &mixed,
        &overwriting("in"),
        "nothing was imported: 3 paths clash with the store:\n  /memories/d is a directory in the store\n  \
         /memories/f is a file in the store\n  /memories/f/g/h.md: /memories/f is a file in the store",
    )
    .await;

    // With overwrite: replaced, created, and the identical file left alone; one commit.
    let before = log(&s).await.len();
    let imported = import(&s, &entries, &overwriting("in")).await.expect("import with overwrite");
    assert_eq!(
        imported.changes,
        [Change::Modified { path: "/memories/a.md".into() }, Change::Created { path: "/memories/c.md".into() }]
    );
    assert_eq!((imported.unchanged, imported.new_dirs), (1, 0));
    // What `memfs import` prints of it is asserted by the CLI's tests (`cli::import_export`).
    assert_eq!(imported.generation, Some(before as u64 + 1));
    assert_eq!(log(&s).await.len(), before + 1);
    assert_eq!(s.file("/memories/a.md").await.as_deref(), Some("new a\n"));
    assert_eq!(s.file("/memories/c.md").await.as_deref(), Some("c\n"));
}

#[tokio::test]
async fn invalid_and_contradictory_entries_are_refused() {
    let s = Store::new(Dialect::Spec);
    s.ok(create("/memories/keep.md", "kept\n"), &created("/memories/keep.md")).await;
    let ok = file("/memories/ok.md", "fine\n");
    let cases: [(Vec<Entry>, &str); 8] = [
        (
            vec![ok.clone(), file("/memories/../etc/passwd", "x")],
            r#"path "/memories/../etc/passwd" would escape /memories"#,
        ),
        (
            vec![ok.clone(), file("/memoriesfoo/x.md", "x")],
            r#"path "/memoriesfoo/x.md" is outside the /memories directory"#,
        ),
        (vec![ok.clone(), file("/memories/a\\b.md", "x")], r#"path "/memories/a\\b.md" contains a backslash"#),
        (
            vec![ok.clone(), file("/memories/%2e%2e/x", "x")],
            r#"path "/memories/%2e%2e/x" contains an encoded traversal sequence"#,
        ),
        (vec![ok.clone(), file("/memories/ok.md", "again")], "cannot import /memories/ok.md: it is listed twice"),
        (
            vec![ok.clone(), dir("/memories/ok.md")],
            "cannot import /memories/ok.md: it is listed as a file and as a directory",
        ),
        (
            vec![ok.clone(), file("/memories/ok.md/x", "below a file")],
            "cannot import /memories/ok.md/x: /memories/ok.md is listed as a file",
        ),
        (vec![file("/memories", "root")], "cannot import /memories: /memories itself cannot be a file"),
    ];
    for (entries, message) in cases {
        refused(&s, &entries, &overwriting("bad"), message).await;
    }
}

#[tokio::test]
async fn the_policy_applies_to_imported_files() {
    let s = Store::new(Dialect::Spec);
    s.set("max-file-bytes", "8").await;
    let entries = [file("/memories/a.md", "small\n"), file("/memories/big.md", "123456789")];
    refused(&s, &entries, &from("in"), &format!("nothing was imported: {}", file_too_large("/memories/big.md", 9, 8)))
        .await;
    s.set("max-file-bytes", "none").await;

    // warn (the default): written as given, the warning returned per file.
    let secret = format!("deploy key: {AWS_KEY}\n");
    let entries = [file("/memories/a.md", "plain\n"), file("/memories/s.md", &secret)];
    let imported = import(&s, &entries, &from("in")).await.expect("import with a warning");
    assert_eq!(
        imported.notes,
        [(
            "/memories/s.md".to_owned(),
            "Warning: the text written looks like it contains sensitive data (1 finding: aws-access-key (line 1)). It \
             was stored as given; memory files should not hold secrets."
                .to_owned()
        )]
    );
    assert_eq!(s.file("/memories/s.md").await, Some(secret.clone()));

    // redact: the markers are what is stored.
    s.set("sensitive", "redact").await;
    let imported = import(&s, &[file("/memories/r.md", &secret)], &from("in")).await.expect("import redacted");
    assert_eq!(imported.notes.len(), 1);
    assert_eq!(s.file("/memories/r.md").await.as_deref(), Some("deploy key: [REDACTED:aws-access-key]\n"));

    // reject: the whole import is refused.
    s.set("sensitive", "reject").await;
    let entries = [file("/memories/fine.md", "plain\n"), file("/memories/t.md", &secret)];
    refused(
        &s,
        &entries,
        &from("in"),
        &format!("nothing was imported: {}", rejected("/memories/t.md", "1 finding: aws-access-key (line 1)")),
    )
    .await;
}

/// An import told to stop while it plans stops before its commit: `ImportStopped`, and the
/// store as it was; not told, it lands.
#[tokio::test]
async fn an_import_told_to_stop_writes_nothing() {
    let s = Store::new(Dialect::Spec);
    let before = s.state().await;
    let stop = std::sync::atomic::AtomicBool::new(true);
    let e = s.fs.import_until(&sample(), &from("memories"), &stop, &()).await.expect_err("stopped");
    assert!(matches!(e, Error::ImportStopped), "{e:?}");
    check_text("message", &e.to_string(), "the import was stopped before its commit: nothing was imported");
    check_text("state after a stopped import", &s.state().await, &before);
    stop.store(false, std::sync::atomic::Ordering::SeqCst);
    let imported = s.fs.import_until(&sample(), &from("memories"), &stop, &()).await.expect("import");
    assert_eq!(imported.generation, Some(1));
}
