//! Integrity check: every object reachable from the head, opened and verified.
//!
//! The head must open; every commit back to the first (or the retention horizon) must open,
//! decode and count down by one generation; every directory of every kept commit's tree must
//! open and decode. File contents are checked for presence and exact stored size (content
//! length plus the seal's overhead: a truncated or padded object is caught without reading
//! it), or, with `read_data`, opened and compared with their ids and sizes. Opening an object
//! authenticates its bytes, its kind and its name, so a changed byte or two swapped objects
//! are reported, each under its own name.
//!
//! The file and byte counts recorded with each directory entry and commit (which the size
//! limits rely on) must equal what the directory holds: each directory's is summed from its
//! pages and compared.

use std::collections::{BTreeMap, HashMap, HashSet};

use futures::{StreamExt, stream};
use memfs_core::{Name, Node, ObjectId, Totals};
use memfs_crypt::{OVERHEAD, ObjectKind};

use super::{EncryptedRepository, GC_STATE_PATH, HEAD_PATH, PARALLEL, id_eq};
use crate::error::Error;
use crate::format::{self, HeadObject};
use crate::head::HeadVersion;
use crate::progress::Progress;

/// How many times a check that found problems runs while the head keeps moving under it.
const CHECK_ATTEMPTS: u32 = 3;

/// What `check` verifies.
#[derive(Debug, Clone, Copy, Default)]
pub struct CheckOptions {
    /// Open every file content and verify it against its id, instead of checking only that
    /// it exists with the right size.
    pub read_data: bool,
}

/// One object that failed verification.
#[derive(Debug)]
#[non_exhaustive]
pub struct Problem {
    /// The object's name in the store (`head`, `gc.state`, `objects/ab/ab…`).
    pub object: String,
    /// What refers to it, for example `file /memories/a.md at @3`.
    pub context: String,
    /// What is wrong.
    pub error: Error,
}

/// What `check` found.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct CheckReport {
    /// Commits verified.
    pub commits: u64,
    /// The newest generation (0 without commits).
    pub newest: u64,
    /// The oldest generation verified.
    pub oldest: u64,
    /// Distinct directories verified.
    pub dirs: u64,
    /// Distinct file contents verified.
    pub files: u64,
    /// Their total size, in bytes of content.
    pub file_bytes: u64,
    /// Whether file contents were read (`read_data`).
    pub read_data: bool,
    /// Stored objects nothing kept refers to (`gc` removes them); counted only when the
    /// head, every commit and every directory could be read.
    pub unreferenced: u64,
    /// Every failure, ordered by object name.
    pub problems: Vec<Problem>,
}

impl CheckReport {
    fn problem(&mut self, object: impl Into<String>, context: impl Into<String>, error: Error) {
        self.problems.push(Problem { object: object.into(), context: context.into(), error });
    }
}

impl EncryptedRepository {
    /// Verifies every object reachable from the head. Failures of single objects are listed
    /// in the report; `Err` only when the store cannot be listed at all.
    ///
    /// A check that finds problems while the head moved under it (a writer, `gc` or `purge` at
    /// work) runs again, three times at most: what it calls missing may be what a
    /// purge took away after the check read the head.
    pub async fn check(&self, options: CheckOptions, progress: &dyn Progress) -> Result<CheckReport, Error> {
        let mut attempt = 1;
        loop {
            let (report, checked) = self.check_once(options, progress).await?;
            if report.problems.is_empty() || attempt == CHECK_ATTEMPTS {
                return Ok(report);
            }
            let now = self.heads.cell.read().await.ok().flatten().map(|(_, version)| version);
            if now == checked {
                return Ok(report);
            }
            attempt += 1;
        }
    }

    /// One pass of [`EncryptedRepository::check`], and the version of the head it checked.
    ///
    /// The head is read before the store is listed: every object the head's history uses was
    /// written before the head named it, so it is in the listing unless it was deleted since.
    /// (Listed first, a commit landing between the listing and the head read would have its
    /// new objects reported missing.)
    async fn check_once(
        &self,
        options: CheckOptions,
        progress: &dyn Progress,
    ) -> Result<(CheckReport, Option<HeadVersion>), Error> {
        let mut w = Walked::default();
        w.report.read_data = options.read_data;
        let head = self.checked_head(&mut w.report).await;
        let horizon = match self.read_gc_state().await {
            Ok(state) => state.map_or(0, |(s, _)| s.horizon),
            Err(e) => {
                // Without the horizon, check all history: cut commits are then reported missing.
                w.report.problem(GC_STATE_PATH, "gc's state (the retention horizon)", e);
                0
            }
        };
        let checked = head.as_ref().map(|(_, version)| version.clone());
        let listing = self.objects.list().await?;
        let carried = carried(head.as_ref().map(|(h, _)| h));

        // Commits. The walk reads through the commit cache; empty it so that every commit is
        // read from storage and authenticated again (directories and contents below are read
        // with `get_object`, which never uses the cache).
        self.objects.cache().forget_commits();
        let roots = match head {
            Some((head, _)) => self.check_commits(&head, horizon, &mut w, progress).await,
            None => Vec::new(),
        };
        self.check_dirs(roots, &mut w, progress).await;
        w.check_totals();

        // File contents.
        let walk_failed = !w.report.problems.is_empty();
        self.check_files(options, &listing, &carried, &mut w, progress).await;

        // Only a complete walk knows what is unreferenced.
        let mut report = w.report;
        if !walk_failed {
            report.unreferenced = listing.keys().filter(|id| !w.referenced.contains(*id)).count() as u64;
        }
        report.problems.sort_by(|a, b| a.object.cmp(&b.object));
        Ok((report, checked))
    }

    /// The head, verified; a fork or a rollback is reported, and the head the store serves is
    /// checked all the same: the user needs to know what it holds before trusting it.
    async fn checked_head(&self, report: &mut CheckReport) -> Option<(HeadObject, HeadVersion)> {
        match self.read_head().await {
            Ok(head) => head,
            Err(e @ (Error::Fork { .. } | Error::Rollback { .. })) => {
                report.problem(HEAD_PATH, "the head", e);
                self.read_head_unverified().await.unwrap_or_else(|e| {
                    report.problem(HEAD_PATH, "the head", e);
                    None
                })
            }
            Err(e) => {
                report.problem(HEAD_PATH, "the head", e);
                None
            }
        }
    }

    /// Every commit from the head back to the horizon opened and decoded, each with its
    /// policy; the commits' trees, to walk next.
    async fn check_commits(
        &self,
        head: &HeadObject,
        horizon: u64,
        w: &mut Walked,
        progress: &dyn Progress,
    ) -> Vec<(ObjectId, u64)> {
        let mut roots = Vec::new();
        w.report.newest = head.generation;
        progress.phase("commits", Some(head.generation.saturating_sub(horizon.max(1)) + 1));
        let mut walk = self.walk(Some(head.commit), head.generation, horizon);
        while let Some((id, generation)) = walk.upcoming() {
            w.referenced.insert(id);
            // What the head says of its parents must be where they lead: a
            // reader takes its word for it instead of walking.
            if let Some(named) = head.commit_at(generation)
                && !id_eq(&named, &id)
            {
                let reason = format!(
                    "it names {} as the commit at @{generation}, where its parents lead to {}",
                    &named.to_hex()[..12],
                    &id.to_hex()[..12]
                );
                let e = Error::Corrupt { object: HEAD_PATH.into(), reason };
                w.report.problem(HEAD_PATH, format!("the commits it names before @{}", head.generation), e);
            }
            match walk.next().await {
                Ok(Some(c)) => {
                    w.claimed.entry(c.root).or_insert_with(|| (c.totals, format!("the tree of @{}", c.generation)));
                    if let Some(policy) = c.policy {
                        self.check_policy(policy, c.generation, w).await;
                    }
                    w.report.commits += 1;
                    w.report.oldest = c.generation;
                    roots.push((c.root, c.generation));
                    progress.advance(1);
                }
                Ok(None) => break,
                Err(e) => {
                    let context = match generation == head.generation {
                        true => format!("commit @{generation}, named by the head"),
                        false => format!("commit @{generation}, parent of @{}", generation + 1),
                    };
                    w.report.problem(format::object_name(&id), context, e);
                    break;
                }
            }
        }
        roots
    }

    /// A commit's policy object, opened and decoded the first time it is met.
    async fn check_policy(&self, policy: ObjectId, generation: u64, w: &mut Walked) {
        if w.referenced.insert(policy)
            && let Err(e) = self.get_object(ObjectKind::Policy, &policy).await.and_then(|plain| {
                serde_json::from_slice::<memfs_core::Policy>(&plain)
                    .map(drop)
                    .map_err(|e| format::corrupt(&policy, "policy", &e))
            })
        {
            w.report.problem(format::object_name(&policy), format!("the policy of @{generation}"), e);
        }
    }

    /// Directories, level by level from the commits' trees; each distinct page once.
    async fn check_dirs(&self, roots: Vec<(ObjectId, u64)>, w: &mut Walked, progress: &dyn Progress) {
        progress.phase("directories", None);
        let mut level: Vec<(ObjectId, String, u64)> =
            roots.into_iter().map(|(id, generation)| (id, memfs_core::ROOT.to_owned(), generation)).collect();
        while !level.is_empty() {
            level.retain(|(id, _, _)| w.referenced.insert(*id));
            progress.extend(level.len() as u64);
            let read: Vec<_> = stream::iter(level)
                .map(|(id, path, generation)| async move {
                    let page = match self.get_object(ObjectKind::Dir, &id).await {
                        Ok(plain) => format::decode_page(&plain, &id),
                        Err(e) => Err(e),
                    };
                    (id, path, generation, page)
                })
                .buffered(PARALLEL)
                .collect()
                .await;
            progress.advance(read.len() as u64);
            let mut next = Vec::new();
            for (id, path, generation, page) in read {
                match page {
                    Ok(format::Page::Leaf(entries)) => w.leaf(id, &path, generation, entries, &mut next),
                    // The pages below belong to the same directory.
                    Ok(format::Page::Index(index)) => {
                        w.report.dirs += 1;
                        next.extend(index.pages.iter().map(|p| (*p, path.clone(), generation)));
                        w.index_pages.insert(id, index);
                    }
                    Err(e) => {
                        w.report.problem(format::object_name(&id), format!("directory {path} at @{generation}"), e);
                    }
                }
            }
            level = next;
        }
    }

    /// Every file content the trees refer to: there with its exact sealed size (or carried by
    /// the head), or, with `read_data`, opened and compared with its size.
    async fn check_files(
        &self,
        options: CheckOptions,
        listing: &HashMap<ObjectId, u64>,
        carried: &HashMap<ObjectId, u64>,
        w: &mut Walked,
        progress: &dyn Progress,
    ) {
        let files = &w.files;
        progress.phase("files", Some(files.len() as u64));
        w.report.files = files.len() as u64;
        w.report.file_bytes = files.values().map(|(size, _)| size).sum();
        let results: Vec<_> = stream::iter(files.iter())
            .map(|(id, (size, _))| {
                let stored = listing.get(id).copied();
                let carried = carried.get(id).copied();
                async move {
                    let r = self.check_file(options.read_data, id, *size, stored, carried).await;
                    progress.advance(1);
                    r
                }
            })
            .buffered(PARALLEL)
            .collect()
            .await;
        for ((id, (_, context)), result) in files.iter().zip(results) {
            if let Err(e) = result {
                w.report.problem(format::object_name(id), context.clone(), e);
            }
            w.referenced.insert(*id);
        }
    }

    /// One file content of `size` bytes: `stored` is its listed size, `carried` its length in
    /// the head when the head carries it unwritten.
    async fn check_file(
        &self,
        read_data: bool,
        id: &ObjectId,
        size: u64,
        stored: Option<u64>,
        carried: Option<u64>,
    ) -> Result<(), Error> {
        match (read_data, stored) {
            (_, None) => match carried {
                Some(len) if len == size => Ok(()),
                Some(len) => Err(size_mismatch(id, len, size)),
                None => Err(Error::MissingObject { id: format::object_name(id) }),
            },
            (true, Some(_)) => {
                self.get_object(ObjectKind::Blob, id).await.and_then(|plain| match plain.len() as u64 == size {
                    true => Ok(()),
                    false => Err(size_mismatch(id, plain.len() as u64, size)),
                })
            }
            (false, Some(stored)) => match size + OVERHEAD as u64 {
                sealed if sealed == stored => Ok(()),
                sealed => Err(Error::Corrupt {
                    object: format::object_name(id),
                    reason: format!("it has {stored} bytes, but a sealed {size}-byte content has {sealed}"),
                }),
            },
        }
    }
}

/// What one pass gathers on its way down from the head: the report, every object it reached,
/// the file contents to check, and what the directories' pages say of themselves, for the
/// checks of recorded totals and guides that follow the walk.
#[derive(Default)]
struct Walked {
    report: CheckReport,
    referenced: HashSet<ObjectId>,
    /// Totals each directory is said to have (by its parent entry or commit), and by what.
    claimed: HashMap<ObjectId, (Totals, String)>,
    /// What each page holds: a leaf's sum, or an index page's pages.
    leaf_totals: HashMap<ObjectId, Totals>,
    index_pages: HashMap<ObjectId, format::Index>,
    /// What guides a reader down a directory: each index page's guide (above), each leaf's
    /// first and last names.
    leaf_names: HashMap<ObjectId, Option<(Name, Name)>>,
    /// Each file content once: its size, and the first file seen with it.
    files: BTreeMap<ObjectId, (u64, String)>,
}

impl Walked {
    /// A leaf page of directory `path` read: its sum and names kept, its files to check, its
    /// subdirectories into `next`.
    fn leaf(
        &mut self,
        id: ObjectId,
        path: &str,
        generation: u64,
        entries: Vec<(Name, Node)>,
        next: &mut Vec<(ObjectId, String, u64)>,
    ) {
        self.report.dirs += 1;
        self.leaf_names.insert(id, entries.first().zip(entries.last()).map(|(f, l)| (f.0.clone(), l.0.clone())));
        let sum = self.leaf_totals.entry(id).or_default();
        for (_, node) in &entries {
            *sum += node.totals();
        }
        for (name, node) in entries {
            let child = format!("{path}/{name}");
            if let Node::Dir(d) = &node
                && let Some(child_id) = d.id()
            {
                self.claimed
                    .entry(child_id)
                    .or_insert_with(|| (d.totals(), format!("directory {child} at @{generation}")));
            }
            match node {
                Node::File(f) => {
                    self.files.entry(f.id).or_insert_with(|| (f.size, format!("file {child} at @{generation}")));
                }
                Node::Dir(d) => next.push((d.id().expect("decoded directories are stored"), child, generation)),
            }
        }
    }

    /// Recorded totals and index guides against the pages below them.
    fn check_totals(&mut self) {
        let mut claimed: Vec<(ObjectId, (Totals, String))> = std::mem::take(&mut self.claimed).into_iter().collect();
        claimed.sort_by_key(|c| c.0);
        let pages = Pages { index: &self.index_pages, leaves: &self.leaf_names };
        let mut summaries = HashMap::new();
        for (id, (said, context)) in claimed {
            // A guide that does not match the pages below it would lead a reader to the wrong
            // leaf (a name reported missing, or put where a whole read would not find it).
            if let Err(page) = pages.summary(&id, &mut summaries, 0) {
                let reason = "an index page's leaf counts or lows do not match the pages below it".to_owned();
                self.report.problem(
                    format::object_name(&page),
                    context.clone(),
                    Error::Corrupt { object: format::object_name(&page), reason },
                );
            }
            if let Some(actual) = page_totals(&id, &self.leaf_totals, &self.index_pages, 0)
                && actual != said
            {
                let reason = format!(
                    "it holds {} files and {} bytes, but is recorded with {} files and {} bytes",
                    actual.files, actual.bytes, said.files, said.bytes
                );
                self.report.problem(
                    format::object_name(&id),
                    context,
                    Error::Corrupt { object: format::object_name(&id), reason },
                );
            }
        }
    }
}

/// File contents the head carries unwritten: stored there, not under `objects/`
/// (verified against their ids when the head was opened).
fn carried(head: Option<&HeadObject>) -> HashMap<ObjectId, u64> {
    head.map(|h| {
        h.inline
            .iter()
            .filter(|o| o.unwritten && o.kind == format::InlineKind::Blob)
            .map(|o| (o.id, o.plain.len() as u64))
            .collect()
    })
    .unwrap_or_default()
}

/// What the pages from `page` down hold; `None` when one could not be read.
fn page_totals(
    page: &ObjectId,
    leaves: &HashMap<ObjectId, Totals>,
    index: &HashMap<ObjectId, format::Index>,
    depth: usize,
) -> Option<Totals> {
    if let Some(t) = leaves.get(page) {
        return Some(*t);
    }
    // Index levels are few (a page holds up to 16 entries); a cycle cannot be authenticated
    // into existence, but a depth bound keeps a bug from recursing forever.
    if depth > 64 {
        return None;
    }
    let mut sum = Totals::default();
    for p in &index.get(page)?.pages {
        sum += page_totals(p, leaves, index, depth + 1)?;
    }
    Some(sum)
}

/// The pages of the directories read, for checking their guides.
struct Pages<'a> {
    index: &'a HashMap<ObjectId, format::Index>,
    leaves: &'a HashMap<ObjectId, Option<(Name, Name)>>,
}

/// What is below a page: its height (0 for a leaf), its leaves, its first and last names.
#[derive(Clone)]
struct Summary {
    height: u32,
    leaves: u64,
    names: Option<(Name, Name)>,
}

impl Pages<'_> {
    /// What is below `page`, checking on the way that every guide matches it; the page whose
    /// guide does not. A page not read (its read failed, reported already) passes.
    fn summary(
        &self,
        page: &ObjectId,
        done: &mut HashMap<ObjectId, Option<Summary>>,
        depth: u32,
    ) -> Result<Option<Summary>, ObjectId> {
        if let Some(known) = done.get(page) {
            return Ok(known.clone());
        }
        let summary = if let Some(names) = self.leaves.get(page) {
            Some(Summary { height: 0, leaves: 1, names: names.clone() })
        } else if let (Some(index), true) = (self.index.get(page), depth <= format::MAX_HEIGHT) {
            let mut below = Vec::with_capacity(index.pages.len());
            for child in &index.pages {
                below.push(self.summary(child, done, depth + 1)?);
            }
            let below: Option<Vec<Summary>> = below.into_iter().collect();
            let guide = &index.guide;
            match below {
                Some(below) => {
                    // Each low is the separator of the child's first name from the last name
                    // before it, exactly (what a writer computes).
                    let low = |i: usize| {
                        let last = below[i - 1].names.as_ref().map(|(_, last)| last)?;
                        let first = below[i].names.as_ref().map(|(first, _)| first)?;
                        Some(crate::pages::separator(last, first))
                    };
                    let fits = below.iter().enumerate().all(|(i, child)| {
                        child.height + 1 == guide.height
                            && child.leaves == guide.leaves[i]
                            && (i == 0 || low(i).as_ref() == Some(&guide.lows[i - 1]))
                    });
                    if !fits {
                        return Err(*page);
                    }
                    let names =
                        below.first().and_then(|b| b.names.clone()).zip(below.last().and_then(|b| b.names.clone()));
                    Some(Summary {
                        height: guide.height,
                        leaves: guide.leaves.iter().sum(),
                        names: names.map(|((first, _), (_, last))| (first, last)),
                    })
                }
                // A page below was not read (reported already): nothing to check.
                None => None,
            }
        } else {
            None
        };
        done.insert(*page, summary.clone());
        Ok(summary)
    }
}

fn size_mismatch(id: &ObjectId, actual: u64, expected: u64) -> Error {
    Error::Corrupt {
        object: format::object_name(id),
        reason: format!("it holds {actual} bytes, but its directory says {expected}"),
    }
}

#[cfg(test)]
mod tests;
