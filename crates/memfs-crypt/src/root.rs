//! The root key of a store: what every key slot unwraps, and what wraps the store's
//! epoch keys and address keys and authenticates `memfs.keys` (docs/FORMAT.md, "Keys").
//!
//! A new root comes with every rotation (`memfs key rotate`): a credential whose slot was
//! removed before the rotation held the old root only, and the new one is wrapped to the
//! remaining slots' public keys, never to it.

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use zeroize::ZeroizeOnDrop;

use crate::derive;
use crate::error::Error;
use crate::secret::Secret32;

/// A store's 256-bit root key. Zeroized on drop; no `Debug`, `Display`, `Clone` or
/// `AsRef<[u8]>`.
pub struct RootKey(Secret32);

// Its one field zeroizes itself on drop.
impl ZeroizeOnDrop for RootKey {}

impl RootKey {
    /// A fresh random root from the operating system.
    pub fn generate() -> Result<Self, Error> {
        Secret32::random().map(RootKey)
    }

    /// Takes ownership of key bytes (tests); the caller should zeroize its own copy.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        RootKey(Secret32::new(bytes))
    }

    /// The key bytes, for wrapping and derivations. Never leaves the crate.
    pub(crate) fn expose(&self) -> &[u8; 32] {
        self.0.expose()
    }

    /// The Ed25519 key this root signs the next root with (wiped on drop).
    fn signing_key(&self) -> SigningKey {
        SigningKey::from_bytes(&derive::subkey(derive::ROOT_SIGN_CONTEXT, self.expose()))
    }

    /// This root's public key: how a chain of roots names it.
    pub fn public(&self) -> [u8; 32] {
        self.signing_key().verifying_key().to_bytes()
    }

    /// This root's signature that `next` (a root's public key) is link `index` of store
    /// `store_id`'s chain of roots, after it.
    pub(crate) fn vouch(&self, next: &[u8; 32], store_id: &[u8; 16], index: u32) -> [u8; 64] {
        self.signing_key().sign(&vouch_message(next, store_id, index)).to_bytes()
    }

    /// The public check value of this root: a PRF output, so it reveals nothing about it.
    pub(crate) fn check(&self) -> blake3::Hash {
        blake3::Hash::from(*derive::subkey(derive::ROOT_CHECK_CONTEXT, self.expose()))
    }

    /// The authentication tag of `body` (the bytes of `memfs.keys` without its tag): keyed
    /// BLAKE3 under a key derived from this root. Whoever lacks the root cannot make one.
    pub fn mac(&self, body: &[u8]) -> [u8; 32] {
        let key = derive::subkey(derive::KEYS_MAC_CONTEXT, self.expose());
        *blake3::keyed_hash(&key, body).as_bytes()
    }

    /// Whether `tag` is [`mac`](Self::mac) of `body`, in constant time (`blake3::Hash`
    /// equality). [`Error::KeysTampered`] otherwise.
    pub fn verify(&self, body: &[u8], tag: &[u8; 32]) -> Result<(), Error> {
        if blake3::Hash::from(self.mac(body)) == blake3::Hash::from(*tag) { Ok(()) } else { Err(Error::KeysTampered) }
    }
}

/// Whether `signature` is the signature, by the root whose public key is `previous`, that
/// `next` is link `index` of store `store_id`'s chain (strict Ed25519 verification).
pub(crate) fn vouched(
    previous: &[u8; 32],
    next: &[u8; 32],
    store_id: &[u8; 16],
    index: u32,
    signature: &[u8; 64],
) -> bool {
    let Ok(key) = VerifyingKey::from_bytes(previous) else { return false };
    key.verify_strict(&vouch_message(next, store_id, index), &Signature::from_bytes(signature)).is_ok()
}

/// `"memfs root vouch" || store id || index (4, big-endian) || next`: 68 bytes.
fn vouch_message(next: &[u8; 32], store_id: &[u8; 16], index: u32) -> [u8; 68] {
    let mut message = [0u8; 68];
    message[..16].copy_from_slice(b"memfs root vouch");
    message[16..32].copy_from_slice(store_id);
    message[32..36].copy_from_slice(&index.to_be_bytes());
    message[36..].copy_from_slice(next);
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_depend_on_the_root_and_the_body() {
        let (a, b) = (RootKey::from_bytes([1; 32]), RootKey::from_bytes([2; 32]));
        let tag = a.mac(b"body");
        assert!(a.verify(b"body", &tag).is_ok());
        assert!(matches!(a.verify(b"bodz", &tag), Err(Error::KeysTampered)));
        assert!(matches!(b.verify(b"body", &tag), Err(Error::KeysTampered)));
        assert_ne!(a.check(), b.check());
    }

    #[test]
    fn a_root_vouches_for_the_next_and_nobody_else_can() {
        let (a, b, c) = (RootKey::from_bytes([1; 32]), RootKey::from_bytes([2; 32]), RootKey::from_bytes([3; 32]));
        let store = [7; 16];
        let signature = a.vouch(&b.public(), &store, 1);
        assert!(vouched(&a.public(), &b.public(), &store, 1, &signature));
        assert!(!vouched(&a.public(), &c.public(), &store, 1, &signature), "another root");
        assert!(!vouched(&a.public(), &b.public(), &store, 2, &signature), "another place");
        assert!(!vouched(&a.public(), &b.public(), &[8; 16], 1, &signature), "another store");
        let forged = c.vouch(&b.public(), &store, 1);
        assert!(!vouched(&a.public(), &b.public(), &store, 1, &forged), "signed by another root");
    }
}
