//! `memfs undo`: revert the newest commit, as a new commit.

use crate::cli::StoreArgs;

pub(crate) async fn run(store: &StoreArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let undone = memfs.undo().await?;
    crate::output::stdout(memfs::history::render_undone(&undone).as_bytes())?;
    Ok(())
}
