//! `memfs show`: a commit, or a file or directory at a commit.

use clap::Args;
use memfs::history::Shown;

use crate::log::log_entry;

use crate::store::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct ShowArgs {
    /// REV, or REV:PATH (for example HEAD~1:/memories/notes.md).
    #[arg(value_name = "REV[:PATH]")]
    spec: String,
}

pub(crate) async fn run(store: &StoreArgs, args: ShowArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    match memfs.show(&args.spec).await? {
        Shown::Commit(c) => crate::output::stdout(log_entry(&c).as_bytes())?,
        // The content exactly as stored: no newline added.
        Shown::File(content) => crate::output::stdout(&content)?,
        Shown::Dir(entries) => {
            let text: String = entries.iter().map(|e| format!("{e}\n")).collect();
            crate::output::stdout(text.as_bytes())?;
        }
    }
    Ok(())
}
