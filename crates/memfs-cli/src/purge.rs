//! `memfs purge`: erase a file from the live tree and from history.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, bail};
use memfs::PurgeOptions;

use crate::cli::{PurgeArgs, StoreArgs};
use crate::output::Bar;

pub(crate) async fn run(store: &StoreArgs, args: PurgeArgs) -> anyhow::Result<()> {
    // Refused before the store is opened: a purge cannot be undone, so without a terminal to
    // ask on, only an explicit --yes runs one.
    let ask = !args.yes && !args.dry_run;
    if ask && !std::io::stdin().is_terminal() {
        bail!(
            "purge cannot be undone and asks before erasing, but stdin is not a terminal: pass --yes to purge \
             without asking (--dry-run shows what it would erase)"
        );
    }
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let options = PurgeOptions { all_copies: args.all_copies, dry_run: false };
    if ask || args.dry_run {
        let plan = purge(&memfs, &args, PurgeOptions { dry_run: true, ..options }).await?;
        let plan = memfs::render_plan(&plan);
        if args.dry_run {
            return Ok(crate::output::stdout(plan.as_bytes())?);
        }
        if !confirm(&plan)? {
            bail!("purge cancelled: nothing was changed");
        }
    }
    let report = purge(&memfs, &args, options).await?;
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

async fn purge(memfs: &memfs::Memfs, args: &PurgeArgs, options: PurgeOptions) -> anyhow::Result<memfs::PurgeReport> {
    let bar = Bar::new();
    match memfs.purge(&args.path, options, &bar).await {
        Ok(report) => Ok(report),
        Err(memfs::Error::PurgeLiveCopies { path, copies }) => bail!(
            "nothing was changed: {path} has live copies (files that hold the same content, or that it was renamed \
             to): {}; to erase them too, pass --all-copies",
            copies.join(", ")
        ),
        Err(e) => Err(e.into()),
    }
}

/// Shows the plan on stderr and asks; only `y` or `yes` goes on.
fn confirm(plan: &str) -> anyhow::Result<bool> {
    let mut stderr = std::io::stderr().lock();
    stderr.write_all(plan.as_bytes())?;
    stderr.write_all(b"Erase all of this? It cannot be undone. [y/N] ")?;
    stderr.flush()?;
    let mut answer = String::new();
    tokio::task::block_in_place(|| std::io::stdin().lock().read_line(&mut answer)).context("reading the answer")?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}
