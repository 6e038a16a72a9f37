//! `memfs`: a thin dispatcher over the `memfs` library. The library owns the behaviour; this
//! binary owns the words: every message, report and piece of advice a person reads.
//!
//! Each subcommand has its file, holding its arguments, its run and its text: `exec`, `mcp`,
//! `serve`, `ui`, `agent`, `import`, `export`, `init`, `info`, `key`, `log`, `show`, `ls`, `cat`,
//! `tree`, `diff`, `restore`, `undo`, `check`, `gc`, `policy`, `expire`, `purge`, `completions`,
//! `man`. What they share:
//!
//! - `cli`: the top-level parser, one variant per subcommand;
//! - `config`: named stores, `[stores.NAME]` in `$XDG_CONFIG_HOME/memfs/config.toml`;
//! - `store`: which store and how to unlock it: the global options, the environment, the
//!   default local store;
//! - `confirm`: asking on the terminal before a destructive command;
//! - `credential`: new credentials: a key file written once, a passphrase asked twice;
//! - `value`: value parsers of flags several subcommands take, whose refusals quote nothing;
//! - `words`: words several reports share (times, one-line text, counts, change lines);
//! - `advice`: what to do about an error, said with the flag that fixes it;
//! - `parse_error`: argument errors that never show the value typed;
//! - `output`: results to stdout, progress to stderr;
//! - `signal`: stopping the servers cleanly;
//! - `limits`: the servers' connection limits, one set of flags for all three;
//! - `core_dump`: no core dumps from the servers, which hold keys for as long as they run.

#![forbid(unsafe_code)]

mod advice;
mod agent;
mod cat;
mod check;
mod cli;
mod completions;
mod config;
mod confirm;
mod core_dump;
mod credential;
mod diff;
mod exec;
mod expire;
mod export;
mod gc;
mod import;
mod info;
mod init;
mod key;
mod limits;
mod log;
mod ls;
mod man;
mod mcp;
mod output;
mod parse_error;
mod policy;
mod purge;
mod restore;
mod serve;
mod show;
mod signal;
mod store;
mod tree;
mod ui;
mod undo;
mod value;
mod words;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Not `parse`: its errors quote the values given, which may be secrets.
    let cli = cli::Cli::try_parse_env().unwrap_or_else(|e| parse_error::exit(e));
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("memfs: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(cli.run());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed stdout (`memfs exec | head`) is a normal way to stop.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memfs: {}{}", advice::message(e.as_ref()), advice::for_error(&e));
            if let Some(next) = advice::next_step(&e) {
                eprintln!("{next}");
            }
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().filter_map(|c| c.downcast_ref::<std::io::Error>()).any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}
