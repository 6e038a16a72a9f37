//! [`Objects`]: a store's sealed objects with the keys and caches they need: listed, sealed
//! and stored, opened and verified. Then the repository's reads of them, which fall back to
//! an object carried unwritten in the head: fetched (through the memory and disk caches),
//! commits decoded, directories loaded from their pages.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt, stream};
use memfs_core::{Dir, Node, ObjectId};
use memfs_crypt::{ObjectKind, OpenKeys as Keys};
use object_store::path::Path;
use object_store::{ObjectStore, PutMode};

use super::cache::Cache;
use super::parts::PartSearch;
use super::{EncryptedRepository, WRITTEN_MEMORY, open_error};
use crate::disk_cache::DiskCache;
use crate::error::Error;
use crate::format;
use crate::format::{CommitObject, HeadObject, OBJECTS_PREFIX, id_eq, object_path};
use crate::progress::Progress;
use crate::storage::{self, Compacted, PARALLEL, Storage};
use crate::whole_read::get_bytes;

/// Objects sealed under the epoch `epoch`, to be stored ([`Objects::seal`]).
#[derive(Default)]
pub(super) struct Sealed {
    epoch: u32,
    objects: Vec<(ObjectKind, ObjectId, Bytes)>,
}

impl Sealed {
    /// The writes that store them: each at its object path.
    pub(super) fn writes(&self) -> Vec<(Path, Bytes)> {
        self.objects.iter().map(|(_, id, bytes)| (object_path(id), bytes.clone())).collect()
    }
}

/// What this process wrote of one object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Written {
    /// The epoch it was sealed under.
    epoch: u32,
    /// Whether the write is known to have landed (a failed one may have landed too).
    landed: bool,
}

/// The sealed objects of a store: the keys that seal and name them, where they are stored,
/// and this client's caches of them.
pub(super) struct Objects {
    /// The store's keys: the epoch keys that seal, the address keys that name.
    pub(super) keys: Keys,
    /// Where objects are read from, listed and deleted.
    pub(super) store: Arc<dyn ObjectStore>,
    /// The store's writes beyond `ObjectStore` (a commit's objects with its head, compaction).
    pub(super) storage: Arc<dyn Storage>,
    /// Plaintexts read, decoded (see
    /// [`OpenOptions::memory_cache_bytes`](super::OpenOptions::memory_cache_bytes)).
    cache: Mutex<Cache>,
    /// Sealed copies on disk (see [`OpenOptions::cache_dir`](super::OpenOptions::cache_dir)).
    pub(super) disk: Option<DiskCache>,
    /// Objects this process wrote, and the epoch of each ([`Objects::seal`]).
    written: Mutex<HashMap<ObjectId, Written>>,
    /// How a large directory is searched for the leaf a name falls in.
    pub(super) part_search: PartSearch,
}

impl Objects {
    /// The objects in `store` (written through `storage`), sealed under `keys`, with a memory
    /// cache of `cache_bytes` and the disk cache `disk`.
    pub(super) fn new(
        keys: Keys,
        store: Arc<dyn ObjectStore>,
        storage: Arc<dyn Storage>,
        (cache_bytes, disk): (usize, Option<DiskCache>),
        part_search: PartSearch,
    ) -> Self {
        let cache = Mutex::new(Cache::new(cache_bytes));
        Objects { keys, store, storage, cache, disk, written: Mutex::new(HashMap::new()), part_search }
    }

    /// The memory cache.
    pub(super) fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        // Cache updates are single inserts: a panic elsewhere cannot leave it inconsistent.
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Every stored object: id and stored (sealed) size. Names that are not object names
    /// (temporary files of a backend) are skipped.
    pub(super) async fn list(&self) -> Result<HashMap<ObjectId, u64>, Error> {
        let prefix = Path::from(OBJECTS_PREFIX);
        let metas: Vec<_> =
            self.store.list(Some(&prefix)).try_collect().await.map_err(|e| Error::backend("list", &prefix, e))?;
        let mut out = HashMap::with_capacity(metas.len());
        for meta in metas {
            let Some(id) = meta.location.filename().and_then(format::parse_id) else { continue };
            if object_path(&id) == meta.location {
                out.insert(id, meta.size);
            }
        }
        Ok(out)
    }

    /// Stores one object (see [`Objects::put`]).
    pub(super) async fn put_one(&self, kind: ObjectKind, id: ObjectId, plain: &[u8]) -> Result<(), Error> {
        self.put(vec![(kind, id, plain)]).await
    }

    /// Stores new objects: sealed ([`Objects::seal`]), then stored by the
    /// storage (in a local folder one locked append, elsewhere one put each).
    pub(super) async fn put(&self, objects: Vec<(ObjectKind, ObjectId, &[u8])>) -> Result<(), Error> {
        let sealed = self.seal(objects).await?;
        self.storage
            .put_new(sealed.writes())
            .await
            .map_err(|e| Error::backend("write", &Path::from(OBJECTS_PREFIX), e))?;
        self.stored(&sealed);
        Ok(())
    }

    /// Seals new objects under the current epoch, to be stored by the storage
    /// ([`Storage::put_new`], or with the head,
    /// [`HeadStore::put_with`](crate::head::HeadStore::put_with)), after which [`Objects::stored`].
    /// Those this process stored under an older epoch (before it followed a rotation: its commit
    /// then lost the race, and this is the run again) are replaced at once instead: a reseal may
    /// already have passed that copy, and its epoch may be retired (`memfs key shred`). A caller
    /// that seals for a commit checks that the head is unmoved first (docs/SECURITY.md, "A writer
    /// that missed a rotation").
    pub(super) async fn seal(&self, objects: Vec<(ObjectKind, ObjectId, &[u8])>) -> Result<Sealed, Error> {
        let mut stale = Vec::new();
        let sealed = {
            let keys = self.keys.objects();
            let epoch = keys.current_epoch();
            let mut batch = Vec::with_capacity(objects.len());
            for (kind, id, plain) in objects {
                let bytes = Bytes::from(keys.seal(kind, &id, plain)?);
                match self.stored_stale(&id) {
                    true => stale.push((kind, id, bytes)),
                    false => batch.push((kind, id, bytes)),
                }
            }
            Sealed { epoch, objects: batch }
        };
        for (kind, id, bytes) in stale {
            self.replace(kind, id, bytes, sealed.epoch).await?;
        }
        for (_, id, _) in &sealed.objects {
            self.remember_written(*id, Written { epoch: sealed.epoch, landed: false });
        }
        Ok(sealed)
    }

    /// Stores `sealed` (object `id`, sealed under `epoch`) over whatever its path holds.
    async fn replace(&self, kind: ObjectKind, id: ObjectId, sealed: Bytes, epoch: u32) -> Result<(), Error> {
        let path = object_path(&id);
        self.remember_written(id, Written { epoch, landed: false });
        let put = || self.store.put_opts(&path, sealed.clone().into(), PutMode::Overwrite.into());
        storage::retried(put).await.map_err(|e| Error::backend("write", &path, e))?;
        self.stored(&Sealed { epoch, objects: vec![(kind, id, sealed)] });
        Ok(())
    }

    /// After `sealed` was stored: remembered as stored, kept in the disk cache.
    pub(super) fn stored(&self, sealed: &Sealed) {
        for (kind, id, bytes) in &sealed.objects {
            self.remember_written(*id, Written { epoch: sealed.epoch, landed: true });
            if let Some(disk) = &self.disk
                && matches!(kind, ObjectKind::Blob | ObjectKind::Dir)
            {
                disk.put(id, bytes);
            }
        }
    }

    /// Rewrites the storage without what was deleted or replaced (a local folder's log keeps
    /// them until then): its sizes before and after, `None` where nothing is kept.
    pub(super) async fn compact(&self, progress: &dyn Progress) -> Result<Option<Compacted>, Error> {
        self.storage.compact(progress).await.map_err(|e| Error::backend("compact", &Path::from("log"), e))
    }

    /// The objects this process wrote.
    fn written(&self) -> std::sync::MutexGuard<'_, HashMap<ObjectId, Written>> {
        // Single inserts and clears: a poisoned lock still holds a sound map.
        self.written.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether this process stored `id` under the current epoch.
    pub(super) fn stored_now(&self, id: &ObjectId) -> bool {
        let epoch = self.keys.objects().current_epoch();
        self.written().get(id) == Some(&Written { epoch, landed: true })
    }

    /// Whether this process wrote `id` (or tried to) under an epoch older than the current one
    /// (before it followed a rotation): such an object is stored again, replacing that copy.
    pub(super) fn stored_stale(&self, id: &ObjectId) -> bool {
        let epoch = self.keys.objects().current_epoch();
        self.written().get(id).is_some_and(|w| w.epoch < epoch)
    }

    /// Remembers what this process wrote of `id`, up to [`WRITTEN_MEMORY`] objects (then it
    /// starts again: only objects written just before a rotation matter). A write only tried
    /// leaves what was remembered before: a copy under an older epoch may still be stored (and
    /// is replaced next time), one landed under this epoch still is.
    fn remember_written(&self, id: ObjectId, now: Written) {
        let mut written = self.written();
        if !now.landed && written.get(&id).is_some_and(|w| w.epoch <= now.epoch) {
            return;
        }
        if written.len() >= WRITTEN_MEMORY {
            written.clear();
        }
        written.insert(id, now);
    }

    /// Opens a sealed object of `kind` and checks that it is what its id says.
    pub(super) fn open(&self, kind: ObjectKind, id: &ObjectId, sealed: &[u8]) -> Result<Vec<u8>, Error> {
        let plain = self.keys.objects().open(kind, id, sealed).map_err(|e| open_error(e, format::object_name(id)))?;
        // The AEAD binds the id; a content id must also be the keyed hash of what it holds.
        let expected = match kind {
            ObjectKind::Blob => self.keys.blob_address.address(&plain),
            _ => self.keys.tree_address.address(&plain),
        };
        if !id_eq(&expected, id) {
            return Err(Error::Corrupt {
                object: format::object_name(id),
                reason: "content does not match its id".into(),
            });
        }
        Ok(plain)
    }

    /// Drops `id` from this client's caches, in memory and on disk (deleted from the store).
    pub(super) fn forget(&self, id: &ObjectId) {
        self.cache().forget(id);
        if let Some(disk) = &self.disk {
            disk.remove(id);
        }
    }
}

impl EncryptedRepository {
    /// Fetches and opens an object of `kind` from the store (never from a cache).
    pub(super) async fn get_object(&self, kind: ObjectKind, id: &ObjectId) -> Result<Vec<u8>, Error> {
        Ok(self.fetch_object(kind, id).await?.1)
    }

    /// Fetches an object of `kind` from the store: its sealed bytes and its opened plaintext.
    ///
    /// One not stored may be carried unwritten in the head: in the head last opened,
    /// else in the newest. If the newest does not carry it either, its writer stored it before
    /// replacing that head, so it is looked for once more. The sealed bytes of a carried one
    /// are empty (it has none of its own).
    pub(super) async fn fetch_object(&self, kind: ObjectKind, id: &ObjectId) -> Result<(Bytes, Vec<u8>), Error> {
        let path = object_path(id);
        let sealed = match get_bytes(&*self.objects.store, &path).await {
            Ok(bytes) => bytes,
            Err(object_store::Error::NotFound { .. }) => match self.carried_copy(kind, id).await? {
                Some(plain) => return Ok((Bytes::new(), plain)),
                None => match get_bytes(&*self.objects.store, &path).await {
                    Ok(bytes) => bytes,
                    Err(object_store::Error::NotFound { .. }) => {
                        return Err(Error::MissingObject { id: path.to_string() });
                    }
                    Err(e) => return Err(Error::backend("read", &path, e)),
                },
            },
            Err(e) => return Err(Error::backend("read", &path, e)),
        };
        let plain = match self.objects.open(kind, id, &sealed) {
            // Resealed after a rotation this client has not seen: follow it, then open.
            Err(_) if self.objects.keys.objects().misses_epoch_of(&sealed) => {
                self.refresh_keys(memfs_crypt::Refresh::UnknownEpoch).await?;
                self.objects.open(kind, id, &sealed)?
            }
            opened => opened?,
        };
        Ok((sealed, plain))
    }

    /// The plaintext of `id` if a head carries it unwritten: the head last opened, else the
    /// newest (read and opened, so verified like any head, and kept as the one last opened).
    /// Not checked against the commit this client remembers: an object found here is what
    /// its id says (checked when its head was opened), whoever serves the head.
    async fn carried_copy(&self, kind: ObjectKind, id: &ObjectId) -> Result<Option<Vec<u8>>, Error> {
        let find = |head: &HeadObject| {
            head.inline
                .iter()
                .find(|o| o.unwritten && o.kind.object_kind() == kind && id_eq(&o.id, id))
                .map(|o| o.plain.clone())
        };
        if let Some(plain) = self.heads.parsed().as_ref().and_then(|(_, head)| find(head)) {
            return Ok(Some(plain));
        }
        let Some((bytes, _)) = self.heads.cell.read().await? else { return Ok(None) };
        let head = self.open_head(&bytes)?;
        Ok(find(&head))
    }

    /// [`EncryptedRepository::get_object`] through the on-disk cache, if there is one: a
    /// cached copy is opened and checked the same way, and one that fails is a miss.
    pub(super) async fn read_object(&self, kind: ObjectKind, id: &ObjectId) -> Result<Vec<u8>, Error> {
        let Some(disk) = &self.objects.disk else { return self.get_object(kind, id).await };
        if let Some(sealed) = disk.get(id) {
            match self.objects.open(kind, id, &sealed) {
                Ok(plain) => return Ok(plain),
                Err(_) => disk.remove(id),
            }
        }
        let (sealed, plain) = self.fetch_object(kind, id).await?;
        if !sealed.is_empty() {
            disk.put(id, &sealed);
        }
        Ok(plain)
    }

    pub(super) async fn commit_object(&self, id: &ObjectId) -> Result<CommitObject, Error> {
        if let Some(c) = self.objects.cache().commit(id) {
            return Ok(CommitObject::clone(&c));
        }
        let plain = self.get_object(ObjectKind::Commit, id).await?;
        let commit = CommitObject::decode(&plain).map_err(|e| format::corrupt(id, "commit", &e))?;
        self.objects.cache().insert_commit(*id, Arc::new(commit.clone()));
        Ok(commit)
    }

    /// Reads a whole directory: its top page and, for a large one, every page below, each
    /// level's pages at once. Every page is decoded once. Returns the directory and the id of
    /// every page (the top one first, then level by level).
    pub(super) async fn load_dir(&self, id: &ObjectId) -> Result<(Dir, Vec<ObjectId>), Error> {
        let mut index = Vec::new();
        let mut level = vec![*id];
        loop {
            let reads: Vec<_> = level.iter().map(|p| self.page(p)).collect();
            let plains: Vec<Arc<[u8]>> = stream::iter(reads).buffered(PARALLEL).try_collect().await?;
            match decode_level(&level, &plains)? {
                Level::Leaves(entries) => {
                    index.extend(level);
                    return Ok((Dir::from_entries(entries), index));
                }
                Level::Below(below) => {
                    index.append(&mut level);
                    level = below;
                }
            }
        }
    }

    /// [`EncryptedRepository::load_dir`] from the cached page plaintexts only; `None` if a
    /// page is not there.
    pub(super) fn assemble_dir(&self, id: &ObjectId) -> Result<Option<(Dir, Vec<ObjectId>)>, Error> {
        let mut page_ids = vec![*id];
        let mut level = vec![*id];
        loop {
            let plains = {
                let cache = self.objects.cache();
                level.iter().map(|p| cache.plain(p)).collect::<Option<Vec<_>>>()
            };
            let Some(plains) = plains else { return Ok(None) };
            match decode_level(&level, &plains)? {
                Level::Leaves(entries) => return Ok(Some((Dir::from_entries(entries), page_ids))),
                Level::Below(below) => {
                    page_ids.extend(&below);
                    level = below;
                }
            }
        }
    }

    /// A directory page's plaintext: cached, or read (through the disk cache) and cached.
    pub(super) async fn page(&self, id: &ObjectId) -> Result<Arc<[u8]>, Error> {
        if let Some(plain) = self.objects.cache().plain(id) {
            return Ok(plain);
        }
        let plain: Arc<[u8]> = self.read_object(ObjectKind::Dir, id).await?.into();
        self.objects.cache().insert_plain(*id, plain.clone());
        Ok(plain)
    }
}

/// One level of a directory's pages, decoded.
pub(super) enum Level {
    /// The level was the leaves: every entry, in order.
    Leaves(Vec<(memfs_core::Name, Node)>),
    /// The level was index pages: the pages of the next level, in order.
    Below(Vec<ObjectId>),
}

/// Decodes the pages of one level (`plains[i]` is page `level[i]`), checking that they are all
/// of one kind and that entries keep increasing across leaves.
pub(super) fn decode_level(level: &[ObjectId], plains: &[Arc<[u8]>]) -> Result<Level, Error> {
    let pages =
        level.iter().zip(plains).map(|(id, plain)| format::decode_page(plain, id)).collect::<Result<Vec<_>, _>>()?;
    level_of(level, pages)
}

/// [`decode_level`] of pages decoded already.
fn level_of(level: &[ObjectId], pages: Vec<format::Page>) -> Result<Level, Error> {
    if pages.iter().all(|p| matches!(p, format::Page::Leaf(_))) {
        let mut entries: Vec<(memfs_core::Name, Node)> = Vec::new();
        for (page, page_id) in pages.into_iter().zip(level) {
            let format::Page::Leaf(leaf) = page else { unreachable!() };
            // Strictly increasing across pages too.
            if let (Some((last, _)), Some((first, _))) = (entries.last(), leaf.first())
                && last >= first
            {
                return Err(format::out_of_order(page_id));
            }
            entries.extend(leaf);
        }
        return Ok(Level::Leaves(entries));
    }
    let mut below = Vec::new();
    for (page, page_id) in pages.into_iter().zip(level) {
        match page {
            format::Page::Index(index) => below.extend(index.pages),
            // Leaves and index pages never share a level.
            format::Page::Leaf(_) => {
                return Err(Error::Corrupt {
                    object: format::object_name(page_id),
                    reason: "a leaf page where an index page belongs".into(),
                });
            }
        }
    }
    Ok(Level::Below(below))
}
