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

    /// Delete an unreachable object only once it has been pending this long (0: delete every
    /// unreachable object in this run).
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    grace: u64,

    /// Show what would be kept, deleted and left pending; change nothing.
    #[arg(long)]
    dry_run: bool,

    /// Do not ask before deleting (without a terminal, gc does not ask).
    #[arg(long, short = 'y')]
    yes: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: GcArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let options = GcOptions {
        keep_days: args.keep_days,
        keep_commits: args.keep_commits,
        grace_ms: args.grace.saturating_mul(1000),
        ..GcOptions::default()
    };
    let gc = async |options: &GcOptions| {
        let bar = Bar::new();
        memfs.gc(options, &bar).await
    };
    let plan = async || Ok(gc(&GcOptions { dry_run: true, ..options.clone() }).await?);
    // Asked only when the run would delete something or cut history.
    let render = |r: &GcReport| (render_plan(r), r.deleted > 0 || r.oldest > r.previous_horizon.max(1));
    if !crate::confirm::preview(("gc", "Run this gc?"), args.yes, args.dry_run, plan, render).await? {
        return Ok(());
    }
    let report = gc(&options).await?;
    crate::output::stdout(render_gc(&report).as_bytes())?;
    Ok(())
}

/// What `memfs gc --dry-run` prints (and what the question before a gc shows).
///
/// ```text
/// would keep 2 commits (@3 to @4)
/// history before @3 would no longer be kept
/// reachable: 9 objects (2391 bytes)
/// would delete: 5 objects (1224 bytes)
/// would leave pending: 0 objects
/// ```
fn render_plan(r: &GcReport) -> String {
    let mut out = format!("would keep {}\n", generations(r.commits, r.oldest, r.newest));
    if r.oldest > 1 {
        let verb = if r.oldest > r.previous_horizon { "would no longer be" } else { "is no longer" };
        let _ = writeln!(out, "history before @{} {verb} kept", r.oldest);
    }
    let objects = |n| plural(n, "object", "objects");
    let bytes = |n| plural(n, "byte", "bytes");
    let _ = writeln!(out, "reachable: {} ({})", objects(r.reachable), bytes(r.reachable_bytes));
    let _ = writeln!(out, "would delete: {} ({})", objects(r.deleted), bytes(r.deleted_bytes));
    match r.pending {
        0 => out.push_str("would leave pending: 0 objects\n"),
        n => {
            let _ = writeln!(
                out,
                "would leave pending: {} ({}, {} new); a later gc deletes them after the grace period",
                objects(n),
                bytes(r.pending_bytes),
                r.newly_pending
            );
        }
    }
    out
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
