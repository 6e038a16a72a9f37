//! `memfs restore`: bring back a past state of the tree or of one path, as a new commit.

use crate::cli::{RestoreArgs, StoreArgs};

pub(crate) async fn run(store: &StoreArgs, args: RestoreArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let restored = memfs.restore(&args.at, args.path.as_deref()).await?;
    crate::output::stdout(memfs::history::render_restored(&restored).as_bytes())?;
    Ok(())
}
