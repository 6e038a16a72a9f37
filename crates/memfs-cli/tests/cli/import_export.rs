//! `memfs import DIR` and `memfs export DIR` end to end, with exact outputs: a folder in and
//! out as one commit, exactly; symlinks, names the store refuses, non-UTF-8 files and clashes
//! refused with nothing changed; plaintext written 0600 in folders 0700.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::Path;

use crate::policy::{Store, header};
use crate::support::{assert_text, text};

/// What `memfs export` prints on stderr before writing.
fn plaintext_warning(dir: &Path) -> String {
    format!(
        "memfs: warning: writing the memory files to {} as plaintext, outside the encrypted store (files 0600, \
         folders 0700)\n",
        dir.display()
    )
}

/// Everything below `dir`, by relative path: `dir/` for folders, the content for files (as
/// lossy text), `-> target` for links; with each entry's mode.
fn tree(dir: &Path) -> BTreeMap<String, (String, u32)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (String, u32)>) {
        for entry in std::fs::read_dir(dir).expect("read a folder") {
            let path = entry.expect("an entry").path();
            let rel = path.strip_prefix(root).expect("below the root").to_string_lossy().into_owned();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let mode = meta.permissions().mode() & 0o777;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("a link");
                out.insert(rel, (format!("-> {}", target.display()), mode));
            } else if meta.is_dir() {
                out.insert(format!("{rel}/"), (String::new(), mode));
                walk(root, &path, out);
            } else {
                let content = String::from_utf8_lossy(&std::fs::read(&path).expect("a file")).into_owned();
                out.insert(rel, (content, mode));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Contents only (no modes).
fn contents(dir: &Path) -> BTreeMap<String, String> {
    tree(dir).into_iter().map(|(k, (v, _))| (k, v)).collect()
}

fn write(path: &Path, content: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create parents");
    }
    std::fs::write(path, content).expect("write a file");
}

/// The folder the Python SDK's BetaLocalFilesystemMemoryTool would leave behind, with what a
/// round trip must keep: nesting, an empty folder, a hidden file, an empty file, `\r\n`, no
/// final newline, non-ASCII names and text.
fn sample(root: &Path) -> std::path::PathBuf {
    let dir = root.join("memory").join("memories");
    write(&dir.join("notes.md"), b"# Notes\r\nline two\r\n");
    write(&dir.join(".hidden"), b"dot file\n");
    write(&dir.join("projects/deep/x.txt"), b"no final newline");
    write(&dir.join("projects/empty.txt"), b"");
    write(&dir.join("projects/\u{fc}n\u{ef}.md"), "Grüße, 世界\n".as_bytes());
    std::fs::create_dir_all(dir.join("empty")).expect("an empty folder");
    dir
}

const SAMPLE_CHANGES: &str = "  A /memories/.hidden\n  A /memories/notes.md\n  A /memories/projects/deep/x.txt\n  A \
                              /memories/projects/empty.txt\n  A /memories/projects/\u{fc}n\u{ef}.md\n";

#[test]
fn round_trip_is_exact_one_commit_and_private() {
    let s = Store::new();
    let work = tempfile::tempdir().expect("temp dir");
    let folder = sample(work.path());
    let arg = folder.to_str().expect("a UTF-8 path");
    let out = s.ok(&["import", arg]);
    assert_text("import", &out, &format!("@1: imported 5 files from {arg} (3 new directories)\n{SAMPLE_CHANGES}"));

    // One commit, listing every file.
    let commits = s.commits();
    assert_eq!(commits.len(), 1);
    assert_text(
        "log",
        &s.ok(&["log"]),
        &format!("{}{SAMPLE_CHANGES}", header(&commits, 1, "-", "import memories (5 files)")),
    );
    assert_eq!(commits[0]["command"], serde_json::json!({"command": "import", "from": "memories", "files": 5}));
    assert_text(
        "a file as the model sees it",
        &s.exec(&[], &[r#"{"command":"view","path":"/memories/notes.md"}"#]),
        "{\"content\":\"Here's the content of /memories/notes.md with line numbers:\\n     1\\t# Notes\\r\\n     \
         2\\tline two\\r\\n     3\\t\",\"is_error\":false}\n",
    );

    // Out to a new folder: created 0700, files 0600, folders 0700, plaintext warned about.
    let out_dir = work.path().join("exported");
    let exported = s.run(&["export", out_dir.to_str().expect("UTF-8")]);
    assert!(exported.status.success(), "export: {}", text(&exported.stderr));
    assert_text("export stderr", &text(&exported.stderr), &plaintext_warning(&out_dir));
    assert_text(
        "export stdout",
        &text(&exported.stdout),
        &format!("exported 5 files and 3 folders from @1 to {}\n", out_dir.display()),
    );
    assert_eq!(contents(&out_dir), contents(&folder));
    assert_eq!(std::fs::metadata(&out_dir).expect("the folder").permissions().mode() & 0o777, 0o700);
    for (path, (_, mode)) in tree(&out_dir) {
        let expected = if path.ends_with('/') { 0o700 } else { 0o600 };
        assert_eq!(mode, expected, "mode of {path}: {mode:o}");
    }

    // The export imports into a new store as the same tree: import(export(x)) == x.
    let t = Store::new();
    let out_arg = out_dir.to_str().expect("UTF-8");
    assert_text(
        "import of the export",
        &t.ok(&["import", out_arg]),
        &format!("@1: imported 5 files from {out_arg} (3 new directories)\n{SAMPLE_CHANGES}"),
    );
    let again = work.path().join("again");
    let out = t.run(&["export", again.to_str().expect("UTF-8")]);
    assert!(out.status.success(), "export: {}", text(&out.stderr));
    assert_eq!(contents(&again), contents(&folder));

    // Importing the same folder again with --overwrite changes nothing.
    assert_text(
        "again",
        &s.ok(&["import", "--overwrite", arg]),
        &format!("nothing to import: the store already holds everything in {arg}\n"),
    );
    assert_eq!(s.commits().len(), 1);
}

#[test]
fn symlinks_and_paths_the_store_refuses_change_nothing() {
    let s = Store::new();
    s.exec(&[], &[r#"{"command":"create","path":"/memories/kept.md","file_text":"kept\n"}"#]);
    let work = tempfile::tempdir().expect("temp dir");
    let outside = work.path().join("outside.txt");
    write(&outside, b"secret outside the folder\n");
    let before = s.commits();

    let dir = work.path().join("links");
    write(&dir.join("a.md"), b"a\n");
    // A link to a file outside the folder, a link up to its parent, a link inside it.
    let cases: [(&str, &Path); 3] = [("zz-outside", &outside), ("up", Path::new("..")), ("inner", Path::new("a.md"))];
    for (name, target) in cases {
        let link = dir.join("sub").join(name);
        std::fs::create_dir_all(link.parent().expect("parent")).expect("sub");
        symlink(target, &link).expect("a symlink");
        let stderr = s.fails(1, &["import", dir.to_str().expect("UTF-8")]);
        assert_text(
            &format!("link {name}"),
            &stderr,
            &format!("memfs: refusing {}: it is a symbolic link, and memfs import never follows one\n", link.display()),
        );
        std::fs::remove_file(&link).expect("remove the link");
    }
    // The folder itself a link.
    let link = work.path().join("link-to-folder");
    symlink(&dir, &link).expect("a symlink");
    assert_text(
        "folder link",
        &s.fails(1, &["import", link.to_str().expect("UTF-8")]),
        &format!(
            "memfs: refusing {}: it is a symbolic link, and memfs import never follows one; give the folder it points \
             to\n",
            link.display()
        ),
    );

    // Names the store's path rules refuse (a file name cannot hold `/` or be `..` on disk).
    let names = [
        ("back\\slash.md", r#"path "/memories/back\\slash.md" contains a backslash"#),
        ("%2e%2e", r#"path "/memories/%2e%2e" contains an encoded traversal sequence"#),
        ("tab\there.md", r#"path "/memories/tab\there.md" contains a control character"#),
        ("txt\u{202e}.md", r#"path "/memories/txt\u{202e}.md" contains an invisible format character"#),
    ];
    for (name, message) in names {
        let bad = work.path().join(format!("bad-{}", name.len()));
        write(&bad.join("fine.md"), b"fine\n");
        write(&bad.join(name), b"x\n");
        assert_text(name, &s.fails(1, &["import", bad.to_str().expect("UTF-8")]), &format!("memfs: {message}\n"));
    }

    // Two names that are one after NFC (both spellings of `café.md` can sit side by side on
    // Linux): the store holds one name, so the folder is refused.
    let twins = work.path().join("nfc-twins");
    write(&twins.join("caf\u{e9}.md"), b"precomposed\n");
    write(&twins.join("cafe\u{301}.md"), b"decomposed\n");
    assert_text(
        "NFC twins",
        &s.fails(1, &["import", twins.to_str().expect("UTF-8")]),
        "memfs: cannot import /memories/caf\u{e9}.md: it is listed twice\n",
    );

    // Not text, and a name that is not UTF-8.
    let binary = work.path().join("binary");
    write(&binary.join("ok.md"), b"ok\n");
    write(&binary.join("image.png"), b"\x89PNG\r\n\x1a\n\xff\xfe");
    assert_text(
        "binary",
        &s.fails(1, &["import", binary.to_str().expect("UTF-8")]),
        &format!(
            "memfs: refusing {}: it is not UTF-8 text (memory files are text)\n",
            binary.join("image.png").display()
        ),
    );
    let latin1 = work.path().join("latin1");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.md");
    write(&latin1.join(name), b"x\n");
    assert_text(
        "non-UTF-8 name",
        &s.fails(1, &["import", latin1.to_str().expect("UTF-8")]),
        &format!("memfs: refusing {}: its name is not valid UTF-8\n", latin1.join(name).display()),
    );

    // A FIFO is neither a file nor a folder.
    let fifo_dir = work.path().join("fifo");
    std::fs::create_dir_all(&fifo_dir).expect("folder");
    let fifo = fifo_dir.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("run mkfifo");
    assert!(made.success());
    assert_text(
        "fifo",
        &s.fails(1, &["import", fifo_dir.to_str().expect("UTF-8")]),
        &format!("memfs: refusing {}: it is neither a regular file nor a folder\n", fifo.display()),
    );

    // Not a folder at all.
    assert_text(
        "a file",
        &s.fails(1, &["import", outside.to_str().expect("UTF-8")]),
        &format!("memfs: {} is not a folder\n", outside.display()),
    );

    assert_eq!(s.commits(), before, "nothing was committed");
}

#[test]
fn clashes_are_refused_unless_overwritten() {
    let s = Store::new();
    s.exec(
        &[],
        &[
            r#"{"command":"create","path":"/memories/a.md","file_text":"old\n"}"#,
            r#"{"command":"create","path":"/memories/d/b.md","file_text":"same\n"}"#,
        ],
    );
    let work = tempfile::tempdir().expect("temp dir");
    let dir = work.path().join("in");
    write(&dir.join("a.md"), b"new\n");
    write(&dir.join("d/b.md"), b"same\n");
    write(&dir.join("c.md"), b"c\n");
    let arg = dir.to_str().expect("UTF-8");
    assert_text(
        "refused",
        &s.fails(1, &["import", arg]),
        "memfs: nothing was imported: 2 paths clash with the store:\n  /memories/a.md already exists\n  \
         /memories/d/b.md already exists\n(pass --overwrite to replace the files that exist)\n",
    );
    assert_eq!(s.commits().len(), 2);
    assert_text(
        "overwrite",
        &s.ok(&["import", "--overwrite", arg]),
        &format!("@3: imported 2 files from {arg} (1 file unchanged)\n  M /memories/a.md\n  A /memories/c.md\n"),
    );
    assert_text("content", &s.ok(&["show", "HEAD:/memories/a.md"]), "new\n");

    // A folder where the store has a file: refused even with --overwrite, without the hint.
    let kinds = work.path().join("kinds");
    write(&kinds.join("a.md/inside.md"), b"x\n");
    assert_text(
        "kinds",
        &s.fails(1, &["import", "--overwrite", kinds.to_str().expect("UTF-8")]),
        "memfs: nothing was imported: 2 paths clash with the store:\n  /memories/a.md is a file in the store\n  \
         /memories/a.md/inside.md: /memories/a.md is a file in the store\n",
    );
    assert_eq!(s.commits().len(), 3);
}

#[test]
fn the_policy_applies_to_imported_files() {
    let s = Store::new();
    let work = tempfile::tempdir().expect("temp dir");
    let dir = work.path().join("in");
    write(&dir.join("plain.md"), b"plain\n");
    write(&dir.join("key.md"), b"deploy key: AKIA2E3MPLZQ7WX4KT5N\n");
    let arg = dir.to_str().expect("UTF-8");

    s.ok(&["policy", "set", "sensitive", "reject"]);
    assert_text(
        "reject",
        &s.fails(1, &["import", arg]),
        "memfs: nothing was imported: Cannot write /memories/key.md: the text looks like it contains sensitive data \
         (1 finding: aws-access-key (line 1)). This store's policy rejects it (sensitive = reject), so nothing was \
         written. Remove it and try again.\n",
    );
    s.ok(&["policy", "set", "max-file-bytes", "10"]);
    s.ok(&["policy", "set", "sensitive", "warn"]);
    assert_text(
        "too large",
        &s.fails(1, &["import", arg]),
        "memfs: nothing was imported: Cannot write /memories/key.md: the file would be 33 bytes, over this store's \
         limit of 10 bytes per file (max-file-bytes). Nothing was written.\n",
    );
    assert_eq!(s.commits().len(), 3, "only the policy commits");

    s.ok(&["policy", "unset", "max-file-bytes"]);
    let out = s.run(&["import", arg]);
    assert!(out.status.success(), "import: {}", text(&out.stderr));
    assert_text(
        "warning",
        &text(&out.stderr),
        "memfs: /memories/key.md: Warning: the text written looks like it contains sensitive data (1 finding: \
         aws-access-key (line 1)). It was stored as given; memory files should not hold secrets.\n",
    );
    assert_text(
        "imported",
        &text(&out.stdout),
        &format!("@5: imported 2 files from {arg}\n  A /memories/key.md\n  A /memories/plain.md\n"),
    );
}

#[test]
fn export_refuses_a_folder_in_use_and_never_follows_links() {
    let s = Store::new();
    s.exec(
        &[],
        &[
            r#"{"command":"create","path":"/memories/a.md","file_text":"from the store\n"}"#,
            r#"{"command":"create","path":"/memories/sub/b.md","file_text":"b\n"}"#,
        ],
    );
    let work = tempfile::tempdir().expect("temp dir");
    let dir = work.path().join("out");
    write(&dir.join("a.md"), b"old\n");
    write(&dir.join("other.md"), b"left alone\n");
    let arg = dir.to_str().expect("UTF-8");
    assert_text(
        "not empty",
        &s.fails(1, &["export", arg]),
        &format!("memfs: {arg} is not empty: pass --force to write into it (files at the same paths are replaced)\n"),
    );
    assert_eq!(contents(&dir).len(), 2, "nothing written");

    // --force replaces files at the same paths and leaves the rest.
    let out = s.run(&["export", "--force", arg]);
    assert!(out.status.success(), "export: {}", text(&out.stderr));
    assert_text("stderr", &text(&out.stderr), &plaintext_warning(&dir));
    assert_text("stdout", &text(&out.stdout), &format!("exported 2 files and 1 folder from @2 to {arg}\n"));
    let expected: BTreeMap<String, String> =
        [("a.md", "from the store\n"), ("other.md", "left alone\n"), ("sub/", ""), ("sub/b.md", "b\n")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
    assert_eq!(contents(&dir), expected);
    assert_eq!(tree(&dir)["a.md"].1, 0o600, "a replaced file is 0600 too");

    // A link in the way, to a file or to a folder, is refused, and its target untouched.
    let target = work.path().join("target.md");
    write(&target, b"target\n");
    std::fs::remove_file(dir.join("a.md")).expect("remove");
    symlink(&target, dir.join("a.md")).expect("a symlink");
    assert_text(
        "file link",
        &s.fails(1, &["export", "--force", arg]),
        &format!(
            "{}memfs: refusing {}: it is a symbolic link, and memfs export never follows one\n",
            plaintext_warning(&dir),
            dir.join("a.md").display()
        ),
    );
    std::fs::remove_file(dir.join("a.md")).expect("remove");
    std::fs::remove_dir_all(dir.join("sub")).expect("remove");
    let elsewhere = work.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("a folder");
    symlink(&elsewhere, dir.join("sub")).expect("a symlink");
    assert_text(
        "folder link",
        &s.fails(1, &["export", "--force", arg]),
        &format!(
            "{}memfs: refusing {}: it is a symbolic link, and memfs export never follows one\n",
            plaintext_warning(&dir),
            dir.join("sub").display()
        ),
    );
    assert_eq!(std::fs::read(&target).expect("target"), b"target\n");
    assert!(contents(&elsewhere).is_empty(), "nothing written through the link");

    // DIR itself a link, or a file.
    let link = work.path().join("link");
    symlink(&elsewhere, &link).expect("a symlink");
    assert_text(
        "DIR a link",
        &s.fails(1, &["export", "--force", link.to_str().expect("UTF-8")]),
        &format!("memfs: refusing {}: it is a symbolic link, and memfs export never follows one\n", link.display()),
    );
    assert_text(
        "DIR a file",
        &s.fails(1, &["export", target.to_str().expect("UTF-8")]),
        &format!("memfs: {} exists and is not a folder\n", target.display()),
    );

    // An empty store exports an empty folder.
    let e = Store::new();
    let empty = work.path().join("new/empty");
    let out = e.run(&["export", empty.to_str().expect("UTF-8")]);
    assert!(out.status.success(), "export: {}", text(&out.stderr));
    assert_text(
        "empty",
        &text(&out.stdout),
        &format!("exported 0 files and 0 folders from @0 to {}\n", empty.display()),
    );
    assert!(contents(&empty).is_empty());
}

#[test]
fn export_refuses_case_twins_before_writing_unless_allowed() {
    let s = Store::new();
    s.exec(
        &[],
        &[
            r#"{"command":"create","path":"/memories/Notes.md","file_text":"upper\n"}"#,
            r#"{"command":"create","path":"/memories/notes.md","file_text":"lower\n"}"#,
            r#"{"command":"create","path":"/memories/Dir/a.md","file_text":"a\n"}"#,
            r#"{"command":"create","path":"/memories/dir/a.md","file_text":"b\n"}"#,
            r#"{"command":"create","path":"/memories/other/A.md","file_text":"c\n"}"#,
        ],
    );
    let work = tempfile::tempdir().expect("temp dir");
    let dir = work.path().join("out");
    let arg = dir.to_str().expect("UTF-8");
    assert_text(
        "case twins",
        &s.fails(1, &["export", arg]),
        "memfs: refusing to export: /memories/Dir and /memories/dir differ only by case (and 1 more pair), and on a \
         case-insensitive filesystem (macOS, Windows) one would replace the other; rename one, or pass \
         --allow-case-twins\n",
    );
    assert!(!dir.exists(), "nothing written, not even the folder");

    let out = s.run(&["export", "--allow-case-twins", arg]);
    assert!(out.status.success(), "export: {}", text(&out.stderr));
    assert_text("stdout", &text(&out.stdout), &format!("exported 5 files and 3 folders from @5 to {arg}\n"));
    assert_eq!(contents(&dir)["Notes.md"], "upper\n");
    assert_eq!(contents(&dir)["notes.md"], "lower\n");

    // Once one twin is renamed, no flag is needed.
    s.exec(
        &[],
        &[
            r#"{"command":"rename","old_path":"/memories/Notes.md","new_path":"/memories/Notes-old.md"}"#,
            r#"{"command":"rename","old_path":"/memories/Dir","new_path":"/memories/Dir2"}"#,
        ],
    );
    let again = work.path().join("again");
    let out = s.run(&["export", again.to_str().expect("UTF-8")]);
    assert!(out.status.success(), "export: {}", text(&out.stderr));
}

/// `import --dry-run` checks everything an import checks and lists what it would change,
/// writing nothing; `import --overwrite` asks on a terminal before replacing files (an import
/// that replaces nothing does not ask), and without one runs as before.
#[test]
fn import_overwrite_previews_and_asks() {
    let s = crate::support::Store::new("import test");
    s.exec(
        "",
        &[
            serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "old\n"}),
            serde_json::json!({"command": "create", "path": "/memories/d/b.md", "file_text": "same\n"}),
        ],
    );
    let work = tempfile::tempdir().expect("temp dir");
    let dir = work.path().join("in");
    write(&dir.join("a.md"), b"new\n");
    write(&dir.join("d/b.md"), b"same\n");
    write(&dir.join("c.md"), b"c\n");
    let arg = dir.to_str().expect("UTF-8");
    let changes = "  M /memories/a.md\n  A /memories/c.md\n";
    assert_text(
        "dry run",
        &s.ok_unchanged(&["import", "--overwrite", "--dry-run", arg]),
        &format!("would import 2 files from {arg} (1 file unchanged)\n{changes}"),
    );
    let before = s.state();
    assert_text(
        "dry run without --overwrite",
        &s.fails(&["import", "--dry-run", arg]),
        "memfs: nothing was imported: 2 paths clash with the store:\n  /memories/a.md already exists\n  \
         /memories/d/b.md already exists\n(pass --overwrite to replace the files that exist)\n",
    );
    let (code, screen) = s.on_terminal(&["import", "--overwrite", arg], "n\n");
    assert_eq!(code, Some(1), "{screen}");
    assert!(
        screen.contains(&format!(
            "would import 2 files from {arg} (1 file unchanged)\n{changes}Replace these files? [y/N] "
        )),
        "{screen}"
    );
    assert!(screen.ends_with("memfs: import cancelled: nothing was changed\n"), "{screen}");
    assert!(s.state() == before, "a cancelled or dry import changed the store");
    let (code, screen) = s.on_terminal(&["import", "--overwrite", "--yes", arg], "");
    assert_eq!(code, Some(0), "{screen}");
    assert!(!screen.contains("[y/N]"), "{screen}");
    assert!(screen.ends_with(&format!("@3: imported 2 files from {arg} (1 file unchanged)\n{changes}")), "{screen}");
    // Nothing to replace: no question.
    let more = work.path().join("more");
    write(&more.join("e.md"), b"e\n");
    let (code, screen) = s.on_terminal(&["import", "--overwrite", more.to_str().expect("UTF-8")], "");
    assert_eq!(code, Some(0), "{screen}");
    assert!(!screen.contains("[y/N]"), "{screen}");
    assert!(screen.ends_with("  A /memories/e.md\n"), "{screen}");
}

/// The SDK's base folder (`./memory`, which holds `memories/`) imported as it is puts every file
/// one level too deep: memfs says so, and names the folder to give instead. The folder inside
/// imports without a word.
#[test]
fn importing_the_sdks_base_folder_warns_and_names_the_folder_inside() {
    let s = Store::new();
    let work = tempfile::tempdir().expect("temp dir");
    let inner = sample(work.path());
    let base = inner.parent().expect("the base folder");
    let (base_arg, inner_arg) = (base.to_str().expect("UTF-8"), inner.to_str().expect("UTF-8"));
    let out = s.memfs(None).args(["import", "--dry-run", base_arg]).output().expect("run memfs");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_text(
        "the warning",
        &text(&out.stderr),
        &format!(
            "memfs: warning: {base_arg} holds a memories folder, as the SDK's base folder does: its files go to /memories/memories/…; to import them at /memories, give {inner_arg}\n"
        ),
    );
    assert!(text(&out.stdout).starts_with(&format!("would import 5 files from {base_arg}")), "{}", text(&out.stdout));
    assert_eq!(s.commits().len(), 0, "a dry run commits nothing");
    let out = s.ok(&["import", inner_arg]);
    assert!(out.starts_with(&format!("@1: imported 5 files from {inner_arg}")), "{out}");
}

/// Every refusal of an import is reported at once, at each of its three stages: the folder's
/// entries (links, files that are not text, what is neither a file nor a folder), the store's
/// path rules, and its policy. Nothing is committed.
#[test]
fn import_reports_every_refusal_at_once() {
    let s = Store::new();
    let work = tempfile::tempdir().expect("temp dir");
    let before = s.commits();

    let dir = work.path().join("entries");
    write(&dir.join("a.md"), b"fine\n");
    write(&dir.join("b.png"), b"\x89PNG\r\n\x1a\n\xff\xfe");
    symlink(work.path(), dir.join("c-link")).expect("a symlink");
    write(&dir.join("d/e.bin"), b"\xff");
    let made = std::process::Command::new("mkfifo").arg(dir.join("d/f-pipe")).status().expect("run mkfifo");
    assert!(made.success());
    assert_text(
        "the folder's entries",
        &s.fails(1, &["import", dir.to_str().expect("UTF-8")]),
        &format!(
            "memfs: refusing 4 entries of the folder:\n  refusing {0}/b.png: it is not UTF-8 text (memory files are \
             text)\n  refusing {0}/c-link: it is a symbolic link, and memfs import never follows one\n  refusing \
             {0}/d/e.bin: it is not UTF-8 text (memory files are text)\n  refusing {0}/d/f-pipe: it is neither a \
             regular file nor a folder\n",
            dir.display()
        ),
    );

    let names = work.path().join("names");
    write(&names.join("back\\slash.md"), b"x\n");
    write(&names.join("fine.md"), b"fine\n");
    write(&names.join("tab\there.md"), b"x\n");
    assert_text(
        "the path rules",
        &s.fails(1, &["import", names.to_str().expect("UTF-8")]),
        "memfs: nothing was imported: 2 entries are refused:\n  path \"/memories/back\\\\slash.md\" contains a \
         backslash\n  path \"/memories/tab\\there.md\" contains a control character\n",
    );

    let policy = work.path().join("policy");
    write(&policy.join("big.md"), b"0123456789 0123456789\n");
    write(&policy.join("fine.md"), b"fine\n");
    write(&policy.join("key.md"), b"deploy key: AKIA2E3MPLZQ7WX4KT5N\n");
    s.ok(&["policy", "set", "sensitive", "reject"]);
    s.ok(&["policy", "set", "max-file-bytes", "20"]);
    let policies = s.commits();
    assert_text(
        "the policy",
        &s.fails(1, &["import", policy.to_str().expect("UTF-8")]),
        "memfs: nothing was imported: 2 entries are refused:\n  Cannot write /memories/big.md: the file would be 22 \
         bytes, over this store's limit of 20 bytes per file (max-file-bytes). Nothing was written.\n  Cannot write \
         /memories/key.md: the text looks like it contains sensitive data (1 finding: aws-access-key (line 1)). This \
         store's policy rejects it (sensitive = reject), so nothing was written. Remove it and try again.\n",
    );
    assert_eq!(s.commits(), policies, "nothing was committed");
    assert_eq!(policies.len(), before.len() + 2, "only the policy commits");

    // Clashes are listed up to 20, and the rest counted.
    let many = work.path().join("many");
    for i in 0..25 {
        write(&many.join(format!("n{i:02}.md")), b"n\n");
    }
    s.ok(&["import", many.to_str().expect("UTF-8")]);
    let clashes = s.fails(1, &["import", many.to_str().expect("UTF-8")]);
    let listed: String = (0..20).map(|i| format!("  /memories/n{i:02}.md already exists\n")).collect();
    assert_text(
        "many clashes",
        &clashes,
        &format!(
            "memfs: nothing was imported: 25 paths clash with the store:\n{listed}  … and 5 more\n(pass --overwrite to \
             replace the files that exist)\n"
        ),
    );
}

/// Ctrl-C during an import stops the command and says what it left, and the store agrees:
/// the whole import landed, or nothing of it did (and `check` is clean). One SIGINT per run,
/// sent later in each run than in the one before: a run that the signal ended before memfs
/// caught it (still reading the folder or opening the store: nothing written), or that
/// finished first, shows the store whole too; the sweep ends at the first run that memfs's
/// handler stopped before the commit.
#[test]
fn an_interrupted_import_says_what_it_left() {
    use std::os::unix::process::ExitStatusExt;
    let s = Store::new();
    let work = tempfile::tempdir().expect("temp dir");
    let dir = work.path().join("many");
    for i in 0..2000 {
        write(&dir.join(format!("d{:02}/f{i}.md", i % 40)), format!("note {i}\n").repeat(50).as_bytes());
    }
    let arg = dir.to_str().expect("UTF-8");
    let nothing = "memfs: interrupted: nothing was imported (an import is one commit, and it was stopped before it)\n";
    let mut stopped_before_the_commit = false;
    for attempt in 0..100u64 {
        let before = s.commits();
        let child = s
            .memfs(None)
            .args(["import", arg])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start memfs import");
        std::thread::sleep(std::time::Duration::from_millis(5 * attempt));
        let pid = child.id().to_string();
        std::process::Command::new("kill").args(["-INT", &pid]).status().expect("run kill");
        let out = child.wait_with_output().expect("its output");
        let stderr = text(&out.stderr);
        let after = s.commits();
        if out.status.signal() == Some(2) || out.status.success() {
            // Ended by the signal's default action, or done before it came.
            assert!(after.len() == before.len() + usize::from(out.status.success()), "{stderr}");
        } else {
            assert_eq!(out.status.code(), Some(130), "{stderr}");
            if stderr == nothing {
                assert_eq!(after, before, "nothing was imported");
                let check = s.ok(&["check"]);
                assert!(check.ends_with("\nno problems found\n"), "{check}");
                stopped_before_the_commit = true;
                break;
            }
            // Interrupted once its commit was under way: it landed, whole, and the command says so.
            assert_eq!(after.len(), before.len() + 1, "{stderr}");
            let generation = after[0]["generation"].as_u64().expect("a generation");
            assert_eq!(
                stderr,
                format!(
                    "memfs: interrupted, after the import had landed as @{generation}: every file is in (see `memfs \
                     log`)\n"
                )
            );
        }
        if after.len() > before.len() {
            s.ok(&["undo", "--yes"]);
        }
    }
    assert!(stopped_before_the_commit, "no run was stopped by memfs's handler before the commit");
}
