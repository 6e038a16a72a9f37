//! Asking before a destructive command: the plan on stderr, then a yes/no question on the
//! terminal. Shared by `purge`, `gc`, `expire`, `restore`, `undo`, `key remove` and
//! `import --overwrite`.

use std::io::{BufRead, IsTerminal, Write};

use anyhow::{Context, bail};

/// Whether to ask before running: not with `--yes` or `--dry-run`, and only on a terminal.
/// Without one these commands run as they always did, so scripts keep working; purge, which
/// cannot be undone and asked from the start, refuses instead (see `purge::run`).
pub(crate) fn on_terminal(yes: bool, dry_run: bool) -> bool {
    !yes && !dry_run && std::io::stdin().is_terminal()
}

/// Shows `plan` on stderr and asks `question` (`[y/N]` is added); only `y` or `yes` goes on.
pub(crate) fn confirm(plan: &str, question: &str) -> anyhow::Result<bool> {
    let mut stderr = std::io::stderr().lock();
    stderr.write_all(plan.as_bytes())?;
    write!(stderr, "{question} [y/N] ")?;
    stderr.flush()?;
    let mut answer = String::new();
    tokio::task::block_in_place(|| std::io::stdin().lock().read_line(&mut answer)).context("reading the answer")?;
    Ok(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}

/// [`confirm`], where any answer but yes stops the command: `NAME cancelled: nothing was
/// changed`.
pub(crate) fn or_cancel(name: &str, plan: &str, question: &str) -> anyhow::Result<()> {
    if !confirm(plan, question)? {
        bail!("{name} cancelled: nothing was changed");
    }
    Ok(())
}

/// The preview of a destructive command that plans first. With `dry_run`, prints the plan
/// and says stop; on a terminal without `yes`, shows it and asks, when it would change
/// anything. `plan` computes the plan (the library's dry run) and `render` words it, saying
/// whether it changes anything. True: run the command for real.
pub(crate) async fn preview<T>(
    (name, question): (&str, &str),
    yes: bool,
    dry_run: bool,
    plan: impl AsyncFnOnce() -> anyhow::Result<T>,
    render: impl FnOnce(&T) -> (String, bool),
) -> anyhow::Result<bool> {
    if !dry_run && !on_terminal(yes, dry_run) {
        return Ok(true);
    }
    let (text, changes) = render(&plan().await?);
    if dry_run {
        crate::output::stdout(text.as_bytes())?;
        return Ok(false);
    }
    if changes {
        or_cancel(name, &text, question)?;
    }
    Ok(true)
}
