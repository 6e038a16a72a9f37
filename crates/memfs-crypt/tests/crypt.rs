//! Integration tests of `memfs-crypt`'s public API: one binary, one module per concept.

#[path = "crypt/keyfile.rs"]
mod keyfile;
#[path = "crypt/redaction.rs"]
mod redaction;
#[path = "crypt/seal.rs"]
mod seal;
#[path = "crypt/slots.rs"]
mod slots;

use memfs_crypt::{Credential, Error, FirstKey, KdfParams, KeySlots, Opened, RootKey, SlotId};

/// Argon2id costs small enough for tests (8 KiB, one pass, one lane).
fn cheap() -> KdfParams {
    KdfParams::new(8, 1, 1).unwrap()
}

fn store() -> [u8; 16] {
    *b"store-id-0123456"
}

/// A fingerprint of a key that needs no access to its bytes.
trait Fingerprint {
    fn fingerprint(&self) -> String;
}

impl Fingerprint for FirstKey {
    fn fingerprint(&self) -> String {
        self.address_key().address(b"x").to_hex()
    }
}

impl Fingerprint for RootKey {
    fn fingerprint(&self) -> String {
        self.mac(b"x").iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl Fingerprint for Opened {
    fn fingerprint(&self) -> String {
        self.root().fingerprint()
    }
}

fn fingerprint(key: &impl Fingerprint) -> String {
    key.fingerprint()
}

/// The slot `credential` opens and the root it unlocks.
fn unlock_slot(slots: &KeySlots, credential: &Credential, store: &[u8; 16]) -> Result<(SlotId, RootKey), Error> {
    let opened = slots.unlock(credential, store)?;
    Ok((opened.slot(), opened.into_root()))
}
