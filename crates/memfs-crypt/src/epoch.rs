//! The keys that seal and open a store's objects: one key per epoch.
//!
//! A store starts in epoch 0; `memfs key rotate` starts the next. Objects are always sealed
//! under the newest epoch, and opened under the epoch their header names, so everything
//! written before a rotation stays readable for as long as its epoch's key is kept, and
//! nothing written after it can be opened with the keys of earlier epochs.

use std::collections::BTreeMap;
use std::fmt;

use memfs_id::ObjectId;
use zeroize::{ZeroizeOnDrop, Zeroizing};

use crate::error::Error;
use crate::key::FirstKey;
use crate::seal::{self, Envelope, ObjectKind};
use crate::secret::Secret32;

/// The epoch keys of an unlocked store: seals under the newest, opens under any it holds.
///
/// ```
/// use memfs_crypt::{FirstKey, ObjectKeys, ObjectKind};
///
/// let master = FirstKey::generate()?;
/// let keys = ObjectKeys::from_master(&master);
/// let id = master.address_key().address(b"hello");
/// let sealed = keys.seal(ObjectKind::Blob, &id, b"hello")?;
/// assert_eq!(keys.open(ObjectKind::Blob, &id, &sealed)?, b"hello");
/// assert_eq!(ObjectKeys::epoch_of(&sealed), Some(0));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct ObjectKeys {
    epochs: BTreeMap<u32, Secret32>,
    current: u32,
}

// Every key it holds zeroizes itself on drop.
impl ZeroizeOnDrop for ObjectKeys {}

impl ObjectKeys {
    /// One epoch, 0, whose key is `master`: a new store's first epoch, or an ephemeral store.
    pub fn from_master(master: &FirstKey) -> Self {
        let mut epochs = BTreeMap::new();
        epochs.insert(0, Secret32::new(*master.expose()));
        Self::new(epochs)
    }

    /// The keys of `epochs` (at least one); the newest seals.
    pub(crate) fn new(epochs: BTreeMap<u32, Secret32>) -> Self {
        let current = epochs.keys().next_back().copied().unwrap_or(0);
        ObjectKeys { epochs, current }
    }

    /// The epoch new objects are sealed under.
    pub fn current_epoch(&self) -> u32 {
        self.current
    }

    /// The epochs whose keys are held, oldest first.
    pub fn epochs(&self) -> impl Iterator<Item = u32> + '_ {
        self.epochs.keys().copied()
    }

    /// Whether the key of `epoch` is held.
    pub fn holds(&self, epoch: u32) -> bool {
        self.epochs.contains_key(&epoch)
    }

    /// Whether `sealed` is an object of an epoch whose key is not held: one sealed after a
    /// rotation this keyring has not seen (or after its epoch was retired).
    pub fn misses_epoch_of(&self, sealed: &[u8]) -> bool {
        Self::epoch_of(sealed).is_some_and(|e| !self.holds(e))
    }

    /// The epoch a sealed object's header names, or `None` if it is not a sealed object.
    /// Public information: the header is not encrypted.
    pub fn epoch_of(sealed: &[u8]) -> Option<u32> {
        Envelope::parse(sealed).ok().map(|envelope| envelope.epoch)
    }

    /// Encrypts `plaintext` as object `id` of kind `kind` under the current epoch, with its
    /// own data key. Fails only if the OS RNG fails or the plaintext is over 64 GiB.
    pub fn seal(&self, kind: ObjectKind, id: &ObjectId, plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        let key = self.epochs.get(&self.current).ok_or(Error::Decrypt)?;
        seal::seal(self.current, key.expose(), kind, id, plaintext)
    }

    /// Decrypts and authenticates object `id` of kind `kind`, under the epoch its header
    /// names. Every failure is [`Error::Decrypt`], an object of an epoch whose key is not held
    /// (shredded) included; an unknown envelope version is [`Error::UnknownFormat`].
    pub fn open(&self, kind: ObjectKind, id: &ObjectId, sealed: &[u8]) -> Result<Vec<u8>, Error> {
        let Envelope { epoch, salt, body } = Envelope::parse(sealed)?;
        let key = self.epochs.get(&epoch).ok_or(Error::Decrypt)?;
        seal::open(key.expose(), salt, kind, id, body)
    }

    /// Epoch `epoch`'s key bytes, for wrapping under the root. Never leaves the crate.
    pub(crate) fn key(&self, epoch: u32) -> Option<Zeroizing<[u8; 32]>> {
        self.epochs.get(&epoch).map(|k| Zeroizing::new(*k.expose()))
    }
}

impl fmt::Debug for ObjectKeys {
    /// The epochs only.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectKeys")
            .field("epochs", &self.epochs.keys().collect::<Vec<_>>())
            .field("current", &self.current)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(epochs: &[(u32, u8)]) -> ObjectKeys {
        ObjectKeys::new(epochs.iter().map(|&(e, b)| (e, Secret32::new([b; 32]))).collect())
    }

    #[test]
    fn seals_under_the_newest_epoch_and_opens_every_held_one() {
        let id = ObjectId::from_bytes([3; 32]);
        let old = keys(&[(0, 1)]);
        let sealed_old = old.seal(ObjectKind::Blob, &id, b"old").unwrap();
        let both = keys(&[(0, 1), (1, 2)]);
        assert_eq!(both.current_epoch(), 1);
        let sealed_new = both.seal(ObjectKind::Blob, &id, b"new").unwrap();
        assert_eq!(ObjectKeys::epoch_of(&sealed_new), Some(1));
        assert_eq!(both.open(ObjectKind::Blob, &id, &sealed_old).unwrap(), b"old");
        assert_eq!(both.open(ObjectKind::Blob, &id, &sealed_new).unwrap(), b"new");
        // Epoch 0's keys alone open nothing of epoch 1; without epoch 0, its objects are gone.
        assert!(matches!(old.open(ObjectKind::Blob, &id, &sealed_new), Err(Error::Decrypt)));
        let shredded = keys(&[(1, 2)]);
        assert!(matches!(shredded.open(ObjectKind::Blob, &id, &sealed_old), Err(Error::Decrypt)));
        // A header naming epoch 0 on an epoch-1 body does not open either.
        let mut moved = sealed_new.clone();
        moved[4..8].copy_from_slice(&0u32.to_be_bytes());
        assert!(matches!(both.open(ObjectKind::Blob, &id, &moved), Err(Error::Decrypt)));
    }

    #[test]
    fn each_seal_has_its_own_key() {
        let (k, id) = (keys(&[(0, 1)]), ObjectId::from_bytes([3; 32]));
        let (a, b) = (k.seal(ObjectKind::Blob, &id, b"same").unwrap(), k.seal(ObjectKind::Blob, &id, b"same").unwrap());
        assert_ne!(a[8..24], b[8..24], "fresh salts");
        assert_ne!(a[24..], b[24..], "so different ciphertexts under the one nonce");
    }

    #[test]
    fn debug_names_epochs_only() {
        assert_eq!(format!("{:?}", keys(&[(0, 1), (2, 2)])), "ObjectKeys { epochs: [0, 2], current: 2, .. }");
    }
}
