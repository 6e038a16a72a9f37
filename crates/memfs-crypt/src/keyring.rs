//! The keyring of a store: what the root key unwraps (docs/FORMAT.md, "Keys").
//!
//! ```text
//! credential ──(slot)──▶ root ──▶ address keys (blob, tree): name objects, fixed for life
//!                             └─▶ epoch keys E0, E1, …: each object's data key comes from one
//! ```
//!
//! Stored in `memfs.keys` beside the slots, every key wrapped under a key derived from the
//! root, with associated data naming the store and the epoch, and a counter that every change
//! of `memfs.keys` raises (the head names it, so an older `memfs.keys` put back is noticed).
//!
//! The address keys stay the same across rotations: an object keeps its id whatever epoch
//! seals it, so a reseal rewrites objects in place and no directory or commit changes. The
//! price (docs/SECURITY.md): a removed credential that kept the address keys can still tell
//! whether a content it guesses is stored, by its id; it cannot read anything sealed after the
//! rotation. A shred ends with a keyring made afresh ([`Keyring::fresh`]), once every live
//! object is named and sealed again under it.

use std::collections::{BTreeMap, HashSet};

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::derive;
use crate::epoch::ObjectKeys;
use crate::error::Error;
use crate::hex;
use crate::key::{AddressKey, FirstKey};
use crate::root::RootKey;
use crate::secret::Secret32;
use crate::wrap::{self, WRAPPED_32, WRAPPED_64};

/// Domain label of the address keys' associated data.
const ADDRESS_AAD: &[u8; 18] = b"memfs address keys";
/// Domain label of an epoch key's associated data.
const EPOCH_AAD: &[u8; 15] = b"memfs epoch key";

/// A store's keyring as stored: wrapped keys and the change counter. Nothing in it is secret
/// without the root; the whole of `memfs.keys` is authenticated with [`RootKey::mac`].
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "UncheckedKeyring")]
pub struct Keyring {
    counter: u64,
    #[serde(with = "hex::array")]
    address: [u8; WRAPPED_64],
    epochs: Vec<WrappedEpoch>,
}

#[derive(Clone, Serialize, Deserialize)]
struct WrappedEpoch {
    epoch: u32,
    #[serde(with = "hex::array")]
    key: [u8; WRAPPED_32],
}

/// The keys an unlocked store works with.
#[derive(Debug)]
pub struct StoreKeys {
    /// Names file contents.
    pub blob_address: AddressKey,
    /// Names directory pages, commits and policies.
    pub tree_address: AddressKey,
    /// Seals and opens objects.
    pub objects: ObjectKeys,
}

impl StoreKeys {
    /// Keys all from `master`, which is epoch 0's key: a new store's first keys, or an
    /// ephemeral store's only ones.
    pub fn from_master(master: &FirstKey) -> Self {
        StoreKeys {
            blob_address: master.address_key(),
            tree_address: master.tree_address_key(),
            objects: ObjectKeys::from_master(master),
        }
    }
}

impl Keyring {
    /// The most epochs a keyring holds: a rotation a day for 11 years. A keyring with more
    /// is refused when read; a rotation past it is refused too.
    pub const MAX_EPOCHS: usize = 4096;

    /// A keyring under `root` for store `store_id` whose epoch 0 and address keys are those of
    /// `master`, a new store's random key. Counter 1.
    pub fn new(root: &RootKey, store_id: &[u8; 16], master: &FirstKey) -> Result<Self, Error> {
        let keys = StoreKeys::from_master(master);
        Self::wrap_all(root, store_id, 1, &keys)
    }

    /// A keyring under `root` for store `store_id` that shares nothing with any other: fresh
    /// random address keys and one fresh random key for epoch `epoch`, with counter `counter`.
    /// Returns it and the keys it holds. For re-addressing (`memfs key shred`): objects named
    /// and sealed under these keys cannot be linked to, or opened with, any key of an older
    /// keyring.
    pub fn fresh(root: &RootKey, store_id: &[u8; 16], epoch: u32, counter: u64) -> Result<(Self, StoreKeys), Error> {
        let (blob, tree) = (Secret32::random()?, Secret32::random()?);
        let mut epochs = BTreeMap::new();
        epochs.insert(epoch, Secret32::random()?);
        let keys = StoreKeys {
            blob_address: AddressKey::from_slice(blob.expose()),
            tree_address: AddressKey::from_slice(tree.expose()),
            objects: ObjectKeys::new(epochs),
        };
        Ok((Self::wrap_all(root, store_id, counter, &keys)?, keys))
    }

    /// Unwraps every key with `root` (the caller has checked `memfs.keys`' tag with it).
    pub fn open(&self, root: &RootKey, store_id: &[u8; 16]) -> Result<StoreKeys, Error> {
        let address: Zeroizing<[u8; 64]> =
            wrap::unwrap(&address_wrap_key(root), &address_aad(store_id), &self.address)?;
        let mut epochs = BTreeMap::new();
        let wrap_key = epoch_wrap_key(root);
        for e in &self.epochs {
            let key: Zeroizing<[u8; 32]> = wrap::unwrap(&wrap_key, &epoch_aad(store_id, e.epoch), &e.key)?;
            epochs.insert(e.epoch, Secret32::new(*key));
        }
        let (blob, tree) = address.split_at(32);
        Ok(StoreKeys {
            blob_address: AddressKey::from_slice(blob),
            tree_address: AddressKey::from_slice(tree),
            objects: ObjectKeys::new(epochs),
        })
    }

    /// How many times `memfs.keys` has changed (1 when it was made).
    pub fn counter(&self) -> u64 {
        self.counter
    }

    /// Raises the counter: every change of `memfs.keys` does, so an older copy has a lower one.
    pub fn bump(&mut self) {
        self.counter = self.counter.saturating_add(1);
    }

    /// Starts a new epoch under a new root: a fresh random epoch key, newest, and every key
    /// (`keys`, the keyring opened with the old root) wrapped again under `new_root`. Whoever
    /// held only the old root can open nothing sealed from now on. Returns the new epoch.
    /// [`Error::TooManyEpochs`] past [`Keyring::MAX_EPOCHS`]. The counter is not raised here:
    /// the caller raises it once per write of `memfs.keys`.
    pub fn rotate(&mut self, keys: &StoreKeys, new_root: &RootKey, store_id: &[u8; 16]) -> Result<u32, Error> {
        if self.epochs.len() >= Self::MAX_EPOCHS {
            return Err(Error::TooManyEpochs);
        }
        let epoch = keys.objects.current_epoch().checked_add(1).ok_or(Error::TooManyEpochs)?;
        let mut epochs: BTreeMap<u32, Secret32> =
            keys.objects.epochs().filter_map(|e| keys.objects.key(e).map(|k| (e, Secret32::new(*k)))).collect();
        epochs.insert(epoch, Secret32::random()?);
        let rotated = StoreKeys {
            blob_address: keys.blob_address.clone(),
            tree_address: keys.tree_address.clone(),
            objects: ObjectKeys::new(epochs),
        };
        *self = Self::wrap_all(new_root, store_id, self.counter, &rotated)?;
        Ok(epoch)
    }

    /// Retires every epoch before `keep_from` and wraps what is left under `new_root`: the
    /// keys of the retired epochs are gone from this keyring, and a keyring read with another
    /// root (an older copy of `memfs.keys`) is the only place they remain. For crypto-erasure
    /// (`memfs key shred`), once every object is sealed under `keep_from` or later. The counter
    /// is not raised here. [`Error::Decrypt`] if no epoch would be left.
    pub fn retire(
        &mut self,
        keys: &StoreKeys,
        keep_from: u32,
        new_root: &RootKey,
        store_id: &[u8; 16],
    ) -> Result<(), Error> {
        let epochs: BTreeMap<u32, Secret32> = keys
            .objects
            .epochs()
            .filter(|e| *e >= keep_from)
            .filter_map(|e| keys.objects.key(e).map(|k| (e, Secret32::new(*k))))
            .collect();
        if epochs.is_empty() {
            return Err(Error::Decrypt);
        }
        let kept = StoreKeys {
            blob_address: keys.blob_address.clone(),
            tree_address: keys.tree_address.clone(),
            objects: ObjectKeys::new(epochs),
        };
        *self = Self::wrap_all(new_root, store_id, self.counter, &kept)?;
        Ok(())
    }

    /// Raises the counter to `counter` if it is lower.
    pub fn raise_counter(&mut self, counter: u64) {
        self.counter = self.counter.max(counter);
    }

    /// The epochs held, oldest first.
    pub fn epochs(&self) -> impl Iterator<Item = u32> + '_ {
        self.epochs.iter().map(|e| e.epoch)
    }

    /// `keys`, wrapped under `root` for `store_id`, with counter `counter`.
    fn wrap_all(root: &RootKey, store_id: &[u8; 16], counter: u64, keys: &StoreKeys) -> Result<Self, Error> {
        let mut address = Zeroizing::new([0u8; 64]);
        address[..32].copy_from_slice(keys.blob_address.expose());
        address[32..].copy_from_slice(keys.tree_address.expose());
        let address = wrap::wrap(&address_wrap_key(root), &address_aad(store_id), &address)?;
        let wrap_key = epoch_wrap_key(root);
        let mut epochs = Vec::new();
        for epoch in keys.objects.epochs() {
            let key = keys.objects.key(epoch).ok_or(Error::Decrypt)?;
            epochs.push(WrappedEpoch { epoch, key: wrap::wrap(&wrap_key, &epoch_aad(store_id, epoch), &key)? });
        }
        Ok(Keyring { counter, address, epochs })
    }
}

fn address_wrap_key(root: &RootKey) -> Zeroizing<[u8; 32]> {
    derive::subkey(derive::ADDRESS_WRAP_CONTEXT, root.expose())
}

fn epoch_wrap_key(root: &RootKey) -> Zeroizing<[u8; 32]> {
    derive::subkey(derive::EPOCH_WRAP_CONTEXT, root.expose())
}

/// `"memfs address keys" || store id`.
fn address_aad(store_id: &[u8; 16]) -> [u8; 34] {
    let mut aad = [0u8; 34];
    aad[..18].copy_from_slice(ADDRESS_AAD);
    aad[18..].copy_from_slice(store_id);
    aad
}

/// `"memfs epoch key" || store id || epoch (4, big-endian)`.
fn epoch_aad(store_id: &[u8; 16], epoch: u32) -> [u8; 35] {
    let mut aad = [0u8; 35];
    aad[..15].copy_from_slice(EPOCH_AAD);
    aad[15..31].copy_from_slice(store_id);
    aad[31..].copy_from_slice(&epoch.to_be_bytes());
    aad
}

/// [`Keyring`] as read, before checking that its epochs are 1 to [`Keyring::MAX_EPOCHS`],
/// distinct and in increasing order.
#[derive(Deserialize)]
struct UncheckedKeyring {
    counter: u64,
    #[serde(with = "hex::array")]
    address: [u8; WRAPPED_64],
    epochs: Vec<WrappedEpoch>,
}

impl TryFrom<UncheckedKeyring> for Keyring {
    type Error = String;

    fn try_from(u: UncheckedKeyring) -> Result<Self, Self::Error> {
        let UncheckedKeyring { counter, address, epochs } = u;
        if epochs.is_empty() || epochs.len() > Keyring::MAX_EPOCHS {
            return Err(format!("a keyring holds 1 to {} epochs, not {}", Keyring::MAX_EPOCHS, epochs.len()));
        }
        let mut seen = HashSet::new();
        if !epochs.windows(2).all(|w| w[0].epoch < w[1].epoch) || !epochs.iter().all(|e| seen.insert(e.epoch)) {
            return Err("a keyring's epochs must increase".into());
        }
        Ok(Keyring { counter, address, epochs })
    }
}

#[cfg(test)]
mod tests {
    use memfs_id::ObjectId;

    use super::*;
    use crate::seal::ObjectKind;

    #[test]
    fn a_keyring_opens_with_its_root_and_store_only() {
        let (root, master, store) = (RootKey::from_bytes([1; 32]), FirstKey::from_bytes([2; 32]), [3u8; 16]);
        let ring = Keyring::new(&root, &store, &master).unwrap();
        let json = serde_json::to_string(&ring).unwrap();
        let ring: Keyring = serde_json::from_str(&json).unwrap();
        assert_eq!(ring.counter(), 1);
        let keys = ring.open(&root, &store).unwrap();
        // The names and epoch 0 come from the first epoch key.
        assert_eq!(keys.blob_address.address(b"x"), master.address_key().address(b"x"));
        assert_eq!(keys.tree_address.address(b"x"), master.tree_address_key().address(b"x"));
        let id = ObjectId::from_bytes([4; 32]);
        let sealed = StoreKeys::from_master(&master).objects.seal(ObjectKind::Blob, &id, b"v").unwrap();
        assert_eq!(keys.objects.open(ObjectKind::Blob, &id, &sealed).unwrap(), b"v");
        assert!(matches!(ring.open(&RootKey::from_bytes([9; 32]), &store), Err(Error::Decrypt)));
        assert!(matches!(ring.open(&root, &[4; 16]), Err(Error::Decrypt)));
    }

    /// A rotation adds an epoch under a new root: the old epochs still open under it, the new
    /// one seals, and the old root opens only the keyring as it was.
    #[test]
    fn a_rotation_starts_an_epoch_the_old_root_never_held() {
        let (root, master, store) = (RootKey::from_bytes([1; 32]), FirstKey::from_bytes([2; 32]), [3u8; 16]);
        let mut ring = Keyring::new(&root, &store, &master).unwrap();
        let before = ring.clone();
        let keys = ring.open(&root, &store).unwrap();
        let id = ObjectId::from_bytes([4; 32]);
        let old = keys.objects.seal(ObjectKind::Blob, &id, b"old").unwrap();
        let new_root = RootKey::from_bytes([9; 32]);
        assert_eq!(ring.rotate(&keys, &new_root, &store).unwrap(), 1);
        assert_eq!(ring.epochs().collect::<Vec<_>>(), [0, 1]);
        assert_eq!(ring.counter(), 1, "raised by the caller, once per write");
        let rotated = ring.open(&new_root, &store).unwrap();
        assert_eq!(rotated.objects.current_epoch(), 1);
        assert_eq!(rotated.objects.open(ObjectKind::Blob, &id, &old).unwrap(), b"old");
        assert_eq!(rotated.blob_address.address(b"x"), keys.blob_address.address(b"x"), "names stay");
        let new = rotated.objects.seal(ObjectKind::Blob, &id, b"new").unwrap();
        assert!(matches!(ring.open(&root, &store), Err(Error::Decrypt)), "the old root opens nothing new");
        let stale = before.open(&root, &store).unwrap();
        assert!(matches!(stale.objects.open(ObjectKind::Blob, &id, &new), Err(Error::Decrypt)));
    }

    /// Retiring epochs leaves only the newer ones, under a new root: their objects open, the
    /// retired epochs' do not, and the previous root opens nothing of the new keyring.
    #[test]
    fn retired_epochs_are_gone_from_the_keyring() {
        let (root, master, store) = (RootKey::from_bytes([1; 32]), FirstKey::from_bytes([2; 32]), [3u8; 16]);
        let mut ring = Keyring::new(&root, &store, &master).unwrap();
        let keys = ring.open(&root, &store).unwrap();
        let id = ObjectId::from_bytes([4; 32]);
        let old = keys.objects.seal(ObjectKind::Blob, &id, b"old").unwrap();
        let second = RootKey::from_bytes([5; 32]);
        ring.rotate(&keys, &second, &store).unwrap();
        let keys = ring.open(&second, &store).unwrap();
        let new = keys.objects.seal(ObjectKind::Blob, &id, b"new").unwrap();
        let third = RootKey::from_bytes([6; 32]);
        ring.retire(&keys, 1, &third, &store).unwrap();
        assert_eq!(ring.epochs().collect::<Vec<_>>(), [1]);
        let left = ring.open(&third, &store).unwrap();
        assert_eq!(left.objects.open(ObjectKind::Blob, &id, &new).unwrap(), b"new");
        assert!(matches!(left.objects.open(ObjectKind::Blob, &id, &old), Err(Error::Decrypt)));
        assert!(matches!(ring.open(&second, &store), Err(Error::Decrypt)));
        assert!(matches!(ring.clone().retire(&left, 2, &third, &store), Err(Error::Decrypt)), "none left");
    }

    /// A fresh keyring shares no key with another: other names, and nothing of one opens under
    /// the other.
    #[test]
    fn a_fresh_keyring_shares_nothing() {
        let (root, master, store) = (RootKey::from_bytes([1; 32]), FirstKey::from_bytes([2; 32]), [3u8; 16]);
        let old = Keyring::new(&root, &store, &master).unwrap().open(&root, &store).unwrap();
        let new_root = RootKey::from_bytes([5; 32]);
        let (ring, keys) = Keyring::fresh(&new_root, &store, 4, 9).unwrap();
        assert_eq!((ring.counter(), ring.epochs().collect::<Vec<_>>()), (9, vec![4]));
        let opened = ring.open(&new_root, &store).unwrap();
        assert_eq!(opened.blob_address.address(b"x"), keys.blob_address.address(b"x"));
        assert_ne!(keys.blob_address.address(b"x"), old.blob_address.address(b"x"));
        assert_ne!(keys.tree_address.address(b"x"), old.tree_address.address(b"x"));
        assert_ne!(keys.blob_address.address(b"x"), keys.tree_address.address(b"x"));
        let id = ObjectId::from_bytes([4; 32]);
        let sealed = keys.objects.seal(ObjectKind::Blob, &id, b"new").unwrap();
        assert_eq!(opened.objects.open(ObjectKind::Blob, &id, &sealed).unwrap(), b"new");
        assert!(matches!(old.objects.open(ObjectKind::Blob, &id, &sealed), Err(Error::Decrypt)));
        assert!(matches!(ring.open(&root, &store), Err(Error::Decrypt)));
    }

    #[test]
    fn malformed_keyrings_are_refused() {
        let ring = Keyring::new(&RootKey::from_bytes([1; 32]), &[3; 16], &FirstKey::from_bytes([2; 32])).unwrap();
        let mut json: serde_json::Value = serde_json::to_value(&ring).unwrap();
        let epoch = json["epochs"][0].clone();
        json["epochs"] = serde_json::json!([epoch.clone(), epoch]);
        assert!(serde_json::from_value::<Keyring>(json.clone()).is_err());
        json["epochs"] = serde_json::json!([]);
        assert!(serde_json::from_value::<Keyring>(json).is_err());
    }
}
