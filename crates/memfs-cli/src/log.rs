//! `memfs log`: the history, newest first.

use memfs::history::{log_entry, log_json};

use crate::cli::{LogArgs, StoreArgs};

pub(crate) async fn run(store: &StoreArgs, args: LogArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let commits = memfs.log(args.limit, args.path.as_deref()).await?;
    let mut out = String::new();
    for c in &commits {
        if args.json {
            out.push_str(&log_json(c));
            out.push('\n');
        } else {
            out.push_str(&log_entry(c));
        }
    }
    crate::output::stdout(out.as_bytes())?;
    Ok(())
}
