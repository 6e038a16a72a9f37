//! Key slots: unlocking, managing slots, the JSON format and hostile headers.

use std::time::{Duration, Instant};

use memfs_crypt::{Credential, Error, KeyFile, KeySlots, RootKey, SecretString, SlotId, SlotKind};
use serde_json::{Value, json};

use super::{cheap, fingerprint, store};

fn phrase(s: &str) -> Credential {
    Credential::Passphrase(SecretString::from(s))
}

fn key_file(b: u8) -> Credential {
    Credential::KeyFile(KeyFile::from_bytes([b; 32]))
}

/// A set with a passphrase slot ("open sesame", id 1) and a key-file slot ([5; 32], id 2).
fn two_slots(master: &RootKey) -> KeySlots {
    let mut slots =
        KeySlots::with_slot(master, &store(), &Credential::Passphrase("open sesame".into()), cheap()).unwrap();
    slots.add_key_file_slot(master, &store(), &KeyFile::from_bytes([5; 32])).unwrap();
    slots
}

fn json_of(slots: &KeySlots) -> Value {
    serde_json::to_value(slots).unwrap()
}

fn from_json(v: Value) -> KeySlots {
    serde_json::from_value(v).unwrap()
}

#[test]
fn right_credentials_unlock_the_same_master_key() {
    let master = RootKey::generate().unwrap();
    let slots = two_slots(&master);
    let (id, by_phrase) = crate::unlock_slot(&slots, &phrase("open sesame"), &store()).unwrap();
    assert_eq!(id, SlotId::new(1));
    assert_eq!(fingerprint(&by_phrase), fingerprint(&master));
    let (id, by_file) = crate::unlock_slot(&slots, &key_file(5), &store()).unwrap();
    assert_eq!(id, SlotId::new(2));
    assert_eq!(fingerprint(&by_file), fingerprint(&master));
    assert_eq!(
        slots.slots().collect::<Vec<_>>(),
        [(SlotId::new(1), SlotKind::Passphrase), (SlotId::new(2), SlotKind::KeyFile)]
    );
}

#[test]
fn wrong_credentials_are_wrong_key() {
    let slots = two_slots(&RootKey::generate().unwrap());
    for credential in [phrase("open sesame "), phrase(""), phrase("Open sesame"), key_file(6)] {
        assert!(matches!(slots.unlock(&credential, &store()), Err(Error::WrongKey)), "{credential:?}");
    }
    assert_eq!(Error::WrongKey.to_string(), "wrong passphrase or key file");
}

#[test]
fn a_credential_without_a_slot_of_its_kind() {
    let master = RootKey::generate().unwrap();
    let slots = KeySlots::with_slot(&master, &store(), &Credential::Passphrase("p".into()), cheap()).unwrap();
    let err = slots.unlock(&key_file(5), &store()).err().unwrap();
    assert!(matches!(err, Error::NoSlot { kind: SlotKind::KeyFile }));
    assert_eq!(err.to_string(), "this store has no key file slot");
}

#[test]
fn slots_are_bound_to_their_store() {
    let slots = two_slots(&RootKey::generate().unwrap());
    let elsewhere = [9u8; 16];
    assert!(matches!(slots.unlock(&phrase("open sesame"), &elsewhere), Err(Error::WrongKey)));
    assert!(matches!(slots.unlock(&key_file(5), &elsewhere), Err(Error::WrongKey)));
}

#[test]
fn json_round_trip_and_layout() {
    let master = RootKey::generate().unwrap();
    let slots = two_slots(&master);
    let v = json_of(&slots);
    assert_eq!(v["version"], 2);
    let hex_of = |v: &Value, len: usize| {
        let s = v.as_str().unwrap();
        s.len() == len && s.bytes().all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
    };
    assert!(hex_of(&v["key_check"], 64));
    let [p, f] = v["slots"].as_array().unwrap().as_slice() else { panic!("{v}") };
    assert_eq!(p["id"], 1);
    assert_eq!(p["kind"], "passphrase");
    assert_eq!(p["argon2id"], json!({"m_cost": 8, "t_cost": 1, "p_cost": 1}));
    assert!(hex_of(&p["salt"], 32) && hex_of(&p["nonce"], 24) && hex_of(&p["wrapped"], 96), "{p}");
    assert!(hex_of(&p["public"], 64) && hex_of(&p["root"], 184) && hex_of(&p["tag"], 64), "{p}");
    assert_eq!(p.as_object().unwrap().len(), 9);
    assert_eq!(f["id"], 2);
    assert_eq!(f["kind"], "key-file");
    assert!(hex_of(&f["nonce"], 24) && hex_of(&f["wrapped"], 96), "{f}");
    assert!(hex_of(&f["public"], 64) && hex_of(&f["root"], 184) && hex_of(&f["tag"], 64), "{f}");
    assert_eq!(f.as_object().unwrap().len(), 7);
    let [first] = v["roots"].as_array().unwrap().as_slice() else { panic!("{v}") };
    assert!(hex_of(&first["public"], 64) && first.as_object().unwrap().len() == 1, "{first}");

    let back = from_json(v.clone());
    assert_eq!(json_of(&back), v);
    assert_eq!(fingerprint(&back.unlock(&phrase("open sesame"), &store()).unwrap()), fingerprint(&master));
    assert_eq!(fingerprint(&back.unlock(&key_file(5), &store()).unwrap()), fingerprint(&master));
}

#[test]
fn malformed_json_is_refused() {
    let v = json_of(&two_slots(&RootKey::generate().unwrap()));
    let broken = |edit: &dyn Fn(&mut Value)| {
        let mut v = v.clone();
        edit(&mut v);
        serde_json::from_value::<KeySlots>(v)
    };
    let err = broken(&|v| v["version"] = json!(3)).unwrap_err();
    assert!(err.to_string().contains("unsupported key slot format version 3"), "{err}");
    // Version 1 was a pre-release form.
    let err = broken(&|v| v["version"] = json!(1)).unwrap_err();
    assert!(err.to_string().contains("unsupported key slot format version 1"), "{err}");
    // A public key without its root.
    assert!(
        broken(&|v| {
            v["slots"][0].as_object_mut().unwrap().remove("root");
        })
        .is_err()
    );
    assert!(broken(&|v| v["slots"] = json!([])).is_err());
    assert!(broken(&|v| v["slots"][1]["id"] = json!(1)).is_err());
    assert!(broken(&|v| v["slots"][0]["salt"] = json!("00")).is_err());
    assert!(broken(&|v| v["slots"][0]["nonce"] = json!("zz0000000000000000000000")).is_err());
    assert!(broken(&|v| v["slots"][0]["kind"] = json!("fingerprint")).is_err());
    assert!(broken(&|v| v["slots"][0]["argon2id"]["m_cost"] = json!(1u64 << 32)).is_err());
    assert!(broken(&|v| v["key_check"] = json!(null)).is_err());
}

#[test]
fn tampered_slots_do_not_unlock() {
    let master = RootKey::generate().unwrap();
    let v = json_of(&two_slots(&master));
    let tampered = |edit: &dyn Fn(&mut Value)| {
        let mut v = v.clone();
        edit(&mut v);
        from_json(v)
    };
    let flip = |s: &Value| {
        let mut s = s.as_str().unwrap().to_owned();
        let last = if s.ends_with('0') { "1" } else { "0" };
        s.replace_range(s.len() - 1.., last);
        json!(s)
    };
    for field in ["salt", "nonce", "wrapped"] {
        let slots = tampered(&|v| v["slots"][0][field] = flip(&v["slots"][0][field]));
        assert!(matches!(slots.unlock(&phrase("open sesame"), &store()), Err(Error::WrongKey)), "{field}");
    }
    for field in ["nonce", "wrapped"] {
        let slots = tampered(&|v| v["slots"][1][field] = flip(&v["slots"][1][field]));
        assert!(matches!(slots.unlock(&key_file(5), &store()), Err(Error::WrongKey)), "{field}");
    }
    // Other costs give another KEK.
    let slots = tampered(&|v| v["slots"][0]["argon2id"]["t_cost"] = json!(2));
    assert!(matches!(slots.unlock(&phrase("open sesame"), &store()), Err(Error::WrongKey)));
    // The id and the kind are in the associated data.
    let slots = tampered(&|v| v["slots"][1]["id"] = json!(7));
    assert!(matches!(slots.unlock(&key_file(5), &store()), Err(Error::WrongKey)));
    let slots = tampered(&|v| v["slots"][0]["kind"] = json!("key-file"));
    assert!(matches!(slots.unlock(&phrase("open sesame"), &store()), Err(Error::NoSlot { .. })));
    // The relabelled slot does not open with the key file; the real key-file slot does.
    assert_eq!(crate::unlock_slot(&slots, &key_file(5), &store()).unwrap().0, SlotId::new(2));
    // A slot from another set (another root) is authentic but gives a root that is not this
    // set's.
    let stranger = two_slots(&RootKey::generate().unwrap());
    let mixed = tampered(&|v| v["slots"][1] = json_of(&stranger)["slots"][1].clone());
    assert!(matches!(mixed.unlock(&key_file(5), &store()), Err(Error::UntrustedRoot)));
}

#[test]
fn hostile_costs_fail_fast() {
    let v = json_of(&two_slots(&RootKey::generate().unwrap()));
    for (m, t, p) in [(u32::MAX, 3, 4), (65536, 1_000_000, 4), (u32::MAX, u32::MAX, u32::MAX), (65536, 3, 64)] {
        let mut hostile = v.clone();
        hostile["slots"][0]["argon2id"] = json!({"m_cost": m, "t_cost": t, "p_cost": p});
        let slots = from_json(hostile);
        let start = Instant::now();
        let err = slots.unlock(&phrase("open sesame"), &store()).err().unwrap();
        assert!(start.elapsed() < Duration::from_millis(200), "{:?}", start.elapsed());
        assert!(
            matches!(err, Error::KdfParams { m_cost, t_cost, p_cost } if (m_cost, t_cost, p_cost) == (m, t, p)),
            "{err}"
        );
        // The key-file slot still works.
        assert!(slots.unlock(&key_file(5), &store()).is_ok());
    }
    assert_eq!(
        Error::KdfParams { m_cost: u32::MAX, t_cost: 3, p_cost: 4 }.to_string(),
        "Argon2id costs out of range (m = 4294967295 KiB, t = 3, p = 4); \
         accepted: 1 <= p <= 16, 8*p <= m <= 2097152 KiB, 1 <= t <= 64"
    );
}

#[test]
fn removing_slots() {
    let master = RootKey::generate().unwrap();
    let mut slots = two_slots(&master);
    assert!(matches!(slots.remove_slot(SlotId::new(9)), Err(Error::NoSuchSlot { id }) if id == SlotId::new(9)));
    slots.remove_slot(SlotId::new(1)).unwrap();
    assert!(matches!(
        slots.unlock(&phrase("open sesame"), &store()),
        Err(Error::NoSlot { kind: SlotKind::Passphrase })
    ));
    assert!(slots.unlock(&key_file(5), &store()).is_ok());
    let err = slots.remove_slot(SlotId::new(2)).unwrap_err();
    assert!(matches!(err, Error::LastSlot));
    assert_eq!(err.to_string(), "refusing to remove the last key slot: the store could never be unlocked again");
    assert!(slots.unlock(&key_file(5), &store()).is_ok());
}

#[test]
fn changing_the_passphrase_keeps_the_master_key() {
    let master = RootKey::generate().unwrap();
    let mut slots = two_slots(&master);
    let before = serde_json::to_string(&slots).unwrap();
    let (id, unlocked) = crate::unlock_slot(&slots, &phrase("open sesame"), &store()).unwrap();
    slots.change_passphrase(&unlocked, &store(), id, &"new phrase".into(), cheap()).unwrap();
    assert!(matches!(slots.unlock(&phrase("open sesame"), &store()), Err(Error::WrongKey)));
    let (same_id, after) = crate::unlock_slot(&slots, &phrase("new phrase"), &store()).unwrap();
    assert_eq!(same_id, id);
    assert_eq!(fingerprint(&after), fingerprint(&master));
    assert_eq!(fingerprint(&slots.unlock(&key_file(5), &store()).unwrap()), fingerprint(&master));
    // Fresh salt and nonce: nothing of the old slot is reused.
    let (old, new) = (serde_json::from_str::<Value>(&before).unwrap(), json_of(&slots));
    for field in ["salt", "nonce", "wrapped"] {
        assert_ne!(old["slots"][0][field], new["slots"][0][field], "{field}");
    }
    assert_eq!(old["slots"][1], new["slots"][1]);
    assert_eq!(old["key_check"], new["key_check"]);

    let err = slots.change_passphrase(&master, &store(), SlotId::new(2), &"x".into(), cheap()).unwrap_err();
    assert!(matches!(err, Error::WrongSlotKind { kind: SlotKind::KeyFile, .. }));
    assert_eq!(err.to_string(), "key slot 2 is a key file slot");
    assert!(matches!(
        slots.change_passphrase(&master, &store(), SlotId::new(3), &"x".into(), cheap()),
        Err(Error::NoSuchSlot { .. })
    ));
}

#[test]
fn slots_only_ever_wrap_the_sets_own_key() {
    let master = RootKey::generate().unwrap();
    let mut slots = two_slots(&master);
    let stranger = RootKey::generate().unwrap();
    assert!(matches!(
        slots.add_slot(&stranger, &store(), &Credential::Passphrase("p".into()), cheap()),
        Err(Error::KeyMismatch)
    ));
    assert!(matches!(
        slots.add_key_file_slot(&stranger, &store(), &KeyFile::from_bytes([1; 32])),
        Err(Error::KeyMismatch)
    ));
    assert!(matches!(
        slots.change_passphrase(&stranger, &store(), SlotId::new(1), &"p".into(), cheap()),
        Err(Error::KeyMismatch)
    ));
    assert_eq!(slots.slots().len(), 2);
    assert!(slots.unlock(&phrase("open sesame"), &store()).is_ok());
}

#[test]
fn several_passphrase_slots() {
    let master = RootKey::generate().unwrap();
    let mut slots = KeySlots::with_slot(&master, &store(), &Credential::Passphrase("first".into()), cheap()).unwrap();
    let second = slots.add_slot(&master, &store(), &Credential::Passphrase("second".into()), cheap()).unwrap();
    assert_eq!(second, SlotId::new(2));
    assert_eq!(crate::unlock_slot(&slots, &phrase("first"), &store()).unwrap().0, SlotId::new(1));
    assert_eq!(crate::unlock_slot(&slots, &phrase("second"), &store()).unwrap().0, second);
    assert!(matches!(slots.unlock(&phrase("third"), &store()), Err(Error::WrongKey)));
}

#[test]
fn the_same_passphrase_twice_gives_different_slots() {
    let master = RootKey::generate().unwrap();
    let mut slots = KeySlots::with_slot(&master, &store(), &Credential::Passphrase("p".into()), cheap()).unwrap();
    slots.add_slot(&master, &store(), &Credential::Passphrase("p".into()), cheap()).unwrap();
    let v = json_of(&slots);
    assert_ne!(v["slots"][0]["salt"], v["slots"][1]["salt"]);
    assert_ne!(v["slots"][0]["wrapped"], v["slots"][1]["wrapped"]);
}

#[test]
fn credential_generic_constructors() {
    let master = RootKey::generate().unwrap();
    let by_phrase = Credential::passphrase(String::from("open sesame"));
    let mut slots = KeySlots::with_slot(&master, &store(), &by_phrase, cheap()).unwrap();
    let id = slots.add_slot(&master, &store(), &key_file(5), cheap()).unwrap();
    assert_eq!(id, SlotId::new(2));
    assert_eq!(crate::unlock_slot(&slots, &by_phrase, &store()).unwrap().0, SlotId::new(1));
    assert_eq!(crate::unlock_slot(&slots, &key_file(5), &store()).unwrap().0, SlotId::new(2));
    let file_first = KeySlots::with_slot(&master, &store(), &key_file(5), cheap()).unwrap();
    assert_eq!(file_first.slots().collect::<Vec<_>>(), [(SlotId::new(1), SlotKind::KeyFile)]);
}
