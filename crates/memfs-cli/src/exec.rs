//! `memfs exec`: the JSON-lines protocol on stdin and stdout.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::Context;
use clap::Args;
use memfs::Dialect;
use memfs::protocol::handle_bytes;

use crate::store::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct ExecArgs {
    /// Which answer strings to use: `spec` (the documentation page), `python-sdk`
    /// (byte-identical to anthropic==2.10.0's BetaLocalFilesystemMemoryTool) or
    /// `typescript-sdk` (byte-identical to @anthropic-ai/sdk@1.12.0's).
    #[arg(long, default_value = "spec", env = "MEMFS_DIALECT", value_parser = crate::value::parse_dialect)]
    pub(crate) dialect: Dialect,

    /// At the end, print on stderr what the session did: commands, commits, and conflicts
    /// (races for the head lost to another writer, each re-run on the new head).
    #[arg(long)]
    stats: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: ExecArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, args.dialect, true).await?;
    // Someone who typed `memfs exec` would otherwise look at a silent terminal; a program
    // writing to a pipe needs no hint.
    if std::io::stdin().is_terminal() {
        eprintln!("memfs: waiting for memory-tool calls as JSON lines on stdin, one per line (Ctrl-D to end)");
    }
    // Plain blocking reads and writes on this worker (`block_in_place`): one command at a
    // time, and no hand-off to another thread per line, which would cost more than a view.
    let mut stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    // Bytes, not a String: a line that is not UTF-8 gets its error answer and the stream goes on.
    let mut line = Vec::new();
    let mut first = true;
    loop {
        line.clear();
        if tokio::task::block_in_place(|| stdin.read_until(b'\n', &mut line)).context("reading stdin")? == 0 {
            // Last-access days of the session's reads that no commit carried yet.
            memfs.flush().await?;
            if args.stats {
                let s = memfs.stats();
                eprintln!("memfs: {} commands, {} commits, {} conflicts retried", s.commands, s.commits, s.conflicts);
            }
            return Ok(());
        }
        let mut text = line.strip_suffix(b"\n").map(|l| l.strip_suffix(b"\r").unwrap_or(l)).unwrap_or(&line);
        if std::mem::take(&mut first) {
            // Editors on Windows start a UTF-8 file with a byte-order mark; it is not JSON.
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        if let Some(answer) = handle_bytes(&memfs, text).await {
            tokio::task::block_in_place(|| -> std::io::Result<()> {
                stdout.write_all(answer.as_bytes())?;
                stdout.write_all(b"\n")?;
                // One answer per line, flushed, so a caller can wait for it before sending more.
                stdout.flush()
            })?;
        }
    }
}
