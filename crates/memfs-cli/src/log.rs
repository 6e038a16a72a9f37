//! `memfs log`: the history, newest first.

use clap::Args;
use memfs::history::{log_entry, log_json};

use crate::store::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct LogArgs {
    /// Only commits that changed this path (or something below it).
    #[arg(value_name = "PATH")]
    path: Option<String>,

    /// At most this many commits.
    #[arg(short = 'n', long, value_name = "N")]
    limit: Option<usize>,

    /// One JSON object per line, with the full ids, the time in milliseconds and RFC 3339, the
    /// command as JSON and the changes.
    #[arg(long)]
    json: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: LogArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let commits = memfs.log(args.limit, args.path.as_deref()).await?;
    let mut out = String::new();
    for c in &commits {
        if args.json {
            out.push_str(&log_json(c));
            out.push('\n');
        } else {
            out.push_str(&log_entry(c));
        }
    }
    crate::output::stdout(out.as_bytes())?;
    Ok(())
}
