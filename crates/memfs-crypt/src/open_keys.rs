//! [`OpenKeys`]: the keys of an open store, and how they follow a rotation.
//!
//! The address keys change only by a shred or a re-addressing rotation, which a client open
//! before cannot follow ([`KeysError::Rotated`]: it opens the store again). The epoch keys
//! change when the store is rotated (by this or another client): a client that meets an object
//! of an epoch it does not hold, or a head that names a newer `memfs.keys`, reads `memfs.keys`
//! again and takes the new root from its own slot with the slot's secret
//! ([`OpenKeys::follow`]), without the credential. A `memfs.keys` at a lower change counter
//! than a head names is a rollback ([`KeysError::Rollback`]): an older copy with a removed
//! slot in it cannot be put back.

use std::sync::{Arc, RwLock, RwLockReadGuard};

use crate::keys_error::KeysError;
use crate::keys_object::KeysObject;
use crate::{AddressKey, Error, ObjectKeys, RootKey, SlotSecret, StoreKeys};

/// Keys of an open store. Zeroized on drop (each key is).
pub struct OpenKeys {
    /// Names blobs.
    pub blob_address: AddressKey,
    /// Names directories and commits.
    pub tree_address: AddressKey,
    live: RwLock<LiveKeys>,
    /// This client's slot, to follow a rotation (`None` for an ephemeral store).
    slot: Option<SlotSecret>,
}

/// What a rotation changes.
struct LiveKeys {
    objects: Arc<ObjectKeys>,
    /// The root key (`None` for an ephemeral store): authenticates `memfs.keys`.
    root: Option<RootKey>,
    /// The change counter of the `memfs.keys` this client holds: every head it writes names
    /// it, and a head naming a higher one makes it read `memfs.keys` again.
    counter: u64,
}

/// Why [`OpenKeys::follow`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refresh {
    /// A head names change `counter` of `memfs.keys`, newer than the one held.
    Named(u64),
    /// An object of an epoch this client does not hold: a rotation it has not seen.
    UnknownEpoch,
}

impl OpenKeys {
    /// The keys `keys`, under `root` at change `counter` (`None`: an ephemeral store's), and
    /// the slot secret that follows a rotation.
    pub fn new(keys: StoreKeys, root: Option<(RootKey, u64)>, slot: Option<SlotSecret>) -> Self {
        let StoreKeys { blob_address, tree_address, objects } = keys;
        let (root, counter) = match root {
            Some((root, counter)) => (Some(root), counter),
            None => (None, 0),
        };
        let live = LiveKeys { objects: Arc::new(objects), root, counter };
        OpenKeys { blob_address, tree_address, live: RwLock::new(live), slot }
    }

    fn live(&self) -> RwLockReadGuard<'_, LiveKeys> {
        // Replaced whole under the write lock: a poisoned lock still holds a sound value.
        self.live.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The epoch keys as they are now.
    pub fn objects(&self) -> Arc<ObjectKeys> {
        self.live().objects.clone()
    }

    /// Whether this is a persistent store's keys (with a root), not an ephemeral store's.
    pub fn has_root(&self) -> bool {
        self.live().root.is_some()
    }

    /// `f` of the root key held (`None` for an ephemeral store).
    pub fn with_root<R>(&self, f: impl FnOnce(&RootKey) -> R) -> Option<R> {
        self.live().root.as_ref().map(f)
    }

    /// The change counter of the `memfs.keys` held.
    pub fn counter(&self) -> u64 {
        self.live().counter
    }

    /// Takes what changed in `keys` (`memfs.keys` read again, of the store whose canonical id
    /// is `store_id`): a higher counter under the same root; or, after a rotation, the new root
    /// (from this client's slot, with its secret), checked against the tag, and the new epoch
    /// keys.
    ///
    /// Errors: [`KeysError::Rollback`] if its counter is still lower than the head names;
    /// [`KeysError::Rotated`] if the store was rotated and this client cannot follow (its slot
    /// was removed, or it has no slot secret); [`KeysError::Corrupt`] if the tag fails.
    pub fn follow(&self, keys: &KeysObject, store_id: &str, why: Refresh) -> Result<(), KeysError> {
        if keys.store_id() != store_id {
            return Err(KeysError::corrupt("the store id changed"));
        }
        let id = keys.store_id_bytes()?;
        let counter = keys.keyring.counter();
        if let Refresh::Named(named) = why
            && counter < named
        {
            return Err(KeysError::Rollback { counter, head: named });
        }
        let same_root = self.live().root.as_ref().is_some_and(|root| keys.slots.belongs_to(root));
        if same_root {
            let live = self.live();
            let root = live.root.as_ref().expect("checked above");
            keys.authenticate(root)?;
            drop(live);
            let mut live = self.live.write().unwrap_or_else(|p| p.into_inner());
            live.counter = live.counter.max(counter);
            return Ok(());
        }
        // Rotated: this client's slot gives the new root, or it was removed.
        let secret = self.slot.as_ref().ok_or(KeysError::Rotated)?;
        // The slot gone, or no longer holding this key pair: removed (or re-keyed) elsewhere.
        let root = keys.slots.root_for(secret, &id).map_err(|e| match e {
            Error::NoSuchSlot { .. } | Error::Decrypt => KeysError::Rotated,
            other => KeysError::from(other),
        })?;
        keys.authenticate(&root)?;
        let opened = keys.keyring.open(&root, &id)?;
        // Named afresh (`key rotate --readdress`): this client's names are the old ones.
        if opened.blob_address.address(b"") != self.blob_address.address(b"") {
            return Err(KeysError::Rotated);
        }
        let mut live = self.live.write().unwrap_or_else(|p| p.into_inner());
        if counter >= live.counter {
            *live = LiveKeys { objects: Arc::new(opened.objects), root: Some(root), counter };
        }
        Ok(())
    }
}
