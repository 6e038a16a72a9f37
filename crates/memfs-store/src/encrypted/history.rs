//! History: commits as records, the walk from the head back to the retention horizon,
//! revisions and past trees.
//!
//! Commits are immutable and each names its parent, so history is the chain from the head
//! back to the first commit (generation 1), or to the retention horizon that `gc` records:
//! the oldest commit kept. Its parent link still names a commit, which `gc` may have
//! deleted, so every walk stops at the horizon instead of following it.

use memfs_core::{Change, DirRef, MemoryPath, ObjectId, Totals, Tree};
use serde::Serialize;

use super::EncryptedRepository;
use crate::error::Error;
use crate::format::{self, CommitObject};
use crate::record::Record;
use crate::repository::Head;
use crate::revision::Revision;

/// One commit, as `memfs log` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct CommitRecord {
    /// The commit's id, 64 hex digits.
    pub id: String,
    /// The previous commit's id; `None` for the first commit.
    pub parent: Option<String>,
    /// The root directory's id.
    pub tree: String,
    /// Position in history: the first commit is 1, each later one adds 1.
    pub generation: u64,
    /// When it was made, in milliseconds since the Unix epoch (the writer's clock).
    pub time_ms: u64,
    /// The agent or user that made it (may be empty).
    pub actor: String,
    /// What the commit did, as stored: one line of JSON (see [`CommitRecord::record`]).
    pub command: String,
    /// What changed.
    pub changes: Vec<Change>,
    #[serde(skip)]
    pub(crate) oid: ObjectId,
    #[serde(skip)]
    pub(crate) root: ObjectId,
    /// Files and bytes in the tree.
    #[serde(skip)]
    pub(crate) totals: Totals,
    /// The policy object in force after this commit (`None`: the default policy).
    #[serde(skip)]
    pub(crate) policy: Option<ObjectId>,
}

impl CommitRecord {
    fn new(oid: ObjectId, c: CommitObject) -> Self {
        CommitRecord {
            id: oid.to_hex(),
            parent: c.parent.map(|p| p.to_hex()),
            tree: c.tree.to_hex(),
            generation: c.generation,
            time_ms: c.time_ms,
            actor: c.actor,
            command: c.command,
            changes: c.changes,
            oid,
            root: c.tree,
            totals: Totals { files: c.files, bytes: c.bytes },
            policy: c.policy,
        }
    }

    /// What the commit did, read from [`CommitRecord::command`] (see [`Record`]).
    pub fn record(&self) -> Record {
        Record::parse(&self.command)
    }

    /// The first 12 hex digits of the id, as `log` prints it.
    pub fn short_id(&self) -> &str {
        &self.id[..12]
    }

    /// The tree as it was after this commit (directories load on demand).
    pub fn tree(&self) -> Tree {
        Tree::from_root(DirRef::stored(self.root, self.totals))
    }

    /// Whether one of the commit's changes is `path`, lies below it, or contains it.
    pub fn touches(&self, path: &MemoryPath) -> bool {
        let p = path.normalized();
        let related = |c: &str| c == p || is_below(c, &p) || is_below(&p, c);
        self.changes.iter().any(|change| match change {
            Change::Created { path } | Change::Modified { path } | Change::Deleted { path } => related(path),
            Change::Renamed { from, to } => related(from) || related(to),
        })
    }
}

fn is_below(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

/// Walks the commit chain from one commit towards the first, stopping at the horizon, and
/// checks that generations count down by one.
pub(super) struct Walk<'a> {
    repo: &'a EncryptedRepository,
    /// The next commit and the generation it must have.
    next: Option<(ObjectId, u64)>,
    horizon: u64,
    /// The last commit reached, and whether the walk stopped at the horizon with a parent.
    pub(super) cut: bool,
}

impl Walk<'_> {
    /// The commit the next call reads, with its expected generation.
    pub(super) fn upcoming(&self) -> Option<(ObjectId, u64)> {
        self.next
    }

    pub(super) async fn next(&mut self) -> Result<Option<CommitRecord>, Error> {
        let Some((id, expected)) = self.next.take() else { return Ok(None) };
        let c = self.repo.commit_object(&id).await?;
        let corrupt = |reason: String| Error::Corrupt { object: format::object_name(&id), reason };
        if c.generation != expected {
            return Err(corrupt(format!("it has generation {} where {expected} was expected", c.generation)));
        }
        match c.parent {
            None if c.generation != 1 => return Err(corrupt(format!("generation {} has no parent", c.generation))),
            Some(_) if c.generation <= 1 => return Err(corrupt("the first commit has a parent".into())),
            Some(_) if c.generation <= self.horizon => self.cut = true,
            Some(p) => self.next = Some((p, c.generation - 1)),
            None => {}
        }
        Ok(Some(CommitRecord::new(id, c)))
    }
}

impl EncryptedRepository {
    pub(super) fn walk(&self, from: Option<ObjectId>, generation: u64, horizon: u64) -> Walk<'_> {
        Walk { repo: self, next: from.map(|id| (id, generation)), horizon, cut: false }
    }

    /// A walk from the head `base` was read as.
    async fn walk_from(&self, base: &Head) -> Result<Walk<'_>, Error> {
        let horizon = self.horizon().await?;
        let commit = base.anchor.as_ref().and_then(|a| a.commit);
        Ok(self.walk(commit, base.generation, horizon))
    }

    /// The generation of the oldest commit `gc` kept (older ones may be gone); 0 if `gc` never
    /// cut history.
    pub async fn horizon(&self) -> Result<u64, Error> {
        Ok(self.read_gc_state().await?.map_or(0, |(state, _)| state.horizon))
    }

    /// Up to `limit` commits, newest first, back to the first commit or the retention horizon;
    /// with `path`, only the commits that changed it or something below or above it.
    pub async fn log(&self, limit: Option<usize>, path: Option<&MemoryPath>) -> Result<Vec<CommitRecord>, Error> {
        let head = crate::Repository::head(self).await?;
        let mut walk = self.walk_from(&head).await?;
        let mut out = Vec::new();
        while limit.is_none_or(|l| out.len() < l) {
            let Some(c) = walk.next().await? else { break };
            if path.is_none_or(|p| c.touches(p)) {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// The commit a revision names, in the current history.
    pub async fn resolve(&self, rev: &Revision) -> Result<CommitRecord, Error> {
        let head = crate::Repository::head(self).await?;
        self.resolve_in(&head, rev).await
    }

    /// The commit a revision names, in the history of `base` (a head read earlier): relative
    /// revisions (`HEAD~N`) count from it.
    pub async fn resolve_in(&self, base: &Head, rev: &Revision) -> Result<CommitRecord, Error> {
        let unknown = |reason: String| Error::UnknownRevision { rev: rev.to_string(), reason };
        let mut walk = self.walk_from(base).await?;
        if walk.upcoming().is_none() {
            return Err(unknown("the store has no commits yet".into()));
        }
        let horizon = walk.horizon;
        let steps = match rev {
            Revision::Head(n) => *n,
            Revision::Generation(g) if *g > base.generation => {
                return Err(unknown(format!("the newest commit is @{}", base.generation)));
            }
            Revision::Generation(g) if *g < horizon => {
                return Err(unknown(format!("history before @{horizon} was removed by gc")));
            }
            Revision::Generation(g) => base.generation - g,
            Revision::Prefix(prefix) => {
                let mut found = Vec::new();
                while let Some(c) = walk.next().await? {
                    if c.id.starts_with(prefix.as_str()) {
                        found.push(c);
                    }
                }
                return match found.len() {
                    0 => Err(unknown("no commit id starts with it".into())),
                    1 => Ok(found.remove(0)),
                    count => Err(Error::AmbiguousRevision { rev: rev.to_string(), count }),
                };
            }
        };
        let mut last = None;
        for _ in 0..=steps {
            match walk.next().await? {
                Some(c) => last = Some(c),
                None if walk.cut => return Err(unknown(format!("history before @{horizon} was removed by gc"))),
                None => {
                    let n = base.generation;
                    return Err(unknown(format!("the history has {n} commit{}", if n == 1 { "" } else { "s" })));
                }
            }
        }
        Ok(last.expect("at least one step"))
    }

    /// The tree at a revision.
    pub async fn tree_at(&self, rev: &Revision) -> Result<Tree, Error> {
        Ok(self.resolve(rev).await?.tree())
    }

    /// The newest commit made at or before `time_ms` (by the writers' clocks) in the history of
    /// `base`; `None` if every retained commit is newer.
    pub async fn commit_at_or_before(&self, base: &Head, time_ms: u64) -> Result<Option<CommitRecord>, Error> {
        let mut walk = self.walk_from(base).await?;
        while let Some(c) = walk.next().await? {
            if c.time_ms <= time_ms {
                return Ok(Some(c));
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use memfs_core::{Command, Dialect, Mutation, execute};

    use super::*;
    use crate::fetch::Fetched;
    use crate::repository::{CommitInfo, Repository};

    /// Runs a command on `base` through `execute`, fetching every object it needs from `repo`.
    pub(crate) async fn mutate(
        repo: &EncryptedRepository,
        base: &Head,
        input: serde_json::Value,
    ) -> Result<Mutation, Error> {
        let command = Command::from_input(&input).unwrap();
        let out = Fetched::new(repo).resolve(|f| execute(&command, &base.tree, Dialect::Spec, f)).await?;
        assert!(!out.result.is_error, "{}", out.result.content);
        Ok(out.mutation.expect("a mutation"))
    }

    /// Runs a command on the head and commits it as actor `tester`.
    pub(crate) async fn run(repo: &EncryptedRepository, input: serde_json::Value) {
        let head = repo.head().await.unwrap();
        let command = Record::Tool(Command::from_input(&input).unwrap());
        let m = mutate(repo, &head, input).await.unwrap();
        let info = CommitInfo { actor: "tester".into(), command, changes: m.changes.clone() };
        repo.commit(&head, &m, info).await.unwrap();
    }

    /// Runs a command on the head and stores its commit's objects as a writer that stopped
    /// before its head swap (a killed process) leaves them: stored, never reachable.
    pub(crate) async fn stopped_before_swap(repo: &EncryptedRepository, input: serde_json::Value) {
        let head = repo.head().await.unwrap();
        let m = mutate(repo, &head, input).await.unwrap();
        let anchor = head.anchor.as_ref().unwrap();
        let staged = repo.stage(&head, anchor, &m, CommitInfo::default(), None, &[]).await.unwrap();
        repo.store_without_head(&staged).await;
    }

    pub(crate) async fn three_commits() -> EncryptedRepository {
        let repo = EncryptedRepository::ephemeral().unwrap();
        run(&repo, serde_json::json!({"command": "create", "path": "/memories/a.txt", "file_text": "one"})).await;
        run(&repo, serde_json::json!({"command": "create", "path": "/memories/d/b.txt", "file_text": "two"})).await;
        run(
            &repo,
            serde_json::json!({"command": "rename", "old_path": "/memories/a.txt", "new_path": "/memories/d/a.txt"}),
        )
        .await;
        repo
    }

    #[tokio::test]
    async fn log_walks_from_the_head_with_filters() {
        let repo = three_commits().await;
        let all = repo.log(None, None).await.unwrap();
        let gens: Vec<u64> = all.iter().map(|c| c.generation).collect();
        assert_eq!(gens, [3, 2, 1]);
        assert_eq!(all[0].parent.as_deref(), Some(all[1].id.as_str()));
        assert_eq!(all[2].parent, None);
        assert_eq!(all[2].actor, "tester");
        assert_eq!(all[2].command, r#"{"command":"create","path":"/memories/a.txt","file_text":"one"}"#);
        assert_eq!(
            all[0].changes,
            [Change::Renamed { from: "/memories/a.txt".into(), to: "/memories/d/a.txt".into() }]
        );

        let limited: Vec<u64> = repo.log(Some(2), None).await.unwrap().iter().map(|c| c.generation).collect();
        assert_eq!(limited, [3, 2]);
        let filter = |p: &str| MemoryPath::parse(p).unwrap();
        let of = |cs: Vec<CommitRecord>| cs.iter().map(|c| c.generation).collect::<Vec<_>>();
        assert_eq!(of(repo.log(None, Some(&filter("/memories/a.txt"))).await.unwrap()), [3, 1]);
        assert_eq!(of(repo.log(None, Some(&filter("/memories/d"))).await.unwrap()), [3, 2]);
        assert_eq!(of(repo.log(None, Some(&filter("/memories/d/b.txt/x"))).await.unwrap()), [2]);
        assert_eq!(of(repo.log(None, Some(&filter("/memories/dd"))).await.unwrap()), Vec::<u64>::new());
        assert_eq!(of(repo.log(None, Some(&filter("/memories"))).await.unwrap()), [3, 2, 1]);
    }

    #[tokio::test]
    async fn resolves_every_revision_form() {
        let repo = three_commits().await;
        let log = repo.log(None, None).await.unwrap();
        let gen_of = |rev: &str| {
            let repo = &repo;
            let rev = Revision::parse(rev).unwrap();
            async move { repo.resolve(&rev).await.map(|c| c.generation).map_err(|e| e.to_string()) }
        };
        assert_eq!(gen_of("HEAD").await, Ok(3));
        assert_eq!(gen_of("HEAD~2").await, Ok(1));
        assert_eq!(gen_of("@2").await, Ok(2));
        assert_eq!(gen_of(&log[1].id[..8]).await, Ok(2));
        assert_eq!(gen_of(&log[2].id).await, Ok(1));
        assert_eq!(gen_of("HEAD~3").await, Err("revision HEAD~3 does not exist: the history has 3 commits".into()));
        assert_eq!(gen_of("@4").await, Err("revision @4 does not exist: the newest commit is @3".into()));
        let missing = if log.iter().any(|c| c.id.starts_with("00000000")) { "11111111" } else { "00000000" };
        assert_eq!(
            gen_of(missing).await,
            Err(format!("revision {missing} does not exist: no commit id starts with it"))
        );

        let tree = repo.tree_at(&Revision::Generation(1)).await.unwrap();
        assert_eq!(tree.root().id().map(|id| id.to_hex()), Some(log[2].tree.clone()));

        let empty = EncryptedRepository::ephemeral().unwrap();
        let err = empty.resolve(&Revision::Head(0)).await.unwrap_err().to_string();
        assert_eq!(err, "revision HEAD does not exist: the store has no commits yet");
    }

    #[tokio::test]
    async fn finds_the_commit_at_a_time() {
        let repo = three_commits().await;
        let head = repo.head().await.unwrap();
        let log = repo.log(None, None).await.unwrap();
        let at = |t| repo.commit_at_or_before(&head, t);
        assert_eq!(at(log[0].time_ms).await.unwrap().map(|c| c.generation), Some(3));
        assert_eq!(at(u64::MAX).await.unwrap().map(|c| c.generation), Some(3));
        assert_eq!(at(log[2].time_ms - 1).await.unwrap(), None);
    }
}
