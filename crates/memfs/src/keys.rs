//! Key-slot management of a persistent store: list, add, remove. Each change rewrites only
//! `memfs.keys`; the data stays as it is.

use memfs_crypt::{Credential, KdfParams, KeySlots, MasterKey, SecretString, SlotId, SlotKind, SlotNote};
use memfs_store::{Backend, EncryptedRepository};

use crate::engine::Memfs;
use crate::error::Error;
use crate::url::{Location, Target};

fn backend(location: &Location) -> Result<Backend, Error> {
    match location.target()? {
        Target::Memory => {
            Err(Error::StoreUrl { url: location.to_string(), reason: "a memory:// store has no key slots".into() })
        }
        Target::Persistent(backend) => Ok(backend),
    }
}

fn store_error(location: &Location) -> impl FnOnce(memfs_store::Error) -> Error + '_ {
    move |source| Error::Store { store: location.to_string(), source }
}

impl Memfs {
    /// The key slots of the store at `location`: id, kind and note (shown, not authenticated:
    /// see [`SlotNote`]).
    pub async fn key_slots(location: impl Into<Location>) -> Result<Vec<(SlotId, SlotKind, SlotNote)>, Error> {
        let url = &location.into();
        EncryptedRepository::key_slots(backend(url)?).await.map_err(store_error(url))
    }

    /// The slot `credential` opens in the store at `location` (a passphrase runs its Argon2).
    pub async fn key_slot_of(location: impl Into<Location>, credential: &Credential) -> Result<SlotId, Error> {
        let url = &location.into();
        EncryptedRepository::slot_of(backend(url)?, credential).await.map_err(store_error(url))
    }

    /// Adds a slot for `new` (a passphrase slot uses `kdf`) with `note`, unlocking with
    /// `unlock`.
    pub async fn add_key(
        location: impl Into<Location>,
        unlock: &Credential,
        new: &Credential,
        kdf: KdfParams,
        note: SlotNote,
    ) -> Result<SlotId, Error> {
        note.check()?;
        edit_slots(&location.into(), unlock, false, |slots, master, id, _| {
            let added = slots.add_slot(master, id, new, kdf)?;
            slots.set_note(added, note)?;
            Ok(added)
        })
        .await
    }

    /// Changes the passphrase of passphrase slot `slot` to `new` (Argon2id costs `kdf`; fresh
    /// salt and nonce), unlocking with `unlock`. The slot keeps its id; the old passphrase no
    /// longer opens it; the master key, and so the data, is unchanged.
    pub async fn change_passphrase(
        location: impl Into<Location>,
        unlock: &Credential,
        slot: SlotId,
        new: &SecretString,
        kdf: KdfParams,
    ) -> Result<(), Error> {
        edit_slots(&location.into(), unlock, false, |slots, master, id, _| {
            slots.change_passphrase(master, id, slot, new, kdf)
        })
        .await
    }

    /// Removes slot `slot`, unlocking with `unlock` (once: one Argon2 run for a passphrase);
    /// the last slot is never removed, and the slot `unlock` opens only with
    /// [`RemoveKey::own`]. Returns the removed slot's kind. A [`RemoveKey::dry_run`] unlocks
    /// and checks the same and writes nothing.
    pub async fn remove_key(
        location: impl Into<Location>,
        unlock: &Credential,
        slot: SlotId,
        options: RemoveKey,
    ) -> Result<SlotKind, Error> {
        edit_slots(&location.into(), unlock, options.dry_run, |slots, _, _, opened| {
            let kind = slots.slots().find(|(id, _)| *id == slot).map(|(_, kind)| kind);
            // First what no option gets past (an unknown slot, the last one); an error leaves
            // the slots unwritten.
            slots.remove_slot(slot)?;
            if opened == slot && !options.own {
                return Err(memfs_crypt::Error::OwnSlot { slot: slot.get() });
            }
            Ok(kind.expect("remove_slot refuses an unknown slot"))
        })
        .await
    }
}

/// How [`Memfs::remove_key`] removes a slot.
#[derive(Debug, Clone, Copy, Default)]
pub struct RemoveKey {
    /// Also the slot the unlocking credential opens (without it, that is refused with
    /// `memfs_crypt::Error::OwnSlot`).
    pub own: bool,
    /// Check everything a removal checks, and write nothing.
    pub dry_run: bool,
}

/// Unlocks the store at `url` with `unlock`, applies `change` to its key slots and (unless
/// `dry_run`) writes them back: the one path of every key-slot change.
async fn edit_slots<R>(
    url: &Location,
    unlock: &Credential,
    dry_run: bool,
    change: impl FnOnce(&mut KeySlots, &MasterKey, &[u8; 16], SlotId) -> Result<R, memfs_crypt::Error>,
) -> Result<R, Error> {
    EncryptedRepository::plan_key_slots(backend(url)?, unlock, dry_run, change).await.map_err(store_error(url))
}
