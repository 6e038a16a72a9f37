//! `memfs expire`: remove files unused for a while, as one commit.

use clap::Args;

use crate::parse_error::Refused;
use crate::store::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct ExpireArgs {
    /// How long unused, in days: `90d`.
    #[arg(long, value_name = "DAYS", value_parser = parse_days)]
    unused_for: memfs::Day,

    /// List what would expire; change nothing.
    #[arg(long)]
    dry_run: bool,
}

fn parse_days(s: &str) -> Result<memfs::Day, Refused> {
    memfs::parse_days(s).ok_or(Refused("expected a number of days such as 90d"))
}

pub(crate) async fn run(store: &StoreArgs, args: ExpireArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let expired = memfs.expire(args.unused_for, args.dry_run).await?;
    let mut out = String::new();
    for (path, day) in &expired.files {
        out.push_str(&format!("{path}\t(last used {})\n", format_day(*day)));
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

/// A day number as a calendar date (`2026-11-21`).
fn format_day(day: memfs::Day) -> String {
    jiff::civil::date(1970, 1, 1)
        .checked_add(jiff::Span::new().days(i64::from(day)))
        .map_or_else(|_| format!("day {day}"), |d| d.to_string())
}
