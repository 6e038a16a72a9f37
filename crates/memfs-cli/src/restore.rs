//! `memfs restore`: bring back a past state of the tree or of one path, as a new commit.

use clap::Args;
use memfs::history::Restored;

use crate::store::StoreArgs;
use crate::words::{change_lines, commit_ref};

#[derive(Debug, Args)]
pub(crate) struct RestoreArgs {
    /// The revision or time to restore from.
    #[arg(long, value_name = "REV|TIME")]
    at: String,

    /// The file or directory to restore (default: the whole tree). If it did not exist then,
    /// it is deleted.
    #[arg(value_name = "PATH")]
    path: Option<String>,

    /// Show what would change; commit nothing.
    #[arg(long)]
    dry_run: bool,

    /// Do not ask before restoring (without a terminal, restore does not ask).
    #[arg(long, short = 'y')]
    yes: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: RestoreArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let path = args.path.as_deref();
    let plan = async || Ok(memfs.restore(&args.at, path, true).await?);
    let render = |r: &Restored| (render_restored(r, true), !r.changes.is_empty());
    if !crate::confirm::preview(("restore", "Restore?"), args.yes, args.dry_run, plan, render).await? {
        return Ok(());
    }
    let restored = memfs.restore(&args.at, path, false).await?;
    crate::output::stdout(render_restored(&restored, false).as_bytes())?;
    Ok(())
}

/// What `memfs restore` prints; with `dry_run`, what it would do (and what the question
/// before a restore shows):
///
/// ```text
/// would restore /memories to @1 (0a1b2c3d4e5f)
///   M /memories/a.md
/// ```
fn render_restored(r: &Restored, dry_run: bool) -> String {
    let source = commit_ref(&r.source);
    let mut out = match r.generation {
        _ if dry_run && !r.changes.is_empty() => format!("would restore {} to {source}\n", r.path),
        Some(g) => format!("@{g}: restored {} to {source}\n", r.path),
        None => format!("nothing to restore: {} is already as at {source}\n", r.path),
    };
    change_lines(&mut out, &r.changes);
    out
}
