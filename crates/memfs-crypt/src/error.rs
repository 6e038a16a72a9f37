//! Errors of `memfs-crypt`.
//!
//! Rules:
//!
//! 1. Cryptographic failures are coarse. Opening an object fails with one [`Error::Decrypt`]
//!    whatever went wrong: a flipped bit, a truncation, an object swapped for another or filed
//!    under another kind, a key from another store. Unlocking fails with one
//!    [`Error::WrongKey`]. Nothing here says which byte, tag or slot was wrong: an attacker
//!    probing a store learns nothing from the error but "no".
//! 2. The one distinction [`open`](crate::ObjectKeys::open) makes is [`Error::UnknownFormat`]:
//!    the magic bytes match but the format version is not one this build knows, so a store
//!    written by a newer memfs is recognised instead of being reported as corrupt. The version
//!    byte is public, so saying so leaks nothing.
//! 3. Errors about things that are not secret (a key file's path, a slot's id, the costs a
//!    slot asks for) carry them, so the message can say what to fix.
//! 4. I/O errors keep their `source`, in struct variants that name the path.
//! 5. No variant carries or prints key material, passphrases or plaintext.

use std::io;
use std::path::PathBuf;

use thiserror::Error;

use crate::slot_id::{SlotId, SlotKind};

/// A cryptographic operation failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system's random number generator failed.
    #[error("the system random number generator failed")]
    Random,

    /// An object could not be opened: it was modified, truncated, swapped for another object,
    /// opened as the wrong kind, or encrypted under another key. Deliberately no more precise.
    #[error("decryption failed: the object was modified, swapped or encrypted under another key")]
    Decrypt,

    /// An object starts with memfs's magic bytes but has a format version this build does not
    /// know (probably written by a newer memfs).
    #[error("unknown object format version {version}: written by a newer memfs?")]
    UnknownFormat {
        /// The version byte found.
        version: u8,
    },

    /// A plaintext is longer than AES-GCM can encrypt under one nonce (2^36 - 32 bytes).
    #[error("an object of {len} bytes is too large to encrypt")]
    TooLarge {
        /// The plaintext's length in bytes.
        len: usize,
    },

    /// No key slot of the credential's kind accepted it.
    #[error("wrong passphrase or key file")]
    WrongKey,

    /// The store has no key slot of the credential's kind.
    #[error("this store has no {kind} slot")]
    NoSlot {
        /// The kind of credential that was offered.
        kind: SlotKind,
    },

    /// A custodian was handed to an operation that needs the KEK it keeps: the store asks it
    /// first and passes on a [`Credential::Kek`](crate::Credential::Kek) (a mistake of the
    /// caller, not of the store).
    #[error("keys kept outside memfs are asked for through the store, not here")]
    Custodian,

    /// The store has no key slot kept outside memfs (keychain, KMS, age) of a kind the
    /// custodian opens.
    #[error("this store has no key slot kept in a keychain, a KMS or for an age identity that can be tried here")]
    NoCustodySlot,

    /// Every custody slot that was tried failed; each says why, in order.
    #[error("no key slot could be opened: {}", .failures.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    CustodyFailed {
        /// The slots tried, and why each did not open.
        failures: Vec<crate::CustodyFailure>,
    },

    /// A custodian could not make a new slot's key (its words: a refusal, a disabled key, an
    /// unreachable service).
    #[error("{0}")]
    Seal(#[from] crate::CustodyError),

    /// No key slot has this id.
    #[error("no key slot {id}")]
    NoSuchSlot {
        /// The id asked for.
        id: SlotId,
    },

    /// The slot exists but is of another kind than the operation needs.
    #[error("key slot {id} is a {kind} slot")]
    WrongSlotKind {
        /// The slot's id.
        id: SlotId,
        /// The slot's actual kind.
        kind: SlotKind,
    },

    /// Removing this slot would leave the credential that unlocked the change unable to
    /// unlock the store (the caller asked to be stopped there).
    #[error("key slot {slot} is the one your credential opens: without it that credential no longer unlocks the store")]
    OwnSlot {
        /// The slot's id.
        slot: u32,
    },

    /// A key slot's note (its label or host) that is too long or holds a control character.
    #[error("a key slot's {what} is refused: {reason}")]
    BadSlotNote {
        /// `label` or `host`.
        what: &'static str,
        /// Why.
        reason: &'static str,
    },

    /// Removing this slot would leave the store with no way to unlock it.
    #[error("refusing to remove the last key slot: the store could never be unlocked again")]
    LastSlot,

    /// `memfs.keys` does not carry the tag its root key gives it: it was changed by someone
    /// who does not hold the root (a slot added, a note or a counter edited, an epoch dropped).
    #[error("the key slots fail their authentication: memfs.keys was changed by someone without the store's key")]
    KeysTampered,

    /// The root a slot unwrapped is not one its holder confirmed, nor one that a chain of
    /// signatures leads to from one it confirmed: someone wrapped a root of their own to the
    /// slot's public key.
    #[error(
        "the key slots name a root key that this slot never confirmed and that no root it confirmed vouches for: memfs.keys was replaced by someone without the store's key"
    )]
    UntrustedRoot,

    /// A keyring holds [`Keyring::MAX_EPOCHS`](crate::Keyring::MAX_EPOCHS) epochs: no rotation
    /// is left (reseal the store and retire old epochs first).
    #[error("the keyring holds the most key epochs it can (4096): retire old ones before rotating again")]
    TooManyEpochs,

    /// The root key given does not belong to this set of key slots (it would wrap a key that
    /// cannot read the store).
    #[error("the root key does not belong to this store's key slots")]
    KeyMismatch,

    /// Argon2id costs outside the accepted range, whether asked for by the caller or read from
    /// a slot (a hostile header must not be able to demand gigabytes or hours).
    #[error(
        "Argon2id costs out of range (m = {m_cost} KiB, t = {t_cost}, p = {p_cost}); \
         accepted: 1 <= p <= 16, 8*p <= m <= 2097152 KiB, 1 <= t <= 64"
    )]
    KdfParams {
        /// Memory cost in KiB.
        m_cost: u32,
        /// Number of passes.
        t_cost: u32,
        /// Degree of parallelism.
        p_cost: u32,
    },

    /// A key slot set already holds [`KeySlots::MAX_SLOTS`](crate::KeySlots::MAX_SLOTS) slots:
    /// adding one more is refused (reading a set with more is refused as malformed).
    #[error("a store holds at most 16 key slots; remove one first (memfs key remove)")]
    TooManySlots,

    /// The passphrase slots, together, ask for more Argon2id work than
    /// [`KeySlots::MAX_UNLOCK_WORK_KIB`](crate::KeySlots::MAX_UNLOCK_WORK_KIB): refused
    /// before Argon2 runs, so a hostile `memfs.keys` cannot hold a CPU for hours.
    #[error(
        "the passphrase slots ask for {mib_passes} MiB x passes of Argon2id in all (memory times \
         passes, summed over the slots); at most 8192 are accepted"
    )]
    UnlockWork {
        /// The work asked for: memory in MiB (rounded up) times passes, summed over the slots.
        mib_passes: u64,
    },

    /// A key file that group or others may read or write: refused like a private key, since
    /// anyone who reads it holds the store.
    #[error(
        "key file {} can be read or written by others (mode {mode:04o}): it holds a key; run chmod 600 {}",
        path.display(),
        path.display()
    )]
    KeyFilePermissions {
        /// The key file's path.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },

    /// A key file could not be created, read, or does not hold a key.
    #[error("key file {}: {source}", path.display())]
    KeyFile {
        /// The key file's path.
        path: PathBuf,
        /// What went wrong; `InvalidData` when the content is not a key.
        source: io::Error,
    },
}
