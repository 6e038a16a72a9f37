//! `memfs undo`: revert the newest commit, as a new commit.

use memfs::history::Undone;

use crate::store::StoreArgs;
use crate::words::{change_lines, commit_ref};

pub(crate) async fn run(store: &StoreArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let undone = memfs.undo().await?;
    crate::output::stdout(render_undone(&undone).as_bytes())?;
    Ok(())
}

/// What `memfs undo` prints.
fn render_undone(u: &Undone) -> String {
    let mut out = match u.generation {
        Some(g) => format!("@{g}: undid {}\n", commit_ref(&u.undone)),
        None => format!("nothing to undo: {} changed nothing\n", commit_ref(&u.undone)),
    };
    change_lines(&mut out, &u.changes);
    out
}
