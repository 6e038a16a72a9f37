//! `memfs diff`: the files that differ between two commits.

use crate::cli::{DiffArgs, StoreArgs};

pub(crate) async fn run(store: &StoreArgs, args: DiffArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let text = memfs.diff(&args.from, args.to.as_deref(), args.patch).await?;
    crate::output::stdout(text.as_bytes())?;
    Ok(())
}
