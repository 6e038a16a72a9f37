//! `memfs tree`: a whole subtree, as of a revision, drawn as `tree` draws folders.

use clap::Args;
use memfs::Listed;

use crate::store::StoreArgs;
use crate::words::plural;

#[derive(Debug, Args)]
pub(crate) struct TreeArgs {
    /// The directory to draw.
    #[arg(value_name = "PATH", default_value = "/memories")]
    path: String,

    /// As of this revision (HEAD, HEAD~N, @N, a commit id prefix) or time (2025-06-01,
    /// 2025-06-01T12:00:00Z, unix seconds: the newest commit made by then).
    #[arg(long, value_name = "REV|TIME", default_value = "HEAD")]
    at: String,
}

pub(crate) async fn run(store: &StoreArgs, args: TreeArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let listed = memfs.list(&args.at, &args.path, true).await?;
    crate::output::stdout(draw(&args.path, &listed).as_bytes())?;
    Ok(())
}

/// The path, one line per entry under it with the branches that lead there, and a count:
///
/// ```text
/// /memories
/// ├── a.md
/// └── d/
///     └── b.md
///
/// 1 directory, 2 files (14 bytes)
/// ```
fn draw(path: &str, listed: &[Listed]) -> String {
    let mut out = format!("{path}\n");
    // Whether each open level still has entries to come: `│   ` under it, else blanks.
    let mut open: Vec<bool> = Vec::new();
    let (mut dirs, mut files, mut bytes) = (0u64, 0u64, 0u64);
    for (i, entry) in listed.iter().enumerate() {
        open.truncate(entry.depth);
        let last = !listed[i + 1..].iter().take_while(|e| e.depth >= entry.depth).any(|e| e.depth == entry.depth);
        for &more in &open {
            out.push_str(if more { "│   " } else { "    " });
        }
        out.push_str(if last { "└── " } else { "├── " });
        out.push_str(&entry.name);
        if entry.is_dir {
            out.push('/');
            dirs += 1;
        } else {
            files += 1;
            bytes += entry.totals.bytes;
        }
        out.push('\n');
        open.push(!last);
    }
    out.push_str(&format!(
        "\n{}, {} ({})\n",
        plural(dirs, "directory", "directories"),
        plural(files, "file", "files"),
        plural(bytes, "byte", "bytes")
    ));
    out
}
