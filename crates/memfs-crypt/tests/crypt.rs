//! Integration tests of `memfs-crypt`'s public API: one binary, one module per concept.

#[path = "crypt/keyfile.rs"]
mod keyfile;
#[path = "crypt/redaction.rs"]
mod redaction;
#[path = "crypt/seal.rs"]
mod seal;
#[path = "crypt/slots.rs"]
mod slots;

use memfs_crypt::{KdfParams, MasterKey};

/// Argon2id costs small enough for tests (8 KiB, one pass, one lane).
fn cheap() -> KdfParams {
    KdfParams::new(8, 1, 1).unwrap()
}

fn store() -> [u8; 16] {
    *b"store-id-0123456"
}

/// A fingerprint of a master key that needs no access to its bytes.
fn fingerprint(master: &MasterKey) -> String {
    master.address_key().address(b"x").to_hex()
}
