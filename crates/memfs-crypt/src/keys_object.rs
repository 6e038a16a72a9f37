//! `memfs.keys`, the key object: its form, how it is read, and the tag that authenticates it.
//!
//! docs/FORMAT.md, "`memfs.keys`": beside the key slots, the keyring (the address and epoch
//! keys wrapped under the root, and a change counter) and `mac`, a tag under the root over
//! everything else ([`tag_body`]). The tag is checked as soon as a slot has given the root, so
//! a change made by anyone without the root (a slot added or put back, a note or the counter
//! edited, an epoch dropped) is refused before anything is read.

use serde::{Deserialize, Serialize};

use crate::hex;
use crate::keys_error::KeysError;
use crate::unique_members::UniqueMembers;
use crate::{KeySlots, Keyring, RootKey};

/// The on-storage format this code writes (and the one it reads).
pub const FORMAT_VERSION: u64 = 1;

/// The features of format 1 this code knows, by the names `memfs.keys` lists in `requires`
/// (docs/FORMAT.md, "Versions"). A later memfs adds a feature an older reader must not skip
/// by naming it there; format 1 itself defines none.
pub const FEATURES: &[&str] = &[];

/// The mark `memfs.keys` carries while a slot's confirmation is written and not yet recorded
/// in a commit (the store that wrote it makes that commit, then clears the mark).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The slot that confirmed the root.
    pub slot: u32,
    /// `memfs.keys`' change counter once the confirmation is written: a head naming it (or a
    /// later one) comes after the commit that records it.
    pub counter: u64,
}

/// The unsealed key object, `memfs.keys`.
///
/// Fields this memfs does not know are skipped (a later writer's additions), and covered by
/// the tag all the same ([`tag_body`]); what a reader must not skip, a writer names in
/// `requires`.
#[derive(Serialize, Deserialize)]
pub struct KeysObject {
    format: String,
    version: u64,
    /// The features a reader must know to read the store (docs/FORMAT.md, "Versions"): format
    /// 1 defines none, so a reader of it refuses a store that names any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    requires: Vec<String>,
    /// Random, chosen at creation: 32 lowercase hex digits, and no other spelling (the key
    /// slots bind the bytes, and the rollback state is named by this string).
    store_id: String,
    /// The key slots.
    pub(crate) slots: KeySlots,
    /// The keys the root unwraps, and the change counter.
    pub(crate) keyring: Keyring,
    /// A slot's confirmation written here whose commit is not made yet. The open that wrote
    /// it makes the commit, then clears this; if it was stopped between the two, the next open
    /// does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unrecorded: Option<Confirmation>,
    /// The tag of everything else under the root (64 hex digits), over [`tag_body`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mac: Option<String>,
    /// The bytes the tag covers, as read ([`KeysObject::parse`]): the object as stored, fields
    /// this memfs skipped included. `None` once changed here ([`KeysObject::seal`]).
    #[serde(skip)]
    stored_body: Option<Vec<u8>>,
}

/// The bytes `memfs.keys`' tag covers: `value` (the object as stored, parsed) without its
/// `mac`, as compact JSON with the members of every object in byte order of their names.
/// Everything stored is covered, fields a reader does not know included, and a reader gets the
/// writer's bytes from what it parsed, whatever order or spacing the file has.
pub fn tag_body(mut value: serde_json::Value) -> Vec<u8> {
    if let serde_json::Value::Object(members) = &mut value {
        members.remove("mac");
    }
    serde_json::to_vec(&sorted(value)).expect("JSON values serialize")
}

/// `value` with the members of every object inserted in byte order of their names (the order
/// `serde_json` then writes them in, whether or not its `preserve_order` feature is on).
fn sorted(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::Object(members) => {
            let mut members: Vec<(String, Value)> = members.into_iter().collect();
            members.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(members.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// The store id's bytes. Only the canonical spelling is accepted (32 lowercase hex digits, as
/// a new store writes it): the key slots bind the bytes, but the rollback state and the disk
/// cache are named by the string, so a second spelling of the same bytes would be a second
/// store to the client, with nothing remembered (issue 14, V1).
pub fn decode_store_id(hex_id: &str) -> Result<[u8; 16], KeysError> {
    let mut id = [0u8; 16];
    let canonical = hex_id.len() == 32 && hex_id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if !canonical || !hex::decode_into(hex_id.as_bytes(), &mut id) {
        return Err(KeysError::corrupt("its store id is not 32 lowercase hex digits"));
    }
    Ok(id)
}

impl KeysObject {
    /// The key slots.
    pub fn slots(&self) -> &KeySlots {
        &self.slots
    }

    /// The keys the root unwraps, and the change counter.
    pub fn keyring(&self) -> &Keyring {
        &self.keyring
    }

    /// A slot's confirmation written here whose commit is not made yet.
    pub fn unrecorded(&self) -> Option<Confirmation> {
        self.unrecorded
    }

    /// A new key object, sealed under `root`.
    pub fn new(store_id: &[u8; 16], slots: KeySlots, keyring: Keyring, root: &RootKey) -> Self {
        let mut keys = KeysObject {
            format: "memfs".into(),
            version: FORMAT_VERSION,
            requires: Vec::new(),
            store_id: hex::encode(store_id),
            slots,
            keyring,
            unrecorded: None,
            mac: None,
            stored_body: None,
        };
        keys.seal(root);
        keys
    }

    /// Parses `memfs.keys`, refusing a member repeated in one object, another format or
    /// version, or a feature this memfs does not know ([`KeysError::UnsupportedFeature`]).
    pub fn parse(bytes: &[u8]) -> Result<KeysObject, KeysError> {
        #[derive(Deserialize)]
        struct Version {
            format: String,
            version: u64,
            #[serde(default)]
            requires: Vec<String>,
        }
        serde_json::from_slice::<UniqueMembers>(bytes).map_err(KeysError::corrupt)?;
        let value: serde_json::Value = serde_json::from_slice(bytes).map_err(KeysError::corrupt)?;
        let v: Version = Version::deserialize(&value).map_err(KeysError::corrupt)?;
        if v.format != "memfs" {
            return Err(KeysError::corrupt("not a memfs key file"));
        }
        if v.version != FORMAT_VERSION {
            return Err(KeysError::UnsupportedFormat { version: v.version });
        }
        let unknown: Vec<String> = v.requires.into_iter().filter(|f| !FEATURES.contains(&f.as_str())).collect();
        if !unknown.is_empty() {
            return Err(KeysError::UnsupportedFeature { features: unknown });
        }
        let mut keys = KeysObject::deserialize(&value).map_err(KeysError::corrupt)?;
        keys.stored_body = Some(tag_body(value));
        Ok(keys)
    }

    /// The store id as stored (canonical once [`KeysObject::store_id_bytes`] accepts it).
    pub fn store_id(&self) -> &str {
        &self.store_id
    }

    /// The store id's bytes ([`decode_store_id`]).
    pub fn store_id_bytes(&self) -> Result<[u8; 16], KeysError> {
        decode_store_id(&self.store_id)
    }

    /// The bytes the tag covers: as read, or, once changed here, this object's own.
    fn body(&self) -> Vec<u8> {
        match &self.stored_body {
            Some(body) => body.clone(),
            None => tag_body(serde_json::to_value(self).expect("key slots serialize")),
        }
    }

    /// Sets the tag under `root`, over this object as it is now.
    pub fn seal(&mut self, root: &RootKey) {
        self.stored_body = None;
        self.mac = Some(hex::encode(&root.mac(&self.body())));
    }

    /// [`KeysError::Corrupt`] unless `root` gives this object's tag.
    pub fn authenticate(&self, root: &RootKey) -> Result<(), KeysError> {
        let mut tag = [0u8; 32];
        let ok = self.mac.as_deref().is_some_and(|m| hex::decode_into(m.as_bytes(), &mut tag));
        if !ok {
            return Err(KeysError::corrupt("it has no authentication tag"));
        }
        root.verify(&self.body(), &tag).map_err(KeysError::corrupt)
    }

    /// The JSON written to the store.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec_pretty(self).expect("key slots serialize")
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::{FirstKey, KeyFile};

    /// A new `memfs.keys` as stored, and its root.
    fn stored() -> (Value, RootKey) {
        let (root, store_id) = (RootKey::generate().unwrap(), [7; 16]);
        let slots = KeySlots::with_key_file(&root, &store_id, &KeyFile::generate().unwrap()).unwrap();
        let keyring = Keyring::new(&root, &store_id, &FirstKey::generate().unwrap()).unwrap();
        let keys = KeysObject::new(&store_id, slots, keyring, &root);
        (serde_json::from_slice(&keys.to_bytes()).unwrap(), root)
    }

    /// `value` with its tag made afresh under `root`, as a later writer makes it.
    fn sealed(mut value: Value, root: &RootKey) -> Vec<u8> {
        let mac = hex::encode(&root.mac(&tag_body(value.clone())));
        value["mac"] = json!(mac);
        serde_json::to_vec_pretty(&value).unwrap()
    }

    /// A later writer's fields, at the top, in a slot and in the keyring: skipped, and covered
    /// by the tag like every other byte.
    fn with_later_fields(mut value: Value) -> Value {
        value["later"] = json!({"b": [1, "x"], "a": null});
        value["slots"]["slots"][0]["later_slot_field"] = json!("y");
        value["keyring"]["later_keyring_field"] = json!(3);
        value
    }

    #[test]
    fn a_later_writers_fields_are_skipped_and_covered_by_the_tag() {
        let (value, root) = stored();
        let counter = value["keyring"]["counter"].clone();
        let keys = KeysObject::parse(&sealed(with_later_fields(value.clone()), &root)).unwrap();
        keys.authenticate(&root).unwrap();
        assert_eq!(json!(keys.keyring.counter()), counter);

        // Added by someone without the root, the same fields fail the tag.
        let mut unsealed = with_later_fields(value.clone());
        unsealed["mac"] = value["mac"].clone();
        let keys = KeysObject::parse(&serde_json::to_vec(&unsealed).unwrap()).unwrap();
        assert!(matches!(keys.authenticate(&root), Err(KeysError::Corrupt { .. })), "the tag held");
    }

    #[test]
    fn the_tag_covers_the_stored_object_in_any_order_and_spacing() {
        let (value, root) = stored();
        let bytes = sealed(with_later_fields(value), &root);
        let compact = serde_json::to_vec(&serde_json::from_slice::<Value>(&bytes).unwrap()).unwrap();
        KeysObject::parse(&compact).unwrap().authenticate(&root).unwrap();
        // Changed here and sealed again, the fields this memfs does not know are dropped.
        let mut keys = KeysObject::parse(&bytes).unwrap();
        keys.seal(&root);
        let written: Value = serde_json::from_slice(&keys.to_bytes()).unwrap();
        assert_eq!(written.get("later"), None);
        KeysObject::parse(&keys.to_bytes()).unwrap().authenticate(&root).unwrap();
    }

    /// A member repeated in one object is refused, even where the last copy is the genuine
    /// one (which the tag covers): a reader that keeps the first would read the other.
    #[test]
    fn a_repeated_member_is_refused() {
        let (value, root) = stored();
        let genuine = String::from_utf8(serde_json::to_vec(&value).unwrap()).unwrap();
        KeysObject::parse(genuine.as_bytes()).unwrap().authenticate(&root).unwrap();
        for (planted, name) in [
            (genuine.replacen(r#"{"format":"#, r#"{"version":2,"format":"#, 1), "version"),
            (genuine.replacen(r#"{"format":"#, r#"{"later":1,"later":2,"format":"#, 1), "later"),
        ] {
            let Err(KeysError::Corrupt { reason }) = KeysObject::parse(planted.as_bytes()) else {
                panic!("read {name}")
            };
            assert!(reason.starts_with(&format!("the member \"{name}\" is repeated in one object")), "{reason}");
        }
    }

    #[test]
    fn a_feature_this_memfs_does_not_know_is_refused_before_unlocking() {
        let (mut value, _) = stored();
        value["requires"] = json!(["zstd-pages", "later\nfeature"]);
        let Err(e) = KeysObject::parse(&serde_json::to_vec(&value).unwrap()) else { panic!("read") };
        assert_eq!(
            e.to_string(),
            r#"the store requires "zstd-pages", "later\nfeature", which this memfs does not know: a later memfs reads it"#
        );
        value["requires"] = json!([]);
        assert!(KeysObject::parse(&serde_json::to_vec(&value).unwrap()).is_ok());
    }
}
