//! The root key of a format-7 store: what every key slot unwraps, and what wraps the store's
//! epoch keys and address keys and authenticates `memfs.keys` (docs/FORMAT.md, "Keys").
//!
//! A new root comes with every rotation (`memfs key rotate`): a credential whose slot was
//! removed before the rotation held the old root only, and the new one is wrapped to the
//! remaining slots' public keys, never to it.

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
}
