//! `memfs purge`: erase a file from the live tree and from history.

use std::fmt::Write as _;
use std::io::IsTerminal;

use anyhow::bail;
use clap::Args;
use memfs::{PurgeOptions, PurgeReport};

use crate::output::Bar;
use crate::store::StoreArgs;
use crate::words::plural;

#[derive(Debug, Args)]
pub(crate) struct PurgeArgs {
    /// The file or directory to erase (under /memories).
    path: String,

    /// Also erase the live files elsewhere that hold the same content or that the path was
    /// renamed to (without it, purge refuses and names them).
    #[arg(long)]
    all_copies: bool,

    /// Show what would be erased (paths, versions, commits, objects); change nothing.
    #[arg(long)]
    dry_run: bool,

    /// Do not ask before erasing (needed when stdin is not a terminal).
    #[arg(long, short = 'y')]
    yes: bool,
}

pub(crate) async fn run(store: &StoreArgs, args: PurgeArgs) -> anyhow::Result<()> {
    // Refused before the store is opened: a purge cannot be undone, so without a terminal to
    // ask on, only an explicit --yes runs one.
    let ask = !args.yes && !args.dry_run;
    if ask && !std::io::stdin().is_terminal() {
        bail!(
            "purge cannot be undone and asks before erasing, but stdin is not a terminal: pass --yes to purge \
             without asking (--dry-run shows what it would erase)"
        );
    }
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let options = PurgeOptions { all_copies: args.all_copies, dry_run: false };
    if ask || args.dry_run {
        let plan = purge(&memfs, &args, PurgeOptions { dry_run: true, ..options }).await?;
        let plan = render_plan(&plan);
        if args.dry_run {
            return Ok(crate::output::stdout(plan.as_bytes())?);
        }
        crate::confirm::or_cancel("purge", &plan, "Erase all of this? It cannot be undone.")?;
    }
    let report = purge(&memfs, &args, options).await?;
    crate::output::stdout(render_purged(&report).as_bytes())?;
    if report.remaining_commits > 0 {
        // Writers kept the deletion from being fenced, and it was undone: a second run finds
        // the old commits among the unreachable ones and deletes them.
        bail!("the purge of {} is not complete: run memfs purge {0} again", report.path);
    }
    if report.remaining > 0 {
        // A writer stored equal content again while the purge ran: that is a new file now.
        bail!("the purged content was stored again during the purge: purge {} too", report.stored_again.join(", "));
    }
    Ok(())
}

async fn purge(memfs: &memfs::Memfs, args: &PurgeArgs, options: PurgeOptions) -> anyhow::Result<PurgeReport> {
    let bar = Bar::new();
    match memfs.purge(&args.path, options, &bar).await {
        Ok(report) => Ok(report),
        Err(memfs::Error::PurgeLiveCopies { path, copies }) => bail!(
            "nothing was changed: {path} has live copies (files that hold the same content, or that it was renamed \
             to): {}; to erase them too, pass --all-copies",
            copies.join(", ")
        ),
        Err(e) => Err(e.into()),
    }
}

/// The last line of a verified purge: copies elsewhere still open with the store's keys.
const NOT_SHREDDED: &str = "not shredded: copies kept outside the store (bucket versions, backups, other machines' \
                            caches) still open with its keys; memfs key shred destroys those keys\n";

/// What `memfs purge` prints: the purge commit and what it deleted from the live tree, what
/// it removed from history, the objects deleted, the log's compaction (a local folder), and
/// the verification.
///
/// ```text
/// @10: purged /memories/secret.md
///   D /memories/secret.md
/// removed 5 versions from 9 of 9 commits (9 rewritten)
/// deleted: 31 objects (9013 bytes)
/// compacted the log: 14583 bytes before, 5122 bytes after
/// verified: none of the 5 content objects remains, nor any of the 9 replaced commits
/// not shredded: copies kept outside the store (…) still open with its keys; memfs key shred …
/// ```
fn render_purged(r: &PurgeReport) -> String {
    if r.dry_run {
        return render_plan(r);
    }
    let mut out = format!("@{}: purged {}\n", r.generation, r.path);
    removals(&mut out, r, "removed");
    let _ = writeln!(out, "deleted: {}", deleted(r));
    if r.log_bytes_before > 0 {
        let _ = writeln!(
            out,
            "compacted the log: {} before, {} after",
            plural(r.log_bytes_before, "byte", "bytes"),
            plural(r.log_bytes_after, "byte", "bytes")
        );
    }
    let contents = plural(r.versions, "content object", "content objects");
    let commits = plural(r.replaced_commits, "replaced commit", "replaced commits");
    match (r.remaining, r.remaining_commits) {
        (0, 0) => {
            let _ = writeln!(out, "verified: none of the {contents} remains, nor any of the {commits}");
            // The erasure is of this store's copies: say what it is not.
            out.push_str(NOT_SHREDDED);
        }
        (left, 0) => {
            let verb = if left == 1 { "is" } else { "are" };
            let _ = writeln!(
                out,
                "NOT verified: {left} of the {contents} {verb} stored again, by a commit made during the purge, at:"
            );
            for path in &r.stored_again {
                let _ = writeln!(out, "  {path}");
            }
        }
        (left, commits_left) => {
            let _ = writeln!(
                out,
                "NOT verified: the deletion was undone (writers kept committing): {left} of the {contents} and \
                 {commits_left} of the {commits} are still stored"
            );
        }
    }
    out
}

/// What a purge removes (`verb`: "removed") or would remove ("would remove"): the live
/// paths, the other paths whose history copies go with it, and the versions and commits.
fn removals(out: &mut String, r: &PurgeReport, verb: &str) {
    for path in &r.removed {
        let _ = writeln!(out, "  D {path}");
    }
    if !r.history_copies.is_empty() {
        let _ = writeln!(out, "{verb} from history, where these paths held the same content:");
        for path in &r.history_copies {
            let _ = writeln!(out, "  {path}");
        }
    }
    let _ = write!(
        out,
        "{verb} {} from {} of {} ({} rewritten)",
        plural(r.versions, "version", "versions"),
        r.changed,
        plural(r.commits, "commit", "commits"),
        r.rewritten
    );
    if r.unreachable_commits > 0 {
        let _ =
            write!(out, "; searched {}", plural(r.unreachable_commits, "unreachable commit", "unreachable commits"));
    }
    out.push('\n');
}

/// The objects a purge deletes (or would): `31 objects (9013 bytes)`.
fn deleted(r: &PurgeReport) -> String {
    format!("{} ({})", plural(r.deleted, "object", "objects"), plural(r.deleted_bytes, "byte", "bytes"))
}

/// What `memfs purge --dry-run` prints (and what the question before a purge shows): what the
/// purge would delete from the live tree and from history, and how many objects.
///
/// ```text
/// would purge /memories/secret.md as @10:
///   D /memories/secret.md
/// would remove 5 versions from 9 of 9 commits (9 rewritten)
/// would delete: 31 objects (9013 bytes), including 9 replaced commits
/// ```
fn render_plan(r: &PurgeReport) -> String {
    let mut out = format!("would purge {} as @{}:\n", r.path, r.generation);
    removals(&mut out, r, "would remove");
    let replaced = plural(r.replaced_commits, "replaced commit", "replaced commits");
    let _ = writeln!(out, "would delete: {}, including {replaced}", deleted(r));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report of the library's `purges_and_reports_exactly` (two versions of one file in
    /// three commits), as printed.
    #[test]
    fn renders_a_purge_exactly() {
        let mut r = PurgeReport::default();
        (r.path, r.generation, r.removed) = ("/memories/secret.md".into(), 4, vec!["/memories/secret.md".into()]);
        (r.versions, r.commits, r.changed, r.rewritten, r.replaced_commits) = (2, 3, 3, 3, 3);
        (r.deleted, r.deleted_bytes) = (7, 1234);
        assert_eq!(
            render_purged(&r),
            "@4: purged /memories/secret.md\n  D /memories/secret.md\nremoved 2 versions from 3 of 3 commits (3 rewritten)\n\
             deleted: 7 objects (1234 bytes)\nverified: none of the 2 content objects remains, nor any of the 3 replaced commits\n\
             not shredded: copies kept outside the store (bucket versions, backups, other machines' caches) still open \
             with its keys; memfs key shred destroys those keys\n"
        );
        r.dry_run = true;
        assert_eq!(
            render_purged(&r),
            "would purge /memories/secret.md as @4:\n  D /memories/secret.md\n\
             would remove 2 versions from 3 of 3 commits (3 rewritten)\n\
             would delete: 7 objects (1234 bytes), including 3 replaced commits\n"
        );
    }

    #[test]
    fn renders_singulars_unreachable_commits_and_a_failed_verification() {
        let mut r = PurgeReport::default();
        (r.path, r.generation, r.versions, r.commits, r.changed, r.rewritten) = ("/memories/a".into(), 2, 1, 1, 1, 1);
        (r.unreachable_commits, r.replaced_commits, r.deleted, r.deleted_bytes) = (1, 2, 1, 1);
        (r.log_bytes_before, r.log_bytes_after) = (300, 100);
        assert_eq!(
            render_purged(&r),
            format!(
                "@2: purged /memories/a\nremoved 1 version from 1 of 1 commit (1 rewritten); searched 1 unreachable commit\n\
             deleted: 1 object (1 byte)\ncompacted the log: 300 bytes before, 100 bytes after\n\
             verified: none of the 1 content object remains, nor any of the 2 replaced commits\n{NOT_SHREDDED}"
            )
        );
        r.remaining = 1;
        r.stored_again = vec!["/memories/b".into()];
        assert!(render_purged(&r).ends_with(
            "NOT verified: 1 of the 1 content object is stored again, by a commit made during the purge, at:\n  \
             /memories/b\n"
        ));
        (r.remaining_commits, r.stored_again) = (2, Vec::new());
        assert!(render_purged(&r).ends_with(
            "NOT verified: the deletion was undone (writers kept committing): 1 of the 1 content object and 2 of the 2 \
             replaced commits are still stored\n"
        ));
    }
}
