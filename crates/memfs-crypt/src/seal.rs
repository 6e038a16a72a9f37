//! Sealed objects: the envelope (version 2, the only one).
//!
//! Every object is sealed under its own data key.
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
//! The associated data, never stored, binds the object to where it belongs:
//!
//! ```text
//! "memfs object" (12 bytes) || envelope version (1) || kind (1) || object id (32)
//! ```
//!
//! so an object moved to another id, or read as another kind, fails to open just as a modified
//! one does. The header bytes are authenticated too: magic and version through the check below
//! and the AAD, the epoch and salt because they choose the key, the nonce through GCM itself.

use memfs_id::ObjectId;

use crate::aead::{self, Cipher, NONCE_LEN, TAG_LEN};
use crate::derive;
use crate::error::Error;

/// The first three bytes of every sealed object.
pub const MAGIC: [u8; 3] = *b"MFS";
/// The envelope version: the fourth byte of every sealed object. (Versions before 2 belong
/// to pre-release stores and are refused like any unknown version.)
pub const ENVELOPE_VERSION: u8 = 2;
/// Bytes before the ciphertext: magic, version, epoch, salt.
pub const HEADER_LEN: usize = MAGIC.len() + 1 + 4 + SALT_LEN;
/// How many bytes sealing adds to a plaintext: the header and the tag.
pub const OVERHEAD: usize = HEADER_LEN + TAG_LEN;

/// Bytes of the per-object salt.
const SALT_LEN: usize = 16;
/// The nonce: each data key seals one plaintext (see the module's documentation).
const NONCE: [u8; NONCE_LEN] = [0; NONCE_LEN];

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
    /// A store's policy.
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

/// A sealed object's header, parsed: what its data key depends on, and the rest.
pub(crate) struct Envelope<'a> {
    /// The epoch whose key the data key comes from.
    pub(crate) epoch: u32,
    pub(crate) salt: &'a [u8; SALT_LEN],
    /// Ciphertext and tag.
    pub(crate) body: &'a [u8],
}

impl<'a> Envelope<'a> {
    /// The header of `sealed`. [`Error::UnknownFormat`] for an object with memfs's magic and
    /// another version; [`Error::Decrypt`] for anything else that is not an envelope.
    pub(crate) fn parse(sealed: &'a [u8]) -> Result<Self, Error> {
        let [m0, m1, m2, version, ..] = *sealed else { return Err(Error::Decrypt) };
        if [m0, m1, m2] != MAGIC {
            return Err(Error::Decrypt);
        }
        if version != ENVELOPE_VERSION {
            return Err(Error::UnknownFormat { version });
        }
        if sealed.len() < OVERHEAD {
            return Err(Error::Decrypt);
        }
        let (header, body) = sealed.split_at(HEADER_LEN);
        let epoch = u32::from_be_bytes(header[4..8].try_into().map_err(|_| Error::Decrypt)?);
        let salt = header[8..].try_into().map_err(|_| Error::Decrypt)?;
        Ok(Envelope { epoch, salt, body })
    }
}

/// Seals `plaintext` as object `id` of kind `kind` under epoch `epoch`
/// whose key is `epoch_key`, with a fresh salt.
pub(crate) fn seal(
    epoch: u32,
    epoch_key: &[u8; 32],
    kind: ObjectKind,
    id: &ObjectId,
    plaintext: &[u8],
) -> Result<Vec<u8>, Error> {
    let mut salt = [0u8; SALT_LEN];
    getrandom::fill(&mut salt).map_err(|_| Error::Random)?;
    seal_with_salt(epoch, epoch_key, kind, id, plaintext, &salt)
}

/// [`seal`] with a given salt: the format's fixed point, for tests.
pub(crate) fn seal_with_salt(
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
    out.push(ENVELOPE_VERSION);
    out.extend_from_slice(&epoch.to_be_bytes());
    out.extend_from_slice(salt);
    aead::seal_into(&cipher, &NONCE, &associated_data(kind, id), plaintext, &mut out)?;
    Ok(out)
}

/// Opens a body sealed under `epoch_key` with `salt`.
pub(crate) fn open(
    epoch_key: &[u8; 32],
    salt: &[u8; SALT_LEN],
    kind: ObjectKind,
    id: &ObjectId,
    body: &[u8],
) -> Result<Vec<u8>, Error> {
    let cipher = Cipher::new(&derive::derive(derive::DATA_CONTEXT, &[epoch_key, salt]));
    let mut buf = body.to_vec();
    let len = aead::open_in_place(&cipher, &NONCE, &associated_data(kind, id), &mut buf)?;
    buf.truncate(len);
    Ok(buf)
}

/// `"memfs object" || envelope version || kind || id`: 46 bytes, fixed length, so no field
/// can run into the next.
fn associated_data(kind: ObjectKind, id: &ObjectId) -> [u8; 46] {
    let mut aad = [0u8; 46];
    aad[..12].copy_from_slice(AAD_LABEL);
    aad[12] = ENVELOPE_VERSION;
    aad[13] = kind.to_u8();
    aad[14..].copy_from_slice(&id.to_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hex;

    /// Freezes the envelope: a fixed epoch key, epoch, salt, kind, id and plaintext give these
    /// exact bytes. If this test changes, existing stores can no longer be read.
    #[test]
    fn the_envelope_is_frozen() {
        let id = ObjectId::from_bytes([0x11; 32]);
        let sealed = seal_with_salt(7, &[0x42; 32], ObjectKind::Dir, &id, b"memfs", &[0x24; 16]).unwrap();
        assert_eq!(&sealed[..8], b"MFS\x02\x00\x00\x00\x07");
        assert_eq!(&sealed[8..24], &[0x24; 16]);
        assert_eq!(sealed.len(), 5 + OVERHEAD);
        assert_eq!(hex::encode(&sealed[24..]), FROZEN);
        let envelope = Envelope::parse(&sealed).unwrap();
        assert_eq!(open(&[0x42; 32], envelope.salt, ObjectKind::Dir, &id, envelope.body).unwrap(), b"memfs");
    }

    /// Ciphertext and tag, cross-checked with Python's `cryptography` (OpenSSL) AESGCM, given
    /// the data key (BLAKE3 derive_key of the context, epoch key and salt) and the associated
    /// data below, with an all-zero nonce.
    const FROZEN: &str = "3ffd88f376ba9c058e90e0da701978d0f88a8a879a";

    #[test]
    fn associated_data_layout() {
        let aad = associated_data(ObjectKind::Head, &ObjectId::from_bytes([0xee; 32]));
        assert_eq!(&aad[..14], b"memfs object\x02\x04");
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

    /// Every version but 2 is an unknown format, the pre-release 1 included; a short version-2
    /// object is a decryption failure like any damage.
    #[test]
    fn other_versions_are_unknown() {
        for version in [0u8, 1, 3, 255] {
            let mut sealed = vec![b'M', b'F', b'S', version];
            sealed.resize(OVERHEAD + 4, 0);
            assert!(matches!(Envelope::parse(&sealed), Err(Error::UnknownFormat { version: v }) if v == version));
        }
        assert!(matches!(Envelope::parse(b"MFS\x02\x00"), Err(Error::Decrypt)));
        assert!(matches!(Envelope::parse(b"MFT\x02"), Err(Error::Decrypt)));
    }
}
