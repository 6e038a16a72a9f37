//! `memfs expire`: remove files unused for a while, as one commit.

use crate::cli::{ExpireArgs, StoreArgs};

pub(crate) async fn run(store: &StoreArgs, args: ExpireArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let expired = memfs.expire(args.unused_for, args.dry_run).await?;
    let mut out = String::new();
    for (path, day) in &expired.files {
        out.push_str(&format!("{path}\t(last used {})\n", memfs::format_day(*day)));
    }
    let n = expired.files.len();
    let files = if n == 1 { "file" } else { "files" };
    let days = match args.unused_for {
        1 => "1 day".to_owned(),
        n => format!("{n} days"),
    };
    out.push_str(&match (args.dry_run, expired.generation) {
        (true, _) => format!("{n} {files} unused for {days} or more would expire (dry run: nothing changed)\n"),
        (false, Some(g)) => format!("expired {n} {files} unused for {days} or more (commit @{g})\n"),
        (false, None) => format!("no file has been unused for {days} or more\n"),
    });
    crate::output::stdout(out.as_bytes())?;
    Ok(())
}
