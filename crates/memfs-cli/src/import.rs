//! `memfs import`: copy a plain folder of memory files into the store, as one commit.

use std::fs;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use clap::Args;
use memfs::history::Progress;
use memfs::{ConflictKind, Entry, ImportOptions};

use crate::cli::StoreArgs;
use crate::output::Bar;

/// The folder given stands for this.
const ROOT: &str = "/memories";

/// Arguments of `memfs import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The folder to import. It stands for /memories: DIR/notes.md becomes
    /// /memories/notes.md. (The Python SDK's BetaLocalFilesystemMemoryTool keeps its files in
    /// ./memory/memories.)
    pub(crate) dir: PathBuf,
    /// Replace files that already exist in the store. Without it, a file that exists at any
    /// imported path refuses the whole import, and the clashes are listed.
    #[arg(long)]
    pub(crate) overwrite: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: ImportArgs) -> anyhow::Result<()> {
    let source = source_name(&args.dir);
    let bar = Bar::new();
    let entries = read_folder(&args.dir, &bar)?;
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let options = ImportOptions { overwrite: args.overwrite, source };
    let imported = memfs.import(&entries, &options, &bar).await.map_err(|e| {
        let clash = |c: &memfs::Conflict| c.kind == ConflictKind::FileExists;
        match &e {
            memfs::Error::ImportConflicts { conflicts } if !args.overwrite && conflicts.iter().any(clash) => {
                anyhow!("{e}\n(pass --overwrite to replace the files that exist)")
            }
            _ => e.into(),
        }
    })?;
    drop(bar);
    for (path, note) in &imported.notes {
        eprintln!("memfs: {path}: {note}");
    }
    crate::output::stdout(memfs::render_imported(&imported, &args.dir.display().to_string()).as_bytes())?;
    Ok(())
}

/// What the commit records as the source: the folder's own name, not where it lives.
fn source_name(dir: &Path) -> String {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    absolute
        .components()
        .next_back()
        .map_or_else(|| dir.display().to_string(), |c| c.as_os_str().to_string_lossy().into_owned())
}

/// Every folder and file below `root`, as `/memories` entries. Symbolic links, anything that is
/// neither a folder nor a regular file, anything that resolves outside `root`, names that are
/// not UTF-8 and files that are not UTF-8 text are refused, naming the path.
pub(crate) fn read_folder(root: &Path, bar: &Bar) -> anyhow::Result<Vec<Entry>> {
    let meta = fs::symlink_metadata(root).with_context(|| format!("reading {}", root.display()))?;
    if meta.file_type().is_symlink() {
        bail!(
            "refusing {}: it is a symbolic link, and memfs import never follows one; give the folder it points to",
            root.display()
        );
    }
    if !meta.is_dir() {
        bail!("{} is not a folder", root.display());
    }
    let resolved = fs::canonicalize(root).with_context(|| format!("resolving {}", root.display()))?;
    bar.phase("reading", Some(0));
    let mut entries = Vec::new();
    walk(root, &resolved, ROOT, &mut entries, bar)?;
    Ok(entries)
}

fn walk(dir: &Path, root: &Path, at: &str, out: &mut Vec<Entry>, bar: &Bar) -> anyhow::Result<()> {
    let mut children = fs::read_dir(dir)
        .and_then(|read| read.collect::<Result<Vec<_>, _>>())
        .with_context(|| format!("reading {}", dir.display()))?;
    children.sort_by_key(fs::DirEntry::file_name);
    for child in children {
        let path = child.path();
        let name = child
            .file_name()
            .into_string()
            .map_err(|_| anyhow!("refusing {}: its name is not valid UTF-8", path.display()))?;
        let memory_path = format!("{at}/{name}");
        let meta = fs::symlink_metadata(&path).with_context(|| format!("reading {}", path.display()))?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            bail!("refusing {}: it is a symbolic link, and memfs import never follows one", path.display());
        }
        let resolved = fs::canonicalize(&path).with_context(|| format!("resolving {}", path.display()))?;
        if !resolved.starts_with(root) {
            bail!("refusing {}: it resolves to {}, outside {}", path.display(), resolved.display(), root.display());
        }
        if kind.is_dir() {
            out.push(Entry::Dir { path: memory_path.clone() });
            walk(&path, root, &memory_path, out, bar)?;
        } else if kind.is_file() {
            bar.extend(1);
            let text = read_text(&path, &meta)?;
            out.push(Entry::File { path: memory_path, text });
            bar.advance(1);
        } else {
            bail!("refusing {}: it is neither a regular file nor a folder", path.display());
        }
    }
    Ok(())
}

/// The text of the regular file `path`, which `meta` (not following links) describes.
fn read_text(path: &Path, meta: &fs::Metadata) -> anyhow::Result<String> {
    let mut file = fs::File::open(path).with_context(|| format!("reading {}", path.display()))?;
    // Opening follows links: make sure what was opened is the file that was checked, not a
    // link put in its place since.
    let opened = file.metadata().with_context(|| format!("reading {}", path.display()))?;
    if (opened.dev(), opened.ino()) != (meta.dev(), meta.ino()) {
        bail!("refusing {}: it changed while the folder was being read", path.display());
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).with_context(|| format!("reading {}", path.display()))?;
    String::from_utf8(bytes)
        .map_err(|_| anyhow!("refusing {}: it is not UTF-8 text (memory files are text)", path.display()))
}
