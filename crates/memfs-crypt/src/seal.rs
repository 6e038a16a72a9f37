//! Sealed objects: the envelope, versions 1 and 2.
//!
//! Version 2 (format 7 stores write it): every object is sealed under its own data key.
//!
//! ```text
//! offset  length  field
//! 0       3       magic "MFS"
//! 3       1       envelope version, 2
//! 4       4       key epoch (big-endian): which epoch key the data key comes from
//! 8       16      salt, fresh from the OS RNG for every seal
//! 24      n       AES-256-GCM ciphertext of the n-byte plaintext, nonce all zeros
//! 24+n    16      GCM tag
//! ```
//!
//! The data key is `BLAKE3 derive_key("memfs v7 2026-11-26 object data key", epoch key ||
//! salt)`. Each seal draws a new salt, so each data key encrypts exactly one plaintext, and one
//! fixed nonce is safe: no (key, nonce) pair is ever used twice unless two 128-bit salts
//! collide (after some 2^64 seals of one epoch), where random 96-bit nonces under one key were
//! safe to about 2^32 seals (NIST SP 800-38D §8.3).
//!
//! Version 1 (formats 2 to 6 wrote it, and it is still read): `MFS`, 1, a 12-byte random nonce,
//! ciphertext and tag, all under one key derived from the store's master key; in a format-7
//! store that master key is epoch 0's key.
//!
//! The associated data, never stored, binds the object to where it belongs:
//!
//! ```text
//! "memfs object" (12 bytes) || envelope version (1) || kind (1) || object id (32)
//! ```
//!
//! so an object moved to another id, or read as another kind, fails to open just as a modified
//! one does. The header bytes are authenticated too: magic and version through the check below
//! and the AAD, the epoch and salt because they choose the key, the nonce through GCM itself.

use std::fmt;

use memfs_core::ObjectId;
use zeroize::{ZeroizeOnDrop, Zeroizing};

use crate::aead::{self, Cipher, NONCE_LEN, TAG_LEN};
use crate::derive;
use crate::error::Error;

/// The first three bytes of every sealed object.
pub const MAGIC: [u8; 3] = *b"MFS";
/// The envelope version this build writes; it reads this one and version 1.
pub const FORMAT_VERSION: u8 = 2;
/// Bytes before the ciphertext: magic, version, epoch, salt.
pub const HEADER_LEN: usize = MAGIC.len() + 1 + 4 + SALT_LEN;
/// How many bytes sealing adds to a plaintext: the header and the tag.
pub const OVERHEAD: usize = HEADER_LEN + TAG_LEN;

/// How many bytes envelope version 1 (formats 2 to 6) added to a plaintext.
pub const OVERHEAD_V1: usize = V1_HEADER_LEN + TAG_LEN;

/// Envelope version 1 (formats 2 to 6).
const V1: u8 = 1;
/// Version 1's header: magic, version, nonce.
const V1_HEADER_LEN: usize = MAGIC.len() + 1 + NONCE_LEN;
/// Bytes of the per-object salt of version 2.
const SALT_LEN: usize = 16;
/// Version 2's nonce: each data key seals one plaintext (see the module's documentation).
const V2_NONCE: [u8; NONCE_LEN] = [0; NONCE_LEN];

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

/// An envelope-version-1 key (formats 2 to 6): one AES-256-GCM key for every object, from
/// [`MasterKey::object_key`]. A format-7 store opens its version-1 objects with epoch 0's (see
/// [`ObjectKeys`](crate::ObjectKeys)) and never writes version 1 again.
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

    /// Encrypts `plaintext` as object `id` of kind `kind` in envelope version 1, under a fresh
    /// random nonce: what formats 2 to 6 wrote (tests and fixtures build such objects).
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
        let mut out = Vec::with_capacity(plaintext.len() + V1_HEADER_LEN + TAG_LEN);
        out.extend_from_slice(&MAGIC);
        out.push(V1);
        out.extend_from_slice(nonce);
        aead::seal_into(&self.cipher, nonce, &associated_data(V1, kind, id), plaintext, &mut out)?;
        Ok(out)
    }

    /// Decrypts and authenticates version-1 object `id` of kind `kind`.
    ///
    /// Any modification, truncation, swap, wrong kind, wrong id or wrong key gives the same
    /// [`Error::Decrypt`]; so does a version-2 object. The one exception is an object whose
    /// magic matches but whose version is unknown: [`Error::UnknownFormat`].
    pub fn open(&self, kind: ObjectKind, id: &ObjectId, sealed: &[u8]) -> Result<Vec<u8>, Error> {
        match Envelope::parse(sealed)? {
            Envelope::V1 { nonce, body } => {
                let mut buf = body.to_vec();
                let len = aead::open_in_place(&self.cipher, nonce, &associated_data(V1, kind, id), &mut buf)?;
                buf.truncate(len);
                Ok(buf)
            }
            Envelope::V2 { .. } => Err(Error::Decrypt),
        }
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ObjectKey { cipher: _ } = self;
        f.debug_struct("ObjectKey").finish_non_exhaustive()
    }
}

/// A sealed object's header, parsed: which envelope, and what its key depends on.
pub(crate) enum Envelope<'a> {
    /// Version 1: one key for every object.
    V1 { nonce: &'a [u8; NONCE_LEN], body: &'a [u8] },
    /// Version 2: a data key per object, from an epoch key and a salt.
    V2 { epoch: u32, salt: &'a [u8; SALT_LEN], body: &'a [u8] },
}

impl<'a> Envelope<'a> {
    /// The header of `sealed`. [`Error::UnknownFormat`] for an object with memfs's magic and
    /// an unknown version; [`Error::Decrypt`] for anything else that is not an envelope.
    pub(crate) fn parse(sealed: &'a [u8]) -> Result<Self, Error> {
        let [m0, m1, m2, version, ..] = *sealed else { return Err(Error::Decrypt) };
        if [m0, m1, m2] != MAGIC {
            return Err(Error::Decrypt);
        }
        match version {
            V1 if sealed.len() >= V1_HEADER_LEN + TAG_LEN => {
                let (header, body) = sealed.split_at(V1_HEADER_LEN);
                let nonce = header[4..].try_into().map_err(|_| Error::Decrypt)?;
                Ok(Envelope::V1 { nonce, body })
            }
            FORMAT_VERSION if sealed.len() >= OVERHEAD => {
                let (header, body) = sealed.split_at(HEADER_LEN);
                let epoch = u32::from_be_bytes(header[4..8].try_into().map_err(|_| Error::Decrypt)?);
                let salt = header[8..].try_into().map_err(|_| Error::Decrypt)?;
                Ok(Envelope::V2 { epoch, salt, body })
            }
            V1 | FORMAT_VERSION => Err(Error::Decrypt),
            version => Err(Error::UnknownFormat { version }),
        }
    }
}

/// Seals `plaintext` as object `id` of kind `kind` in envelope version 2, under epoch `epoch`
/// whose key is `epoch_key`, with a fresh salt.
pub(crate) fn seal_v2(
    epoch: u32,
    epoch_key: &[u8; 32],
    kind: ObjectKind,
    id: &ObjectId,
    plaintext: &[u8],
) -> Result<Vec<u8>, Error> {
    let mut salt = [0u8; SALT_LEN];
    getrandom::fill(&mut salt).map_err(|_| Error::Random)?;
    seal_v2_with_salt(epoch, epoch_key, kind, id, plaintext, &salt)
}

/// [`seal_v2`] with a given salt: the format's fixed point, for tests.
pub(crate) fn seal_v2_with_salt(
    epoch: u32,
    epoch_key: &[u8; 32],
    kind: ObjectKind,
    id: &ObjectId,
    plaintext: &[u8],
    salt: &[u8; SALT_LEN],
) -> Result<Vec<u8>, Error> {
    let cipher = Cipher::new(&derive::derive(derive::DATA_CONTEXT, &[epoch_key, salt]));
    let mut out = Vec::with_capacity(plaintext.len() + OVERHEAD);
    out.extend_from_slice(&MAGIC);
    out.push(FORMAT_VERSION);
    out.extend_from_slice(&epoch.to_be_bytes());
    out.extend_from_slice(salt);
    aead::seal_into(&cipher, &V2_NONCE, &associated_data(FORMAT_VERSION, kind, id), plaintext, &mut out)?;
    Ok(out)
}

/// Opens a version-2 body sealed under `epoch_key` with `salt`.
pub(crate) fn open_v2(
    epoch_key: &[u8; 32],
    salt: &[u8; SALT_LEN],
    kind: ObjectKind,
    id: &ObjectId,
    body: &[u8],
) -> Result<Vec<u8>, Error> {
    let cipher = Cipher::new(&derive::derive(derive::DATA_CONTEXT, &[epoch_key, salt]));
    let mut buf = body.to_vec();
    let len = aead::open_in_place(&cipher, &V2_NONCE, &associated_data(FORMAT_VERSION, kind, id), &mut buf)?;
    buf.truncate(len);
    Ok(buf)
}

/// `"memfs object" || version || kind || id`: 46 bytes, fixed length, so no field can run
/// into the next.
fn associated_data(version: u8, kind: ObjectKind, id: &ObjectId) -> [u8; 46] {
    let mut aad = [0u8; 46];
    aad[..12].copy_from_slice(AAD_LABEL);
    aad[12] = version;
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
        assert_eq!(sealed.len(), 5 + V1_HEADER_LEN + TAG_LEN);
        assert_eq!(hex::encode(&sealed[16..]), FROZEN);
        assert_eq!(key().open(ObjectKind::Dir, &id, &sealed).unwrap(), b"memfs");
    }

    /// Ciphertext and tag, cross-checked with Python's `cryptography` (OpenSSL) AESGCM given the
    /// object key `e8c23fef…` (`derive::tests::FROZEN[1]`) and the associated data above.
    const FROZEN: &str = "8a027955a935dbc3ea74079f468c2510e9333b7f81";

    #[test]
    fn associated_data_layout() {
        let aad = associated_data(V1, ObjectKind::Head, &ObjectId::from_bytes([0xee; 32]));
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
