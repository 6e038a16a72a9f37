//! `memfs expire`: remove files unused for a while, as one commit.

use clap::Args;

use crate::parse_error::Refused;
use crate::store::StoreArgs;

#[derive(Debug, Args)]
pub(crate) struct ExpireArgs {
    /// How long unused, in days: `90d` expires every file last used 90 or more days ago. `0d`
    /// expires every file, even one used today.
    #[arg(long, value_name = "DAYS", value_parser = parse_days)]
    unused_for: memfs::Day,

    /// List what would expire; change nothing.
    #[arg(long)]
    dry_run: bool,

    /// Do not ask before expiring (without a terminal, expire does not ask).
    #[arg(long, short = 'y')]
    yes: bool,
}

/// `90d`; also `0d` here, which a policy's `expire-unused-after` refuses (a store that
/// emptied itself every day), but which a person may run once on purpose.
fn parse_days(s: &str) -> Result<memfs::Day, Refused> {
    let zero = s.strip_suffix('d').is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b == b'0'));
    match memfs::parse_days(s) {
        Some(days) => Ok(days),
        None if zero => Ok(0),
        None => Err(Refused("expected a number of days such as 90d")),
    }
}

pub(crate) async fn run(store: &StoreArgs, args: ExpireArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let plan = async || Ok(memfs.expire(args.unused_for, true).await?);
    let preview = |e: &memfs::Expired| (render(&args, e, true), !e.files.is_empty());
    if !crate::confirm::preview(("expire", "Expire these files?"), args.yes, args.dry_run, plan, preview).await? {
        return Ok(());
    }
    let expired = memfs.expire(args.unused_for, false).await?;
    crate::output::stdout(render(&args, &expired, false).as_bytes())?;
    Ok(())
}

/// What `memfs expire` prints: one line per file, then what happened (or, for a dry run,
/// what would).
fn render(args: &ExpireArgs, expired: &memfs::Expired, dry_run: bool) -> String {
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
    out.push_str(&match (dry_run, expired.generation) {
        (true, _) => format!("{n} {files} unused for {days} or more would expire (dry run: nothing changed)\n"),
        (false, Some(g)) => format!("expired {n} {files} unused for {days} or more (commit @{g})\n"),
        (false, None) => format!("no file has been unused for {days} or more\n"),
    });
    out
}

/// A day number as a calendar date (`2026-11-21`).
fn format_day(day: memfs::Day) -> String {
    jiff::civil::date(1970, 1, 1)
        .checked_add(jiff::Span::new().days(i64::from(day)))
        .map_or_else(|_| format!("day {day}"), |d| d.to_string())
}
