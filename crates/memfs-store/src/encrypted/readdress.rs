//! Re-addressing, the heart of `memfs key shred` (docs/SECURITY.md, "Keys"): every live
//! object named and sealed again under keys that share nothing with the store's (fresh address
//! keys and a fresh epoch key, [`memfs_crypt::Keyring::fresh`]), then the head and gc's state
//! swapped to the new names. `memfs.keys` is written after, by the caller: its only write.
//!
//! What is rewritten: the kept commits (head back to gc's horizon, oldest first), each
//! directory of their trees (cut into pages again under the new tree address key, which also
//! decides where pages end), every file content they name, and their policies; then one more
//! commit records the shred and names, in `replaced`, the old id of every rewritten commit
//! (as a purge does), so that a client that remembers one still verifies the new head. The
//! oldest kept commit keeps its parent's old id (gc cut or will cut it), and so do `replaced`
//! records of earlier purges and gc's `cut` record: names of objects sealed under the retired
//! epochs, which the new keys can neither compute nor open.
//!
//! Safe while others write: they commit under the old keys until the head swap, which is a
//! compare-and-swap against the head the rewrite read. When it is refused, the commits made
//! since are rewritten too (what was rewritten already is kept: a directory or content already
//! done is not read again) and the swap is tried again. Once the head is swapped, a writer
//! holding the old keys cannot open it and fails; what it stores on the way is sealed under
//! the old keys.
//!
//! Finishing after a crash: before each swap, `shred.undo` holds the head and gc's state as
//! they were (sealed under the old keys, as stored). A shred stopped after its swap and before
//! `memfs.keys` was written leaves a head nobody can open (its keys were only in the stopped
//! process); run again with the old credential, it finds `shred.undo`, puts the head and gc's
//! state back, and starts over with fresh keys. One stopped before its swap left only objects
//! under keys nobody holds, which gc deletes. Once `memfs.keys` is written, `shred.undo` is
//! deleted. Two shreds must not run at once: the second takes the first for a stopped one.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt, stream};
use memfs_core::{Dir, DirRef, FileRef, Node, ObjectId};
use memfs_crypt::{KeysObject, ObjectKind, OpenKeys as Keys, RootKey, StoreKeys};
use object_store::path::Path;
use object_store::{ObjectStoreExt, PutMode};
use serde::{Deserialize, Serialize};

use super::key_set::KeysHead;
use super::purge::follow_commit_ids;
use super::{Connection, EncryptedRepository, GC_STATE_PATH, HEAD_PATH, OpenOptions, now_ms};
use crate::error::Error;
use crate::format::{CommitAt, CommitObject, GcStateObject, HeadObject, object_path};
use crate::progress::Progress;
use crate::record::{Operation, Record};
use crate::rollback::Mark;
use crate::settle::{self, Swapped};
use crate::storage::PARALLEL;
use crate::{format, pages};

/// Where a shred keeps what its head swap replaced until `memfs.keys` is written.
const UNDO_PATH: &str = "shred.undo";

/// How many times the head swap is tried while other writers commit first.
const SWAP_ATTEMPTS: usize = 32;

/// The head and gc's state a shred's head swap replaced, as stored (hex of the sealed bytes;
/// `None`: there was none).
#[derive(Serialize, Deserialize)]
struct Undo {
    head: Option<String>,
    gc_state: Option<String>,
}

/// What [`Readdress::run`] did.
pub(super) struct Readdressed {
    /// The new head's commit and generation.
    pub(super) head: Mark,
    /// Objects stored under the new keys, and their stored bytes.
    pub(super) objects: u64,
    pub(super) bytes: u64,
    /// Objects listed after the swap that the new head does not use: every one of them is
    /// sealed under the old keys.
    pub(super) doomed: Vec<ObjectId>,
}

/// The old store and the same store under the new keys, and what is rewritten so far.
pub(super) struct Readdress<'a> {
    old: &'a EncryptedRepository,
    new: &'a EncryptedRepository,
    blobs: HashMap<ObjectId, ObjectId>,
    dirs: HashMap<ObjectId, ObjectId>,
    policies: HashMap<ObjectId, ObjectId>,
    /// Old commit id → its new id, generation and old parent.
    commits: HashMap<ObjectId, (ObjectId, u64, Option<ObjectId>)>,
    /// Every object stored under the new keys.
    written: HashSet<ObjectId>,
    bytes: u64,
}

impl<'a> Readdress<'a> {
    /// `old` opened with the store's keys, `new` with the keys that replace them.
    pub(super) fn new(old: &'a EncryptedRepository, new: &'a EncryptedRepository) -> Self {
        Readdress {
            old,
            new,
            blobs: HashMap::new(),
            dirs: HashMap::new(),
            policies: HashMap::new(),
            commits: HashMap::new(),
            written: HashSet::new(),
            bytes: 0,
        }
    }

    /// Rewrites every live object under the new keys and swaps the head (then gc's state) to
    /// the rewritten chain plus one commit recording `record` by `actor` (see the module
    /// documentation).
    pub(super) async fn run(
        mut self,
        actor: &str,
        record: Operation,
        progress: &dyn Progress,
    ) -> Result<Readdressed, Error> {
        let head = self.swap_head(actor, &record, progress).await?;
        self.swap_gc_state().await?;
        let listed = self.old.objects.list().await?;
        let doomed = listed.into_keys().filter(|id| !self.written.contains(id)).collect();
        Ok(Readdressed { head, objects: self.written.len() as u64, bytes: self.bytes, doomed })
    }

    /// Rewrites the chain the head names (catching up with other writers) and swaps the new
    /// head in; its commit and generation.
    async fn swap_head(&mut self, actor: &str, record: &Operation, progress: &dyn Progress) -> Result<Mark, Error> {
        for _ in 0..SWAP_ATTEMPTS {
            let base = self.old.heads.cell.read().await?;
            let opened = match &base {
                Some((bytes, _)) => Some(self.old.open_head(bytes)?),
                None => None,
            };
            let (plain, id, head) = self.shred_commit(opened.as_deref(), actor, record, progress).await?;
            let sealed = self.new.seal_head(&head)?;
            self.bytes += store(self.new, ObjectKind::Commit, id, &plain).await?;
            self.written.insert(id);
            self.keep_undo(base.as_ref().map(|(bytes, _)| bytes)).await?;
            let expected = base.as_ref().map(|(_, version)| version);
            match settle::swap_settled(&*self.old.heads.cell, expected, sealed).await {
                Swapped::Landed => return Ok(Mark { generation: head.generation, commit: Some(id) }),
                // Not ours: another writer committed first (once it has landed, none can:
                // the head is sealed under keys they do not hold).
                Swapped::Not(Error::Conflict) => continue,
                Swapped::Not(e) | Swapped::Unknown(e) => return Err(e),
            }
        }
        Err(Error::Conflict)
    }

    /// The commit recording the shred on the rewritten chain of `base` (none: an empty store),
    /// stored under the new keys, and the head naming it: its plaintext, id and head.
    async fn shred_commit(
        &mut self,
        base: Option<&HeadObject>,
        actor: &str,
        record: &Operation,
        progress: &dyn Progress,
    ) -> Result<(Vec<u8>, ObjectId, HeadObject), Error> {
        let (generation, parent, tree, policy, files, bytes) = match base {
            None => {
                let empty = pages::encode(&Dir::new(), &self.new.objects.keys.tree_address).expect("no children");
                let root = empty.id();
                self.store_pages(ObjectKind::Dir, empty.pages).await?;
                (1, None, root, None, 0, 0)
            }
            Some(head) => {
                let horizon = self.old.horizon().await?;
                let tip = self.commits(head.commit, head.generation, horizon, progress).await?;
                let c = self.old.commit_object(&head.commit).await?;
                let policy = c.policy.map(|p| self.policies[&p]);
                (head.generation + 1, Some(tip), self.dirs[&c.tree], policy, c.files, c.bytes)
            }
        };
        let chain = base.map_or_else(Vec::new, |h| self.chain(h.commit));
        let commit = CommitObject {
            parent,
            tree,
            generation,
            time_ms: now_ms(),
            actor: actor.to_owned(),
            command: Record::from(record.clone()).to_json(),
            changes: Vec::new(),
            files,
            bytes,
            policy,
            replaced: chain
                .iter()
                .map(|(generation, old, _)| CommitAt { generation: *generation, commit: *old })
                .collect(),
        };
        let plain = commit.encode();
        let id = self.new.objects.keys.tree_address.address(&plain);
        let recent = chain.iter().map(|(_, _, new)| *new).take(self.new.heads.recent).collect();
        let head = self.new.head_object(generation, (id, &plain), policy, tree, Vec::new(), recent);
        Ok((plain, id, head))
    }

    /// The rewritten commits from `head` down, newest first: generation, old id, new id.
    fn chain(&self, head: ObjectId) -> Vec<(u64, ObjectId, ObjectId)> {
        let mut out = Vec::new();
        let mut at = Some(head);
        while let Some(old) = at
            && let Some((new, generation, parent)) = self.commits.get(&old)
        {
            out.push((*generation, old, *new));
            at = *parent;
        }
        out
    }

    /// Rewrites the commits from `head` (at `generation`) down to the first one rewritten
    /// already, or to gc's `horizon`, oldest first; the new id of `head`.
    async fn commits(
        &mut self,
        head: ObjectId,
        generation: u64,
        horizon: u64,
        progress: &dyn Progress,
    ) -> Result<ObjectId, Error> {
        let mut fresh = Vec::new();
        let mut walk = self.old.walk(Some(head), generation, horizon);
        progress.phase("commits", None);
        while let Some((id, _)) = walk.upcoming()
            && !self.commits.contains_key(&id)
        {
            let Some(c) = walk.next().await? else { break };
            fresh.push((c.oid, self.old.commit_object(&c.oid).await?));
            progress.advance(1);
        }
        fresh.reverse();
        self.trees(fresh.iter().map(|(_, c)| c.tree).collect(), progress).await?;
        let mut renamed: HashMap<String, String> =
            self.commits.iter().map(|(old, (new, _, _))| (old.to_hex(), new.to_hex())).collect();
        for (oid, c) in fresh {
            let policy = match c.policy {
                Some(p) => Some(self.policy(p).await?),
                None => None,
            };
            let commit = CommitObject {
                parent: c.parent.map(|p| self.commits.get(&p).map_or(p, |n| n.0)),
                tree: self.dirs[&c.tree],
                policy,
                command: follow_commit_ids(&c.command, &renamed),
                ..c.clone()
            };
            let plain = commit.encode();
            let id = self.new.objects.keys.tree_address.address(&plain);
            self.bytes += store(self.new, ObjectKind::Commit, id, &plain).await?;
            self.written.insert(id);
            self.commits.insert(oid, (id, c.generation, c.parent));
            renamed.insert(oid.to_hex(), id.to_hex());
        }
        Ok(self.commits[&head].0)
    }

    /// The policy object `id` under the new keys: its new id.
    async fn policy(&mut self, id: ObjectId) -> Result<ObjectId, Error> {
        if let Some(new) = self.policies.get(&id) {
            return Ok(*new);
        }
        let plain = self.old.get_object(ObjectKind::Policy, &id).await?;
        let new = self.new.objects.keys.tree_address.address(&plain);
        self.bytes += store(self.new, ObjectKind::Policy, new, &plain).await?;
        self.written.insert(new);
        self.policies.insert(id, new);
        Ok(new)
    }

    /// Rewrites the trees `roots`: every directory not rewritten yet and every file content
    /// in them.
    async fn trees(&mut self, roots: Vec<ObjectId>, progress: &dyn Progress) -> Result<(), Error> {
        progress.phase("directories", None);
        let mut loaded: HashMap<ObjectId, Dir> = HashMap::new();
        let mut contents: HashSet<ObjectId> = HashSet::new();
        let mut level = roots;
        while !level.is_empty() {
            level.sort();
            level.dedup();
            level.retain(|id| !self.dirs.contains_key(id) && !loaded.contains_key(id));
            progress.extend(level.len() as u64);
            let old = self.old;
            let read: Vec<(ObjectId, Dir)> = stream::iter(level)
                .map(|id| async move {
                    let (dir, _) = old.load_dir(&id).await?;
                    progress.advance(1);
                    Ok::<_, Error>((id, dir))
                })
                .buffered(PARALLEL)
                .try_collect()
                .await?;
            let mut next = Vec::new();
            for (id, dir) in read {
                for (_, node) in dir.entries() {
                    match node {
                        Node::File(f) if !self.blobs.contains_key(&f.id) => drop(contents.insert(f.id)),
                        Node::File(_) => {}
                        Node::Dir(d) => next.push(d.id().expect("decoded directories are stored")),
                    }
                }
                loaded.insert(id, dir);
            }
            level = next;
        }
        self.contents(contents.into_iter().collect(), progress).await?;
        let mut pages = Vec::new();
        let ids: Vec<ObjectId> = loaded.keys().copied().collect();
        for id in ids {
            self.dir(id, &loaded, &mut pages)?;
        }
        self.store_pages(ObjectKind::Dir, pages).await
    }

    /// Reads the file contents `ids` and stores each under its new name.
    async fn contents(&mut self, ids: Vec<ObjectId>, progress: &dyn Progress) -> Result<(), Error> {
        progress.phase("contents", Some(ids.len() as u64));
        let (old, new) = (self.old, self.new);
        let done: Vec<(ObjectId, ObjectId, u64)> = stream::iter(ids)
            .map(|id| async move {
                let plain = old.get_object(ObjectKind::Blob, &id).await?;
                let renamed = new.objects.keys.blob_address.address(&plain);
                let size = store(new, ObjectKind::Blob, renamed, &plain).await?;
                progress.advance(1);
                Ok::<_, Error>((id, renamed, size))
            })
            .buffer_unordered(PARALLEL)
            .try_collect()
            .await?;
        for (id, renamed, size) in done {
            self.blobs.insert(id, renamed);
            self.written.insert(renamed);
            self.bytes += size;
        }
        Ok(())
    }

    /// The new id of directory `id` (in `loaded`, or rewritten before), cut into pages under
    /// the new tree address key after the directories inside it; its pages added to `pages`.
    fn dir(
        &mut self,
        id: ObjectId,
        loaded: &HashMap<ObjectId, Dir>,
        pages: &mut Vec<(ObjectId, Vec<u8>)>,
    ) -> Result<ObjectId, Error> {
        if let Some(new) = self.dirs.get(&id) {
            return Ok(*new);
        }
        let dir = loaded.get(&id).ok_or_else(|| Error::MissingObject { id: format::object_name(&id) })?;
        let mut entries = Vec::with_capacity(dir.len());
        for (name, node) in dir.entries() {
            let node = match node {
                Node::File(f) => Node::File(FileRef { id: self.blobs[&f.id], size: f.size, accessed: f.accessed }),
                Node::Dir(d) => {
                    let child = self.dir(d.id().expect("decoded directories are stored"), loaded, pages)?;
                    Node::Dir(DirRef::stored(child, d.totals()))
                }
            };
            entries.push((name.clone(), node));
        }
        let cut =
            pages::encode(&Dir::from_entries(entries), &self.new.objects.keys.tree_address).expect("children have ids");
        let new = cut.id();
        pages.extend(cut.pages);
        self.dirs.insert(id, new);
        Ok(new)
    }

    /// Stores `objects` of `kind` under the new keys, each once.
    async fn store_pages(&mut self, kind: ObjectKind, mut objects: Vec<(ObjectId, Vec<u8>)>) -> Result<(), Error> {
        objects.sort_by_key(|a| a.0);
        objects.dedup_by(|a, b| a.0 == b.0);
        objects.retain(|(id, _)| !self.written.contains(id));
        let new = self.new;
        let sizes: Vec<u64> = stream::iter(&objects)
            .map(|(id, plain)| store(new, kind, *id, plain))
            .buffer_unordered(PARALLEL)
            .try_collect()
            .await?;
        self.bytes += sizes.iter().sum::<u64>();
        self.written.extend(objects.iter().map(|(id, _)| *id));
        Ok(())
    }

    /// Writes `shred.undo`: `head` (as stored; `None`: there is none) and gc's state as it is.
    async fn keep_undo(&self, head: Option<&Bytes>) -> Result<(), Error> {
        let gc_state = self.old.gc_state.read().await?.map(|(bytes, _)| hex::encode(&bytes));
        let undo = Undo { head: head.map(hex::encode), gc_state };
        let path = Path::from(UNDO_PATH);
        let bytes = serde_json::to_vec(&undo).expect("an undo record serializes");
        self.old.objects.store.put(&path, bytes.into()).await.map_err(|e| Error::backend("write", &path, e))?;
        Ok(())
    }

    /// gc's state sealed under the new keys: the same horizon and record of cut commits, and
    /// no object waiting for deletion (the shred deletes every old one).
    async fn swap_gc_state(&self) -> Result<(), Error> {
        for _ in 0..SWAP_ATTEMPTS {
            let Some((state, version)) = self.old.read_gc_state().await? else { return Ok(()) };
            let state = GcStateObject { pending: Default::default(), ..state };
            match self.new.write_gc_state(Some(&version), &state).await {
                Err(Error::ConcurrentGc) => continue,
                done => return done,
            }
        }
        Err(Error::ConcurrentGc)
    }
}

/// Seals `plain` as object `id` of `kind` under `repo`'s keys and stores it (once): its
/// stored size.
async fn store(repo: &EncryptedRepository, kind: ObjectKind, id: ObjectId, plain: &[u8]) -> Result<u64, Error> {
    let path = object_path(&id);
    let sealed = Bytes::from(repo.objects.keys.objects().seal(kind, &id, plain)?);
    let size = sealed.len() as u64;
    match repo.objects.store.put_opts(&path, sealed.into(), PutMode::Create.into()).await {
        Ok(_) | Err(object_store::Error::AlreadyExists { .. }) => Ok(size),
        Err(e) => Err(Error::backend("write", &path, e)),
    }
}

/// A shred's (or a re-addressing rotation's) steps after the caller unlocked the store as
/// `old`: every live object under `new_keys` and the head swapped ([`Readdress::run`]); then
/// `object` (the key set made afresh under `root`, its change counter `counter` of `record`),
/// written as `memfs.keys` over whatever it holds ([`write_keys`]); then `shred.undo` and the
/// objects under the old keys deleted, and a local folder's log compacted.
pub(super) async fn finish(
    conn: &Connection,
    old: &EncryptedRepository,
    (mut object, root, new_keys): (KeysObject, RootKey, StoreKeys),
    record: Operation,
    options: OpenOptions,
    progress: &dyn Progress,
) -> Result<Readdressed, Error> {
    old.undo_stopped_shred().await?;
    old.read_head().await?;
    let counter = object.keyring().counter();
    let keys = Keys::new(new_keys, Some((root, counter)), None);
    let actor = options.actor.clone();
    let new = EncryptedRepository::assemble(conn.again(), keys, object.store_id().to_owned(), options)?;
    let done = Readdress::new(old, &new).run(&actor, record, progress).await?;
    write_keys(conn, &new, &mut object).await?;
    old.drop_undo().await?;
    if let Some(w) = &new.heads.watermark {
        w.raise(done.head)?;
    }
    progress.phase("deleting", Some(done.doomed.len() as u64));
    old.delete_objects(done.doomed.clone(), progress).await?;
    new.objects.compact(progress).await?;
    Ok(done)
}

/// Writes `object` (the key set a shred ends with) over whatever `memfs.keys` holds now, sealed
/// under the root of `new` ([`KeyStore::write_over`](memfs_crypt::KeyStore::write_over)).
async fn write_keys(conn: &Connection, new: &EncryptedRepository, object: &mut KeysObject) -> Result<(), Error> {
    let seal =
        |object: &mut KeysObject| new.objects.keys.with_root(|root| object.seal(root)).expect("made with a root");
    KeysHead::settled(&*conn.keys).write_over(object, seal).await
}

impl EncryptedRepository {
    /// Finishes what a shred that stopped left (see the module documentation): if its head
    /// swap landed and `memfs.keys` was not written (the head, or gc's state, is sealed under
    /// keys this store's keyring does not hold), puts back what it replaced; then deletes
    /// `shred.undo`. Whether there was one.
    pub(super) async fn undo_stopped_shred(&self) -> Result<bool, Error> {
        let path = Path::from(UNDO_PATH);
        let bytes = match crate::whole_read::get_bytes(&*self.objects.store, &path).await {
            Ok(bytes) => bytes,
            Err(object_store::Error::NotFound { .. }) => return Ok(false),
            Err(e) => return Err(Error::backend("read", &path, e)),
        };
        let corrupt = |reason: String| Error::Corrupt { object: UNDO_PATH.into(), reason };
        let undo: Undo = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        let decode = |hex: Option<String>| -> Result<Option<Bytes>, Error> {
            hex.map(|h| hex::decode(h).map(Bytes::from).map_err(|e| corrupt(e.to_string()))).transpose()
        };
        let (head, gc_state) = (decode(undo.head)?, decode(undo.gc_state)?);
        for (store, path, before) in [(&self.heads.cell, HEAD_PATH, head), (&self.gc_state, GC_STATE_PATH, gc_state)] {
            let Some((now, version)) = store.read().await? else { continue };
            if !self.objects.keys.objects().misses_epoch_of(&now) {
                continue;
            }
            match before {
                Some(before) => match settle::swap_settled(&**store, Some(&version), before).await {
                    Swapped::Landed => {}
                    Swapped::Not(e) | Swapped::Unknown(e) => return Err(e),
                },
                None => {
                    let at = Path::from(path);
                    self.objects.store.delete(&at).await.map_err(|e| Error::backend("delete", &at, e))?;
                }
            }
        }
        self.drop_undo().await?;
        Ok(true)
    }

    /// Deletes `shred.undo` (once `memfs.keys` holds the new keys, or once put back).
    pub(super) async fn drop_undo(&self) -> Result<(), Error> {
        let path = Path::from(UNDO_PATH);
        match self.objects.store.delete(&path).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(Error::backend("delete", &path, e)),
        }
    }
}

#[cfg(test)]
mod tests;
