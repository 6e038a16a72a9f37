//! `memfs.keys` through `memfs-crypt`'s [`KeyStore`]: the cell it is kept in (the store's
//! compare-and-swap head for `memfs.keys`), unlocked by a credential, and a change to it
//! written and recorded in a commit.
//!
//! The key object's form, tag, change counter and the rules of its changes are `memfs-crypt`'s
//! ([`KeysObject`](memfs_crypt::KeysObject), [`KeySet`], [`Keys`]); what is here is the data
//! side: storage, custodians asked off the runtime (`unlock.rs`), and the commit that records
//! a change.

use async_trait::async_trait;
use bytes::Bytes;
use memfs_crypt::{Credential, KeySet, KeyStore, KeysCell, KeysError, OpenKeys as Keys, Refresh, Swap};

use super::{Connection, EncryptedRepository, KEYS_PATH, OpenOptions};
use crate::error::Error;
use crate::head::{HeadStore, HeadVersion};
use crate::record::Operation;
use crate::settle::{self, Swapped};

impl From<KeysError> for Error {
    /// A refusal of `memfs.keys` that every object can have is this enum's own variant; the
    /// rest are [`Error::Keys`].
    fn from(e: KeysError) -> Self {
        match e {
            KeysError::Corrupt { reason } => Error::Corrupt { object: KEYS_PATH.into(), reason },
            KeysError::Missing => Error::NotInitialized,
            KeysError::Exists => Error::AlreadyInitialized,
            KeysError::Conflict => Error::Conflict,
            KeysError::Crypt(e) => Error::Crypt(e),
            e => Error::Keys(e),
        }
    }
}

/// `memfs.keys` as a [`KeysCell`]: a head store, swapped plainly or settled when an answer is
/// lost ([`settle::swap_settled`]).
pub(super) struct KeysHead<'a> {
    head: &'a dyn HeadStore,
    settled: bool,
}

impl<'a> KeysHead<'a> {
    /// The key store in `head`, each swap one compare-and-swap.
    pub(super) fn plain(head: &'a dyn HeadStore) -> KeyStore<Self> {
        KeyStore::new(KeysHead { head, settled: false })
    }

    /// The key store in `head`, a swap whose answer was lost settled by reading it again.
    pub(super) fn settled(head: &'a dyn HeadStore) -> KeyStore<Self> {
        KeyStore::new(KeysHead { head, settled: true })
    }
}

#[async_trait]
impl KeysCell for KeysHead<'_> {
    type Version = HeadVersion;
    type Error = Error;

    async fn read(&self) -> Result<Option<(Vec<u8>, HeadVersion)>, Error> {
        Ok(self.head.read().await?.map(|(bytes, version)| (bytes.to_vec(), version)))
    }

    async fn create(&self, bytes: Vec<u8>) -> Swap<Error> {
        match self.head.create(Bytes::from(bytes)).await {
            Ok(()) => Swap::Landed,
            Err(Error::Conflict) => Swap::Conflict,
            Err(e) => Swap::Failed(e),
        }
    }

    async fn swap(&self, expected: &HeadVersion, bytes: Vec<u8>) -> Swap<Error> {
        if !self.settled {
            return match self.head.swap(expected, Bytes::from(bytes)).await {
                Ok(()) => Swap::Landed,
                Err(Error::Conflict) => Swap::Conflict,
                Err(e) => Swap::Failed(e),
            };
        }
        match settle::swap_settled(self.head, Some(expected), Bytes::from(bytes)).await {
            Swapped::Landed => Swap::Landed,
            Swapped::Not(Error::Conflict) => Swap::Conflict,
            Swapped::Not(e) => Swap::Failed(e),
            Swapped::Unknown(e) => Swap::Unknown(e),
        }
    }
}

/// `e`, a key set refused, with the custody slots in it this machine sends nothing for named:
/// planted by whoever holds the storage, most likely (docs/SECURITY.md, "Custody endpoints").
fn naming_refused(e: Error, refused: &[memfs_crypt::CustodyFailure]) -> Error {
    match e {
        Error::Corrupt { object, reason } if !refused.is_empty() => {
            let named: Vec<String> = refused.iter().map(ToString::to_string).collect();
            Error::Corrupt {
                object,
                reason: format!("{reason}; it names what this machine does not allow: {}", named.join("; ")),
            }
        }
        e => e,
    }
}

/// Reads `memfs.keys` and unlocks it with `credential`, checking its tag under the root
/// ([`KeySet::open`], which also makes the opened slot confirm the current root).
pub(super) async fn unlock(conn: &Connection, credential: &Credential) -> Result<KeySet<HeadVersion>, Error> {
    let (object, version) = KeysHead::plain(&*conn.keys).read().await?;
    let store_id = object.store_id_bytes()?;
    let super::unlock::SlotOpened { opened, refused } =
        super::unlock::unlock_slot(object.slots(), credential, store_id).await?;
    KeySet::open(object, version, opened).map_err(|e| naming_refused(e.into(), &refused))
}

/// The keys of the open store, and its store id.
pub(super) fn into_keys(set: KeySet<HeadVersion>) -> Result<(Keys, String), Error> {
    let store_keys = set.store_keys()?;
    let counter = set.keyring().counter();
    let (object, root, secret) = set.into_parts();
    Ok((Keys::new(store_keys, Some((root, counter)), secret), object.store_id().to_owned()))
}

/// The operation the commit that records a confirmation `mark` records, `memfs.keys` being at
/// change `counter`.
pub(super) fn confirm_operation(mark: memfs_crypt::Confirmation, counter: u64) -> Operation {
    Operation::Keys { change: "confirm".into(), counter, slot: Some(mark.slot) }
}

/// Writes the changed `set` (its counter raised) by compare-and-swap on the version it was
/// read at, then records the change (`change`, `slot`) in a commit made under the keys it now
/// holds, by [`OpenOptions::actor`]; returns the store, open with them. A lost race on
/// `memfs.keys` is an error that says to run the command again (`during` names what was being
/// done).
pub(super) async fn commit(
    mut set: KeySet<HeadVersion>,
    conn: &Connection,
    options: OpenOptions,
    (change, slot): (&str, Option<u32>),
    during: &str,
) -> Result<EncryptedRepository, Error> {
    set.bump();
    // A confirmation made by this unlock (or left unrecorded by an earlier one) is written
    // with its mark and recorded before the change, as an open records it: stopped
    // between, the next open records it.
    let carried = set.object().unrecorded();
    KeysHead::settled(&*conn.keys).write_settled(&mut set).await.map_err(|e| match e {
        Error::Conflict => Error::Corrupt {
            object: KEYS_PATH.into(),
            reason: format!("the key slots changed while {during}; run it again"),
        },
        other => other,
    })?;
    let counter = set.keyring().counter();
    let (keys, store_id) = into_keys(set)?;
    let actor = options.actor.clone();
    let repo = EncryptedRepository::assemble(conn.again(), keys, store_id, options)?;
    if let Some(carried) = carried {
        // The mark stays in `memfs.keys`; the next open finds the head naming this
        // counter and only clears it.
        repo.record_unless_named(&actor, confirm_operation(carried, counter), carried.counter).await?;
    }
    repo.record(&actor, Operation::Keys { change: change.into(), counter, slot }).await?;
    Ok(repo)
}

impl EncryptedRepository {
    /// Reads `memfs.keys` again and takes what changed ([`Keys::follow`]).
    pub(super) async fn refresh_keys(&self, why: Refresh) -> Result<(), Error> {
        let (object, _) = KeysHead::plain(&*self.keys_cell).read().await?;
        Ok(self.objects.keys.follow(&object, &self.store_id, why)?)
    }
}
