//! `memfs diff`: the files that differ between two commits.

use clap::Args;

use crate::store::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The older commit.
    #[arg(value_name = "REV")]
    from: String,

    /// The newer commit (default HEAD).
    #[arg(value_name = "REV")]
    to: Option<String>,

    /// Follow each file with its unified diff.
    #[arg(short, long)]
    patch: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: DiffArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let text = memfs.diff(&args.from, args.to.as_deref(), args.patch).await?;
    crate::output::stdout(text.as_bytes())?;
    Ok(())
}
