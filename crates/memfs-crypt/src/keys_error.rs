//! [`KeysError`]: why `memfs.keys` was refused, or a change to it was not made.
//!
//! The rules of [`Error`](enum@crate::Error) hold here too: what fails under a key is coarse
//! (a tag that does not verify is one "fails its authentication"), and nothing secret is
//! carried or printed. What is public (a version, a feature's name, a change counter) is
//! named, so the message can say what to do.

use thiserror::Error;

use crate::error::Error;

/// `memfs.keys` refused, or a change to it not made.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum KeysError {
    /// `memfs.keys` is malformed, or fails its tag.
    #[error("memfs.keys is corrupt: {reason}")]
    Corrupt {
        /// What is wrong.
        reason: String,
    },
    /// `memfs.keys` is of another format version than [`FORMAT_VERSION`](crate::FORMAT_VERSION):
    /// written by a later memfs, or by a pre-release one (whose formats were numbered 5 to 14;
    /// docs/FORMAT.md, "Versions").
    #[error(
        "the store uses format version {version}, and this memfs reads format version {} only: a store of a later \
         format needs a later memfs; one written by a memfs before 0.1.0 (versions 5 to 14) needs that memfs to \
         `memfs export` it, and then `memfs import` here",
        crate::FORMAT_VERSION
    )]
    UnsupportedFormat {
        /// The version found.
        version: u64,
    },
    /// `memfs.keys` requires features this memfs does not know ([`FEATURES`](crate::FEATURES)).
    #[error(
        "the store requires {}, which this memfs does not know: a later memfs reads it",
        features.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>().join(", ")
    )]
    UnsupportedFeature {
        /// The features named that this memfs does not know.
        features: Vec<String>,
    },
    /// `memfs.keys` is at a lower change counter than a head names: an older copy put back.
    #[error(
        "rollback detected: memfs.keys is at change {counter}, older than change {head} that the head names (an old copy of the key slots was put back?)"
    )]
    Rollback {
        /// The change counter of the `memfs.keys` served.
        counter: u64,
        /// The counter the head names.
        head: u64,
    },
    /// No `memfs.keys`: no store.
    #[error("no memfs.keys: no store here")]
    Missing,
    /// A `memfs.keys` already: a store is here.
    #[error("a memfs store already exists here")]
    Exists,
    /// The compare-and-swap cell holding `memfs.keys` was changed by another writer since it
    /// was read.
    #[error("memfs.keys changed meanwhile")]
    Conflict,
    /// The store was rotated, and this holder cannot follow: its slot was removed or re-keyed,
    /// it holds no slot secret, or the objects were named afresh.
    #[error("the store's keys were rotated since this client opened it: open it again")]
    Rotated,
    /// A change whose write failed or whose answer was lost, and which may have landed: the
    /// cell could not be read to know, or `memfs.keys` has changed again since. It must not be
    /// made again blindly.
    #[error(
        "the outcome is unknown: the change to the key slots may have landed (its answer was lost, and the store \
         could not be read long enough to know, or changed again since); `memfs key list` shows whether it is in"
    )]
    OutcomeUnknown,
    /// A shred would leave other slots, whose credentials, with the copies of `memfs.keys` the
    /// storage kept, would still open the keys it destroys.
    #[error(
        "key slots {} would still open the keys the shred destroys (with the copies of memfs.keys the storage kept): remove them too, or remove them first",
        crate::join_ids(slots)
    )]
    ShredLeavesSlots {
        /// Their ids.
        slots: Vec<crate::SlotId>,
    },
    /// A key operation failed.
    #[error(transparent)]
    Crypt(#[from] Error),
}

impl KeysError {
    /// [`KeysError::Corrupt`] for `reason`.
    pub(crate) fn corrupt(reason: impl ToString) -> Self {
        KeysError::Corrupt { reason: reason.to_string() }
    }
}
