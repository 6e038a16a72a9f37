//! [`ObjectId`], the name of a stored object: the one type the pure core (`memfs-core`, whose
//! tree refers to contents by id) and the cryptography (`memfs-crypt`, whose address keys make
//! ids and whose envelope binds a sealed object to its id) share, in a crate of its own so
//! that neither depends on the other. The crates map is `crates/README.md`.
//!
//! ```
//! use memfs_id::ObjectId;
//!
//! let id = ObjectId::from_bytes([0xab; 32]);
//! assert_eq!(id.to_hex(), "ab".repeat(32));
//! assert_eq!(format!("{id:?}"), "ObjectId(abababababababab)");
//! assert_eq!(ObjectId::from_bytes(id.to_bytes()), id);
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

use std::fmt;

use serde::{Deserialize, Serialize};

/// The name of a stored object: 32 bytes, in practice a keyed BLAKE3 hash of the plaintext.
///
/// Ids are not secrets, but they are not exposed as `AsRef<[u8]>` either: comparing them is
/// the store's business.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ObjectId([u8; 32]);

impl ObjectId {
    /// Wraps 32 bytes.
    pub const fn from_bytes(bytes: [u8; 32]) -> Self {
        ObjectId(bytes)
    }

    /// The raw bytes.
    pub const fn to_bytes(self) -> [u8; 32] {
        self.0
    }

    /// Lower-case hex, 64 characters.
    pub fn to_hex(&self) -> String {
        // Into a buffer at once: `hex::encode` collects its characters one by one, which
        // counted for a measurable part of every object read.
        let mut hex = [0u8; 64];
        hex::encode_to_slice(self.0, &mut hex).expect("32 bytes are 64 hex digits");
        String::from_utf8(hex.to_vec()).expect("hex digits are ASCII")
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({})", &self.to_hex()[..16])
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}
