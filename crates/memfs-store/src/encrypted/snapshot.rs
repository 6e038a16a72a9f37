//! The head and its snapshot: sealing and opening the head, priming the caches from the
//! objects it carries, and choosing what the next head carries (docs/FORMAT.md, "The head's
//! snapshot").

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use memfs_core::{Node, ObjectId, Policy};
use memfs_crypt::{ObjectKind, Refresh};

use super::{EncryptedRepository, HEAD_PATH, head_id, open_error};
use crate::error::Error;
use crate::format;
use crate::format::{CommitObject, HeadObject, INLINE_OVERHEAD, InlineKind, InlineObject, id_eq};
use crate::head::HeadVersion;
use crate::rollback::{Mark, Watermark};

/// How many commits back a head is followed to find the commit this client remembers: a
/// client that has not opened the store for more commits than this gets a fork error and
/// must trust the head explicitly (docs/SECURITY.md). Each step reads one commit (cached
/// after), so the walk costs at most this many reads, once.
const FORK_WALK: u64 = 16384;

impl EncryptedRepository {
    /// Seals a head, with this store's id in it and the change counter of the
    /// `memfs.keys` this client holds (never lower than the head it was copied from
    /// named), whatever the head it was copied from carried.
    pub(super) fn seal_head(&self, head: &HeadObject) -> Result<Bytes, Error> {
        let store_id = (!self.store_id.is_empty()).then(|| self.store_id.clone());
        let keys = self.objects.keys.has_root().then(|| self.objects.keys.counter().max(head.keys.unwrap_or(0)));
        let plain = match head.store_id == store_id && head.keys == keys {
            true => head.encode(),
            false => HeadObject { store_id, keys, ..head.clone() }.encode(),
        };
        Ok(Bytes::from(self.objects.keys.objects().seal(ObjectKind::Head, &head_id(), &plain)?))
    }

    /// Reads and opens the current head object, checking it against the rollback watermark;
    /// `None` before the first commit.
    pub(super) async fn read_head(&self) -> Result<Option<(HeadObject, HeadVersion)>, Error> {
        Ok(self.load_head(None).await?.map(|(head, version)| (HeadObject::clone(&head), version)))
    }

    /// [`EncryptedRepository::read_head`], or within `max_age` the head last read or written
    /// without a request. Its inline objects are verified and in the cache.
    pub(super) async fn load_head(
        &self,
        max_age: Option<Duration>,
    ) -> Result<Option<(Arc<HeadObject>, HeadVersion)>, Error> {
        self.load_head_as(max_age, self.heads.watermark.as_ref()).await
    }

    /// The head as the store serves it, not checked against the commit this client
    /// remembers: what `check` examines after reporting a rollback or fork.
    pub(super) async fn read_head_unverified(&self) -> Result<Option<(HeadObject, HeadVersion)>, Error> {
        Ok(self.load_head_as(None, None).await?.map(|(head, version)| (HeadObject::clone(&head), version)))
    }

    async fn load_head_as(
        &self,
        max_age: Option<Duration>,
        watermark: Option<&Watermark>,
    ) -> Result<Option<(Arc<HeadObject>, HeadVersion)>, Error> {
        let floor = watermark.map(Watermark::floor).transpose()?;
        let mut max_age = max_age;
        loop {
            let read = match max_age {
                Some(age) => self.heads.cell.read_within(age).await?,
                None => self.heads.cell.read().await?,
            };
            let head = match &read {
                Some((bytes, _)) => Some(match self.open_head(bytes) {
                    // Sealed after a rotation this client has not seen: follow it, then open.
                    Err(_) if self.objects.keys.objects().misses_epoch_of(bytes) => {
                        self.refresh_keys(Refresh::UnknownEpoch).await?;
                        self.open_head(bytes)?
                    }
                    opened => opened?,
                }),
                None => None,
            };
            if let Some(head) = &head {
                self.check_keys_counter(head).await?;
            }
            if let (Some(w), Some(floor)) = (watermark, floor) {
                match self.verify(w, floor, head.as_deref()).await {
                    // A head this handle kept (`max_age`), older than a commit another process
                    // of this client has seen since: not what the store serves now. Read it.
                    Err(_) if max_age.is_some() => {
                        max_age = None;
                        continue;
                    }
                    verified => verified?,
                }
            }
            return Ok(head.zip(read.map(|(_, version)| version)));
        }
    }

    /// A head naming a newer `memfs.keys` than this client holds: reads it again (see
    /// [`EncryptedRepository::refresh_keys`]); one older than the head names is a rollback.
    async fn check_keys_counter(&self, head: &HeadObject) -> Result<(), Error> {
        match head.keys {
            Some(named) if self.objects.keys.has_root() && named > self.objects.keys.counter() => {
                self.refresh_keys(Refresh::Named(named)).await
            }
            _ => Ok(()),
        }
    }

    /// Accepts the head served (`None`: no head, generation 0) only if its commit is the commit
    /// `floor` this client remembers or descends from it (or the user trusted it:
    /// [`OpenOptions::trust_head`](super::OpenOptions::trust_head)), then remembers it. A head
    /// older than `floor` is a rollback, any other a fork.
    ///
    /// The head's own list of the commits before it (`recent`) answers without a
    /// fetch when it goes back to `floor`'s generation and names the remembered commit there;
    /// else the walk down the parents starts from the oldest commit it names above `floor`
    /// ([`HeadObject::walk_start`]). The head is sealed, so only a holder of the key wrote that
    /// list, from the head it committed on, whose commit is its commit's parent: the list
    /// follows the chain the parents do. The walk also knows a purge's rewritten commits (a
    /// purge's head names none, and the heads after it only commits from the purge on, so the
    /// walk still passes the purge commit and its record).
    async fn verify(&self, w: &Watermark, floor: Mark, head: Option<&HeadObject>) -> Result<(), Error> {
        let served = head.map_or(Mark { generation: 0, commit: None }, |h| Mark {
            generation: h.generation,
            commit: Some(h.commit),
        });
        if served == floor {
            return Ok(());
        }
        let accepted = match (floor.commit, head) {
            _ if served.generation < floor.generation => false,
            // Remembered by a pre-release memfs (a generation only): nothing more to compare.
            (None, _) => true,
            (Some(_), None) => false,
            (Some(remembered), Some(head)) => match head.commit_at(floor.generation) {
                Some(named) if id_eq(&named, &remembered) => true,
                _ => {
                    let (at, generation) = head.walk_start(floor.generation);
                    self.descends(at, generation, remembered, floor.generation).await?
                }
            },
        };
        if accepted {
            return w.raise(served);
        }
        if let (Some(trusted), Some(commit)) = (&self.heads.trust, served.commit)
            && trusted.len() >= crate::MIN_PREFIX
            && commit.to_hex().starts_with(&trusted.to_ascii_lowercase())
        {
            return w.replace(served);
        }
        let short = |m: Mark| m.commit.map_or_else(|| "(none)".to_owned(), |c| c.to_hex()[..12].to_owned());
        let (remembered, remembered_generation) = (short(floor), floor.generation);
        let (served_id, served_generation) = (short(served), served.generation);
        Err(match served.generation < floor.generation {
            true => Error::Rollback { remembered, remembered_generation, served: served_id, served_generation },
            false => Error::Fork { remembered, remembered_generation, served: served_id, served_generation },
        })
    }

    /// Whether the commit `at` (at `generation`) is `ancestor` (at `floor`) or descends from
    /// it: its parents are followed down to `floor`, at most [`FORK_WALK`] commits. A purge
    /// commit passed on the way names the commits it rewrote (their old ids count as the new
    /// ones); below gc's horizon, where the commits are gone, `gc.state` names the ones it cut.
    pub(super) async fn descends(
        &self,
        mut at: ObjectId,
        mut generation: u64,
        ancestor: ObjectId,
        floor: u64,
    ) -> Result<bool, Error> {
        if generation - floor > FORK_WALK {
            return Ok(false);
        }
        let mut aliases = Vec::new();
        while generation > floor {
            let commit = match self.commit_object(&at).await {
                Ok(c) => c,
                Err(Error::MissingObject { .. }) => return self.cut(at, generation, ancestor, floor).await,
                Err(e) => return Err(e),
            };
            if commit.generation != generation {
                return Ok(false);
            }
            aliases.extend(commit.replaced.iter().filter(|r| r.generation == floor).map(|r| r.commit));
            let Some(parent) = commit.parent else { return Ok(false) };
            at = parent;
            generation -= 1;
        }
        Ok(id_eq(&at, &ancestor) || aliases.iter().any(|a| id_eq(a, &ancestor)))
    }

    /// Whether `gc.state`'s record of cut commits holds both the missing commit `at` (at
    /// `generation`) and `ancestor` (at `floor`): commits of one chain, so one descends from
    /// the other. Both must match, or an old `gc.state` of the true history served beside a
    /// forked head would vouch for it.
    async fn cut(&self, at: ObjectId, generation: u64, ancestor: ObjectId, floor: u64) -> Result<bool, Error> {
        let Some((state, _)) = self.read_gc_state().await? else { return Ok(false) };
        let has = |g: u64, id: &ObjectId| state.cut.iter().any(|c| c.generation == g && id_eq(&c.commit, id));
        Ok(has(generation, &at) && has(floor, &ancestor))
    }

    /// Opens sealed head bytes (the ones opened last come from memory), verifies its inline
    /// objects and puts them into the cache.
    pub(super) fn open_head(&self, bytes: &Bytes) -> Result<Arc<HeadObject>, Error> {
        if let Some((known, head)) = self.heads.parsed().as_ref()
            && known == bytes
        {
            return Ok(head.clone());
        }
        let plain = self
            .objects
            .keys
            .objects()
            .open(ObjectKind::Head, &head_id(), bytes)
            .map_err(|e| open_error(e, HEAD_PATH.into()))?;
        let head = self.decode_head(&plain)?;
        // Absent in an in-memory store's head.
        if head.store_id.as_ref().is_some_and(|id| *id != self.store_id) {
            return Err(Error::ForeignHead);
        }
        if !head.recent_fits() {
            return Err(Error::Corrupt {
                object: HEAD_PATH.into(),
                reason: "it names more recent commits than there are generations before it".into(),
            });
        }
        self.prime(&head)?;
        let head = Arc::new(head);
        *self.heads.parsed() = Some((bytes.clone(), head.clone()));
        Ok(head)
    }

    /// Decodes a head's plaintext: the ids of its inline objects are their keyed hashes under
    /// this store's keys.
    pub(super) fn decode_head(&self, plain: &[u8]) -> Result<HeadObject, Error> {
        let address = |kind: InlineKind, plain: &[u8]| match kind {
            InlineKind::Blob => self.objects.keys.blob_address.address(plain),
            InlineKind::Commit | InlineKind::Policy | InlineKind::Dir => self.objects.keys.tree_address.address(plain),
        };
        HeadObject::decode(plain, address).map_err(|e| format::corrupt_named(HEAD_PATH, "head", &e))
    }

    /// Decodes every inline object of `head` (whose ids [`EncryptedRepository::decode_head`]
    /// computed, as [`EncryptedRepository::get_object`] checks a fetched one's),
    /// then caches them: commits and policies decoded, directory pages as
    /// plaintexts, assembled into directories from the commit's root down, file contents as
    /// they are.
    pub(super) fn prime(&self, head: &HeadObject) -> Result<(), Error> {
        let mut commits = Vec::new();
        let mut policies = Vec::new();
        let mut plains = Vec::new();
        let mut blobs = Vec::new();
        for object in &head.inline {
            let plain = object.plain.as_slice();
            let kind = object.kind.noun();
            let undecodable = |e: serde_json::Error| format::corrupt_named(HEAD_PATH, &format!("inline {kind}"), &e);
            match object.kind {
                InlineKind::Commit => {
                    let commit = CommitObject::decode(plain)
                        .map_err(|e| format::corrupt_named(HEAD_PATH, &format!("inline {kind}"), &e))?;
                    commits.push((object.id, commit));
                }
                InlineKind::Policy => {
                    let policy = serde_json::from_slice::<Policy>(plain).map_err(undecodable)?;
                    policies.push((object.id, policy));
                    plains.push((object.id, plain));
                }
                InlineKind::Dir => plains.push((object.id, plain)),
                InlineKind::Blob => blobs.push((object.id, plain)),
            }
        }
        let root = {
            let mut cache = self.objects.cache();
            // Immutable by id: what is cached already is the same, and replacing it costs
            // nothing but the copy.
            for (id, commit) in commits {
                cache.insert_commit(id, Arc::new(commit));
            }
            for (id, policy) in policies {
                cache.insert_policy(id, Arc::new(policy));
            }
            for (id, plain) in plains {
                cache.insert_plain(id, Arc::from(plain));
            }
            for (id, plain) in blobs {
                if !cache.has_blob(&id) {
                    cache.insert_blob(id, Arc::from(plain));
                }
            }
            cache.commit(&head.commit).map(|c| c.tree)
        };
        match root {
            Some(root) => self.prime_dirs(head, root),
            // The commit was too large for the snapshot: `head` primes after fetching it.
            None => Ok(()),
        }
    }

    /// Assembles and caches the directories of the tree at `root` whose pages are all among
    /// `head`'s inline objects, breadth-first, as far as they reach.
    pub(super) fn prime_dirs(&self, head: &HeadObject, root: ObjectId) -> Result<(), Error> {
        let inline: HashSet<ObjectId> =
            head.inline.iter().filter(|o| o.kind == InlineKind::Dir).map(|o| o.id).collect();
        let mut queue = VecDeque::from([root]);
        let mut seen = HashSet::new();
        while let Some(id) = queue.pop_front() {
            if !inline.contains(&id) || !seen.insert(id) {
                continue;
            }
            let cached = self.objects.cache().dir(&id);
            let dir = match cached {
                Some(dir) => dir,
                None => {
                    let Some((dir, pages)) = self.assemble_dir(&id)? else { continue };
                    let dir = Arc::new(dir);
                    self.objects.cache().insert_dir(id, dir.clone(), pages.into());
                    dir
                }
            };
            queue.extend(dir.entries().filter_map(|(_, node)| match node {
                Node::Dir(d) => d.id(),
                Node::File(_) => None,
            }));
        }
        Ok(())
    }

    /// The objects a commit carries in its head, within the snapshot budget: the commit, its
    /// policy, then whole directories (all their pages) breadth-first from `root`, then the
    /// contents of the files in those directories in the same order, from what the cache holds.
    /// A directory that does not fit is left out with everything below it; smaller ones after
    /// it still go in, and so do smaller files after one that does not fit.
    ///
    /// File contents come last so that they never push a directory out: a cold view of a
    /// directory stays one round trip, and a cold edit of a small file in a carried directory
    /// needs no read of its content (three round trips: the head, the new objects, the swap).
    /// The contents carried are the ones this client holds: those it wrote or read, and those
    /// the head it started from carried.
    ///
    /// `unwritten` come first, besides the budget: they are objects stored nowhere else
    /// ([`EncryptedRepository::carry`] keeps them within
    /// [`OpenOptions::unwritten_bytes`](super::OpenOptions::unwritten_bytes)). The budget is then
    /// filled as above, with copies of other objects only, so that carrying objects unwritten never
    /// pushes a directory or a small file out of the snapshot.
    pub(super) fn snapshot(
        &self,
        commit: (ObjectId, &[u8]),
        policy: Option<ObjectId>,
        root: ObjectId,
        unwritten: Vec<InlineObject>,
    ) -> Vec<InlineObject> {
        let cache = self.objects.cache();
        let carried: HashSet<ObjectId> = unwritten.iter().map(|o| o.id).collect();
        let mut budget = self.heads.snapshot_budget;
        let mut out = unwritten;
        let mut add = |kind: InlineKind, id: ObjectId, plain: &[u8], size: usize, budget: &mut usize| {
            if !carried.contains(&id) {
                *budget -= size;
                out.push(InlineObject { kind, id, plain: plain.to_vec(), unwritten: false });
            }
        };
        if budget == 0 {
            return out;
        }
        let size = inline_size(commit.1);
        if size <= budget {
            add(InlineKind::Commit, commit.0, commit.1, size, &mut budget);
        }
        if let Some(p) = policy
            && let Some(plain) = cache.plain(&p)
            && inline_size(&plain) <= budget
        {
            add(InlineKind::Policy, p, &plain, inline_size(&plain), &mut budget);
        }
        let mut queue = VecDeque::from([root]);
        let mut seen = HashSet::new();
        let mut carried = Vec::new();
        while let Some(id) = queue.pop_front() {
            // Nothing fits any more: the walk would only cost time (every cached directory
            // of a large tree, at every commit).
            if budget <= INLINE_OVERHEAD {
                break;
            }
            if !seen.insert(id) {
                continue;
            }
            let (Some(pages), Some(dir)) = (cache.pages(&id), cache.dir(&id)) else { continue };
            let Some(plains) = pages.iter().map(|p| cache.plain(p)).collect::<Option<Vec<_>>>() else { continue };
            let sizes: Vec<usize> = plains.iter().map(|p| inline_size(p)).collect();
            if sizes.iter().sum::<usize>() > budget {
                continue;
            }
            for ((page, plain), size) in pages.iter().zip(plains).zip(sizes) {
                add(InlineKind::Dir, *page, &plain, size, &mut budget);
            }
            queue.extend(dir.entries().filter_map(|(_, node)| match node {
                Node::Dir(d) => d.id(),
                Node::File(_) => None,
            }));
            carried.push(dir);
        }
        let mut files = HashSet::new();
        'dirs: for dir in carried {
            for (_, node) in dir.entries() {
                if budget <= INLINE_OVERHEAD {
                    break 'dirs;
                }
                let Node::File(file) = node else { continue };
                if !files.insert(file.id) {
                    continue;
                }
                if let Some(blob) = cache.blob(&file.id)
                    && inline_size(&blob) <= budget
                {
                    add(InlineKind::Blob, file.id, &blob, inline_size(&blob), &mut budget);
                }
            }
        }
        out
    }
}

/// The bytes an inline object with this plaintext takes in the head, at most: its plaintext
/// and [`INLINE_OVERHEAD`] (its kind and its length). An unwritten one takes no more (the
/// kind byte marks it).
pub(super) fn inline_size(plain: &[u8]) -> usize {
    INLINE_OVERHEAD + plain.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An inline object adds its kind byte, its length (a varint) and its plaintext to the
    /// head: never more than [`inline_size`], which budgets count.
    #[test]
    fn inline_size_bounds_what_an_object_adds_to_the_head() {
        let bare = HeadObject {
            store_id: None,
            keys: None,
            generation: 1,
            commit: ObjectId::from_bytes([1; 32]),
            recent: Vec::new(),
            inline: Vec::new(),
        };
        for (len, adds) in
            [(0, 2), (1, 3), (127, 129), (128, 131), (16_383, 16_386), (16_384, 16_388), (70_000, 70_004)]
        {
            let object =
                InlineObject { kind: InlineKind::Blob, id: bare.commit, plain: vec![b'a'; len], unwritten: true };
            let head = HeadObject { inline: vec![object], ..bare.clone() };
            assert_eq!(head.encode().len() - bare.encode().len(), adds, "{len} bytes");
            assert!(adds <= inline_size(&head.inline[0].plain), "{len} bytes");
        }
    }
}
