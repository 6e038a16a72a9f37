//! Key-slot management: list, add, remove or change the slots in `memfs.keys`.
//!
//! Every change unlocks the root with a credential the store already accepts, edits the
//! slots, raises the change counter, seals `memfs.keys` under the root and writes it back by
//! compare-and-swap (`PutMode::Update`, or the local log's compare under its lock). No data object is read or written: the root,
//! the keyring, and so every object, stay as they were.

use std::time::Duration;

use memfs_core::Mutation;
use memfs_crypt::{Credential, KeySlots, RootKey, SlotId, SlotKind, SlotNote};

use super::key_set::{self, KeysHead};
use super::{Backend, EncryptedRepository, OpenOptions, connect};
use crate::error::Error;
use crate::record::{Operation, Record};
use crate::repository::{CommitInfo, Repository};

/// What a key-slot change records in its commit: the change's name (`add`, `remove`,
/// `passwd`) and the slot.
pub type KeyChange = (&'static str, SlotId);

/// How many times the commit that records a key-slot change is tried when other writers
/// commit first (each lost race means another commit landed; none is lost). As many as a
/// command's (`memfs`'s `MAX_ATTEMPTS`): 64 were too few for a rotation among 16 writers on
/// S3 once warm writers commit in two round trips to its three.
const RECORD_ATTEMPTS: usize = 256;

impl EncryptedRepository {
    /// The key slots of the store at `backend`: their ids, kinds and notes (no credential
    /// needed; a note is not authenticated, see [`SlotNote`]).
    pub async fn key_slots(backend: Backend) -> Result<Vec<(SlotId, SlotKind, SlotNote)>, Error> {
        let (keys, _) = KeysHead::plain(&*connect(backend)?.keys).read().await?;
        Ok(keys.slots().notes().map(|(id, kind, note)| (id, kind, note.clone())).collect())
    }

    /// The outside keys of the custody slots of the store at `backend` (a keychain entry, a KMS
    /// key, an age recipient), by slot; no credential needed (shown, not authenticated, like
    /// the notes).
    pub async fn custody_keys(backend: Backend) -> Result<Vec<(SlotId, String)>, Error> {
        let (keys, _) = KeysHead::plain(&*connect(backend)?.keys).read().await?;
        Ok(keys.slots().custody_slots().map(|(id, _, custody)| (id, custody.key.clone())).collect())
    }

    /// The id of the store at `backend` (public: it binds key slots and objects to the store),
    /// which a custodian seals a new slot's key for ([`EncryptedRepository::seal_new`]).
    pub async fn id_of(backend: Backend) -> Result<[u8; 16], Error> {
        let (keys, _) = KeysHead::plain(&*connect(backend)?.keys).read().await?;
        Ok(keys.store_id_bytes()?)
    }

    /// For a new slot: a custodian's credential (keys kept outside memfs) sealed for the store
    /// `store_id`, a fresh KEK in its keeping (`Some`); `None` for any other credential, which
    /// makes its slot as it is.
    pub async fn seal_new(credential: &Credential, store_id: &[u8; 16]) -> Result<Option<Credential>, Error> {
        match credential {
            Credential::Custodian(custodian) => {
                let kek = custodian.seal(store_id).await.map_err(memfs_crypt::Error::from)?;
                Ok(Some(Credential::Kek(kek)))
            }
            _ => Ok(None),
        }
    }

    /// The slot `credential` opens in the store at `backend` (a passphrase runs its Argon2).
    pub async fn slot_of(backend: Backend, credential: &Credential) -> Result<SlotId, Error> {
        let (keys, _) = KeysHead::plain(&*connect(backend)?.keys).read().await?;
        let id = keys.store_id_bytes()?;
        Ok(super::unlock::unlock_slot(keys.slots(), credential, id).await?.opened.slot())
    }

    /// Unlocks the store at `backend` with `credential`, applies `change` to its key slots,
    /// writes them back by compare-and-swap, and records the change in a commit (opened with
    /// `options`, by [`OpenOptions::actor`]). `change` gets the slots, the root key, the store id and the slot
    /// `credential` opened, and returns its result and what to record.
    pub async fn change_key_slots<R>(
        backend: Backend,
        credential: &Credential,
        options: OpenOptions,
        change: impl FnOnce(&mut KeySlots, &RootKey, &[u8; 16], SlotId) -> Result<(R, KeyChange), memfs_crypt::Error>,
    ) -> Result<R, Error> {
        Self::plan_key_slots(backend, credential, false, options, change).await
    }

    /// [`EncryptedRepository::change_key_slots`], or with `dry_run` everything up to the
    /// write: the credential unlocks, `change` is applied (and may refuse), and nothing is
    /// written.
    ///
    /// The change raises `memfs.keys`' counter; its commit (the tree unchanged, the record
    /// [`Operation::Keys`]) makes the head name the new counter, so the `memfs.keys` before
    /// the change, put back, is refused as a rollback
    /// ([`KeysError::Rollback`](memfs_crypt::KeysError::Rollback)). If the commit fails after
    /// `memfs.keys` was written, the change stands and the error says why the record is
    /// missing.
    pub async fn plan_key_slots<R>(
        backend: Backend,
        credential: &Credential,
        dry_run: bool,
        options: OpenOptions,
        change: impl FnOnce(&mut KeySlots, &RootKey, &[u8; 16], SlotId) -> Result<(R, KeyChange), memfs_crypt::Error>,
    ) -> Result<R, Error> {
        let conn = connect(backend)?;
        // One unlock (one Argon2 run for a passphrase), whatever `change` needs to know.
        let mut set = key_set::unlock(&conn, credential).await?;
        let (result, (what, slot)) = set.change_slots(change)?;
        if dry_run {
            return Ok(result);
        }
        key_set::commit(set, &conn, options, (what, Some(slot.get())), "this change was made").await?;

        Ok(result)
    }

    /// Commits `operation` with the tree unchanged, on the newest head, as many times as
    /// other writers win the race (at most [`RECORD_ATTEMPTS`]).
    pub(super) async fn record(&self, actor: &str, operation: Operation) -> Result<u64, Error> {
        let recorded = self.record_if(actor, operation, None).await?;
        Ok(recorded.expect("recorded unless a counter is named"))
    }

    /// [`EncryptedRepository::record`], unless the head already names change `counter` of
    /// `memfs.keys` (or a later one): then `None`. Checked again on every attempt, so of two
    /// clients recording the same change, one does.
    pub(super) async fn record_unless_named(
        &self,
        actor: &str,
        operation: Operation,
        counter: u64,
    ) -> Result<Option<u64>, Error> {
        self.record_if(actor, operation, Some(counter)).await
    }

    async fn record_if(&self, actor: &str, operation: Operation, unless: Option<u64>) -> Result<Option<u64>, Error> {
        let mut last = Error::Conflict;
        for attempt in 0..RECORD_ATTEMPTS {
            let head = self.head().await?;
            let named = head.anchor.as_ref().and_then(|a| a.keys);
            if let Some(counter) = unless
                && named.is_some_and(|named| named >= counter)
            {
                return Ok(None);
            }
            let mutation = Mutation { tree: head.tree.clone(), changes: Vec::new(), blobs: Vec::new(), applied: None };
            let info =
                CommitInfo { actor: actor.into(), command: Record::from(operation.clone()), changes: Vec::new() };
            match self.commit(&head, &mutation, info).await {
                Ok(generation) => return Ok(Some(generation)),
                Err(Error::Conflict) => {
                    last = Error::Conflict;
                    // Busy writers: wait a random while, longer each time (up to about 0.6 s).
                    let mut jitter = [0u8; 2];
                    getrandom::fill(&mut jitter).map_err(|_| memfs_crypt::Error::Random)?;
                    let ceiling = 10u64 << attempt.min(6);
                    tokio::time::sleep(Duration::from_millis(u64::from(u16::from_le_bytes(jitter)) % ceiling)).await;
                }
                Err(e) => return Err(e),
            }
        }
        Err(last)
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
        // Every object stored before its head, here and below: the test counts stored objects.
        let repo = EncryptedRepository::open(
            backend(),
            &pass,
            OpenOptions { state_dir: crate::StateDir::Off, unwritten_bytes: Some(0), ..OpenOptions::default() },
        )
        .await
        .unwrap();
        crate::conformance::check_repository(&repo).await;
        let objects_before = everything(store.as_ref()).await;

        let file = Credential::KeyFile(KeyFile::generate().unwrap());
        let off =
            || OpenOptions { state_dir: crate::StateDir::Off, unwritten_bytes: Some(0), ..OpenOptions::default() };
        let added = EncryptedRepository::change_key_slots(backend(), &pass, off(), |slots, root, id, _| {
            slots.add_slot(root, id, &file, cheap()).map(|added| (added, ("add", added)))
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
        let one = SlotId::new(1);
        EncryptedRepository::change_key_slots(backend(), &file, off(), |slots, _, _, _| {
            slots.remove_slot(one).map(|()| ((), ("remove", one)))
        })
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
        let last = EncryptedRepository::change_key_slots(backend(), &file, off(), |slots, _, _, _| {
            slots.remove_slot(added).map(|()| ((), ("remove", added)))
        })
        .await;
        assert!(matches!(last, Err(Error::Crypt(memfs_crypt::Error::LastSlot))), "{last:?}");
        // No data object was changed or removed; each change added a commit that records it,
        // with the tree as it was.
        let after = everything(store.as_ref()).await;
        let objects = |all: &[(String, Vec<u8>)]| -> Vec<(String, Vec<u8>)> {
            all.iter().filter(|(path, _)| path.starts_with("objects/")).cloned().collect()
        };
        let (before, after_objects) = (objects(&objects_before), objects(&after));
        assert!(before.iter().all(|o| after_objects.contains(o)));
        assert_eq!(after_objects.len(), before.len() + 2);
        let repo = EncryptedRepository::open(backend(), &file, off()).await.unwrap();
        let records: Vec<String> =
            repo.log(Some(3), None).await.unwrap().iter().map(|c| c.record().to_json()).collect();
        let counter = |n| {
            format!(
                r#"{{"command":"keys","change":"{}","counter":{n},"slot":{}}}"#,
                if n == 3 { "remove" } else { "add" },
                if n == 3 { 1 } else { added.get() }
            )
        };
        assert_eq!(records[..2], [counter(3), counter(2)]);
    }
}
