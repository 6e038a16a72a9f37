//! A store's first key and the keys derived from it.

use memfs_id::ObjectId;
use zeroize::ZeroizeOnDrop;

use crate::derive;
use crate::error::Error;
use crate::secret::Secret32;

/// A store's first 256-bit key, chosen at random when it is created: epoch 0's key and the
/// source of its address keys ([`Keyring::new`](crate::Keyring::new) wraps them under the
/// root; nothing stores this key itself). Zeroized on drop (`ZeroizeOnDrop`, no public `zeroize`); no
/// `Debug`, `Display`, `Clone` or `AsRef<[u8]>`.
pub struct FirstKey(Secret32);

impl FirstKey {
    /// A fresh random key from the operating system.
    pub fn generate() -> Result<Self, Error> {
        Secret32::random().map(FirstKey)
    }

    /// Takes ownership of key bytes; the caller should zeroize its own copy.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        FirstKey(Secret32::new(bytes))
    }

    /// The key that names content objects (blobs).
    pub fn address_key(&self) -> AddressKey {
        AddressKey(*derive::subkey(derive::ADDRESS_CONTEXT, self.0.expose()))
    }

    /// The key that names directories and commits: another key than blobs', so a file whose
    /// content equals a directory's serialization never shares that directory's id.
    pub fn tree_address_key(&self) -> AddressKey {
        AddressKey(*derive::subkey(derive::TREE_ADDRESS_CONTEXT, self.0.expose()))
    }

    /// The key bytes, for wrapping in a key slot and for derivations. Never leaves the crate.
    pub(crate) fn expose(&self) -> &[u8; 32] {
        self.0.expose()
    }
}

// Its one field zeroizes itself on drop.
impl ZeroizeOnDrop for FirstKey {}

/// Names objects by a keyed BLAKE3 hash of their plaintext: equal contents get equal names
/// within a store, and someone without the key cannot confirm a guessed content from a name.
#[derive(Clone, ZeroizeOnDrop)]
pub struct AddressKey([u8; 32]);

impl AddressKey {
    /// The id of `content`.
    pub fn address(&self, content: &[u8]) -> ObjectId {
        ObjectId::from_bytes(*blake3::keyed_hash(&self.0, content).as_bytes())
    }
}

impl AddressKey {
    /// A key copied from 32 bytes (the caller checked the length).
    pub(crate) fn from_slice(bytes: &[u8]) -> Self {
        let mut key = AddressKey([0; 32]);
        key.0.copy_from_slice(bytes);
        key
    }

    /// The key bytes, for wrapping under the root. Never leaves the crate.
    pub(crate) fn expose(&self) -> &[u8; 32] {
        &self.0
    }
}

impl std::fmt::Debug for AddressKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AddressKey").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_keyed_and_deterministic() {
        let a = FirstKey::from_bytes([1; 32]).address_key();
        let b = FirstKey::from_bytes([2; 32]).address_key();
        let trees = FirstKey::from_bytes([1; 32]).tree_address_key();
        assert_ne!(a.address(b"x"), trees.address(b"x"));
        assert_eq!(a.address(b"x"), a.address(b"x"));
        assert_ne!(a.address(b"x"), a.address(b"y"));
        assert_ne!(a.address(b"x"), b.address(b"x"));
        // Not the plain hash: the name does not confirm a guessed content.
        assert_ne!(a.address(b"x").to_bytes(), *blake3::hash(b"x").as_bytes());
    }

    #[test]
    fn generated_keys_differ() {
        let a = FirstKey::generate().unwrap();
        let b = FirstKey::generate().unwrap();
        assert_ne!(a.expose(), b.expose());
    }

    #[test]
    fn debug_does_not_print_key_material() {
        let k = FirstKey::from_bytes([0xab; 32]).address_key();
        let s = format!("{k:?}");
        assert_eq!(s, "AddressKey { .. }");
    }
}
