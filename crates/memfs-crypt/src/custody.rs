//! Keys kept outside memfs: the OS keychain, a cloud KMS, an age identity.
//!
//! A custody slot is a key slot like the others (an X25519 key pair whose secret is sealed
//! under a key-encryption key, the root wrapped to its public key: see `slot.rs`), except that
//! its KEK is neither typed nor read from a file: a [`Custodian`] keeps it. The slot holds the
//! public half of the arrangement, a [`Custody`]: which outside key keeps the KEK, and the KEK
//! as that key wrapped it (a KMS ciphertext, an age file), or nothing when the outside store
//! holds the KEK itself (a keychain entry). Unlocking asks the custodian for the KEK of each
//! custody slot it can open, in order, and opens the slot with it ([`CustodyKek`]); making a
//! slot asks it for a fresh KEK and its custody ([`Custodian::seal`]).
//!
//! This crate does no I/O: the custodians (`memfs-custody`) talk to keychains and clouds, and
//! the store (`memfs-store`) calls them. Their errors ([`CustodyError`]) are text they chose
//! to show, never a key, a token or a plaintext.

use std::fmt;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::hex;
use crate::slot_id::SlotKind;

/// Where a custody slot's KEK is kept; public, stored in the slot.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Custody {
    /// The outside key: a keychain entry's name, a KMS key (ARN, alias, resource name or key
    /// URL), an age recipient. Shown by `memfs key list`.
    pub key: String,
    /// AWS KMS: the region the key was used in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The KEK as the outside key wrapped it; empty when the outside store holds the KEK
    /// itself (a keychain entry).
    #[serde(default, skip_serializing_if = "Vec::is_empty", with = "hex::vec", rename = "wrapped_kek")]
    pub wrapped: Vec<u8>,
}

impl Custody {
    /// The longest `key` or `region` accepted (a KMS key ARN is under 300 bytes).
    pub const MAX_NAME: usize = 2048;

    /// Why this custody is refused as read from a store: a name too long or with a control
    /// character (it is shown on terminals).
    pub(crate) fn check(&self) -> Result<(), &'static str> {
        let names = std::iter::once(self.key.as_str()).chain(self.region.as_deref());
        for name in names {
            if name.len() > Self::MAX_NAME {
                return Err("a key slot names an outside key longer than 2048 bytes");
            }
            if name.chars().any(char::is_control) {
                return Err("a key slot names an outside key with a control character");
            }
        }
        Ok(())
    }
}

impl fmt::Debug for Custody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Custody")
            .field("key", &self.key)
            .field("region", &self.region)
            .field("wrapped", &format_args!("{} bytes", self.wrapped.len()))
            .finish()
    }
}

/// A custody slot's KEK in hand: what unlocks the slot of that kind and custody, or makes a
/// new one. Zeroized on drop; `Debug` prints no key.
pub struct CustodyKek {
    /// The slot's kind (one of the custody kinds).
    pub kind: SlotKind,
    /// Its custody.
    pub custody: Custody,
    /// The KEK.
    pub kek: Zeroizing<[u8; 32]>,
}

impl fmt::Debug for CustodyKek {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CustodyKek").field("kind", &self.kind).field("custody", &self.custody).finish_non_exhaustive()
    }
}

/// Why a custodian could not give or keep a KEK: its own words, naming the cause (a refusal,
/// a disabled key, an unreachable service, no identity for the recipient), never a secret.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CustodyError(pub String);

/// Keeps KEKs outside memfs: one kind of outside store (or several), opening the slots it
/// can and making new ones.
#[async_trait]
pub trait Custodian: Send + Sync {
    /// Whether this custodian tries slots of `kind`; unlocking asks it only for those.
    fn opens(&self, kind: SlotKind) -> bool;

    /// Why this custodian would send nothing for a slot of `kind` with `custody` (it names an
    /// endpoint, region or key the local configuration does not allow), found without a
    /// request; `None` if it would try the slot. Unlocking names such slots when the key set
    /// they are in fails its authentication (a slot planted by whoever holds the storage).
    fn refuses(&self, kind: SlotKind, custody: &Custody) -> Option<CustodyError> {
        let _ = (kind, custody);
        None
    }

    /// The KEK kept for a slot of `kind` with `custody`, in store `store_id`.
    async fn open(
        &self,
        kind: SlotKind,
        custody: &Custody,
        store_id: &[u8; 16],
    ) -> Result<Zeroizing<[u8; 32]>, CustodyError>;

    /// A fresh KEK for a new slot of store `store_id`, kept by this custodian, with its kind
    /// and custody. A custodian that only opens refuses.
    async fn seal(&self, store_id: &[u8; 16]) -> Result<CustodyKek, CustodyError>;
}

/// One custody slot that did not open, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustodyFailure {
    /// The slot's id.
    pub slot: crate::SlotId,
    /// Its kind.
    pub kind: SlotKind,
    /// Its custodian's words, or why the KEK it gave did not open the slot.
    pub cause: String,
}

impl fmt::Display for CustodyFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "key slot {} ({}): {}", self.slot, self.kind, self.cause)
    }
}
