//! `memfs restore`: bring back a past state of the tree or of one path, as a new commit.

use clap::Args;
use memfs::history::Restored;

use crate::store::StoreArgs;
use crate::words::{change_lines, commit_ref};

#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// The revision or time to restore from.
    #[arg(long, value_name = "REV|TIME")]
    at: String,

    /// The file or directory to restore (default: the whole tree). If it did not exist then,
    /// it is deleted.
    #[arg(value_name = "PATH")]
    path: Option<String>,
}

pub(crate) async fn run(store: &StoreArgs, args: RestoreArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let restored = memfs.restore(&args.at, args.path.as_deref()).await?;
    crate::output::stdout(render_restored(&restored).as_bytes())?;
    Ok(())
}

/// What `memfs restore` prints.
fn render_restored(r: &Restored) -> String {
    let mut out = match r.generation {
        Some(g) => format!("@{g}: restored {} to {}\n", r.path, commit_ref(&r.source)),
        None => format!("nothing to restore: {} is already as at {}\n", r.path, commit_ref(&r.source)),
    };
    change_lines(&mut out, &r.changes);
    out
}
