//! Sealed objects: format v1.
//!
//! ```text
//! offset  length  field
//! 0       3       magic "MFS"
//! 3       1       format version, 1
//! 4       12      nonce, fresh from the OS RNG for every seal
//! 16      n       AES-256-GCM ciphertext of the n-byte plaintext
//! 16+n    16      GCM tag
//! ```
//!
//! The associated data, never stored, binds the object to where it belongs:
//!
//! ```text
//! "memfs object" (12 bytes) || version (1) || kind (1) || object id (32)
//! ```
//!
//! so an object moved to another id, or read as another kind, fails to open just as a modified
//! one does. The header bytes are authenticated too: magic and version through the check below
//! and the AAD, the nonce through GCM itself.

use std::fmt;

use memfs_core::ObjectId;
use zeroize::{ZeroizeOnDrop, Zeroizing};

use crate::aead::{self, Cipher, NONCE_LEN, TAG_LEN};
use crate::error::Error;

/// The first three bytes of every sealed object.
pub const MAGIC: [u8; 3] = *b"MFS";
/// The object format this build writes (and the only one it reads).
pub const FORMAT_VERSION: u8 = 1;
/// Bytes before the ciphertext: magic, version, nonce.
pub const HEADER_LEN: usize = MAGIC.len() + 1 + NONCE_LEN;
/// How many bytes sealing adds to a plaintext: the header and the tag.
pub const OVERHEAD: usize = HEADER_LEN + TAG_LEN;

/// Domain label that starts the associated data of every object.
const AAD_LABEL: &[u8; 12] = b"memfs object";

/// What an object is. Part of the associated data: a blob cannot be opened as a directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ObjectKind {
    /// File content.
    Blob = 1,
    /// A directory listing.
    Dir = 2,
    /// A commit.
    Commit = 3,
    /// The head pointer.
    Head = 4,
    /// A store's policy (format 3).
    Policy = 5,
}

impl ObjectKind {
    /// The kind with this byte, if any.
    pub fn from_u8(byte: u8) -> Option<Self> {
        match byte {
            1 => Some(ObjectKind::Blob),
            2 => Some(ObjectKind::Dir),
            3 => Some(ObjectKind::Commit),
            4 => Some(ObjectKind::Head),
            5 => Some(ObjectKind::Policy),
            _ => None,
        }
    }

    /// This kind's byte.
    pub fn to_u8(self) -> u8 {
        self as u8
    }
}

/// The key that seals and opens a store's objects, from [`MasterKey::object_key`].
///
/// Holds the expanded AES-256 key, wiped on drop. `Debug` prints no key material. Not `Clone`:
/// share it with an `Arc`.
///
/// ```
/// use memfs_core::ObjectId;
/// use memfs_crypt::{MasterKey, ObjectKind};
///
/// let master = MasterKey::generate()?;
/// let (names, key) = (master.address_key(), master.object_key());
/// let id = names.address(b"hello");
/// let sealed = key.seal(ObjectKind::Blob, &id, b"hello")?;
/// assert_eq!(key.open(ObjectKind::Blob, &id, &sealed)?, b"hello");
/// assert!(key.open(ObjectKind::Dir, &id, &sealed).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// [`MasterKey::object_key`]: crate::MasterKey::object_key
pub struct ObjectKey {
    cipher: Cipher,
}

// `Cipher` wipes itself on drop (aes-gcm's `zeroize` feature), and it is the only field.
impl ZeroizeOnDrop for ObjectKey {}

impl ObjectKey {
    /// Expands a derived key; the caller wipes `key`.
    pub(crate) fn new(key: &Zeroizing<[u8; 32]>) -> Self {
        ObjectKey { cipher: Cipher::new(key) }
    }

    /// Encrypts `plaintext` as object `id` of kind `kind`, under a fresh random nonce.
    ///
    /// Fails only if the OS RNG fails ([`Error::Random`]) or the plaintext is over 64 GiB
    /// ([`Error::TooLarge`]).
    pub fn seal(&self, kind: ObjectKind, id: &ObjectId, plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        self.seal_with_nonce(kind, id, plaintext, &aead::random_nonce()?)
    }

    /// [`seal`](Self::seal) with a given nonce: the format's fixed point, for tests.
    pub(crate) fn seal_with_nonce(
        &self,
        kind: ObjectKind,
        id: &ObjectId,
        plaintext: &[u8],
        nonce: &[u8; NONCE_LEN],
    ) -> Result<Vec<u8>, Error> {
        let mut out = Vec::with_capacity(plaintext.len() + OVERHEAD);
        out.extend_from_slice(&MAGIC);
        out.push(FORMAT_VERSION);
        out.extend_from_slice(nonce);
        aead::seal_into(&self.cipher, nonce, &associated_data(kind, id), plaintext, &mut out)?;
        Ok(out)
    }

    /// Decrypts and authenticates object `id` of kind `kind`.
    ///
    /// Any modification, truncation, swap, wrong kind, wrong id or wrong key gives the same
    /// [`Error::Decrypt`]. The one exception is an object whose magic matches but whose format
    /// version is unknown: [`Error::UnknownFormat`].
    pub fn open(&self, kind: ObjectKind, id: &ObjectId, sealed: &[u8]) -> Result<Vec<u8>, Error> {
        if let [m0, m1, m2, version, ..] = *sealed
            && [m0, m1, m2] == MAGIC
            && version != FORMAT_VERSION
        {
            return Err(Error::UnknownFormat { version });
        }
        if sealed.len() < OVERHEAD || sealed[..MAGIC.len()] != MAGIC {
            return Err(Error::Decrypt);
        }
        let (header, body) = sealed.split_at(HEADER_LEN);
        let nonce: &[u8; NONCE_LEN] = header[MAGIC.len() + 1..].try_into().map_err(|_| Error::Decrypt)?;
        let mut buf = body.to_vec();
        let len = aead::open_in_place(&self.cipher, nonce, &associated_data(kind, id), &mut buf)?;
        buf.truncate(len);
        Ok(buf)
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ObjectKey { cipher: _ } = self;
        f.debug_struct("ObjectKey").finish_non_exhaustive()
    }
}

/// `"memfs object" || version || kind || id`: 46 bytes, fixed length, so no field can run
/// into the next.
fn associated_data(kind: ObjectKind, id: &ObjectId) -> [u8; 46] {
    let mut aad = [0u8; 46];
    aad[..12].copy_from_slice(AAD_LABEL);
    aad[12] = FORMAT_VERSION;
    aad[13] = kind.to_u8();
    aad[14..].copy_from_slice(&id.to_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MasterKey, hex};

    fn key() -> ObjectKey {
        MasterKey::from_bytes([0x42; 32]).object_key()
    }

    /// Freezes format v1: a fixed key, nonce, kind, id and plaintext give these exact bytes.
    /// If this test changes, existing stores can no longer be read.
    #[test]
    fn format_v1_is_frozen() {
        let id = ObjectId::from_bytes([0x11; 32]);
        let sealed = key().seal_with_nonce(ObjectKind::Dir, &id, b"memfs", &[0x24; 12]).unwrap();
        assert_eq!(&sealed[..4], b"MFS\x01");
        assert_eq!(&sealed[4..16], &[0x24; 12]);
        assert_eq!(sealed.len(), 5 + OVERHEAD);
        assert_eq!(hex::encode(&sealed[16..]), FROZEN);
        assert_eq!(key().open(ObjectKind::Dir, &id, &sealed).unwrap(), b"memfs");
    }

    /// Ciphertext and tag, cross-checked with Python's `cryptography` (OpenSSL) AESGCM given the
    /// object key `e8c23fef…` (`derive::tests::FROZEN[1]`) and the associated data above.
    const FROZEN: &str = "8a027955a935dbc3ea74079f468c2510e9333b7f81";

    #[test]
    fn associated_data_layout() {
        let aad = associated_data(ObjectKind::Head, &ObjectId::from_bytes([0xee; 32]));
        assert_eq!(&aad[..14], b"memfs object\x01\x04");
        assert_eq!(aad[14..], [0xee; 32]);
    }

    #[test]
    fn kinds_round_trip_through_bytes() {
        for kind in [ObjectKind::Blob, ObjectKind::Dir, ObjectKind::Commit, ObjectKind::Head, ObjectKind::Policy] {
            assert_eq!(ObjectKind::from_u8(kind.to_u8()), Some(kind));
        }
        assert_eq!(ObjectKind::from_u8(0), None);
        assert_eq!(ObjectKind::from_u8(6), None);
        assert_eq!(ObjectKind::Blob.to_u8(), 1);
        assert_eq!(ObjectKind::Head.to_u8(), 4);
    }

    #[test]
    fn debug_is_redacted() {
        assert_eq!(format!("{:?}", key()), "ObjectKey { .. }");
    }
}
