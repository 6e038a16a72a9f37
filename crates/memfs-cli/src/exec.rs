//! `memfs exec`: the JSON-lines protocol on stdin and stdout.

use anyhow::Context;
use memfs::Memfs;
use memfs::protocol::handle_line;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::cli::ExecArgs;

pub(crate) async fn run(args: ExecArgs) -> anyhow::Result<()> {
    let memfs = Memfs::open(&args.store, args.dialect)?;
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut stdout = tokio::io::stdout();
    while let Some(line) = lines.next_line().await.context("reading stdin")? {
        if let Some(answer) = handle_line(&memfs, &line).await {
            stdout.write_all(answer.as_bytes()).await?;
            stdout.write_all(b"\n").await?;
            // One answer per line, flushed, so a caller can wait for it before sending more.
            stdout.flush().await?;
        }
    }
    Ok(())
}
