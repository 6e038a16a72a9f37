//! `memfs ls`: a directory's entries, as of a revision.

use clap::Args;

use crate::store::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct LsArgs {
    /// The directory (or file) to list.
    #[arg(value_name = "PATH", default_value = "/memories")]
    path: String,

    /// As of this revision (HEAD, HEAD~N, @N, a commit id prefix) or time (2025-06-01,
    /// 2025-06-01T12:00:00Z, unix seconds: the newest commit made by then).
    #[arg(long, value_name = "REV|TIME", default_value = "HEAD")]
    at: String,

    /// Also each entry's size in bytes (a directory: the bytes of every file below it).
    #[arg(short = 'l', long)]
    long: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: LsArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let listed = memfs.list(&args.at, &args.path, false).await?;
    let mut out = String::new();
    for entry in &listed {
        let slash = if entry.is_dir { "/" } else { "" };
        if args.long {
            out.push_str(&format!("{:>12}  {}{slash}\n", entry.totals.bytes, entry.name));
        } else {
            out.push_str(&format!("{}{slash}\n", entry.name));
        }
    }
    crate::output::stdout(out.as_bytes())?;
    Ok(())
}
