//! Rotation and crypto-erasure of a store's keys (docs/SECURITY.md, "Keys"): `memfs key
//! rotate` (a new root and epoch, wrapped to the remaining slots by their public keys) and
//! `memfs key shred` (every live object named and sealed again under keys that share nothing
//! with the old ones, under a new root and a new credential). Each writes `memfs.keys` by
//! compare-and-swap and records itself in a commit.

use memfs_crypt::{Credential, ShredPlan, SlotId};

use super::readdress::finish;
use super::{Backend, EncryptedRepository, Keys, OpenOptions, connect, key_set};
use crate::error::Error;
use crate::record::Operation;

/// How [`EncryptedRepository::rotate_keys`] rotates.
#[derive(Debug, Clone, Copy, Default)]
pub struct RotateKeys {
    /// Remove this slot first: the new root is never wrapped to it.
    pub remove: Option<SlotId>,
    /// Allow `remove` to be the slot the unlocking credential opens.
    pub own: bool,
    /// Check everything and write nothing.
    pub dry_run: bool,
    /// Name and seal every live object again under fresh address keys and the new epoch (as
    /// a shred does, the credentials kept): the removed slot then cannot tell whether a content
    /// it guesses is stored from now on.
    pub readdress: bool,
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
    /// With [`RotateKeys::readdress`]: the live objects named and sealed again (`None` in a
    /// dry run or without it).
    pub readdressed: Option<crate::ResealReport>,
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
    /// The one epoch left: every object is sealed under it (with new names).
    pub epoch: u32,
    /// The epochs whose keys were destroyed.
    pub retired: Vec<u32>,
    /// The slots removed (every slot but the one that unlocked).
    pub removed: Vec<SlotId>,
    /// The live objects named and sealed again under the new keys, and their stored bytes
    /// (empty in a dry run).
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
    /// A dry run unlocks and checks the same, and writes nothing.
    pub async fn rotate_keys(
        backend: Backend,
        credential: &Credential,
        options: OpenOptions,
        plan: RotateKeys,
    ) -> Result<Rotation, Error> {
        let conn = connect(backend)?;
        let mut set = key_set::unlock(&conn, credential).await?;
        if let Some(slot) = plan.remove {
            set.remove_slot(slot, plan.own)?;
        }
        let old_keys = set.store_keys()?;
        let epoch = set.rotate()?;
        let mut rotation = Rotation {
            epoch,
            slots: set.object().slots().slots().map(|(id, _)| id).collect(),
            removed: plan.remove,
            readdressed: None,
        };
        if plan.dry_run {
            return Ok(rotation);
        }
        if !plan.readdress {
            let record = ("rotate", plan.remove.map(SlotId::get));
            key_set::commit(set, &conn, options, record, "the keys were rotated").await?;
            return Ok(rotation);
        }
        // The keyring made afresh under the new root (the slots wrapped to it as above).
        let (counter, new_keys) = set.name_afresh(epoch)?;
        let store_hex = set.object().store_id().to_owned();
        let old =
            EncryptedRepository::assemble(conn.again(), Keys::new(old_keys, None, None), store_hex, options.clone())?;
        let record = Operation::Keys { change: "rotate".into(), counter, slot: plan.remove.map(SlotId::get) };
        let (object, root, _) = set.into_parts();
        let done = finish(&conn, &old, (object, root, new_keys), record, options, &()).await?;
        rotation.readdressed =
            Some(crate::ResealReport { epoch, objects: done.objects, resealed: done.objects, bytes: done.bytes });
        Ok(rotation)
    }

    /// `memfs key shred`: crypto-erasure of everything the store no longer holds (docs/
    /// SECURITY.md, "Keys"). Unlocks with `credential` and makes, in memory only, a new root,
    /// fresh address keys and a fresh epoch key ([`memfs_crypt::Keyring::fresh`]) and the one
    /// slot `plan.new` opens. Then, each step safe to interrupt (run it again to finish):
    ///
    /// 1. every live object is named and sealed again under the new keys, and the head and
    ///    gc's state are swapped to the new names (`encrypted/readdress.rs`, which catches up with
    ///    other writers and puts a stopped shred's head back);
    /// 2. `memfs.keys` is written once, by compare-and-swap: its one slot opened by `plan.new`,
    ///    its keyring the new keys only (every older epoch key and the old address keys gone);
    ///    the head already names its change counter and a commit recording the shred;
    /// 3. every object under the old keys is deleted and a local folder's log compacted.
    ///
    /// Why no copy of `memfs.keys` gives one credential the other's keys: the shred writes
    /// `memfs.keys` once, and that write wraps only the new keys, to the new slot only; every
    /// copy before it wraps only the old keys (no earlier write of this shred exists to keep a
    /// copy of). The objects written in step 1 are named by keys that exist only in this
    /// process until step 2, and if it stops before, they stay unreachable, and a run again
    /// starts from fresh keys. So the old credential with every copy of `memfs.keys` opens
    /// nothing written from step 1 on (A3 in docs/SECURITY.md); and `plan.new` with every copy
    /// reaches no key the store had before, so it can neither open an older copy of an object
    /// nor compute the name of a guessed content in one (A2): the names of step 1 on are keyed
    /// hashes under keys no older object was named with. Whoever kept an old credential still
    /// reads old copies.
    pub async fn shred_keys(
        backend: Backend,
        credential: &Credential,
        options: OpenOptions,
        plan: ShredKeys<'_>,
        progress: &dyn crate::Progress,
    ) -> Result<Shred, Error> {
        let conn = connect(backend)?;
        let set = key_set::unlock(&conn, credential).await?;
        let ShredPlan { epoch, retired, removed } = set.plan_shred(plan.remove_others)?;
        if plan.dry_run {
            return Ok(Shred { epoch, retired, removed, resealed: crate::ResealReport::default() });
        }
        let (object, root, new_keys) = set.shred(epoch, plan.new, plan.params)?;
        let counter = object.keyring().counter();
        let (old_keys, store_hex) = key_set::into_keys(set)?;
        let old = EncryptedRepository::assemble(conn.again(), old_keys, store_hex, options.clone())?;
        let record = Operation::Keys { change: "shred".into(), counter, slot: Some(1) };
        let done = finish(&conn, &old, (object, root, new_keys), record, options, progress).await?;
        let resealed = crate::ResealReport { epoch, objects: done.objects, resealed: done.objects, bytes: done.bytes };
        Ok(Shred { epoch, retired, removed, resealed })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use memfs_crypt::{KdfParams, KeyFile, KeySlots, RootKey};
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
        assert_eq!(a.objects.keys.objects().current_epoch(), 0);

        let plan = RotateKeys { remove: Some(two), own: false, dry_run: false, readdress: false };
        let rotation = EncryptedRepository::rotate_keys(backend(), &alice, off(), plan).await.unwrap();
        assert_eq!(rotation, Rotation { epoch: 1, slots: vec![SlotId::new(1)], removed: Some(two), readdressed: None });

        // The rotator's slot confirmed the new root: opening with it again writes nothing.
        let keys_path = object_store::path::Path::from("memfs.keys");
        let keys_now = store.get(&keys_path).await.unwrap().bytes().await.unwrap();
        EncryptedRepository::open(backend(), &alice, off()).await.unwrap();
        assert_eq!(store.get(&keys_path).await.unwrap().bytes().await.unwrap(), keys_now);

        run(&a, serde_json::json!({"command": "create", "path": "/memories/y.txt", "file_text": "y"})).await;
        assert_eq!(a.objects.keys.objects().current_epoch(), 1, "the open client followed the rotation");
        let sealed = store.get(&object_store::path::Path::from("head")).await.unwrap().bytes().await.unwrap();
        assert_eq!(memfs_crypt::ObjectKeys::epoch_of(&sealed), Some(1));
        for _ in 0..2 {
            let refused = b.head().await.err().unwrap();
            assert!(matches!(refused, Error::Keys(memfs_crypt::KeysError::Rotated)), "{refused:?}");
        }
    }
}
