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

    /// The longest input line, without its newline, such as 64MiB (the default), 512MiB or
    /// 4096 (bytes). A longer line gets an `is_error` answer and the stream goes on: it is read
    /// in chunks and dropped, never held whole.
    #[arg(
        long,
        value_name = "SIZE",
        env = "MEMFS_MAX_LINE_BYTES",
        default_value = "64MiB",
        value_parser = crate::value::parse_line_bound
    )]
    pub(crate) max_line_bytes: usize,
}

/// What [`read_line`] read.
enum Read {
    /// The end of the input: nothing more.
    End,
    /// A line, in the buffer, with its newline if it had one.
    Line,
    /// A line longer than the bound, read to its end and dropped.
    TooLong,
}

/// Reads one line of `input` into `line` (cleared first), holding at most `max` bytes of it
/// and its newline: the rest of a longer line is read in the reader's chunks and dropped.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>, max: usize) -> std::io::Result<Read> {
    line.clear();
    let (mut any, mut over) = (false, false);
    loop {
        let chunk = match input.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(if !any {
                Read::End
            } else if over {
                Read::TooLong
            } else {
                Read::Line
            });
        }
        any = true;
        let (taken, ends) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (at + 1, true),
            None => (chunk.len(), false),
        };
        let content = taken - usize::from(ends);
        if !over && line.len() + content > max {
            // Drop what was held too, and its allocation: the line is not kept.
            over = true;
            *line = Vec::new();
        }
        if !over {
            line.extend_from_slice(&chunk[..taken]);
        }
        input.consume(taken);
        if ends {
            return Ok(if over { Read::TooLong } else { Read::Line });
        }
    }
}

/// The answer to a line longer than `max` bytes, in the words of the "not JSON" answer.
fn too_long(max: usize) -> String {
    memfs::protocol::Answer::Bare(memfs::protocol::BareResult {
        content: format!(
            "Invalid JSON input line: longer than {max} bytes; raise the bound with --max-line-bytes SIZE or \
             MEMFS_MAX_LINE_BYTES"
        ),
        is_error: true,
    })
    .to_json()
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
        let read = tokio::task::block_in_place(|| read_line(&mut stdin, &mut line, args.max_line_bytes));
        let read = read.context("reading stdin")?;
        if let Read::End = read {
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
        let answer = match read {
            Read::TooLong => Some(too_long(args.max_line_bytes)),
            _ => handle_bytes(&memfs, text).await,
        };
        if let Some(answer) = answer {
            tokio::task::block_in_place(|| -> std::io::Result<()> {
                stdout.write_all(answer.as_bytes())?;
                stdout.write_all(b"\n")?;
                // One answer per line, flushed, so a caller can wait for it before sending more.
                stdout.flush()
            })?;
        }
    }
}
