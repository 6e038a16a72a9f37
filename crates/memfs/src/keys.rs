//! Key-slot management of a persistent store: list, add, remove. Each change rewrites
//! `memfs.keys` and records itself in a commit (the tree unchanged); the data stays as it is.

use memfs_crypt::{Credential, KdfParams, KeySlots, RootKey, SecretString, SlotId, SlotKind, SlotNote};
use memfs_store::{Backend, EncryptedRepository, KeyChange, RotateKeys, Rotation, Shred, ShredKeys};

use crate::engine::{Memfs, OpenOptions};
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

/// A store error about `location`; only keys kept outside memfs were at hand and the store has
/// no slot of theirs: it needs a passphrase or a key file, as with no credential at all.
fn store_error(location: &Location) -> impl FnOnce(memfs_store::Error) -> Error + '_ {
    move |source| match source {
        memfs_store::Error::Crypt(memfs_crypt::Error::NoCustodySlot) => {
            Error::CredentialRequired { store: location.to_string() }
        }
        source => Error::Store { store: location.to_string(), source },
    }
}

impl Memfs {
    /// The key slots of the store at `location`: id, kind and note (shown, not authenticated:
    /// see [`SlotNote`]).
    pub async fn key_slots(location: impl Into<Location>) -> Result<Vec<(SlotId, SlotKind, SlotNote)>, Error> {
        let url = &location.into();
        EncryptedRepository::key_slots(backend(url)?).await.map_err(store_error(url))
    }

    /// Where the custody slots of the store at `location` keep their keys: the keychain entry,
    /// KMS key or age recipient of each (shown, not authenticated).
    pub async fn custody_keys(location: impl Into<Location>) -> Result<Vec<(SlotId, String)>, Error> {
        let url = &location.into();
        EncryptedRepository::custody_keys(backend(url)?).await.map_err(store_error(url))
    }

    /// The slot `credential` opens in the store at `location` (a passphrase runs its Argon2).
    pub async fn key_slot_of(location: impl Into<Location>, credential: &Credential) -> Result<SlotId, Error> {
        let url = &location.into();
        EncryptedRepository::slot_of(backend(url)?, credential).await.map_err(store_error(url))
    }

    /// Adds a slot for `new` (a passphrase slot uses `kdf`) with `note`, unlocking with
    /// `options.credential` (the options open the store for the commit that records it).
    pub async fn add_key(
        location: impl Into<Location>,
        options: &OpenOptions,
        new: &Credential,
        kdf: KdfParams,
        note: SlotNote,
    ) -> Result<SlotId, Error> {
        note.check()?;
        let url = &location.into();
        // A custodian keeps a fresh key bound to the store's id before the slot is made.
        let sealed = match new {
            Credential::Custodian(_) => {
                let id = EncryptedRepository::id_of(backend(url)?).await.map_err(store_error(url))?;
                EncryptedRepository::seal_new(new, &id).await.map_err(store_error(url))?
            }
            _ => None,
        };
        let new = sealed.as_ref().unwrap_or(new);
        edit_slots(url, options, false, |slots, root, id, _| {
            let added = slots.add_slot(root, id, new, kdf)?;
            slots.set_note(added, note)?;
            Ok((added, ("add", added)))
        })
        .await
    }

    /// Changes the passphrase of passphrase slot `slot` to `new` (Argon2id costs `kdf`; fresh
    /// salt and key pair), unlocking with `options.credential`. The slot keeps its id; the old
    /// passphrase no longer opens it; the root key, and so the data, is unchanged.
    pub async fn change_passphrase(
        location: impl Into<Location>,
        options: &OpenOptions,
        slot: SlotId,
        new: &SecretString,
        kdf: KdfParams,
    ) -> Result<(), Error> {
        edit_slots(&location.into(), options, false, |slots, root, id, _| {
            slots.change_passphrase(root, id, slot, new, kdf).map(|()| ((), ("passwd", slot)))
        })
        .await
    }

    /// Removes slot `slot`, unlocking with `options.credential` (once: one Argon2 run for a
    /// passphrase);
    /// the last slot is never removed, and the slot `unlock` opens only with
    /// [`RemoveKey::own`]. Returns the removed slot's kind. A [`RemoveKey::dry_run`] unlocks
    /// and checks the same and writes nothing.
    pub async fn remove_key(
        location: impl Into<Location>,
        open: &OpenOptions,
        slot: SlotId,
        options: RemoveKey,
    ) -> Result<SlotKind, Error> {
        edit_slots(&location.into(), open, options.dry_run, |slots, _, _, opened| {
            let kind = slots.slots().find(|(id, _)| *id == slot).map(|(_, kind)| kind);
            // First what no option gets past (an unknown slot, the last one); an error leaves
            // the slots unwritten.
            slots.remove_slot(slot)?;
            if opened == slot && !options.own {
                return Err(memfs_crypt::Error::OwnSlot { slot: slot.get() });
            }
            Ok((kind.expect("remove_slot refuses an unknown slot"), ("remove", slot)))
        })
        .await
    }
}

impl Memfs {
    /// Rotates the keys of the store at `location` (see [`EncryptedRepository::rotate_keys`]):
    /// a new root and epoch, the new root wrapped to every remaining slot, the rotation
    /// recorded in a commit. With `plan.remove`, that slot is removed first and never receives
    /// the new root. Unlocks with `options.credential`.
    pub async fn rotate_keys(
        location: impl Into<Location>,
        options: &OpenOptions,
        plan: RotateKeys,
    ) -> Result<Rotation, Error> {
        let url = &location.into();
        let Some(unlock) = options.credential.as_ref() else {
            return Err(Error::CredentialRequired { store: url.to_string() });
        };
        let store = options.store_options(url.to_string());
        EncryptedRepository::rotate_keys(backend(url)?, unlock, store, plan).await.map_err(store_error(url))
    }
}

impl Memfs {
    /// Crypto-erasure of everything the store at `location` no longer holds (see
    /// [`EncryptedRepository::shred_keys`]): every live object named and sealed again under
    /// fresh address keys and a fresh epoch, every older key destroyed, and the one slot left
    /// opened by `plan.new`. Unlocks with `options.credential`.
    pub async fn shred_keys(
        location: impl Into<Location>,
        options: &OpenOptions,
        plan: ShredKeys<'_>,
        progress: &dyn memfs_store::Progress,
    ) -> Result<Shred, Error> {
        let url = &location.into();
        let Some(unlock) = options.credential.as_ref() else {
            return Err(Error::CredentialRequired { store: url.to_string() });
        };
        let store = options.store_options(url.to_string());
        EncryptedRepository::shred_keys(backend(url)?, unlock, store, plan, progress).await.map_err(store_error(url))
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

/// Unlocks the store at `url` with `options.credential`, applies `change` to its key slots and
/// (unless `dry_run`) writes them back and records the change: the one path of every key-slot
/// change.
async fn edit_slots<R>(
    url: &Location,
    options: &OpenOptions,
    dry_run: bool,
    change: impl FnOnce(&mut KeySlots, &RootKey, &[u8; 16], SlotId) -> Result<(R, KeyChange), memfs_crypt::Error>,
) -> Result<R, Error> {
    let Some(unlock) = options.credential.as_ref() else {
        return Err(Error::CredentialRequired { store: url.to_string() });
    };
    let store = options.store_options(url.to_string());
    EncryptedRepository::plan_key_slots(backend(url)?, unlock, dry_run, store, change).await.map_err(store_error(url))
}
