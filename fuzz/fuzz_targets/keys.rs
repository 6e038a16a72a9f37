//! `memfs.keys` as opening a store reads it, unlocked with the fixture store's key file (a
//! key-file slot runs no Argon2, and passphrase slots are skipped for a key file). What parses
//! encodes to JSON that encodes again the same; what unlocks names objects as the fixture's
//! keys do.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs_store::fuzzing::{open_keys, reencode_keys};

fuzz_target!(|data: &[u8]| {
    if let Ok(json) = reencode_keys(data) {
        assert_eq!(reencode_keys(&json).expect("encoded keys parse"), json);
    }
    if let Ok(keys) = open_keys(data, &memfs_fuzz::key_file()) {
        let probe = keys.tree_address.address(b"probe");
        let fixture = memfs_fuzz::store_keys().tree_address.address(b"probe");
        assert_eq!(probe, fixture, "a key file opened a stranger's key");
    }
});
