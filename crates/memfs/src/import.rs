//! Importing many files into `/memories` as one commit (`memfs import`).
//!
//! Each file goes through the same `create` a model's tool call runs
//! ([`memfs_core::execute_in`] under the head's policy), so the path rules, the sensitive-data
//! filter and the size limits apply to imported files exactly as to created ones; a file one of
//! them refuses makes the whole import fail, and nothing is written. All files land in one
//! commit, by compare-and-swap like any command, re-planned against the new head on a lost race.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};

use memfs_core::{
    Change, Command, Context, Dir, DirRef, FileRef, MemoryPath, Mutation, Name, NewBlob, Node, ObjectId, Outcome, Tree,
    execute_in, normalized,
};
use memfs_store::{Fetched, Operation, Progress, Record};

use crate::conflict::{Conflict, ConflictKind};
use crate::engine::Memfs;
use crate::error::Error;
use crate::transaction::{Commit, Decision};

/// One entry of a plain tree of memory files: what [`Memfs::import`] takes and
/// [`Memfs::export`] gives. Paths are `/memories/...` paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory (imported even when empty).
    Dir {
        /// Where, for example `/memories/projects`.
        path: String,
    },
    /// A file and its text.
    File {
        /// Where, for example `/memories/projects/notes.md`.
        path: String,
        /// The content.
        text: String,
    },
}

impl Entry {
    /// The entry's path.
    pub fn path(&self) -> &str {
        match self {
            Entry::Dir { path } | Entry::File { path, .. } => path,
        }
    }
}

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Replace files that already exist in the store. Without it, an existing file at any
    /// imported path refuses the whole import.
    pub overwrite: bool,
    /// Where the files come from (a folder's name), recorded in the commit's command.
    pub source: String,
    /// Plan only: check everything an import checks and report what it would change (the
    /// report's `generation` stays `None`); nothing is written.
    pub dry_run: bool,
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Imported {
    /// The new commit's generation; `None` when the store already held everything.
    pub generation: Option<u64>,
    /// The files created (`Created`) and replaced (`Modified`), in path order.
    pub changes: Vec<Change>,
    /// Directories created.
    pub new_dirs: usize,
    /// Files that were already in the store with the same content.
    pub unchanged: usize,
    /// What the sensitive-data filter said about a file, by path (its warning or redaction
    /// note, as a `create` answer would carry it).
    pub notes: Vec<(String, String)>,
}

/// The import, checked and sorted: each path once, parents before children.
type Plan<'a> = BTreeMap<Vec<Name>, Option<&'a str>>;

/// What an import has built so far, entry by entry: the tree, the report, the new contents
/// (each once) and every file the store's rules refused.
struct Building {
    tree: Tree,
    imported: Imported,
    blobs: Vec<NewBlob>,
    stored: HashSet<ObjectId>,
    refusals: Vec<Error>,
}

impl Building {
    fn new(tree: Tree) -> Self {
        let imported = Imported { generation: None, changes: Vec::new(), new_dirs: 0, unchanged: 0, notes: Vec::new() };
        Building { tree, imported, blobs: Vec::new(), stored: HashSet::new(), refusals: Vec::new() }
    }
}

/// Where a path leads in a tree.
enum Found {
    Missing,
    /// A parent is a file: the first `n` components.
    UnderFile(usize),
    Node(Node),
}

impl Memfs {
    /// Writes `entries` into the store as one commit (see the module docs). Refuses, changing
    /// nothing, when a path is invalid or listed twice, when a path clashes with the store
    /// ([`Error::ImportConflicts`], every clash listed; existing files are replaced with
    /// [`ImportOptions::overwrite`]) or when the store's rules refuse a file
    /// ([`Error::ImportRefused`]; [`Error::ImportRefusals`] lists every refused entry when there
    /// are several). Files already there with the same content are left alone.
    pub async fn import(
        &self,
        entries: &[Entry],
        options: &ImportOptions,
        progress: &dyn Progress,
    ) -> Result<Imported, Error> {
        self.import_until(entries, options, &AtomicBool::new(false), progress).await
    }

    /// [`Memfs::import`], stopped if `stop` is set while it plans: [`Error::ImportStopped`],
    /// nothing written. Once its commit is under way it goes to the end (a Ctrl-C handler sets
    /// `stop` and awaits the answer, which says whether the commit landed).
    pub async fn import_until(
        &self,
        entries: &[Entry],
        options: &ImportOptions,
        stop: &AtomicBool,
        progress: &dyn Progress,
    ) -> Result<Imported, Error> {
        let stopped = || stop.load(Ordering::SeqCst);
        let plan = plan(entries)?;
        let files = plan.values().filter(|text| text.is_some()).count();
        let record = Record::from(Operation::Import { files: files as u64, from: options.source.clone() });
        let writer = self.writer();
        let today = writer.today;
        let (plan, record) = (&plan, &record);
        let committed = self
            .tx
            .run(&writer, None, move |head, mut fetched| {
                Box::pin(async move {
                    let (head, fetched) = (&*head, &mut fetched);
                    progress.phase("importing", Some(plan.len() as u64));
                    self.refuse_conflicts(&head.tree, plan, options.overwrite, fetched).await?;
                    let context = Context { dialect: self.dialect(), policy: &head.policy, today };
                    let mut building = Building::new(head.tree.clone());
                    for (components, text) in plan {
                        if stopped() {
                            return Err(Error::ImportStopped);
                        }
                        self.import_one(&mut building, components, *text, &context, fetched).await?;
                        progress.advance(1);
                    }
                    let Building { tree, imported, blobs, refusals, .. } = building;
                    if let Some(refused) = refused(refusals) {
                        return Err(refused);
                    }
                    if stopped() {
                        return Err(Error::ImportStopped);
                    }
                    if options.dry_run || (imported.changes.is_empty() && imported.new_dirs == 0) {
                        return Ok(Decision::Done(imported));
                    }
                    // Reads not yet recorded ride along with this commit, as with a tool command.
                    let mutation = Mutation { tree, changes: imported.changes.clone(), blobs, applied: None };
                    let record = record.clone();
                    Ok(Decision::Commit(Commit {
                        mutation,
                        record,
                        touch: Vec::new(),
                        with_reads: true,
                        then: imported,
                    }))
                })
            })
            .await?;
        Ok(Imported { generation: committed.generation, ..committed.value })
    }

    /// Refuses the import, listing every clash, when a path clashes with the tree (an
    /// existing file is no clash with `overwrite`).
    async fn refuse_conflicts(
        &self,
        tree: &Tree,
        plan: &Plan<'_>,
        overwrite: bool,
        fetched: &mut Fetched<'_>,
    ) -> Result<(), Error> {
        let mut conflicts = Vec::new();
        for (components, text) in plan {
            if let Some(kind) = self.conflict(tree, components, text.is_some(), fetched).await?
                && !(kind == ConflictKind::FileExists && overwrite)
            {
                conflicts.push(Conflict { path: normalized(components), kind });
            }
        }
        if !conflicts.is_empty() {
            return Err(Error::ImportConflicts { conflicts });
        }
        Ok(())
    }

    /// One entry of the plan into the tree being built: a directory made if missing, a file
    /// created (or replaced) through `create`.
    async fn import_one(
        &self,
        building: &mut Building,
        components: &[Name],
        text: Option<&str>,
        context: &Context<'_>,
        fetched: &mut Fetched<'_>,
    ) -> Result<(), Error> {
        let path = normalized(components);
        let found = self.find(&building.tree, components, fetched).await?;
        match (text, found) {
            (None, Found::Node(_)) => {}
            (None, _) => {
                building.tree = self.put_dir(&building.tree, components, fetched).await?;
                building.imported.new_dirs += 1;
            }
            (Some(text), found) => self.import_file(building, path, text, found, context, fetched).await?,
        }
        Ok(())
    }

    /// A file of the plan: deleted first if it exists, then created as a model's `create`
    /// would; a refusal is kept for the report, a file already there with the same content
    /// counted as unchanged.
    async fn import_file(
        &self,
        building: &mut Building,
        path: String,
        text: &str,
        found: Found,
        context: &Context<'_>,
        fetched: &mut Fetched<'_>,
    ) -> Result<(), Error> {
        let old = match found {
            Found::Node(Node::File(f)) => Some(f),
            _ => None,
        };
        let base = match old {
            Some(_) => {
                let delete = Command::Delete { path: path.clone() };
                let outcome = self.run(&delete, &building.tree, context, fetched).await?;
                succeeded(outcome, &path)?.tree
            }
            None => building.tree.clone(),
        };
        let create = Command::Create { path: path.clone(), file_text: text.to_owned() };
        let outcome = self.run(&create, &base, context, fetched).await?;
        let note = outcome.result.content.split_once("\n\n").map(|(_, note)| note.to_owned());
        let mutation = match succeeded(outcome, &path) {
            Ok(mutation) => mutation,
            Err(refused) => {
                building.refusals.push(refused);
                return Ok(());
            }
        };
        let new_id = mutation.blobs.first().map(|b| b.id);
        if old.is_some_and(|f: FileRef| Some(f.id) == new_id) {
            building.imported.unchanged += 1;
            return Ok(());
        }
        building.tree = mutation.tree;
        for blob in mutation.blobs {
            if building.stored.insert(blob.id) {
                building.blobs.push(blob);
            }
        }
        building.imported.changes.push(match old {
            Some(_) => Change::Modified { path: path.clone() },
            None => Change::Created { path: path.clone() },
        });
        if let Some(note) = note {
            building.imported.notes.push((path, note));
        }
        Ok(())
    }

    /// Runs a command on `tree`, fetching what it needs.
    async fn run(
        &self,
        command: &Command,
        tree: &Tree,
        context: &Context<'_>,
        fetched: &mut Fetched<'_>,
    ) -> Result<Outcome, Error> {
        fetched.resolve(|f| execute_in(command, tree, context, f)).await.map_err(|e| self.store_error(e))
    }

    /// How an imported path clashes with `tree`, if it does.
    async fn conflict(
        &self,
        tree: &Tree,
        components: &[Name],
        is_file: bool,
        fetched: &mut Fetched<'_>,
    ) -> Result<Option<ConflictKind>, Error> {
        Ok(match (self.find(tree, components, fetched).await?, is_file) {
            (Found::Missing, _) | (Found::Node(Node::Dir(_)), false) => None,
            (Found::UnderFile(n), _) => Some(ConflictKind::UnderFile { file: normalized(&components[..n]) }),
            (Found::Node(Node::File(_)), true) => Some(ConflictKind::FileExists),
            (Found::Node(Node::Dir(_)), true) => Some(ConflictKind::IsDirectory),
            (Found::Node(Node::File(_)), false) => Some(ConflictKind::IsFile),
        })
    }

    /// What `components` leads to in `tree`.
    async fn find(&self, tree: &Tree, components: &[Name], fetched: &mut Fetched<'_>) -> Result<Found, Error> {
        let mut node = Node::Dir(tree.root().clone());
        for (i, name) in components.iter().enumerate() {
            let dir = match &node {
                Node::File(_) => return Ok(Found::UnderFile(i)),
                Node::Dir(d) => self.loaded(d, fetched).await?,
            };
            match dir.get(name) {
                Some(child) => node = child.clone(),
                None => return Ok(Found::Missing),
            }
        }
        Ok(Found::Node(node))
    }

    pub(crate) async fn loaded(&self, dir: &DirRef, fetched: &mut Fetched<'_>) -> Result<std::sync::Arc<Dir>, Error> {
        fetched.whole(dir).await.map_err(|e| self.store_error(e))
    }

    /// `tree` with an empty directory at `components` (parents created as needed).
    async fn put_dir(&self, tree: &Tree, components: &[Name], fetched: &mut Fetched<'_>) -> Result<Tree, Error> {
        let empty = Node::Dir(DirRef::new(Dir::new()));
        let grafted = fetched.resolve(|f| memfs_core::graft(tree, components, Some(empty.clone()), f)).await;
        grafted.map_err(|e| self.store_error(e))
    }
}

/// The mutation of a command that had to succeed, or why the store refused it.
fn succeeded(outcome: Outcome, path: &str) -> Result<Mutation, Error> {
    match outcome.mutation {
        Some(mutation) if !outcome.result.is_error => Ok(mutation),
        _ => Err(Error::ImportRefused { path: path.to_owned(), reason: outcome.result.content }),
    }
}

/// The refusals as one error: none, the one, or [`Error::ImportRefusals`].
fn refused(mut refusals: Vec<Error>) -> Option<Error> {
    match refusals.len() {
        0 => None,
        1 => refusals.pop(),
        _ => Some(Error::ImportRefusals { refusals }),
    }
}

/// Validates every path and sorts the entries; a path listed twice, a file listed as a
/// directory too, or an entry below a listed file is refused: every such entry, not only the
/// first.
fn plan(entries: &[Entry]) -> Result<Plan<'_>, Error> {
    let mut plan: Plan<'_> = BTreeMap::new();
    let mut refusals = Vec::new();
    for entry in entries {
        let path = match MemoryPath::parse(entry.path()) {
            Ok(path) => path,
            Err(e) => {
                refusals.push(e.into());
                continue;
            }
        };
        let bad = |reason: &str| Error::BadImport { path: path.normalized(), reason: reason.to_owned() };
        let text = match entry {
            Entry::Dir { .. } if path.is_root() => continue,
            Entry::File { .. } if path.is_root() => {
                refusals.push(bad("/memories itself cannot be a file"));
                continue;
            }
            Entry::Dir { .. } => None,
            Entry::File { text, .. } => Some(text.as_str()),
        };
        match plan.get(path.components()) {
            None => {}
            Some(None) if text.is_none() => continue,
            Some(Some(_)) if text.is_some() => {
                refusals.push(bad("it is listed twice"));
                continue;
            }
            Some(_) => {
                refusals.push(bad("it is listed as a file and as a directory"));
                continue;
            }
        }
        plan.insert(path.components().to_vec(), text);
    }
    for components in plan.keys() {
        if let Some(n) = (1..components.len()).find(|n| matches!(plan.get(&components[..*n]), Some(Some(_)))) {
            let reason = format!("{} is listed as a file", normalized(&components[..n]));
            refusals.push(Error::BadImport { path: normalized(components), reason });
        }
    }
    match refused(refusals) {
        None => Ok(plan),
        Some(e) => Err(e),
    }
}
