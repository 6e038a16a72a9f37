//! `memfs`: a thin dispatcher over the `memfs` library.

#![forbid(unsafe_code)]

mod advice;
mod agent;
mod check;
mod cli;
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
    let result = runtime.block_on(async {
        match cli.command {
            cli::Commands::Exec(args) => exec::run(&cli.store, args).await,
            cli::Commands::Init(args) => init::run(&cli.store, args).await,
            cli::Commands::Log(args) => log::run(&cli.store, args).await,
            cli::Commands::Show(args) => show::run(&cli.store, args).await,
            cli::Commands::Diff(args) => diff::run(&cli.store, args).await,
            cli::Commands::Restore(args) => restore::run(&cli.store, args).await,
            cli::Commands::Undo => undo::run(&cli.store).await,
            cli::Commands::Check(args) => check::run(&cli.store, args).await,
            cli::Commands::Gc(args) => gc::run(&cli.store, args).await,
            cli::Commands::Key(command) => key::run(&cli.store, command).await,
            cli::Commands::Policy(command) => policy::run(&cli.store, command).await,
            cli::Commands::Expire(args) => expire::run(&cli.store, args).await,
            cli::Commands::Purge(args) => purge::run(&cli.store, args).await,
            cli::Commands::Mcp(args) => mcp::run(&cli.store, args).await,
            cli::Commands::Serve(args) => serve::run(&cli.store, args).await,
            cli::Commands::Agent(args) => agent::run(&cli.store, args).await,
            cli::Commands::Import(args) => import::run(&cli.store, args).await,
            cli::Commands::Export(args) => export::run(&cli.store, args).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed stdout (`memfs exec | head`) is a normal way to stop.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memfs: {}{}", message(&e), advice::for_error(&e));
            if let Some(next) = advice::next_step(&e) {
                eprintln!("{next}");
            }
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes, joined by `: `, each said once: backend errors repeat their
/// source in their own message, which would otherwise print three times.
fn message(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(text.trim()) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().filter_map(|c| c.downcast_ref::<std::io::Error>()).any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}
