//! Looking without writing JSON: `memfs ls`, `memfs cat` and `memfs tree`, now and at a
//! past revision, with the errors a careless path gets.

use serde_json::json;

use crate::support::Store;

fn store() -> Store {
    let s = Store::new("browse passphrase");
    s.exec(
        "tester",
        &[
            json!({"command": "create", "path": "/memories/a.md", "file_text": "hello\n"}),
            json!({"command": "create", "path": "/memories/d/b.md", "file_text": "bb"}),
            json!({"command": "create", "path": "/memories/d/e/c.md", "file_text": "c"}),
            json!({"command": "create", "path": "/memories/z.md", "file_text": "zz"}),
        ],
    );
    s
}

#[test]
fn tree_draws_everything_below_a_directory_with_a_count() {
    let s = store();
    assert_eq!(
        s.ok(&["tree"]),
        "/memories\n├── a.md\n├── d/\n│   ├── b.md\n│   └── e/\n│       └── c.md\n└── z.md\n\n2 directories, 4 files (11 bytes)\n"
    );
    assert_eq!(
        s.ok(&["tree", "/memories/d"]),
        "/memories/d\n├── b.md\n└── e/\n    └── c.md\n\n1 directory, 2 files (3 bytes)\n"
    );
    // Two commits back: before c.md and z.md.
    assert_eq!(
        s.ok(&["tree", "--at", "HEAD~2"]),
        "/memories\n├── a.md\n└── d/\n    └── b.md\n\n1 directory, 2 files (8 bytes)\n"
    );
    assert_eq!(s.ok(&["tree", "--at", "@1"]), "/memories\n└── a.md\n\n0 directories, 1 file (6 bytes)\n");
}

#[test]
fn ls_lists_one_directory_and_its_sizes() {
    let s = store();
    assert_eq!(s.ok(&["ls"]), "a.md\nd/\nz.md\n");
    assert_eq!(s.ok(&["ls", "/memories/d"]), "b.md\ne/\n");
    assert_eq!(s.ok(&["ls", "-l"]), "           6  a.md\n           3  d/\n           2  z.md\n");
    assert_eq!(s.ok(&["ls", "/memories/a.md"]), "/memories/a.md\n");
    assert_eq!(s.ok(&["ls", "--at", "@1"]), "a.md\n");
    assert_eq!(s.fails(&["ls", "/memories/nope"]), "memfs: /memories/nope does not exist at HEAD\n");
    assert_eq!(
        s.fails(&["ls", "/etc"]),
        "memfs: path \"/etc\" does not start with /memories\n",
        "a path outside /memories is refused before it reaches the store"
    );
}

#[test]
fn cat_prints_a_file_exactly_as_stored() {
    let s = store();
    assert_eq!(s.ok(&["cat", "/memories/a.md"]), "hello\n");
    assert_eq!(s.ok(&["cat", "/memories/d/b.md"]), "bb");
    assert_eq!(s.fails(&["cat", "/memories/d/b.md", "--at", "@1"]), "memfs: /memories/d/b.md does not exist at @1\n");
    assert_eq!(
        s.fails(&["cat", "/memories/d"]),
        "memfs: /memories/d is a directory (memfs ls or memfs tree shows it)\n"
    );
}

#[test]
fn info_shows_the_store_on_one_screen() {
    let s = store();
    s.ok(&["policy", "set", "max-files", "50"]);
    let info = s.ok(&["info"]);
    let lines: Vec<&str> = info.lines().collect();
    assert_eq!(lines.len(), 6, "{info}");
    assert_eq!(lines[0], format!("store      {}", s.url()));
    let id = lines[1].strip_prefix("format     1, store id ").expect("the format line");
    assert!(id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert_eq!(lines[2], "files      4 (11 bytes)");
    let (before, after) = lines[3].split_once(" by ").expect("the commits line");
    assert!(before.starts_with("commits    5, the newest @5 20") && before.ends_with('Z'), "{before}");
    assert_eq!(after, "-: policy set max-files 50");
    assert_eq!(lines[4], "key slots  1: 1 passphrase");
    assert_eq!(lines[5], "policy     max-files 50");

    let mut cmd = crate::support::memfs_no_home();
    cmd.args(["--store", "memory://", "info"]);
    assert_eq!(
        crate::support::ok("info on memory://", &crate::support::run(cmd, "")),
        "store      memory://\nformat     1\nfiles      0 (0 bytes)\ncommits    0\npolicy     the defaults\n"
    );
}

#[test]
fn export_at_writes_the_tree_of_a_past_revision() {
    let s = store();
    let dir = s.root().join("out");
    let dir_arg = dir.to_str().unwrap();
    let out = s.run(&["export", "--at", "@2", dir_arg]);
    let stdout = crate::support::succeeds("export --at @2", &out);
    assert_eq!(stdout, format!("exported 2 files and 1 folder from @2 to {dir_arg}\n"));
    assert_eq!(std::fs::read_to_string(dir.join("a.md")).unwrap(), "hello\n");
    assert_eq!(std::fs::read_to_string(dir.join("d/b.md")).unwrap(), "bb");
    let mut names: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    names.sort();
    assert_eq!(names, ["a.md", "d"], "nothing committed after @2");
    let out2 = s.root().join("out2");
    assert_eq!(
        s.fails(&["export", "--at", "@9", out2.to_str().unwrap()]),
        format!("memfs: store {}: revision @9 does not exist: the newest commit is @4\n", s.url())
    );
    assert!(!out2.exists(), "nothing written for a revision that does not exist");
}

/// Every `--at` of the looking commands takes a time as `restore --at` does: a date, a date
/// and time (its colons are not a `REV:PATH` separator), unix seconds; the newest commit made
/// by then, or an error naming the time when none was.
#[test]
fn every_at_takes_a_time_as_well_as_a_revision() {
    let s = store();
    for at in ["2999-01-01", "2999-01-01T12:00:00Z", "2999-01-01 12:00", "32503680000"] {
        assert_eq!(s.ok(&["cat", "/memories/a.md", "--at", at]), "hello\n", "cat --at {at}");
        assert_eq!(s.ok(&["ls", "--at", at]), "a.md\nd/\nz.md\n", "ls --at {at}");
        assert!(s.ok(&["tree", "--at", at]).ends_with("\n2 directories, 4 files (11 bytes)\n"), "tree --at {at}");
    }
    for at in ["2000-01-01", "2000-01-01T00:00:00Z"] {
        let none = format!("memfs: no commit was made at or before {at}\n");
        assert_eq!(s.fails(&["cat", "/memories/a.md", "--at", at]), none);
        assert_eq!(s.fails(&["ls", "--at", at]), none);
        assert_eq!(s.fails(&["tree", "--at", at]), none);
        let out = s.root().join(format!("out-{}", at.len()));
        assert_eq!(s.fails(&["export", "--at", at, out.to_str().expect("UTF-8")]), none);
    }
    assert_eq!(
        s.fails(&["ls", "--at", "yesterday"]),
        "memfs: invalid --at `yesterday`: expected a revision (HEAD, HEAD~N, @GENERATION, a commit id of at least 8 hex \
         digits) or a time (RFC 3339 such as 2025-06-01T12:00:00Z, a date such as 2025-06-01, or unix seconds)\n"
    );
}
