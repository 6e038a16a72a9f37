//! `memfs gc`: retention and deletion of unreachable objects.

use memfs::history::{GcOptions, render_gc};

use crate::cli::{GcArgs, StoreArgs};
use crate::output::Bar;

pub(crate) async fn run(store: &StoreArgs, args: GcArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let options = GcOptions {
        keep_days: args.keep_days,
        keep_commits: args.keep_commits,
        grace_ms: args.grace.saturating_mul(1000),
        ..GcOptions::default()
    };
    let report = {
        let bar = Bar::new();
        memfs.gc(&options, &bar).await?
    };
    crate::output::stdout(render_gc(&report).as_bytes())?;
    Ok(())
}
