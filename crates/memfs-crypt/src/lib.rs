//! Cryptography for memfs, format v1.
//!
//! - [`MasterKey`]: a store's random 256-bit key. Every other key is derived from it with
//!   labelled BLAKE3 `derive_key` contexts (all in `derive.rs`);
//! - [`AddressKey`]: names objects by a keyed BLAKE3 hash of their plaintext (one key for
//!   blobs, another for directories and commits);
//! - [`ObjectKey`]: seals and opens objects with AES-256-GCM, binding each to its
//!   [`ObjectKind`] and [`ObjectId`](memfs_core::ObjectId) (layout: [`MAGIC`], version byte
//!   [`FORMAT_VERSION`], 12-byte nonce, ciphertext, 16-byte tag);
//! - [`KeySlots`]: the master key wrapped once per [`Credential`], a passphrase (Argon2id with
//!   bounded [`KdfParams`]) or a [`KeyFile`], and bound to the store's 16-byte random id;
//! - [`Error`]: coarse on purpose: "decryption failed", "wrong passphrase or key file".
//!
//! ```
//! use memfs_crypt::{Credential, KdfParams, KeySlots, MasterKey, ObjectKind};
//!
//! // Creating a store: a random master key and a random 16-byte store id.
//! let store = [0x5a; 16];
//! let master = MasterKey::generate()?;
//! let params = KdfParams::new(8, 1, 1)?; // a real store uses KdfParams::DEFAULT
//! let slots = KeySlots::with_slot(&master, &store, &Credential::Passphrase("correct horse".into()), params)?;
//!
//! // Writing an object.
//! let id = master.address_key().address(b"# notes\n");
//! let sealed = master.object_key().seal(ObjectKind::Blob, &id, b"# notes\n")?;
//!
//! // Opening the store again and reading it back.
//! let master = slots.unlock(&Credential::Passphrase("correct horse".into()), &store)?;
//! assert_eq!(master.object_key().open(ObjectKind::Blob, &id, &sealed)?, b"# notes\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

//! # Modules
//!
//! - `aead`: AES-256-GCM behind two thin functions that sealed objects and key slots share;
//! - `credential`: [`Credential`], what the user offers to unlock a store;
//! - `derive`: every key derivation in one place: labelled BLAKE3 contexts, Argon2id
//!   ([`KdfParams`]);
//! - `error`: [`Error`] and the crate's error rules (coarse where a secret is involved);
//! - `hex`: lower-case hex for key-slot JSON, and a constant-time decoder;
//! - `key`: [`MasterKey`] and the keys derived from it ([`AddressKey`]);
//! - `keyfile`: [`KeyFile`], 32 random bytes in a file (raw or hex);
//! - `seal`: [`ObjectKey`] and the sealed-object layout ([`ObjectKind`], [`MAGIC`]);
//! - `secret`: 32 secret bytes zeroized on drop, the body of a master key and of a key file;
//! - `slot`: [`KeySlots`], the master key wrapped once per credential, bounded work;
//! - `slot_id`: [`SlotId`] and [`SlotKind`], a slot's name (a leaf: errors and credentials
//!   name slots without depending on the slot set);
//! - `slot_note`: [`SlotNote`], a slot's label, creation time and host, shown to people and
//!   not authenticated.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod aead;
mod credential;
mod derive;
mod error;
mod hex;
mod key;
mod keyfile;
mod seal;
mod secret;
mod slot;
mod slot_id;
mod slot_note;

pub use credential::Credential;
pub use derive::KdfParams;
pub use error::Error;
pub use key::{AddressKey, MasterKey};
pub use keyfile::KeyFile;
pub use seal::{FORMAT_VERSION, HEADER_LEN, MAGIC, OVERHEAD, ObjectKey, ObjectKind};
pub use secrecy::SecretString;
pub use slot::KeySlots;
pub use slot_id::{SlotId, SlotKind};
pub use slot_note::SlotNote;
