//! Sealed objects: round trips, and every modification fails.

use memfs_crypt::{Error, FirstKey, OVERHEAD, ObjectId, ObjectKeys, ObjectKind};
use proptest::prelude::*;

const KINDS: [ObjectKind; 4] = [ObjectKind::Blob, ObjectKind::Dir, ObjectKind::Commit, ObjectKind::Head];

fn key() -> ObjectKeys {
    ObjectKeys::from_master(&FirstKey::from_bytes([7; 32]))
}

fn id(b: u8) -> ObjectId {
    ObjectId::from_bytes([b; 32])
}

fn is_decrypt<T>(r: Result<T, Error>) -> bool {
    matches!(r, Err(Error::Decrypt))
}

#[test]
fn round_trips_every_kind_and_size() {
    let key = key();
    for kind in KINDS {
        for len in [0, 1, 15, 16, 17, 4096, 1 << 16] {
            let plaintext: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
            let sealed = key.seal(kind, &id(1), &plaintext).unwrap();
            assert_eq!(sealed.len(), plaintext.len() + OVERHEAD);
            assert_eq!(&sealed[..8], b"MFS\x02\0\0\0\0");
            assert_eq!(key.open(kind, &id(1), &sealed).unwrap(), plaintext, "{kind:?} {len}");
        }
    }
}

#[test]
fn another_key_from_the_same_master_opens_it() {
    let sealed = key().seal(ObjectKind::Blob, &id(1), b"data").unwrap();
    assert_eq!(key().open(ObjectKind::Blob, &id(1), &sealed).unwrap(), b"data");
}

#[test]
fn every_flipped_byte_fails() {
    let key = key();
    let sealed = key.seal(ObjectKind::Blob, &id(1), b"a memory worth keeping").unwrap();
    for i in 0..sealed.len() {
        for mask in [0x01, 0x80, 0xff] {
            let mut bad = sealed.clone();
            bad[i] ^= mask;
            let result = key.open(ObjectKind::Blob, &id(1), &bad);
            if i == 3 {
                // The version byte: the magic still matches, so a future format is recognised.
                assert!(matches!(result, Err(Error::UnknownFormat { version }) if version == 2 ^ mask), "{i}");
            } else {
                assert!(is_decrypt(result), "byte {i} ^ {mask:#x}");
            }
        }
    }
}

#[test]
fn every_truncation_and_extension_fails() {
    let key = key();
    let sealed = key.seal(ObjectKind::Dir, &id(1), b"entries").unwrap();
    for len in 0..sealed.len() {
        assert!(is_decrypt(key.open(ObjectKind::Dir, &id(1), &sealed[..len])), "{len}");
    }
    let mut longer = sealed.clone();
    longer.push(0);
    assert!(is_decrypt(key.open(ObjectKind::Dir, &id(1), &longer)));
    // Dropping a byte from the front or the middle.
    for i in 0..sealed.len() {
        let mut shorter = sealed.clone();
        shorter.remove(i);
        assert!(key.open(ObjectKind::Dir, &id(1), &shorter).is_err(), "{i}");
    }
}

#[test]
fn wrong_kind_id_or_key_fails() {
    let key = key();
    let sealed = key.seal(ObjectKind::Commit, &id(1), b"commit").unwrap();
    for kind in KINDS.into_iter().filter(|k| *k != ObjectKind::Commit) {
        assert!(is_decrypt(key.open(kind, &id(1), &sealed)), "{kind:?}");
    }
    let mut other = id(1).to_bytes();
    other[31] ^= 1;
    assert!(is_decrypt(key.open(ObjectKind::Commit, &ObjectId::from_bytes(other), &sealed)));
    let other_key = ObjectKeys::from_master(&FirstKey::from_bytes([8; 32]));
    assert!(is_decrypt(other_key.open(ObjectKind::Commit, &id(1), &sealed)));
}

#[test]
fn swapped_objects_fail() {
    // A store that answers the request for one id with another id's (authentic) object.
    let key = key();
    let a = key.seal(ObjectKind::Blob, &id(1), b"a").unwrap();
    let b = key.seal(ObjectKind::Blob, &id(2), b"b").unwrap();
    assert!(is_decrypt(key.open(ObjectKind::Blob, &id(1), &b)));
    assert!(is_decrypt(key.open(ObjectKind::Blob, &id(2), &a)));
}

#[test]
fn salts_are_fresh() {
    let key = key();
    let a = key.seal(ObjectKind::Blob, &id(1), b"same").unwrap();
    let b = key.seal(ObjectKind::Blob, &id(1), b"same").unwrap();
    assert_ne!(a[8..24], b[8..24]);
    assert_ne!(a[24..], b[24..]);
}

#[test]
fn unknown_versions_are_recognised_and_other_bytes_are_not() {
    let key = key();
    for version in [0, 1, 3, 255] {
        let object = [b"MFS".as_slice(), &[version], &[0; 40]].concat();
        assert!(
            matches!(key.open(ObjectKind::Blob, &id(1), &object), Err(Error::UnknownFormat { version: v }) if v == version)
        );
    }
    // Too short to be anything, or not ours: no claim about a format.
    for object in [
        &b""[..],
        b"MFS",
        b"MF",
        b"XYZ\x02aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
        b"mfs\x01aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    ] {
        assert!(is_decrypt(key.open(ObjectKind::Blob, &id(1), object)), "{object:?}");
    }
}

#[test]
fn error_wording() {
    assert_eq!(
        Error::Decrypt.to_string(),
        "decryption failed: the object was modified, swapped or encrypted under another key"
    );
    assert_eq!(
        Error::UnknownFormat { version: 2 }.to_string(),
        "unknown object format version 2: written by a newer memfs?"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn seal_open_round_trip(kind in 1u8..=4, id_bytes in any::<[u8; 32]>(), plaintext in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let kind = ObjectKind::from_u8(kind).unwrap();
        let id = ObjectId::from_bytes(id_bytes);
        let key = key();
        let sealed = key.seal(kind, &id, &plaintext).unwrap();
        prop_assert_eq!(key.open(kind, &id, &sealed).unwrap(), plaintext);
    }
}
