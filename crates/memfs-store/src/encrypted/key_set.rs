//! `memfs.keys`: read, unlocked, authenticated, written back.
//!
//! docs/FORMAT.md, "`memfs.keys`": beside the key slots, the keyring (the address and epoch
//! keys wrapped under the root, and a change counter) and `mac`, a tag under the root over
//! everything else. The tag is checked as soon as a slot has given the root, so a
//! change made by anyone without the root (a slot added or put back, a note or the counter
//! edited, an epoch dropped) is refused before anything is read. The head names the counter it
//! was written with, and a `memfs.keys` with a lower counter is a rollback
//! ([`Error::KeysRollback`]): an older copy with a removed slot in it cannot be put back.

use std::sync::Arc;

use bytes::Bytes;
use memfs_crypt::{AddressKey, Credential, KeySlots, Keyring, ObjectKeys, RootKey, SlotId, SlotSecret, StoreKeys};
use object_store::ObjectStore;
use object_store::path::Path;
use serde::{Deserialize, Serialize};

use super::unique_members::UniqueMembers;
use super::{Connection, EncryptedRepository, FORMAT_VERSION, KEYS_PATH, OpenOptions, decode_store_id};
use crate::error::Error;
use crate::head::HeadVersion;
use crate::record::Operation;
use crate::settle::{self, Swapped};

/// The mark `memfs.keys` carries while a slot's confirmation is written and not yet recorded in
/// a commit (`confirm.rs` makes that commit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Confirmation {
    /// The slot that confirmed the root.
    pub(super) slot: u32,
    /// `memfs.keys`' change counter once the confirmation is written: a head naming it (or a
    /// later one) comes after the commit that records it.
    pub(super) counter: u64,
}

impl Confirmation {
    /// The operation its commit records, `memfs.keys` being at change `counter`.
    pub(super) fn operation(self, counter: u64) -> Operation {
        Operation::Keys { change: "confirm".into(), counter, slot: Some(self.slot) }
    }
}

/// The unsealed key object, `memfs.keys`.
///
/// Fields this memfs does not know are skipped (a later writer's additions), and covered by
/// the tag all the same ([`tag_body`]); what a reader must not skip, a writer names in
/// [`KeysObject::requires`].
#[derive(Serialize, Deserialize)]
pub(super) struct KeysObject {
    pub(super) format: String,
    pub(super) version: u64,
    /// The features a reader must know to read the store (docs/FORMAT.md, "Versions"): format
    /// 1 defines none, so a reader of it refuses a store that names any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) requires: Vec<String>,
    /// Random, chosen at creation: 32 lowercase hex digits, and no other spelling (the key
    /// slots bind the bytes, and the rollback state is named by this string).
    pub(super) store_id: String,
    pub(super) slots: KeySlots,
    /// The keys the root unwraps, and the change counter.
    pub(super) keyring: Keyring,
    /// A slot's confirmation written here whose commit is not made yet. The open that wrote
    /// it makes the commit, then clears this; if it was stopped between the two, the next open
    /// does (see [`EncryptedRepository::open`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) unrecorded: Option<Confirmation>,
    /// The tag of everything else under the root (64 hex digits), over [`tag_body`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) mac: Option<String>,
    /// The bytes the tag covers, as read ([`parse_keys`]): the object as stored, fields this
    /// memfs skipped included. `None` once changed here ([`KeysObject::seal`]).
    #[serde(skip)]
    stored_body: Option<Vec<u8>>,
}

/// The bytes `memfs.keys`' tag covers: `value` (the object as stored, parsed) without its
/// `mac`, as compact JSON with the members of every object in byte order of their names.
/// Everything stored is covered, fields a reader does not know included, and a reader gets the
/// writer's bytes from what it parsed, whatever order or spacing the file has.
pub(super) fn tag_body(mut value: serde_json::Value) -> Vec<u8> {
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

impl KeysObject {
    /// A new key object.
    pub(super) fn new(store_id: &[u8; 16], slots: KeySlots, keyring: Keyring, root: &RootKey) -> Self {
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

    /// The bytes the tag covers: as read, or, once changed here, this object's own.
    fn body(&self) -> Vec<u8> {
        match &self.stored_body {
            Some(body) => body.clone(),
            None => tag_body(serde_json::to_value(self).expect("key slots serialize")),
        }
    }

    /// Sets the tag under `root`, over this object as it is now.
    pub(super) fn seal(&mut self, root: &RootKey) {
        self.stored_body = None;
        self.mac = Some(hex::encode(root.mac(&self.body())));
    }

    /// [`Error::Corrupt`] unless `root` gives this object's tag.
    pub(super) fn authenticate(&self, root: &RootKey) -> Result<(), Error> {
        let refused = |reason: &str| Error::Corrupt { object: KEYS_PATH.into(), reason: reason.into() };
        let mut tag = [0u8; 32];
        let ok = self.mac.as_deref().is_some_and(|m| hex::decode_to_slice(m, &mut tag).is_ok());
        if !ok {
            return Err(refused("it has no authentication tag"));
        }
        root.verify(&self.body(), &tag).map_err(|e| refused(&e.to_string()))
    }

    /// The JSON written to the store.
    pub(super) fn to_bytes(&self) -> Bytes {
        Bytes::from(serde_json::to_vec_pretty(self).expect("key slots serialize"))
    }
}

/// Parses `memfs.keys`, refusing another format or version, or a feature this memfs does not
/// know ([`Error::UnsupportedFeature`]).
pub(super) fn parse_keys(bytes: &[u8]) -> Result<KeysObject, Error> {
    #[derive(Deserialize)]
    struct Version {
        format: String,
        version: u64,
        #[serde(default)]
        requires: Vec<String>,
    }
    let corrupt = |e: serde_json::Error| Error::Corrupt { object: KEYS_PATH.into(), reason: e.to_string() };
    serde_json::from_slice::<UniqueMembers>(bytes).map_err(corrupt)?;
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(corrupt)?;
    let v: Version = Version::deserialize(&value).map_err(corrupt)?;
    if v.format != "memfs" {
        return Err(Error::Corrupt { object: KEYS_PATH.into(), reason: "not a memfs key file".into() });
    }
    if v.version != FORMAT_VERSION {
        return Err(Error::UnsupportedFormat { version: v.version });
    }
    let unknown: Vec<String> = v.requires.into_iter().filter(|f| !crate::FEATURES.contains(&f.as_str())).collect();
    if !unknown.is_empty() {
        return Err(Error::UnsupportedFeature { features: unknown });
    }
    let mut keys = KeysObject::deserialize(&value).map_err(corrupt)?;
    keys.stored_body = Some(tag_body(value));
    Ok(keys)
}

/// The keys of `memfs.keys` whose root is `root`, once its tag is checked (for
/// `fuzzing::open_keys`, behind the `testing` feature).
#[cfg(any(test, feature = "testing"))]
pub(super) fn open_authenticated(keys: &KeysObject, root: &RootKey, store_id: &[u8; 16]) -> Result<StoreKeys, Error> {
    keys.authenticate(root)?;
    Ok(keys.keyring.open(root, store_id)?)
}

/// `memfs.keys` unlocked by a credential and authenticated.
pub(super) struct KeySet {
    pub(super) object: KeysObject,
    /// The stored version it was read at, for the compare-and-swap that writes it back.
    pub(super) version: HeadVersion,
    pub(super) store_id: [u8; 16],
    pub(super) root: RootKey,
    /// The slot the credential opened.
    pub(super) slot: SlotId,
    /// Changed in memory (the opened slot confirmed the current root) and not written.
    pub(super) changed: bool,
    /// The opened slot's X25519 secret, to follow later rotations.
    pub(super) secret: Option<SlotSecret>,
}

/// `e`, a key set refused, with the custody slots in it this machine sends nothing for named:
/// planted by whoever holds the storage, most likely (docs/SECURITY.md, "Custody endpoints").
fn naming_refused(e: Error, refused: &[memfs_crypt::CustodyFailure]) -> Error {
    match e {
        Error::Corrupt { object, reason } if !refused.is_empty() => {
            let named: Vec<String> = refused.iter().map(ToString::to_string).collect();
            Error::Corrupt {
                object,
                reason: format!("{reason}; it names what this machine does not allow: {}", named.join("; ")),
            }
        }
        e => e,
    }
}

impl KeySet {
    /// Reads `memfs.keys` and unlocks it with `credential`, checking its tag under the root.
    ///
    /// If the opened slot's confirmation names an older root than the current one (another
    /// holder rotated the store since), the slot confirms the current root: the counter is
    /// raised and the change marked unrecorded ([`KeysObject::unrecorded`]) until a commit
    /// records it; [`KeySet::changed`] says whether to write it back.
    pub(super) async fn unlock(conn: &Connection, credential: &Credential) -> Result<KeySet, Error> {
        let Some((bytes, version)) = conn.keys.read().await? else { return Err(Error::NotInitialized) };
        let mut object = parse_keys(&bytes)?;
        let store_id = decode_store_id(&object.store_id)?;
        let super::unlock::SlotOpened { opened, refused } =
            super::unlock::unlock_slot(&object.slots, credential, store_id).await?;
        let slot = opened.slot();
        object.authenticate(opened.root()).map_err(|e| naming_refused(e, &refused))?;
        let changed = object.slots.renew(&opened, opened.root(), &store_id)?;
        if changed {
            object.keyring.bump();
            // One mark at a time: an earlier one whose commit is still to be made is recorded
            // first, and this counter is past it.
            if object.unrecorded.is_none() {
                object.unrecorded = Some(Confirmation { slot: slot.get(), counter: object.keyring.counter() });
            }
        }
        let secret = opened.slot_secret(&object.slots, &store_id).ok();
        let root = opened.into_root();
        if changed {
            object.seal(&root);
        }
        Ok(KeySet { object, version, store_id, root, slot, changed, secret })
    }

    /// The keys the store works with.
    pub(super) fn store_keys(&self) -> Result<StoreKeys, Error> {
        Ok(self.keyring().open(&self.root, &self.store_id)?)
    }

    /// The keys of the open store, and its store id.
    pub(super) fn into_keys(self) -> Result<(Keys, String), Error> {
        let store_keys = self.store_keys()?;
        let counter = self.keyring().counter();
        let KeySet { object, root, secret, .. } = self;
        Ok((Keys::new(store_keys, Some((root, counter)), secret), object.store_id))
    }

    /// The keyring.
    pub(super) fn keyring(&self) -> &Keyring {
        &self.object.keyring
    }

    /// Writes the set back by compare-and-swap on the version it was read at, sealed.
    /// [`Error::Conflict`] if `memfs.keys` changed meanwhile.
    pub(super) async fn write(&mut self, conn: &Connection) -> Result<(), Error> {
        self.object.seal(&self.root);
        conn.keys.swap(&self.version, self.object.to_bytes()).await?;
        self.changed = false;
        Ok(())
    }

    /// [`KeySet::write`] of a change a user asked for, settled when its answer was lost
    /// ([`settle::swap_settled`]): its error ([`Error::Conflict`] when refused) only when the
    /// change is proved not in (`memfs.keys` holds another change of the same counter, which
    /// the same compare-and-swap let in instead, or an older one), and
    /// [`Error::KeysOutcomeUnknown`] when it may be (a newer counter: a change made after one
    /// that may have been this one; or a store that could not be read).
    async fn write_settled(&mut self, conn: &Connection) -> Result<(), Error> {
        self.object.seal(&self.root);
        let e = match settle::swap_settled(&*conn.keys, Some(&self.version), self.object.to_bytes()).await {
            Swapped::Landed => {
                self.changed = false;
                return Ok(());
            }
            Swapped::Unknown(_) => return Err(Error::KeysOutcomeUnknown),
            Swapped::Not(e) => e,
        };
        let ours = self.keyring().counter();
        let now = match conn.keys.read().await {
            Ok(Some((bytes, _))) => parse_keys(&bytes).ok().map(|k| k.keyring.counter()),
            _ => None,
        };
        match now {
            Some(now) if now <= ours => Err(e),
            _ => Err(Error::KeysOutcomeUnknown),
        }
    }

    /// The keyring, to change.
    fn keyring_mut(&mut self) -> &mut Keyring {
        &mut self.object.keyring
    }

    /// Starts a new epoch under a new root, which the chain of roots gets signed by the
    /// current one and every slot gets by its public key; the slot this client opened (if it
    /// is still there) confirms it at once. Returns the new epoch. In memory only: see
    /// [`KeySet::commit`].
    pub(super) fn rotate(&mut self) -> Result<u32, Error> {
        let keys = self.store_keys()?;
        let new_root = RootKey::generate()?;
        self.object.slots.rewrap_root(&self.root, &new_root, &self.store_id)?;
        let mine = self.secret.as_ref().filter(|s| self.object.slots.slots().any(|(id, _)| id == s.slot()));
        if let Some(secret) = mine {
            self.object.slots.confirm(secret, &new_root, &self.store_id)?;
        }
        let store_id = self.store_id;
        let epoch = self.keyring_mut().rotate(&keys, &new_root, &store_id)?;
        // The slots keep their key pairs: the secret this client holds opens the new root.
        self.root = new_root;
        Ok(epoch)
    }

    /// Writes the changed set (its counter raised) by compare-and-swap on the version it was
    /// read at, then records the change (`change`, `slot`) in a commit made under the keys it
    /// now holds, by [`OpenOptions::actor`]; returns the store, open with them. A lost race on `memfs.keys` is an error
    /// that says to run the command again (`during` names what was being done).
    pub(super) async fn commit(
        mut self,
        conn: &Connection,
        options: OpenOptions,
        (change, slot): (&str, Option<u32>),
        during: &str,
    ) -> Result<EncryptedRepository, Error> {
        self.keyring_mut().bump();
        // A confirmation made by this unlock (or left unrecorded by an earlier one) is written
        // with its mark and recorded before the change, as an open records it: stopped
        // between, the next open records it.
        let carried = self.object.unrecorded;
        self.write_settled(conn).await.map_err(|e| match e {
            Error::Conflict => Error::Corrupt {
                object: KEYS_PATH.into(),
                reason: format!("the key slots changed while {during}; run it again"),
            },
            other => other,
        })?;
        let counter = self.keyring().counter();
        let (keys, store_id) = self.into_keys()?;
        let actor = options.actor.clone();
        let repo = EncryptedRepository::assemble(conn.again(), keys, store_id, options)?;
        if let Some(carried) = carried {
            // The mark stays in `memfs.keys`; the next open finds the head naming this
            // counter and only clears it.
            repo.record_unless_named(&actor, carried.operation(counter), carried.counter).await?;
        }
        repo.record(&actor, Operation::Keys { change: change.into(), counter, slot }).await?;
        Ok(repo)
    }
}

/// Keys of an open store. Zeroized on drop (each key is).
///
/// The address keys change only by a shred or a re-addressing rotation, which a client open
/// before cannot follow ([`Error::KeysRotated`]: it opens the store again). The epoch keys
/// change when the store is rotated (by this or another client): a client that meets an object
/// of an epoch it does not hold, or a head that names a newer `memfs.keys`, reads `memfs.keys`
/// again and takes the new root from its own slot with the slot's secret ([`Keys::refresh`]),
/// without the credential.
pub(super) struct Keys {
    pub(super) blob_address: AddressKey,
    pub(super) tree_address: AddressKey,
    live: std::sync::RwLock<LiveKeys>,
    /// This client's slot, to follow a rotation (`None` for an ephemeral store).
    slot: Option<SlotSecret>,
}

/// What a rotation changes.
struct LiveKeys {
    objects: Arc<ObjectKeys>,
    /// The root key (`None` for an ephemeral store): authenticates `memfs.keys`.
    root: Option<RootKey>,
    /// The change counter of the `memfs.keys` this client holds: every head it writes names
    /// it, and a head naming a higher one makes it read `memfs.keys` again.
    counter: u64,
}

impl Keys {
    pub(super) fn new(keys: StoreKeys, root: Option<(RootKey, u64)>, slot: Option<SlotSecret>) -> Self {
        let StoreKeys { blob_address, tree_address, objects } = keys;
        let (root, counter) = match root {
            Some((root, counter)) => (Some(root), counter),
            None => (None, 0),
        };
        let live = LiveKeys { objects: Arc::new(objects), root, counter };
        Keys { blob_address, tree_address, live: std::sync::RwLock::new(live), slot }
    }

    fn live(&self) -> std::sync::RwLockReadGuard<'_, LiveKeys> {
        // Replaced whole under the write lock: a poisoned lock still holds a sound value.
        self.live.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The epoch keys as they are now.
    pub(super) fn objects(&self) -> Arc<ObjectKeys> {
        self.live().objects.clone()
    }

    /// Whether this is a persistent store's keys (with a root), not an ephemeral store's.
    pub(super) fn has_root(&self) -> bool {
        self.live().root.is_some()
    }

    /// `f` of the root key held (`None` for an ephemeral store).
    pub(super) fn with_root<R>(&self, f: impl FnOnce(&RootKey) -> R) -> Option<R> {
        self.live().root.as_ref().map(f)
    }

    /// The change counter of the `memfs.keys` held.
    pub(super) fn counter(&self) -> u64 {
        self.live().counter
    }
}

/// Why [`Keys::refresh`] ran.
pub(super) enum Refresh {
    /// A head names change `counter` of `memfs.keys`, newer than the one held.
    Named(u64),
    /// An object of an epoch this client does not hold: a rotation it has not seen.
    UnknownEpoch,
}

impl Keys {
    /// Reads `memfs.keys` again (from `store`, whose canonical id is `store_id`) and takes what
    /// changed: a higher counter under the same root; or, after a rotation, the new root (from
    /// this client's slot, with its secret), checked against the tag, and the new epoch keys.
    ///
    /// Errors: [`Error::KeysRollback`] if the counter served is still lower than the head
    /// names; [`Error::KeysRotated`] if the store was rotated and this client cannot follow (its
    /// slot was removed, or it has no slot secret); [`Error::Corrupt`] if the tag fails.
    pub(super) async fn refresh(&self, store: &dyn ObjectStore, store_id: &str, why: Refresh) -> Result<(), Error> {
        let path = Path::from(KEYS_PATH);
        let bytes = match crate::whole_read::get_bytes(store, &path).await {
            Ok(bytes) => bytes,
            Err(object_store::Error::NotFound { .. }) => return Err(Error::NotInitialized),
            Err(e) => return Err(Error::backend("read", &path, e)),
        };
        let keys = parse_keys(&bytes)?;
        if keys.store_id != store_id {
            return Err(Error::Corrupt { object: KEYS_PATH.into(), reason: "the store id changed".into() });
        }
        let id = decode_store_id(&keys.store_id)?;
        let keyring = &keys.keyring;
        let counter = keyring.counter();
        if let Refresh::Named(named) = why
            && counter < named
        {
            return Err(Error::KeysRollback { counter, head: named });
        }
        let same_root = self.live().root.as_ref().is_some_and(|root| keys.slots.belongs_to(root));
        if same_root {
            let live = self.live();
            let root = live.root.as_ref().expect("checked above");
            keys.authenticate(root)?;
            drop(live);
            let mut live = self.live.write().unwrap_or_else(|p| p.into_inner());
            live.counter = live.counter.max(counter);
            return Ok(());
        }
        // Rotated: this client's slot gives the new root, or it was removed.
        let secret = self.slot.as_ref().ok_or(Error::KeysRotated)?;
        // The slot gone, or no longer holding this key pair: removed (or re-keyed) elsewhere.
        let root = keys.slots.root_for(secret, &id).map_err(|e| match e {
            memfs_crypt::Error::NoSuchSlot { .. } | memfs_crypt::Error::Decrypt => Error::KeysRotated,
            other => Error::from(other),
        })?;
        keys.authenticate(&root)?;
        let opened = keyring.open(&root, &id)?;
        // Named afresh (`key rotate --readdress`): this client's names are the old ones.
        if opened.blob_address.address(b"") != self.blob_address.address(b"") {
            return Err(Error::KeysRotated);
        }
        let mut live = self.live.write().unwrap_or_else(|p| p.into_inner());
        if counter >= live.counter {
            *live = LiveKeys { objects: Arc::new(opened.objects), root: Some(root), counter };
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use memfs_crypt::{KeyFile, MasterKey};
    use serde_json::{Value, json};

    use super::*;

    /// A new `memfs.keys` as stored, and its root.
    fn stored() -> (Value, RootKey) {
        let (root, store_id) = (RootKey::generate().unwrap(), [7; 16]);
        let slots = KeySlots::with_key_file(&root, &store_id, &KeyFile::generate().unwrap()).unwrap();
        let keyring = Keyring::new(&root, &store_id, &MasterKey::generate().unwrap()).unwrap();
        let keys = KeysObject::new(&store_id, slots, keyring, &root);
        (serde_json::from_slice(&keys.to_bytes()).unwrap(), root)
    }

    /// `value` with its tag made afresh under `root`, as a later writer makes it.
    fn sealed(mut value: Value, root: &RootKey) -> Vec<u8> {
        let mac = hex::encode(root.mac(&tag_body(value.clone())));
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
        let keys = parse_keys(&sealed(with_later_fields(value.clone()), &root)).unwrap();
        keys.authenticate(&root).unwrap();
        assert_eq!(json!(keys.keyring.counter()), counter);

        // Added by someone without the root, the same fields fail the tag.
        let mut unsealed = with_later_fields(value.clone());
        unsealed["mac"] = value["mac"].clone();
        let keys = parse_keys(&serde_json::to_vec(&unsealed).unwrap()).unwrap();
        let Err(Error::Corrupt { object, .. }) = keys.authenticate(&root) else { panic!("the tag held") };
        assert_eq!(object, KEYS_PATH);
    }

    #[test]
    fn the_tag_covers_the_stored_object_in_any_order_and_spacing() {
        let (value, root) = stored();
        let bytes = sealed(with_later_fields(value), &root);
        let compact = serde_json::to_vec(&serde_json::from_slice::<Value>(&bytes).unwrap()).unwrap();
        parse_keys(&compact).unwrap().authenticate(&root).unwrap();
        // Changed here and sealed again, the fields this memfs does not know are dropped.
        let mut keys = parse_keys(&bytes).unwrap();
        keys.seal(&root);
        let written: Value = serde_json::from_slice(&keys.to_bytes()).unwrap();
        assert_eq!(written.get("later"), None);
        parse_keys(&keys.to_bytes()).unwrap().authenticate(&root).unwrap();
    }

    /// A member repeated in one object is refused, even where the last copy is the genuine
    /// one (which the tag covers): a reader that keeps the first would read the other.
    #[test]
    fn a_repeated_member_is_refused() {
        let (value, root) = stored();
        let genuine = String::from_utf8(serde_json::to_vec(&value).unwrap()).unwrap();
        parse_keys(genuine.as_bytes()).unwrap().authenticate(&root).unwrap();
        for (planted, name) in [
            (genuine.replacen(r#"{"format":"#, r#"{"version":2,"format":"#, 1), "version"),
            (genuine.replacen(r#"{"format":"#, r#"{"later":1,"later":2,"format":"#, 1), "later"),
        ] {
            let Err(Error::Corrupt { reason, .. }) = parse_keys(planted.as_bytes()) else { panic!("read {name}") };
            assert!(reason.starts_with(&format!("the member \"{name}\" is repeated in one object")), "{reason}");
        }
    }

    #[test]
    fn a_feature_this_memfs_does_not_know_is_refused_before_unlocking() {
        let (mut value, _) = stored();
        value["requires"] = json!(["zstd-pages", "later\nfeature"]);
        let Err(e) = parse_keys(&serde_json::to_vec(&value).unwrap()) else { panic!("read") };
        assert_eq!(
            e.to_string(),
            r#"the store requires "zstd-pages", "later\nfeature", which this memfs does not know: a later memfs reads it"#
        );
        value["requires"] = json!([]);
        assert!(parse_keys(&serde_json::to_vec(&value).unwrap()).is_ok());
    }
}
