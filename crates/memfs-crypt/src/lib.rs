//! Cryptography for memfs.
//!
//! Today: the store's master key and the keyed content addressing every object name comes from.
//! The encrypted object format (AES-256-GCM), key slots and Argon2id arrive with the encrypted
//! store; they build on [`MasterKey`] and the labelled derivations in `derive.rs`.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod derive;
mod error;
mod key;

pub use error::Error;
pub use key::{AddressKey, MasterKey};
