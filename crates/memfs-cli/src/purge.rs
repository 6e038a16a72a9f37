//! `memfs purge`: erase a file from the live tree and from history.

use crate::cli::{PurgeArgs, StoreArgs};

pub(crate) async fn run(_store: &StoreArgs, _args: PurgeArgs) -> anyhow::Result<()> {
    anyhow::bail!("purge is not built yet")
}
