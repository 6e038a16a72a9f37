//! `memfs show`: a commit, or a file or directory at a commit.

use memfs::history::Shown;

use crate::log::log_entry;

use crate::cli::{ShowArgs, StoreArgs};

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
