//! `memfs export`: write the store's /memories tree out as a plain folder.

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use memfs::Entry;
use memfs::history::Progress;

use crate::cli::StoreArgs;
use crate::output::Bar;

/// Arguments of `memfs export`.
#[derive(Debug, Args)]
pub(crate) struct ExportArgs {
    /// The folder to write into. It stands for /memories: /memories/notes.md becomes
    /// DIR/notes.md. Created with mode 0700 if missing; files are written with mode 0600 and
    /// folders 0700, because they leave the store unencrypted.
    pub(crate) dir: PathBuf,
    /// Write into DIR even when it is not empty: files at the same paths are replaced, anything
    /// else in DIR is left alone. Symbolic links in DIR are never followed (one in the way is
    /// an error).
    #[arg(long)]
    pub(crate) force: bool,
    /// Write a tree even if it has names in one folder that differ only by case
    /// (`Notes.md`, `notes.md`). By default such a tree is refused before anything is written:
    /// on a case-insensitive filesystem (the default on macOS and Windows), or once the folder
    /// is synced to one, one of the two would silently replace the other.
    #[arg(long)]
    pub(crate) allow_case_twins: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: ExportArgs) -> anyhow::Result<()> {
    let dir = &args.dir;
    let exists = check_target(dir, args.force)?;
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let bar = Bar::new();
    let exported = memfs.export(&bar).await?;
    if !args.allow_case_twins {
        check_case_twins(&exported)?;
    }
    if !exists {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    eprintln!(
        "memfs: warning: writing the memory files to {} as plaintext, outside the encrypted store (files 0600, folders 0700)",
        dir.display()
    );
    let files = exported.entries.iter().filter(|e| matches!(e, Entry::File { .. })).count();
    bar.phase("writing", Some(files as u64));
    for entry in &exported.entries {
        write_entry(dir, entry)?;
        if let Entry::File { .. } = entry {
            bar.advance(1);
        }
    }
    drop(bar);
    let folders = exported.entries.len() - files;
    let summary = format!(
        "exported {} and {} from @{} to {}\n",
        plural(files, "file", "files"),
        plural(folders, "folder", "folders"),
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

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Whether `dir` exists; refuses a link, something other than a folder, and (without `force`)
/// a folder that is not empty.
fn check_target(dir: &Path, force: bool) -> anyhow::Result<bool> {
    let meta = match fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    };
    if meta.file_type().is_symlink() {
        bail!("refusing {}: it is a symbolic link, and memfs export never follows one", dir.display());
    }
    if !meta.is_dir() {
        bail!("{} exists and is not a folder", dir.display());
    }
    let mut read = fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    if !force && read.next().is_some() {
        bail!("{} is not empty: pass --force to write into it (files at the same paths are replaced)", dir.display());
    }
    Ok(true)
}

/// Where a `/memories/...` path goes below `dir`. The store's paths are validated (no `..`, no
/// backslashes, no empty names), so each component is one plain name.
fn local_path(dir: &Path, path: &str) -> PathBuf {
    let rel = path.strip_prefix("/memories/").unwrap_or(path);
    rel.split('/').fold(dir.to_path_buf(), |p, name| p.join(name))
}

/// Writes one entry. Entries come parents first, so every folder on the way was made or checked
/// (not a link) before anything is written in it.
fn write_entry(dir: &Path, entry: &Entry) -> anyhow::Result<()> {
    let target = local_path(dir, entry.path());
    match entry {
        Entry::Dir { .. } => match fs::DirBuilder::new().mode(0o700).create(&target) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                let meta = fs::symlink_metadata(&target).with_context(|| format!("reading {}", target.display()))?;
                if meta.file_type().is_symlink() {
                    bail!("refusing {}: it is a symbolic link, and memfs export never follows one", target.display());
                }
                if !meta.is_dir() {
                    bail!("cannot write the folder {}: a file is in the way", target.display());
                }
                Ok(())
            }
            Err(e) => Err(e).with_context(|| format!("creating {}", target.display())),
        },
        Entry::File { text, .. } => {
            match fs::symlink_metadata(&target) {
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => return Err(e).with_context(|| format!("reading {}", target.display())),
                Ok(meta) if meta.file_type().is_symlink() => {
                    bail!("refusing {}: it is a symbolic link, and memfs export never follows one", target.display());
                }
                Ok(meta) if meta.is_file() => {
                    fs::remove_file(&target).with_context(|| format!("replacing {}", target.display()))?;
                }
                Ok(_) => bail!("cannot write the file {}: something other than a file is in the way", target.display()),
            }
            // `create_new` (O_EXCL) refuses anything, a link included, that appeared since.
            let mut file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&target)
                .with_context(|| format!("creating {}", target.display()))?;
            file.write_all(text.as_bytes()).with_context(|| format!("writing {}", target.display()))?;
            Ok(())
        }
    }
}
