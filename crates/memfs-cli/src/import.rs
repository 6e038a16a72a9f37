//! `memfs import`: copy a plain folder of memory files into the store, as one commit.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

use clap::Args;
use memfs::{ImportOptions, Imported};

use crate::output::Bar;
use crate::store::StoreArgs;
use crate::words::change_lines;

/// Arguments of `memfs import`.
#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The folder to import. It stands for /memories: DIR/notes.md becomes
    /// /memories/notes.md. (The Python SDK's BetaLocalFilesystemMemoryTool keeps its files in
    /// ./memory/memories.)
    dir: PathBuf,
    /// Replace files that already exist in the store. Without it, a file that exists at any
    /// imported path refuses the whole import, and the clashes are listed.
    #[arg(long)]
    overwrite: bool,

    /// Check everything and list what would be imported and replaced; change nothing.
    #[arg(long)]
    dry_run: bool,

    /// Do not ask before replacing files with --overwrite (without a terminal, import does
    /// not ask).
    #[arg(long, short = 'y')]
    yes: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: ImportArgs) -> anyhow::Result<()> {
    let source = source_name(&args.dir);
    let bar = Bar::new();
    let entries = memfs::read_folder(&args.dir, &bar)?;
    if looks_like_the_sdks_base_folder(&entries) {
        let inner = args.dir.join("memories");
        eprintln!(
            "memfs: warning: {} holds a memories folder, as the SDK's base folder does: its files go to /memories/memories/…; to import them at /memories, give {}",
            args.dir.display(),
            inner.display()
        );
    }
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    // Ctrl-C from here on says what the import left. Not before: the passphrase prompt must
    // keep the terminal's own handling (and an interrupted read of the folder left nothing).
    let interrupt = Interrupt::install();
    let options = ImportOptions { overwrite: args.overwrite, source, dry_run: false };
    let shown = args.dir.display().to_string();
    // Only replacing files is destructive: an import without --overwrite changes no file.
    let yes = args.yes || !args.overwrite;
    let plan = async || Ok(memfs.import(&entries, &ImportOptions { dry_run: true, ..options.clone() }, &bar).await?);
    let render = |i: &Imported| {
        let replaces = i.changes.iter().any(|c| matches!(c, memfs::Change::Modified { .. }));
        (render_imported(i, &shown, true), replaces)
    };
    if !crate::confirm::preview(("import", "Replace these files?"), yes, args.dry_run, plan, render).await? {
        return Ok(());
    }
    if !interrupt.start_importing() {
        // Ctrl-C came first: its task is ending the process, saying nothing was imported.
        std::future::pending::<()>().await;
    }
    // Ctrl-C from now on sets `stop`: the import stops before its commit, or (if its commit is
    // under way) goes to the end, and its answer says which.
    let imported = memfs.import_until(&entries, &options, &interrupt.stop, &bar).await;
    drop(bar);
    if interrupt.stop.load(Ordering::SeqCst) {
        let said = match &imported {
            Err(memfs::Error::ImportStopped) | Ok(Imported { generation: None, .. }) => NOTHING_IMPORTED.to_owned(),
            Ok(Imported { generation: Some(generation), .. }) => format!(
                "memfs: interrupted, after the import had landed as @{generation}: every file is in (see `memfs log`)"
            ),
            // Failed on its own: said as any failure is.
            Err(_) => String::new(),
        };
        if !said.is_empty() {
            eprintln!("{said}");
            std::process::exit(INTERRUPTED);
        }
    }
    let imported = imported?;
    for (path, note) in &imported.notes {
        eprintln!("memfs: {path}: {note}");
    }
    crate::output::stdout(render_imported(&imported, &shown, false).as_bytes())?;
    Ok(())
}

/// The exit code of a command stopped by Ctrl-C (128 + SIGINT), as shells give.
const INTERRUPTED: i32 = 130;

/// What an import stopped before its commit says (planning writes nothing: the objects are
/// written with the commit).
const NOTHING_IMPORTED: &str = "memfs: interrupted: nothing was imported (an import is one commit, and it was \
                                stopped before it)";

/// Ctrl-C during an import: before the import runs, it ends the command at once, saying
/// nothing was imported; while it plans, it stops the import before its commit; once the
/// commit is under way, the import goes to the end and the command says it landed.
struct Interrupt {
    /// [`BEFORE`] or [`IMPORTING`], or [`STOPPED`] when Ctrl-C came before the import: moved
    /// on by compare-and-swap, so the import starts only if Ctrl-C has not ended the command.
    stage: AtomicU8,
    /// Set by Ctrl-C while importing: the import stops before its commit.
    stop: AtomicBool,
}

/// The import has not started: Ctrl-C ends the command.
const BEFORE: u8 = 0;
/// The import runs: Ctrl-C stops it.
const IMPORTING: u8 = 1;
/// Ctrl-C came before the import started, and is ending the command.
const STOPPED: u8 = 2;

impl Interrupt {
    /// Catches Ctrl-C from now on (a task of its own, so that it is caught even while the
    /// command waits for an answer on the terminal).
    fn install() -> Arc<Self> {
        let interrupt = Arc::new(Interrupt { stage: AtomicU8::new(BEFORE), stop: AtomicBool::new(false) });
        let watcher = interrupt.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_err() {
                return; // no handler: Ctrl-C keeps its default, ending the process
            }
            match watcher.stage.compare_exchange(BEFORE, STOPPED, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => {
                    eprintln!("{NOTHING_IMPORTED}");
                    std::process::exit(INTERRUPTED);
                }
                Err(_) => watcher.stop.store(true, Ordering::SeqCst),
            }
        });
        interrupt
    }

    /// Moves on to importing; `false` if Ctrl-C came first.
    fn start_importing(&self) -> bool {
        self.stage.compare_exchange(BEFORE, IMPORTING, Ordering::SeqCst, Ordering::SeqCst).is_ok()
    }
}

/// Whether the folder is what the Python SDK's `BetaLocalFilesystemMemoryTool` calls its base
/// path (`./memory`, holding `memories/`): imported as it is, every file lands one level too
/// deep, in `/memories/memories/`.
fn looks_like_the_sdks_base_folder(entries: &[memfs::Entry]) -> bool {
    entries.iter().any(|e| e.path() == "/memories/memories")
}

/// What the commit records as the source: the folder's own name, not where it lives.
fn source_name(dir: &Path) -> String {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    absolute
        .components()
        .next_back()
        .map_or_else(|| dir.display().to_string(), |c| c.as_os_str().to_string_lossy().into_owned())
}

/// What `memfs import` prints: `@GEN: imported N files from SOURCE`, then one `A path` or
/// `M path` line per file; or that nothing changed. With `dry_run`, what it would do:
/// `would import N files from SOURCE`.
fn render_imported(imported: &Imported, source: &str, dry_run: bool) -> String {
    let files = match imported.changes.len() {
        1 => "1 file".to_owned(),
        n => format!("{n} files"),
    };
    let changes = !imported.changes.is_empty() || imported.new_dirs > 0;
    let mut out = match imported.generation {
        _ if dry_run && changes => format!("would import {files} from {source}"),
        Some(g) => format!("@{g}: imported {files} from {source}"),
        None => format!("nothing to import: the store already holds everything in {source}"),
    };
    let mut extra = Vec::new();
    match imported.new_dirs {
        0 => {}
        1 => extra.push("1 new directory".to_owned()),
        n => extra.push(format!("{n} new directories")),
    }
    match imported.unchanged {
        0 => {}
        1 => extra.push("1 file unchanged".to_owned()),
        n => extra.push(format!("{n} files unchanged")),
    }
    if (imported.generation.is_some() || dry_run && changes) && !extra.is_empty() {
        out.push_str(&format!(" ({})", extra.join(", ")));
    }
    out.push('\n');
    change_lines(&mut out, &imported.changes);
    out
}
