//! `memfs check`: verify every reachable object.

use anyhow::bail;
use memfs::history::{CheckOptions, render_check, render_problem};

use crate::cli::{CheckArgs, StoreArgs};
use crate::output::Bar;

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
