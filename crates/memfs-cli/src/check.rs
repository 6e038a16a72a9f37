//! `memfs check`: verify every reachable object.

use std::fmt::Write as _;

use anyhow::bail;
use clap::Args;
use memfs::history::{CheckOptions, CheckReport, Problem};

use crate::output::Bar;
use crate::store::StoreArgs;
use crate::words::{generations, plural};

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Also open every file content and verify it against its id.
    #[arg(long)]
    read_data: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: CheckArgs) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let report = {
        let bar = Bar::new();
        memfs.check(CheckOptions { read_data: args.read_data }, &bar).await?
    };
    for problem in &report.problems {
        eprintln!("{}", render_problem(problem));
    }
    crate::output::stdout(render_check(&report).as_bytes())?;
    match report.problems.len() {
        0 => Ok(()),
        1 => bail!("check found 1 problem"),
        n => bail!("check found {n} problems"),
    }
}

/// A problem as `memfs check` reports it: `error: WHAT (WHERE)`.
fn render_problem(p: &Problem) -> String {
    format!("error: {} ({})", memfs::error_chain(&p.error), p.context)
}

/// What `memfs check` prints after the problems: the counts, then `no problems found` or how
/// many there were.
fn render_check(r: &CheckReport) -> String {
    let how = if r.read_data { "read and verified" } else { "present with the right sizes" };
    let mut out = format!(
        "checked {}, {}, {} ({}, {how})\n",
        generations(r.commits, r.oldest, r.newest),
        plural(r.dirs, "directory", "directories"),
        plural(r.files, "file", "files"),
        plural(r.file_bytes, "byte", "bytes"),
    );
    if r.unreferenced > 0 {
        let what = plural(r.unreferenced, "unreferenced object", "unreferenced objects");
        let _ = writeln!(out, "{what} (memfs gc removes them)");
    }
    match r.problems.len() {
        0 => out.push_str("no problems found\n"),
        n => {
            let _ = writeln!(out, "{}", plural(n as u64, "problem found", "problems found"));
        }
    }
    out
}
