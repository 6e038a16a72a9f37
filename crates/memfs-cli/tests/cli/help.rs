//! The command line describing itself: `--help` (the global options described once, under
//! their own heading on `memfs --help`, and named in one line on each subcommand's page),
//! `memfs completions SHELL` and `memfs man`, all from the same definitions.

use crate::support::{fails, memfs_no_home, ok, run};

/// Every subcommand, as `memfs --help` lists them.
const SUBCOMMANDS: [&str; 20] = [
    "exec",
    "init",
    "log",
    "show",
    "diff",
    "restore",
    "undo",
    "check",
    "gc",
    "key",
    "policy",
    "expire",
    "purge",
    "mcp",
    "serve",
    "agent",
    "import",
    "export",
    "completions",
    "man",
];

fn stdout_of(args: &[&str]) -> String {
    let mut cmd = memfs_no_home();
    cmd.args(args);
    ok(&args.join(" "), &run(cmd, ""))
}

/// The section headings of a help page, in order: the lines clap starts a section with.
fn headings(page: &str) -> Vec<&str> {
    page.lines().filter(|l| ["Commands:", "Options:", "Global options:"].contains(l)).collect()
}

/// What each subcommand's page says of the global options, in place of describing them.
const GLOBALS_LINE: &str = "\n\nGlobal options (described in `memfs --help`):
  --store, --store-option, --namespace, --max-staleness, --cache-dir, --cache-memory,
  --passphrase-file, --passphrase-command, --key-file, --age-identity, --trust-head, --actor\n";

#[test]
fn global_options_are_described_once_under_their_own_heading() {
    let top = stdout_of(&["--help"]);
    assert_eq!(headings(&top), ["Commands:", "Options:", "Global options:"]);
    let global = top.split_once("\nGlobal options:\n").unwrap().1;
    for flag in ["--store <URL|PATH|NAME>", "--key-file <PATH>", "--passphrase-file <PATH>", "--actor <NAME>"] {
        assert_eq!(global.matches(flag).count(), 1, "{flag} described on memfs --help");
    }
    for name in SUBCOMMANDS {
        assert!(top.contains(&format!("\n  {name} ")), "memfs --help lists {name}");
    }
    // A subcommand's page: its own options, then one line naming the global ones, on the
    // short and the long page, of nested subcommands too.
    for args in [&["gc", "--help"][..], &["gc", "-h"], &["key", "add", "--help"], &["help", "gc"]] {
        let page = stdout_of(args);
        assert_eq!(headings(&page), ["Options:"], "{args:?}");
        assert!(page.ends_with(GLOBALS_LINE), "{args:?}: {page}");
        assert!(!page.contains("--store <"), "{args:?}");
    }
    let gc = stdout_of(&["gc", "--help"]);
    for flag in ["--keep-days <N>", "--keep-commits <N>", "--grace <SECONDS>"] {
        assert!(gc.contains(flag), "{flag} is gc's own");
    }
    // Before the revisions' note on the pages that have one.
    let log = stdout_of(&["log", "--help"]);
    assert!(log.contains(&format!("{}\nRevisions:\n", GLOBALS_LINE)), "{log}");
}

/// Hidden from the subcommands' pages, the global options are taken after a subcommand as
/// before, and a misspelt one is still suggested.
#[test]
fn global_options_are_taken_after_any_subcommand() {
    let mut cmd = memfs_no_home();
    cmd.args(["ls", "--store", "memory://", "--actor", "me"]);
    let err = fails("ls --store memory://", 1, &run(cmd, ""));
    assert_eq!(err, "memfs: store memory://: revision HEAD does not exist: the store has no commits yet\n");
    let mut cmd = memfs_no_home();
    cmd.args(["key", "list", "--stor", "memory://"]);
    let err = fails("key list --stor", 2, &run(cmd, ""));
    assert_eq!(
        err,
        "error: unexpected argument '--stor' found\n\n  tip: a similar argument exists: '--store'\n\nUsage: memfs key list\n\nFor \
         more information, try '--help'.\n"
    );
}

#[test]
fn completions_cover_every_subcommand() {
    let bash = stdout_of(&["completions", "bash"]);
    assert!(bash.starts_with("_memfs() {\n"), "{}", &bash[..40]);
    assert!(bash.trim_end().ends_with("complete -F _memfs -o bashdefault -o default memfs\nfi"), "{bash}");
    for name in SUBCOMMANDS {
        assert!(bash.contains(&format!("memfs,{name})")), "bash completes {name}");
    }
    let fish = stdout_of(&["completions", "fish"]);
    assert!(
        fish.contains(
            "complete -c memfs -n \"__fish_memfs_needs_command\" -f -a \"purge\" -d 'Erase a file from the live tree and from all history (right to erasure)'\n"
        ),
        "{fish}"
    );
    let mut cmd = memfs_no_home();
    cmd.args(["completions", "tcsh"]);
    let err = fails("completions tcsh", 2, &run(cmd, ""));
    assert_eq!(
        err,
        "error: invalid value for '<SHELL>'\n  [possible values: bash, elvish, fish, powershell, zsh]\n\nFor more information, try '--help'.\n"
    );
}

#[test]
fn the_manual_page_names_every_subcommand() {
    let page = stdout_of(&["man"]);
    let version = env!("CARGO_PKG_VERSION");
    assert!(page.contains(&format!(".TH memfs 1  \"memfs {version}\" \n")), "{}", &page[..200]);
    assert!(
        page.contains(".SH NAME\nmemfs \\- An encrypted, content\\-addressed store for Claude\\*(Aqs memory tool\n"),
        "{}",
        &page[..400]
    );
    let subcommands = page.split_once(".SH SUBCOMMANDS\n").expect("a SUBCOMMANDS section").1;
    for name in SUBCOMMANDS {
        assert!(subcommands.contains(&format!("memfs\\-{name}(1)")), "man lists {name}");
    }
}
