//! `memfs cat`: a file's content, as of a revision, exactly as stored.

use anyhow::bail;
use clap::Args;
use memfs::history::Shown;

use crate::store::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct CatArgs {
    /// The file.
    #[arg(value_name = "PATH")]
    path: String,

    /// As of this revision (HEAD, HEAD~N, @N, a commit id prefix) or time (2025-06-01,
    /// 2025-06-01T12:00:00Z, unix seconds: the newest commit made by then).
    #[arg(long, value_name = "REV|TIME", default_value = "HEAD")]
    at: String,
}

pub(crate) async fn run(store: &StoreArgs, args: CatArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    match memfs.read_at(&args.at, &args.path).await? {
        // The content exactly as stored: no newline added.
        Shown::File(content) => crate::output::stdout(&content)?,
        Shown::Dir(_) => bail!("{} is a directory (memfs ls or memfs tree shows it)", args.path),
        Shown::Commit(_) => unreachable!("a path was given"),
    }
    Ok(())
}
