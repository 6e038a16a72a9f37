//! `memfs`: a thin dispatcher over the `memfs` library.

#![forbid(unsafe_code)]

mod cli;
mod exec;
mod init;
mod store;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
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
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A closed stdout (`memfs exec | head`) is a normal way to stop.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("memfs: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().filter_map(|c| c.downcast_ref::<std::io::Error>()).any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
}
