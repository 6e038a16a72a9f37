//! Rotation and crypto-erasure of a store's keys (docs/SECURITY.md, "Keys"): `memfs key
//! rotate` (a new root and epoch, wrapped to the remaining slots by their public keys) and
//! `memfs key shred` (every older epoch destroyed, under a new root and a new credential).
//! Each writes `memfs.keys` by compare-and-swap and records itself in a commit.

use memfs_crypt::{Credential, KeySlots, RootKey, SlotId};

use super::{Backend, EncryptedRepository, KeySet, OpenOptions, connect};
use crate::error::Error;

/// How [`EncryptedRepository::rotate_keys`] rotates.
#[derive(Debug, Clone, Copy, Default)]
pub struct RotateKeys {
    /// Remove this slot first: the new root is never wrapped to it.
    pub remove: Option<SlotId>,
    /// Allow `remove` to be the slot the unlocking credential opens.
    pub own: bool,
    /// Check everything and write nothing.
    pub dry_run: bool,
}

/// What a rotation did, or (dry run) would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rotation {
    /// The new epoch: everything sealed from now on is sealed under it.
    pub epoch: u32,
    /// The slots the new root is wrapped to.
    pub slots: Vec<SlotId>,
    /// The slot removed first.
    pub removed: Option<SlotId>,
}

/// How [`EncryptedRepository::shred_keys`] destroys the keys of everything deleted so far.
pub struct ShredKeys<'a> {
    /// The credential the one slot left will open: a new key file or passphrase.
    pub new: &'a Credential,
    /// Argon2id costs if `new` is a passphrase.
    pub params: memfs_crypt::KdfParams,
    /// Remove every other slot (their credentials, with the copies of `memfs.keys` the store
    /// held, would still reach the retired keys): without it, a store with other slots is
    /// refused.
    pub remove_others: bool,
    /// Check everything and write nothing.
    pub dry_run: bool,
}

/// What a shred did, or (dry run) would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shred {
    /// The one epoch left: every object is sealed under it.
    pub epoch: u32,
    /// The epochs whose keys were destroyed.
    pub retired: Vec<u32>,
    /// The slots removed (every slot but the one that unlocked).
    pub removed: Vec<SlotId>,
    /// The reseal (empty in a dry run).
    pub resealed: crate::ResealReport,
}

impl EncryptedRepository {
    /// `memfs key rotate`: unlocks with `credential`, removes slot `plan.remove` if asked (the
    /// slot the credential opens only with `plan.own`), then starts a new epoch under a new
    /// root, wraps the new root to every remaining slot by its public key, writes
    /// `memfs.keys` by compare-and-swap and records the rotation in a commit (sealed, like
    /// everything after it, under the new epoch). Objects written before stay sealed under the
    /// epochs they were written in, readable through the keyring, until resealed.
    ///
    /// Refused with `memfs_crypt::Error::LegacySlots` while slots made before format 7 remain
    /// (they have no public key to wrap the new root to). A dry run unlocks and checks the
    /// same, and writes nothing.
    pub async fn rotate_keys(
        backend: Backend,
        credential: &Credential,
        options: OpenOptions,
        plan: RotateKeys,
    ) -> Result<Rotation, Error> {
        let conn = connect(backend)?;
        let mut set = KeySet::unlock(&conn, credential).await?;
        if let Some(slot) = plan.remove {
            set.object.slots.remove_slot(slot)?;
            if slot == set.slot && !plan.own {
                return Err(memfs_crypt::Error::OwnSlot { slot: slot.get() }.into());
            }
        }
        let epoch = set.rotate()?;
        let rotation =
            Rotation { epoch, slots: set.object.slots.slots().map(|(id, _)| id).collect(), removed: plan.remove };
        if plan.dry_run {
            return Ok(rotation);
        }
        let record = ("rotate", plan.remove.map(SlotId::get));
        set.commit(&conn, options, record, "the keys were rotated").await?;
        Ok(rotation)
    }

    /// `memfs key shred`: crypto-erasure of everything the store no longer holds (docs/
    /// SECURITY.md, "Keys"). In three steps, each safe to interrupt (run it again to finish):
    ///
    /// 1. a rotation (a new root and epoch), with every slot but the one `credential` opens
    ///    removed, recorded in a commit;
    /// 2. every stored object resealed under the new epoch ([`EncryptedRepository::reseal`]
    ///    with history), so no object the store holds needs an older epoch;
    /// 3. `memfs.keys` rewritten under another new root, its keyring holding the new epoch
    ///    only (every older epoch key destroyed) and its one slot opened by `plan.new`,
    ///    recorded in a commit; a local folder's log is compacted.
    ///
    /// Afterwards, every byte the storage ever held plus the credential `plan.new` opens only
    /// what the store holds now: the older copies of `memfs.keys` are wrapped under the old
    /// credentials and roots, and the retired epochs are in no copy that `plan.new` opens.
    /// Whoever kept an old credential (or a key from before) still reads old copies.
    pub async fn shred_keys(
        backend: Backend,
        credential: &Credential,
        options: OpenOptions,
        plan: ShredKeys<'_>,
        progress: &dyn crate::Progress,
    ) -> Result<Shred, Error> {
        let conn = connect(backend)?;
        let mut set = KeySet::unlock(&conn, credential).await?;
        let removed: Vec<SlotId> = set.object.slots.slots().map(|(id, _)| id).filter(|id| *id != set.slot).collect();
        if !removed.is_empty() && !plan.remove_others {
            return Err(Error::ShredLeavesSlots { slots: removed });
        }
        let keys = set.store_keys()?;
        let epoch = keys.objects.current_epoch() + 1;
        let retired: Vec<u32> = keys.objects.epochs().collect();
        if plan.dry_run {
            return Ok(Shred { epoch, retired, removed, resealed: crate::ResealReport::default() });
        }
        // 1. Rotate, the other slots removed.
        for id in &removed {
            set.object.slots.remove_slot(*id)?;
        }
        set.rotate()?;
        let repo = set.commit(&conn, options.clone(), ("rotate", None), "this change was made").await?;
        // 2. Everything under the new epoch.
        let resealed = repo.reseal(crate::ResealOptions { history: true }, progress).await?;
        // 3. The older epochs destroyed, under a root and a credential no copy of memfs.keys had.
        let mut set = KeySet::unlock(&conn, credential).await?;
        let keys = set.store_keys()?;
        let epoch = keys.objects.current_epoch();
        let last = RootKey::generate()?;
        let mut slots = KeySlots::with_slot(&last, &set.store_id, plan.new, plan.params)?;
        if let Some((_, _, note)) = set.object.slots.notes().find(|(id, _, _)| *id == set.slot) {
            slots.set_note(SlotId::new(1), note.clone())?;
        }
        set.object.slots = slots;
        let store_id = set.store_id;
        set.object
            .keyring
            .as_mut()
            .expect("a key set is format 7 once unlocked")
            .retire(&keys, epoch, &last, &store_id)?;
        set.root = last;
        // This client opened with the old credential: it has no secret of the new slot.
        set.secret = None;
        let repo = set.commit(&conn, options, ("shred", Some(1)), "this change was made").await?;
        if let Some(log) = &repo.log {
            progress.phase("compacting", None);
            log.compact().await.map_err(|e| Error::backend("compact", &object_store::path::Path::from("log"), e))?;
        }
        Ok(Shred { epoch, retired: retired.into_iter().filter(|e| *e < epoch).collect(), removed, resealed })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use memfs_crypt::{KdfParams, KeyFile};
    use object_store::memory::InMemory;
    use object_store::{ObjectStore, ObjectStoreExt};

    use super::*;
    use crate::repository::Repository;

    fn cheap() -> KdfParams {
        KdfParams::new(8, 1, 1).unwrap()
    }

    /// Two clients stay open while a third rotates the keys and removes the second's slot: the
    /// first follows the rotation with its slot's secret (no credential asked) and reads and
    /// writes on, under the new epoch; the second, removed, can no longer read what the head
    /// names, nor commit.
    #[tokio::test]
    async fn open_clients_follow_a_rotation_and_a_removed_one_cannot() {
        use crate::encrypted::history::tests::run;
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let backend = || Backend::ObjectStore(store.clone());
        let off = || OpenOptions { state_dir: crate::StateDir::Off, ..OpenOptions::default() };
        let (alice, bob) =
            (Credential::KeyFile(KeyFile::generate().unwrap()), Credential::KeyFile(KeyFile::generate().unwrap()));
        let slots = |r: &RootKey, id: &[u8; 16]| KeySlots::with_slot(r, id, &alice, cheap());
        EncryptedRepository::init(backend(), slots, off()).await.unwrap();
        let two = EncryptedRepository::change_key_slots(backend(), &alice, off(), |slots, root, id, _| {
            slots.add_slot(root, id, &bob, cheap()).map(|added| (added, ("add", added)))
        })
        .await
        .unwrap();
        let (a, b) = (
            EncryptedRepository::open(backend(), &alice, off()).await.unwrap(),
            EncryptedRepository::open(backend(), &bob, off()).await.unwrap(),
        );
        run(&a, serde_json::json!({"command": "create", "path": "/memories/x.txt", "file_text": "x"})).await;
        b.head().await.unwrap();
        assert_eq!(a.keys.objects().current_epoch(), 0);

        let plan = RotateKeys { remove: Some(two), own: false, dry_run: false };
        let rotation = EncryptedRepository::rotate_keys(backend(), &alice, off(), plan).await.unwrap();
        assert_eq!(rotation, Rotation { epoch: 1, slots: vec![SlotId::new(1)], removed: Some(two) });

        // The rotator's slot confirmed the new root: opening with it again writes nothing.
        let keys_path = object_store::path::Path::from("memfs.keys");
        let keys_now = store.get(&keys_path).await.unwrap().bytes().await.unwrap();
        EncryptedRepository::open(backend(), &alice, off()).await.unwrap();
        assert_eq!(store.get(&keys_path).await.unwrap().bytes().await.unwrap(), keys_now);

        run(&a, serde_json::json!({"command": "create", "path": "/memories/y.txt", "file_text": "y"})).await;
        assert_eq!(a.keys.objects().current_epoch(), 1, "the open client followed the rotation");
        let sealed = store.get(&object_store::path::Path::from("head")).await.unwrap().bytes().await.unwrap();
        assert_eq!(memfs_crypt::ObjectKeys::epoch_of(&sealed), Some(1));
        for _ in 0..2 {
            let refused = b.head().await.err().unwrap();
            assert!(matches!(refused, Error::KeysRotated), "{refused:?}");
        }
    }
}
