//! `memfs gc`: retention and deletion of unreachable objects.

use std::fmt::Write as _;

use clap::Args;
use memfs::history::{GcOptions, GcReport};

use crate::output::Bar;
use crate::store::StoreArgs;
use crate::words::{generations, plural};

#[derive(Debug, Args)]
pub(crate) struct GcArgs {
    /// Keep the commits of the last N days (by the writers' clocks).
    #[arg(long, value_name = "N")]
    keep_days: Option<u64>,

    /// Keep the N newest commits (with --keep-days: keep what either keeps).
    #[arg(long, value_name = "N")]
    keep_commits: Option<u64>,

    /// Delete an unreachable object only once it has been pending this long.
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    grace: u64,
}

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

/// What `memfs gc` prints.
fn render_gc(r: &GcReport) -> String {
    let mut out = format!("kept {}\n", generations(r.commits, r.oldest, r.newest));
    if r.oldest > 1 {
        let _ = writeln!(out, "history before @{} is no longer kept", r.oldest);
    }
    let objects = |n| plural(n, "object", "objects");
    let bytes = |n| plural(n, "byte", "bytes");
    let _ = writeln!(out, "reachable: {} ({})", objects(r.reachable), bytes(r.reachable_bytes));
    let _ = writeln!(out, "deleted: {} ({})", objects(r.deleted), bytes(r.deleted_bytes));
    if r.log_bytes_before > 0 {
        let _ = writeln!(
            out,
            "compacted the log: {} before, {} after",
            bytes(r.log_bytes_before),
            bytes(r.log_bytes_after)
        );
    }
    match r.pending {
        0 => out.push_str("pending: 0 objects\n"),
        n => {
            let _ = writeln!(
                out,
                "pending: {} ({}, {} new); a later gc deletes them after the grace period",
                objects(n),
                bytes(r.pending_bytes),
                r.newly_pending
            );
        }
    }
    if r.recovered > 0 {
        let _ = writeln!(out, "put back: {} that a writer used while gc ran", objects(r.recovered));
    }
    out
}
