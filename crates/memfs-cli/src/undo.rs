//! `memfs undo`: revert the newest commit, as a new commit.

use clap::Args;
use memfs::history::Undone;

use crate::store::StoreArgs;
use crate::words::{change_lines, commit_ref};

#[derive(Debug, Args)]
pub(crate) struct UndoArgs {
    /// Show what would change; commit nothing.
    #[arg(long)]
    dry_run: bool,

    /// Do not ask before undoing (without a terminal, undo does not ask).
    #[arg(long, short = 'y')]
    yes: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: UndoArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let plan = async || Ok(memfs.undo(true).await?);
    let render = |u: &Undone| (render_undone(u, true), !u.changes.is_empty());
    if !crate::confirm::preview(("undo", "Undo?"), args.yes, args.dry_run, plan, render).await? {
        return Ok(());
    }
    let undone = memfs.undo(false).await?;
    crate::output::stdout(render_undone(&undone, false).as_bytes())?;
    Ok(())
}

/// What `memfs undo` prints; with `dry_run`, what it would do (and what the question before
/// an undo shows):
///
/// ```text
/// would undo @3 (0a1b2c3d4e5f)
///   D /memories/b.md
/// ```
fn render_undone(u: &Undone, dry_run: bool) -> String {
    let undone = commit_ref(&u.undone);
    let mut out = match u.generation {
        _ if dry_run && !u.changes.is_empty() => format!("would undo {undone}\n"),
        Some(g) => format!("@{g}: undid {undone}\n"),
        None => format!("nothing to undo: {undone} changed nothing\n"),
    };
    change_lines(&mut out, &u.changes);
    out
}
