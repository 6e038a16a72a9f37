//! Cryptography for memfs: the key hierarchy (docs/FORMAT.md, "Keys").
//!
//! ```text
//! credential ─▶ slot (X25519 key pair) ─▶ RootKey ─▶ address keys (name objects)
//!                                                 └─▶ epoch keys ─▶ one data key per object
//! ```
//!
//! - [`KeySlots`]: one slot per [`Credential`] (a passphrase through Argon2id with bounded
//!   [`KdfParams`], or a [`KeyFile`]); each holds an X25519 key pair and the [`RootKey`]
//!   wrapped to it, so a new root can reach every slot without their credentials;
//! - [`RootKey`]: unwraps the [`Keyring`] and authenticates `memfs.keys` ([`RootKey::mac`]);
//! - [`Keyring`]: the address keys and the epoch keys wrapped under the root, and the
//!   counter that every change of `memfs.keys` raises; [`Keyring::open`] gives the
//!   [`StoreKeys`] a store works with;
//! - [`KeyStore`]: `memfs.keys` ([`KeysObject`]) read and written through the compare-and-swap
//!   [`KeysCell`] the caller gives it, its only I/O; unlocked, a [`KeySet`] makes each change
//!   by its rules, and an open store's [`OpenKeys`] follow rotations;
//! - [`AddressKey`]: names objects by a keyed BLAKE3 hash of their plaintext (one key for
//!   blobs, another for directories and commits);
//! - [`ObjectKeys`]: seals each object under its own data key, derived from the newest epoch
//!   key and a fresh salt (the envelope: [`MAGIC`], [`ENVELOPE_VERSION`], epoch, salt,
//!   ciphertext, tag), binding it to its [`ObjectKind`] and [`ObjectId`],
//!   and opens objects of every epoch it holds;
//! - [`Error`]: coarse on purpose: "decryption failed", "wrong passphrase or key file".
//!
//! ```
//! use memfs_crypt::{Credential, KdfParams, KeySlots, Keyring, FirstKey, ObjectKind, RootKey};
//!
//! // Creating a store: a random root, epoch key and store id.
//! let store = [0x5a; 16];
//! let (root, epoch0) = (RootKey::generate()?, FirstKey::generate()?);
//! let params = KdfParams::new(8, 1, 1)?; // a real store uses KdfParams::DEFAULT
//! let slots = KeySlots::with_slot(&root, &store, &Credential::Passphrase("correct horse".into()), params)?;
//! let keyring = Keyring::new(&root, &store, &epoch0)?;
//!
//! // Writing an object.
//! let keys = keyring.open(&root, &store)?;
//! let id = keys.blob_address.address(b"# notes\n");
//! let sealed = keys.objects.seal(ObjectKind::Blob, &id, b"# notes\n")?;
//!
//! // Opening the store again and reading it back.
//! let opened = slots.unlock(&Credential::Passphrase("correct horse".into()), &store)?;
//! let keys = keyring.open(opened.root(), &store)?;
//! assert_eq!(keys.objects.open(ObjectKind::Blob, &id, &sealed)?, b"# notes\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

//! # Modules
//! The workspace's module map: `crates/README.md`.
//!
//! - `aead`: AES-256-GCM behind two thin functions that sealed objects, slots and wrapped keys
//!   share;
//! - `credential`: [`Credential`], what the user offers to unlock a store;
//! - `custody`: [`Custodian`], what keeps a slot's key outside memfs (a keychain, a KMS, an
//!   age identity), and the [`Custody`] a slot records of it;
//! - `derive`: every key derivation in one place: labelled BLAKE3 contexts, Argon2id
//!   ([`KdfParams`]);
//! - `epoch`: [`ObjectKeys`], the epoch keys that seal and open objects;
//! - `error`: [`Error`] and the crate's error rules (coarse where a secret is involved);
//! - `hex`: lower-case hex for key-slot JSON, and a constant-time decoder;
//! - `key`: [`FirstKey`] (a new store's first key: epoch 0 and the address keys) and
//!   [`AddressKey`];
//! - `keyfile`: [`KeyFile`], 32 random bytes in a file (raw or hex);
//! - `key_set`: [`KeySet`], `memfs.keys` unlocked, and the rules of each change to it
//!   (confirmation, slot removal, rotation, shred);
//! - `key_store`: [`KeyStore`], `memfs.keys` read and written through the compare-and-swap
//!   cell it is given, its only I/O;
//! - `keyring`: [`Keyring`] and [`StoreKeys`], what the root unwraps;
//! - `keys_cell`: [`KeysCell`], the compare-and-swap cell that holds `memfs.keys` (the
//!   caller's storage), and [`Swap`], what a swap did;
//! - `keys_error`: [`KeysError`], why `memfs.keys` was refused or a change to it not made;
//! - `keys_object`: [`KeysObject`], `memfs.keys` itself: its form, how it is parsed, and the
//!   tag under the root that authenticates it ([`tag_body`]);
//! - `open_keys`: [`OpenKeys`], the keys of an open store, following rotations by its slot's
//!   secret, and refusing a `memfs.keys` rolled back;
//! - `root`: [`RootKey`], and the tag that authenticates `memfs.keys`;
//! - `seal`: the sealed-object envelope ([`ObjectKind`], [`MAGIC`]);
//! - `secret`: 32 secret bytes zeroized on drop, the body of every key;
//! - `slot`: one key slot: where its KEK comes from, its X25519 key pair wrapped under it,
//!   the root wrapped to its public key, its holder's confirmation of a root;
//! - `slot_set`: [`KeySlots`], every slot of a store as `memfs.keys` holds them, and the bounds
//!   on what they may ask of the machine (slots, Argon2id work);
//! - `slot_unlock`: opening a slot ([`Opened`], [`SlotSecret`]) and the chain of roots a slot
//!   trusts (rotation, confirmation);
//! - `slot_id`: [`SlotId`] and [`SlotKind`], a slot's name (a leaf: errors and credentials
//!   name slots without depending on the slot set);
//! - `slot_note`: [`SlotNote`], a slot's label, creation time and host, shown to people
//!   (authenticated with the rest of `memfs.keys`);
//! - `unique_members`: JSON with no member name repeated in one object, for `memfs.keys` (its
//!   tag covers the object as parsed);
//! - `wrap`: a key wrapped under another, with associated data.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod aead;
mod credential;
mod custody;
mod derive;
mod epoch;
mod error;
mod hex;
mod key;
mod key_set;
mod key_store;
mod keyfile;
mod keyring;
mod keys_cell;
mod keys_error;
mod keys_object;
mod open_keys;
mod root;
mod seal;
mod secret;
mod slot;
mod slot_id;
mod slot_note;
mod slot_set;
mod slot_unlock;
mod unique_members;
mod wrap;

pub use credential::Credential;
pub use custody::{Custodian, Custody, CustodyError, CustodyFailure, CustodyKek};
pub use derive::KdfParams;
pub use epoch::ObjectKeys;
pub use error::Error;
pub use key::{AddressKey, FirstKey};
pub use key_set::{KeySet, ShredPlan};
pub use key_store::KeyStore;
pub use keyfile::KeyFile;
pub use keyring::{Keyring, StoreKeys};
pub use keys_cell::{KeysCell, Swap};
pub use keys_error::KeysError;
pub use keys_object::{Confirmation, FEATURES, FORMAT_VERSION, KeysObject, decode_store_id, tag_body};
pub use memfs_id::ObjectId;
pub use open_keys::{OpenKeys, Refresh};
pub use root::RootKey;
pub use seal::{ENVELOPE_VERSION, HEADER_LEN, MAGIC, OVERHEAD, ObjectKind};
pub use secrecy::SecretString;
pub use slot_id::{SlotId, SlotKind, join as join_ids};
pub use slot_note::SlotNote;
pub use slot_set::KeySlots;
pub use slot_unlock::{Opened, SlotSecret};
