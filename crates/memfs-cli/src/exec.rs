//! `memfs exec`: the JSON-lines protocol on stdin and stdout.

use anyhow::Context;
use memfs::protocol::handle_line;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::cli::{ExecArgs, StoreArgs};

pub(crate) async fn run(store: &StoreArgs, args: ExecArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, args.dialect, true).await?;
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
