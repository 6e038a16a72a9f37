//! `memfs purge`: erase a file from the live tree and from history.

use anyhow::bail;

use crate::cli::{PurgeArgs, StoreArgs};
use crate::output::Bar;

pub(crate) async fn run(store: &StoreArgs, args: PurgeArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let report = {
        let bar = Bar::new();
        memfs.purge(&args.path, &bar).await?
    };
    crate::output::stdout(memfs::render_purged(&report).as_bytes())?;
    if report.remaining_commits > 0 {
        // Writers kept the deletion from being fenced, and it was undone: a second run finds
        // the old commits among the unreachable ones and deletes them.
        bail!("the purge of {} is not complete: run memfs purge {0} again", report.path);
    }
    if report.remaining > 0 {
        // A writer stored equal content again while the purge ran: that is a new file now.
        bail!("the purged content was stored again during the purge: purge {} too", report.stored_again.join(", "));
    }
    Ok(())
}
