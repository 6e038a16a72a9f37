//! Key-slot management: list, add, remove or change the slots in `memfs.keys`.
//!
//! Every change unlocks the master key with a credential the store already accepts, edits the
//! slots, and writes `memfs.keys` back by compare-and-swap (`PutMode::Update`, or the local
//! lock-and-rename). No data object is read or written: the master key, and so every object,
//! stays as it was.

use bytes::Bytes;
use memfs_crypt::{Credential, KeySlots, MasterKey, SlotId, SlotKind, SlotNote};

use super::{Backend, EncryptedRepository, KEYS_PATH, KeysObject, connect, decode_store_id, parse_keys};
use crate::error::Error;

impl EncryptedRepository {
    /// The key slots of the store at `backend`: their ids, kinds and notes (no credential
    /// needed; a note is not authenticated, see [`SlotNote`]).
    pub async fn key_slots(backend: Backend) -> Result<Vec<(SlotId, SlotKind, SlotNote)>, Error> {
        let conn = connect(backend)?;
        let Some((bytes, _)) = conn.keys.read().await? else { return Err(Error::NotInitialized) };
        Ok(parse_keys(&bytes)?.slots.notes().map(|(id, kind, note)| (id, kind, note.clone())).collect())
    }

    /// The slot `credential` opens in the store at `backend` (a passphrase runs its Argon2).
    pub async fn slot_of(backend: Backend, credential: &Credential) -> Result<SlotId, Error> {
        let conn = connect(backend)?;
        let Some((bytes, _)) = conn.keys.read().await? else { return Err(Error::NotInitialized) };
        let keys: KeysObject = parse_keys(&bytes)?;
        let id = decode_store_id(&keys.store_id)?;
        Ok(super::unlock::unlock_slot(&keys.slots, credential, id).await?.0)
    }

    /// Unlocks the store at `backend` with `credential`, applies `change` to its key slots and
    /// writes them back by compare-and-swap. `change` gets the slots, the master key, the
    /// store id and the slot `credential` opened.
    pub async fn change_key_slots<R>(
        backend: Backend,
        credential: &Credential,
        change: impl FnOnce(&mut KeySlots, &MasterKey, &[u8; 16], SlotId) -> Result<R, memfs_crypt::Error>,
    ) -> Result<R, Error> {
        Self::plan_key_slots(backend, credential, false, change).await
    }

    /// [`EncryptedRepository::change_key_slots`], or with `dry_run` everything up to the
    /// write: the credential unlocks, `change` is applied (and may refuse), and nothing is
    /// written.
    pub async fn plan_key_slots<R>(
        backend: Backend,
        credential: &Credential,
        dry_run: bool,
        change: impl FnOnce(&mut KeySlots, &MasterKey, &[u8; 16], SlotId) -> Result<R, memfs_crypt::Error>,
    ) -> Result<R, Error> {
        let conn = connect(backend)?;
        let Some((bytes, version)) = conn.keys.read().await? else { return Err(Error::NotInitialized) };
        let mut keys: KeysObject = parse_keys(&bytes)?;
        let id = decode_store_id(&keys.store_id)?;
        // One unlock (one Argon2 run for a passphrase), whatever `change` needs to know.
        let (opened, master) = super::unlock::unlock_slot(&keys.slots, credential, id).await?;
        let result = change(&mut keys.slots, &master, &id, opened)?;
        if dry_run {
            return Ok(result);
        }
        let new = serde_json::to_vec_pretty(&keys).expect("key slots serialize");
        conn.keys.swap(&version, Bytes::from(new)).await.map_err(|e| match e {
            Error::Conflict => Error::Corrupt {
                object: KEYS_PATH.into(),
                reason: "the key slots changed while this change was made; run it again".into(),
            },
            other => other,
        })?;
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::TryStreamExt;
    use memfs_crypt::{KdfParams, KeyFile};
    use object_store::memory::InMemory;
    use object_store::{ObjectStore, ObjectStoreExt};

    use super::*;
    use crate::encrypted::OpenOptions;

    /// Every stored object's path and bytes.
    async fn everything(store: &dyn ObjectStore) -> Vec<(String, Vec<u8>)> {
        let metas: Vec<_> = store.list(None).try_collect().await.unwrap();
        let mut out = Vec::new();
        for m in metas {
            let bytes = store.get(&m.location).await.unwrap().bytes().await.unwrap();
            out.push((m.location.to_string(), bytes.to_vec()));
        }
        out.sort();
        out
    }

    fn cheap() -> KdfParams {
        KdfParams::new(8, 1, 1).unwrap()
    }

    #[tokio::test]
    async fn slots_change_without_touching_data() {
        let store: Arc<dyn ObjectStore> = Arc::new(InMemory::new());
        let backend = || Backend::ObjectStore(store.clone());
        let pass = Credential::passphrase("first passphrase".into());
        EncryptedRepository::init(
            backend(),
            |m, id| KeySlots::with_slot(m, id, &pass, cheap()),
            OpenOptions { state_dir: crate::StateDir::Off, ..OpenOptions::default() },
        )
        .await
        .unwrap();
        let repo = EncryptedRepository::open(
            backend(),
            &pass,
            OpenOptions { state_dir: crate::StateDir::Off, ..OpenOptions::default() },
        )
        .await
        .unwrap();
        crate::conformance::check_repository(&repo).await;
        let objects_before = everything(store.as_ref()).await;

        let file = Credential::KeyFile(KeyFile::generate().unwrap());
        let added = EncryptedRepository::change_key_slots(backend(), &pass, |slots, master, id, _| {
            slots.add_slot(master, id, &file, cheap())
        })
        .await
        .unwrap();
        assert_eq!(
            EncryptedRepository::key_slots(backend()).await.unwrap(),
            vec![
                (SlotId::new(1), SlotKind::Passphrase, SlotNote::default()),
                (added, SlotKind::KeyFile, SlotNote::default())
            ]
        );
        // The key file opens the same store; then the passphrase slot goes.
        EncryptedRepository::open(
            backend(),
            &file,
            OpenOptions { state_dir: crate::StateDir::Off, ..OpenOptions::default() },
        )
        .await
        .unwrap();
        EncryptedRepository::change_key_slots(backend(), &file, |slots, _, _, _| slots.remove_slot(SlotId::new(1)))
            .await
            .unwrap();
        let refused = EncryptedRepository::open(
            backend(),
            &pass,
            OpenOptions { state_dir: crate::StateDir::Off, ..OpenOptions::default() },
        )
        .await
        .err()
        .unwrap();
        assert!(matches!(refused, Error::Crypt(memfs_crypt::Error::NoSlot { .. })), "{refused:?}");
        // The last slot cannot go.
        let last =
            EncryptedRepository::change_key_slots(backend(), &file, |slots, _, _, _| slots.remove_slot(added)).await;
        assert!(matches!(last, Err(Error::Crypt(memfs_crypt::Error::LastSlot))), "{last:?}");
        // No data object was written or removed.
        let mut objects_after = everything(store.as_ref()).await;
        objects_after.retain(|(path, _)| path != KEYS_PATH);
        let mut before = objects_before;
        before.retain(|(path, _)| path != KEYS_PATH);
        assert_eq!(before, objects_after);
    }
}
