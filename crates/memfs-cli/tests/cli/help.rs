//! The command line describing itself: `--help` (global options under their own heading,
//! after each command's own), `memfs completions SHELL` and `memfs man`, all from the same
//! definitions.

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

#[test]
fn global_options_have_their_own_heading_after_the_commands_own() {
    let top = stdout_of(&["--help"]);
    assert_eq!(headings(&top), ["Commands:", "Options:", "Global options:"]);
    let gc = stdout_of(&["gc", "--help"]);
    assert_eq!(headings(&gc), ["Options:", "Global options:"]);
    let (own, global) = gc.split_once("\nGlobal options:\n").unwrap();
    for flag in ["--keep-days <N>", "--keep-commits <N>", "--grace <SECONDS>"] {
        assert!(own.contains(flag) && !global.contains(flag), "{flag} is gc's own");
    }
    for flag in ["--store <URL|PATH|NAME>", "--key-file <PATH>", "--passphrase-file <PATH>", "--actor <NAME>"] {
        assert!(global.contains(flag) && !own.contains(flag), "{flag} is global");
        assert_eq!(gc.matches(flag).count(), 1, "{flag} shown once");
    }
    for name in SUBCOMMANDS {
        assert!(top.contains(&format!("\n  {name} ")), "memfs --help lists {name}");
    }
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
