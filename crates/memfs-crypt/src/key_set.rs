//! [`KeySet`]: `memfs.keys` unlocked by a credential and authenticated, and the rules of every
//! change to it: a confirmation of the current root (marked unrecorded until a commit records
//! it), a slot removed, a rotation, a shred. Each change is made here in memory; a
//! [`KeyStore`](crate::KeyStore) writes it.

use crate::keys_error::KeysError;
use crate::keys_object::{Confirmation, KeysObject};
use crate::{Credential, Error, KdfParams, KeySlots, Keyring, Opened, RootKey, SlotId, SlotSecret, StoreKeys};

/// `memfs.keys` unlocked and authenticated, read at version `V` of its cell.
pub struct KeySet<V> {
    object: KeysObject,
    /// The version it was read at, for the compare-and-swap that writes it back.
    version: V,
    store_id: [u8; 16],
    root: RootKey,
    /// The slot the credential opened.
    slot: SlotId,
    /// Changed in memory (the opened slot confirmed the current root) and not written.
    changed: bool,
    /// The opened slot's X25519 secret, to follow later rotations.
    secret: Option<SlotSecret>,
}

/// What a shred destroys, and what it leaves ([`KeySet::plan_shred`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShredPlan {
    /// The one epoch left: every object is sealed under it (with new names).
    pub epoch: u32,
    /// The epochs whose keys are destroyed.
    pub retired: Vec<u32>,
    /// The slots removed (every slot but the one that unlocked).
    pub removed: Vec<SlotId>,
}

impl<V> KeySet<V> {
    /// `object` (read at `version`) as the slot `opened` opens it: its tag checked under the
    /// root.
    ///
    /// If the opened slot's confirmation names an older root than the current one (another
    /// holder rotated the store since), the slot confirms the current root: the counter is
    /// raised and the change marked unrecorded ([`KeysObject::unrecorded`]) until a commit
    /// records it; [`KeySet::changed`] says whether to write it back.
    pub fn open(mut object: KeysObject, version: V, opened: Opened) -> Result<Self, KeysError> {
        let store_id = object.store_id_bytes()?;
        let slot = opened.slot();
        object.authenticate(opened.root())?;
        let changed = object.slots.renew(&opened, opened.root(), &store_id)?;
        if changed {
            object.keyring.bump();
            // One mark at a time: an earlier one whose commit is still to be made is recorded
            // first, and this counter is past it.
            if object.unrecorded.is_none() {
                object.unrecorded = Some(Confirmation { slot: slot.get(), counter: object.keyring.counter() });
            }
        }
        let secret = opened.slot_secret(&object.slots, &store_id).ok();
        let root = opened.into_root();
        if changed {
            object.seal(&root);
        }
        Ok(KeySet { object, version, store_id, root, slot, changed, secret })
    }

    /// The key object as it is now.
    pub fn object(&self) -> &KeysObject {
        &self.object
    }

    /// The version of the cell it was read at.
    pub fn version(&self) -> &V {
        &self.version
    }

    /// `change` of the key slots, with the root, the store id and the slot the credential
    /// opened.
    pub fn change_slots<R>(&mut self, change: impl FnOnce(&mut KeySlots, &RootKey, &[u8; 16], SlotId) -> R) -> R {
        change(&mut self.object.slots, &self.root, &self.store_id, self.slot)
    }

    /// The root key.
    pub fn root(&self) -> &RootKey {
        &self.root
    }

    /// The store id's bytes.
    pub fn store_id(&self) -> &[u8; 16] {
        &self.store_id
    }

    /// The slot the credential opened.
    pub fn slot(&self) -> SlotId {
        self.slot
    }

    /// Whether it changed in memory (a confirmation) and is not written.
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// The keyring.
    pub fn keyring(&self) -> &Keyring {
        &self.object.keyring
    }

    /// The keys the store works with.
    pub fn store_keys(&self) -> Result<StoreKeys, Error> {
        self.object.keyring.open(&self.root, &self.store_id)
    }

    /// Raises the change counter, as every change written does.
    pub fn bump(&mut self) {
        self.object.keyring.bump();
    }

    /// Sets the tag under the root, over the object as it is now.
    pub(crate) fn seal(&mut self) {
        self.object.seal(&self.root);
    }

    /// After a write that landed.
    pub(crate) fn written(&mut self) {
        self.changed = false;
    }

    /// The key object, the root and the opened slot's secret.
    pub fn into_parts(self) -> (KeysObject, RootKey, Option<SlotSecret>) {
        (self.object, self.root, self.secret)
    }

    /// Removes `slot` before a rotation; [`Error::OwnSlot`] if it is the slot the credential
    /// opened, unless `own`.
    pub fn remove_slot(&mut self, slot: SlotId, own: bool) -> Result<(), Error> {
        self.object.slots.remove_slot(slot)?;
        if slot == self.slot && !own {
            return Err(Error::OwnSlot { slot: slot.get() });
        }
        Ok(())
    }

    /// Starts a new epoch under a new root, which the chain of roots gets signed by the
    /// current one and every slot gets by its public key; the slot this client opened (if it
    /// is still there) confirms it at once. Returns the new epoch. In memory only.
    pub fn rotate(&mut self) -> Result<u32, Error> {
        let keys = self.store_keys()?;
        let new_root = RootKey::generate()?;
        self.object.slots.rewrap_root(&self.root, &new_root, &self.store_id)?;
        let mine = self.secret.as_ref().filter(|s| self.object.slots.slots().any(|(id, _)| id == s.slot()));
        if let Some(secret) = mine {
            self.object.slots.confirm(secret, &new_root, &self.store_id)?;
        }
        let epoch = self.object.keyring.rotate(&keys, &new_root, &self.store_id)?;
        // The slots keep their key pairs: the secret this client holds opens the new root.
        self.root = new_root;
        Ok(epoch)
    }

    /// After [`KeySet::rotate`] to `epoch`, for a rotation that names every object afresh: the
    /// keyring made anew under the new root, holding `epoch` only and fresh address keys, its
    /// counter one past the one read. Returns that counter and the new keys.
    pub fn name_afresh(&mut self, epoch: u32) -> Result<(u64, StoreKeys), Error> {
        let counter = self.keyring().counter() + 1;
        let (keyring, new_keys) = Keyring::fresh(&self.root, &self.store_id, epoch, counter)?;
        self.object.keyring = keyring;
        Ok((counter, new_keys))
    }

    /// What a shred would destroy: [`KeysError::ShredLeavesSlots`] if it leaves other slots
    /// (their credentials, with the copies of `memfs.keys` the storage held, would still reach
    /// the retired keys) and `remove_others` is not given.
    pub fn plan_shred(&self, remove_others: bool) -> Result<ShredPlan, KeysError> {
        let removed: Vec<SlotId> = self.object.slots.slots().map(|(id, _)| id).filter(|id| *id != self.slot).collect();
        if !removed.is_empty() && !remove_others {
            return Err(KeysError::ShredLeavesSlots { slots: removed });
        }
        let keys = self.store_keys()?;
        let epoch = keys.objects.current_epoch() + 1;
        Ok(ShredPlan { epoch, retired: keys.objects.epochs().collect(), removed })
    }

    /// The key object a shred to `epoch` ends with: a new root, fresh address keys and epoch
    /// key, its counter one past the one read, and one slot that `new` opens (with the note of
    /// the slot that unlocked). Returns it sealed, its root and its keys.
    pub fn shred(
        &self,
        epoch: u32,
        new: &Credential,
        params: KdfParams,
    ) -> Result<(KeysObject, RootKey, StoreKeys), Error> {
        let note = self.object.slots.notes().find(|(id, _, _)| *id == self.slot).map(|(_, _, note)| note.clone());
        let counter = self.keyring().counter() + 1;
        let root = RootKey::generate()?;
        let (keyring, new_keys) = Keyring::fresh(&root, &self.store_id, epoch, counter)?;
        let mut slots = KeySlots::with_slot(&root, &self.store_id, new, params)?;
        if let Some(note) = note {
            slots.set_note(SlotId::new(1), note)?;
        }
        Ok((KeysObject::new(&self.store_id, slots, keyring, &root), root, new_keys))
    }
}
