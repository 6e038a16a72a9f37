//! `memfs export`: write the store's /memories tree out as a plain folder.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use memfs::{Entry, FolderTarget};

use crate::output::Bar;
use crate::store::StoreArgs;
use crate::words::plural;

/// Arguments of `memfs export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The folder to write into. It stands for /memories: /memories/notes.md becomes
    /// DIR/notes.md. Created with mode 0700 if missing; files are written with mode 0600 and
    /// folders 0700, because they leave the store unencrypted.
    dir: PathBuf,
    /// Write into DIR even when it is not empty: files at the same paths are replaced, anything
    /// else in DIR is left alone. Symbolic links in DIR are never followed (one in the way is
    /// an error).
    #[arg(long)]
    force: bool,
    /// Write a tree even if it has names in one folder that differ only by case
    /// (`Notes.md`, `notes.md`). By default such a tree is refused before anything is written:
    /// on a case-insensitive filesystem (the default on macOS and Windows), or once the folder
    /// is synced to one, one of the two would silently replace the other.
    #[arg(long)]
    allow_case_twins: bool,
    /// Write the tree as it was at this revision (HEAD~N, @N, a commit id prefix) or time
    /// (2025-06-01, 2025-06-01T12:00:00Z, unix seconds: the newest commit made by then)
    /// instead of the newest.
    #[arg(long, value_name = "REV|TIME")]
    at: Option<String>,
}

pub(crate) async fn run(store: &StoreArgs, args: ExportArgs) -> anyhow::Result<()> {
    let dir = &args.dir;
    let target = FolderTarget::check(dir, args.force)?;
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let bar = Bar::new();
    let exported = match &args.at {
        Some(rev) => memfs.export_at(rev, &bar).await?,
        None => memfs.export(&bar).await?,
    };
    if !args.allow_case_twins {
        check_case_twins(&exported)?;
    }
    // Created before the warning, as it always was: a folder that cannot be made is an error
    // alone.
    let target = target.create()?;
    eprintln!(
        "memfs: warning: writing the memory files to {} as plaintext, outside the encrypted store (files 0600, folders 0700)",
        dir.display()
    );
    target.write(&exported.entries, &bar)?;
    drop(bar);
    let files = exported.entries.iter().filter(|e| matches!(e, Entry::File { .. })).count();
    let folders = exported.entries.len() - files;
    let summary = format!(
        "exported {} and {} from @{} to {}\n",
        plural(files as u64, "file", "files"),
        plural(folders as u64, "folder", "folders"),
        exported.generation,
        dir.display()
    );
    crate::output::stdout(summary.as_bytes())?;
    Ok(())
}

/// Refuses a tree with case twins, naming the first pair and how many more there are.
fn check_case_twins(exported: &memfs::Exported) -> anyhow::Result<()> {
    let twins = exported.case_twins();
    let Some((first, second)) = twins.first() else { return Ok(()) };
    let more = match twins.len() - 1 {
        0 => String::new(),
        1 => " (and 1 more pair)".to_owned(),
        n => format!(" (and {n} more pairs)"),
    };
    bail!(
        "refusing to export: {first} and {second} differ only by case{more}, and on a case-insensitive \
         filesystem (macOS, Windows) one would replace the other; rename one, or pass --allow-case-twins"
    )
}
