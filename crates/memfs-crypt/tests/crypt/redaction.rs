//! No `Debug` output of a secret-bearing type shows the secret.

use memfs_crypt::{Credential, FirstKey, KeyFile, KeySlots, Keyring, RootKey, SecretString, StoreKeys};

use super::{cheap, store};

/// The renderings of `bytes` that a careless `Debug` would print.
fn renderings(bytes: &[u8]) -> Vec<String> {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    vec![
        hex.clone(),
        hex.to_uppercase(),
        format!("{bytes:?}"),
        format!("{:?}", &bytes[..4]).trim_end_matches(']').to_owned(),
    ]
}

fn assert_hides(debug: &str, bytes: &[u8]) {
    for r in renderings(bytes) {
        assert!(!debug.contains(&r), "{debug:?} contains {r:?}");
    }
}

#[test]
fn debug_prints_no_secrets() {
    let old = FirstKey::from_bytes([0xcd; 32]);
    assert_eq!(format!("{:?}", old.address_key()), "AddressKey { .. }");
    let master = RootKey::from_bytes([0xab; 32]);
    let keys = Keyring::new(&master, &store(), &old).unwrap().open(&master, &store()).unwrap();
    let debug = format!("{keys:?}");
    assert_eq!(
        debug,
        "StoreKeys { blob_address: AddressKey { .. }, tree_address: AddressKey { .. }, \
         objects: ObjectKeys { epochs: [0], current: 0, .. } }"
    );
    assert_hides(&debug, &[0xcd; 32]);
    assert_eq!(format!("{:?}", StoreKeys::from_master(&old).objects), "ObjectKeys { epochs: [0], current: 0, .. }");

    let file = KeyFile::from_bytes([0x5c; 32]);
    let debug = format!("{file:?}");
    assert_eq!(debug, "KeyFile(..)");
    assert_hides(&debug, &[0x5c; 32]);

    let credential = Credential::KeyFile(KeyFile::from_bytes([0x5c; 32]));
    assert_eq!(format!("{credential:?}"), "Credential::KeyFile(..)");
    let credential = Credential::Passphrase(SecretString::from("hunter2"));
    let debug = format!("{credential:?}");
    assert_eq!(debug, "Credential::Passphrase(..)");
    assert!(!debug.contains("hunter2"));
    assert!(!format!("{:?}", SecretString::from("hunter2")).contains("hunter2"));

    let mut slots = KeySlots::with_slot(&master, &store(), &Credential::Passphrase("hunter2".into()), cheap()).unwrap();
    slots.add_key_file_slot(&master, &store(), &file).unwrap();
    let debug = format!("{slots:?}");
    assert_eq!(debug, "KeySlots { slots: [(SlotId(1), Passphrase), (SlotId(2), KeyFile)] }");
    assert_hides(&debug, &[0xab; 32]);
}
