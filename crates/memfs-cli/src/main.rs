//! `memfs`: a thin dispatcher over the `memfs` library.

#![forbid(unsafe_code)]

mod advice;
mod agent;
mod check;
mod cli;
mod credential;
mod diff;
mod exec;
mod expire;
mod export;
mod gc;
mod import;
mod init;
mod key;
mod log;
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
mod undo;
mod value;
mod words;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Not `parse`: its errors quote the values given, which may be secrets.
    let cli = cli::Cli::try_parse().unwrap_or_else(|e| parse_error::exit(e));
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
