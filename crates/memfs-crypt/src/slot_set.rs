//! Key slots: every way to unlock a store, one slot per credential.
//!
//! Serialized with serde; every byte string is lower-case hex:
//!
//! ```json
//! {
//!   "version": 2,
//!   "key_check": "<64 hex: BLAKE3 derive_key(\"memfs v7 2026-11-26 root key check\", root)>",
//!   "roots": [ { "public": "<64 hex>" }, { "public": "<64 hex>", "vouch": "<128 hex>" } ],
//!   "slots": [
//!     { "id": 1, "kind": "passphrase",
//!       "argon2id": { "m_cost": 65536, "t_cost": 3, "p_cost": 4 },
//!       "salt": "<32 hex>", "nonce": "<24 hex>", "wrapped": "<96 hex: the slot's X25519 secret>",
//!       "public": "<64 hex: the slot's X25519 public key>",
//!       "root": "<184 hex: ephemeral public key || nonce || the root wrapped>",
//!       "tag": "<64 hex: the holder's confirmation of a root of the chain>" },
//!     { "id": 2, "kind": "key-file", "nonce": "<24 hex>", "wrapped": "<96 hex>", "public": "…", "root": "…", "tag": "…" }
//!   ]
//! }
//! ```
//!
//! `m_cost` is in KiB; Argon2id is version 0x13 with a 32-byte output. Nothing in the JSON is
//! secret. The whole of `memfs.keys` is authenticated under the root (see
//! `root.rs`), but only after a slot has unlocked it, so what a slot asks of the machine is
//! bounded before that: [`KdfParams::new`] bounds each slot's costs before Argon2 runs, a set
//! holds at most [`KeySlots::MAX_SLOTS`] slots, and at most [`KeySlots::MAX_UNLOCK_WORK_KIB`]
//! of Argon2id work (memory × passes) is summed over the passphrase slots one unlock may try,
//! checked before the first Argon2 run. `key_check` is a public PRF output of the root: it tells whether a key given to `add_*` or
//! `change_passphrase` belongs to this set, so a slot can never wrap a stranger's key.

use std::collections::HashSet;
use std::fmt;

use secrecy::SecretString;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};

use crate::credential::Credential;
use crate::custody::{Custody, CustodyKek};
use crate::derive::{self, KdfParams};
use crate::error::Error;
use crate::hex;
use crate::keyfile::KeyFile;
use crate::root::RootKey;
use crate::slot::{KekSource, Slot};
use crate::slot_id::{SlotId, SlotKind};
use crate::slot_note::SlotNote;

/// The longest chain of roots a set holds (one per rotation, as many as the keyring's epochs).
pub(crate) const MAX_ROOTS: usize = 4096;

/// Argon2id work of one run, in KiB × passes; at most 2^21 × 64 = 2^27 for a bounded slot,
/// so 16 of them cannot overflow.
pub(crate) fn work(params: KdfParams) -> u64 {
    u64::from(params.m_cost()) * u64::from(params.t_cost())
}

/// [`Error::UnlockWork`] if `total` (KiB × passes) is past [`KeySlots::MAX_UNLOCK_WORK_KIB`].
pub(crate) fn check_work(total: u64) -> Result<(), Error> {
    if total <= KeySlots::MAX_UNLOCK_WORK_KIB {
        Ok(())
    } else {
        Err(Error::UnlockWork { mib_passes: total.div_ceil(1024) })
    }
}

/// One root of a store's chain: its public key, and the previous root's signature of it.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct RootLink {
    #[serde(with = "hex::array")]
    pub(crate) public: [u8; 32],
    #[serde(default, skip_serializing_if = "Option::is_none", with = "hex::option_array")]
    pub(crate) vouch: Option<[u8; 64]>,
}

/// A store's key slots: every way to unlock it. Always holds at least one slot.
///
/// ```
/// use memfs_crypt::{Credential, KdfParams, KeyFile, KeySlots, RootKey};
///
/// let store_id = [7u8; 16]; // the store id: 16 random bytes chosen when the store was created
/// let root = RootKey::generate()?;
/// let cheap = KdfParams::new(8, 1, 1)?; // tests only: use KdfParams::DEFAULT
/// let mut slots = KeySlots::with_slot(&root, &store_id, &Credential::Passphrase("hunter2".into()), cheap)?;
/// let file = KeyFile::generate()?;
/// assert_eq!(slots.add_key_file_slot(&root, &store_id, &file)?.get(), 2);
///
/// let json = serde_json::to_string(&slots)?;
/// let slots: KeySlots = serde_json::from_str(&json)?;
/// let opened = slots.unlock(&Credential::KeyFile(file), &store_id)?;
/// assert_eq!(opened.slot().get(), 2);
/// assert_eq!(opened.root().public(), root.public());
/// assert!(slots.unlock(&Credential::Passphrase("hunter3".into()), &store_id).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "UncheckedKeySlots")]
pub struct KeySlots {
    version: SetVersion,
    #[serde(with = "hex::array")]
    pub(crate) key_check: [u8; 32],
    /// The public keys of the store's roots, oldest first, each after the first signed by the
    /// one before; the last is the current root's.
    pub(crate) roots: Vec<RootLink>,
    pub(crate) slots: Vec<Slot>,
}

impl KeySlots {
    /// The most slots a set holds. A set with more is refused when read; adding a 17th is
    /// [`Error::TooManySlots`]. Two or three ways in (a passphrase, a key file, a recovery
    /// key) are the normal case; 16 leaves room and keeps the work below small.
    pub const MAX_SLOTS: usize = 16;

    /// The most Argon2id work one unlock may ask for, in KiB × passes (`m_cost * t_cost`)
    /// summed over the passphrase slots it would try: 8 GiB × 1 pass.
    ///
    /// Why 8 GiB-passes: the default slot (64 MiB, 3 passes) costs 192 MiB-passes, so 16
    /// default slots (3 GiB-passes) fit, and so do four 1 GiB, 2-pass slots, or one 2 GiB,
    /// 4-pass slot. The default slot takes about 0.3 s of one core on a 2026 laptop, so the
    /// bound is 10 to 15 s of one core per unlock, where the per-slot bounds alone allowed
    /// any number of 2 GiB × 64-pass slots (about 12 minutes each). Lanes (`p_cost`) do not change the work: they split the
    /// same memory. Checked before any Argon2 run ([`Error::UnlockWork`]), and when a slot is
    /// added or changed, so every set memfs writes can be opened.
    pub const MAX_UNLOCK_WORK_KIB: u64 = 8 * 1024 * 1024;

    /// A new set whose one slot opens `root` with `key_file`.
    pub fn with_key_file(root: &RootKey, store_id: &[u8; 16], key_file: &KeyFile) -> Result<Self, Error> {
        Self::one_slot(root, |slots| slots.add_key_file_slot(root, store_id, key_file))
    }

    /// A new set whose one slot opens `root` with `credential`; `params` are the
    /// Argon2id costs if it is a passphrase (ignored for a key file).
    pub fn with_slot(
        root: &RootKey,
        store_id: &[u8; 16],
        credential: &Credential,
        params: KdfParams,
    ) -> Result<Self, Error> {
        Self::one_slot(root, |slots| slots.add_slot(root, store_id, credential, params))
    }

    /// A new set for `root` holding the one slot `add` puts in it.
    fn one_slot(root: &RootKey, add: impl FnOnce(&mut Self) -> Result<SlotId, Error>) -> Result<Self, Error> {
        let mut slots = KeySlots {
            version: SetVersion,
            key_check: *root.check().as_bytes(),
            roots: vec![RootLink { public: root.public(), vouch: None }],
            slots: Vec::new(),
        };
        add(&mut slots)?;
        Ok(slots)
    }

    /// Whether `root` is this set's root (its public check value matches).
    pub fn belongs_to(&self, root: &RootKey) -> bool {
        self.check_root(root).is_ok()
    }

    /// Adds a slot that opens `root` with `credential` (Argon2id costs `params` if it is a
    /// passphrase, run once; ignored for a key file); returns its id. [`Error::KeyMismatch`] if
    /// `root` is not this set's.
    pub fn add_slot(
        &mut self,
        root: &RootKey,
        store_id: &[u8; 16],
        credential: &Credential,
        params: KdfParams,
    ) -> Result<SlotId, Error> {
        match credential {
            Credential::KeyFile(key_file) => self.add_key_file_slot(root, store_id, key_file),
            Credential::Passphrase(passphrase) => {
                self.check_room()?;
                check_work(self.passphrase_work(None) + work(params))?;
                let id = self.next_id();
                let slot = self.passphrase_slot(id, root, store_id, passphrase, params)?;
                self.slots.push(slot);
                Ok(id)
            }
            Credential::Kek(CustodyKek { kind, custody, kek }) => {
                self.check_root(root)?;
                self.check_room()?;
                let id = self.next_id();
                let source = KekSource::custody(*kind, custody.clone())?;
                self.slots.push(Slot::new(id, source, kek, root, store_id)?);
                Ok(id)
            }
            Credential::Custodian(_) => Err(Error::Custodian),
        }
    }

    /// Adds a slot that opens `root` with `key_file`; returns its id.
    /// [`Error::KeyMismatch`] if `root` is not this set's.
    pub fn add_key_file_slot(
        &mut self,
        root: &RootKey,
        store_id: &[u8; 16],
        key_file: &KeyFile,
    ) -> Result<SlotId, Error> {
        self.check_root(root)?;
        self.check_room()?;
        let id = self.next_id();
        self.slots.push(Slot::new(id, KekSource::KeyFile, &key_file.kek(), root, store_id)?);
        Ok(id)
    }

    /// Re-wraps passphrase slot `id` under `new` (fresh salt, fresh key pair, costs `params`),
    /// keeping its id and note. The old passphrase no longer opens it; the root is unchanged.
    pub fn change_passphrase(
        &mut self,
        root: &RootKey,
        store_id: &[u8; 16],
        id: SlotId,
        new: &SecretString,
        params: KdfParams,
    ) -> Result<(), Error> {
        let index = self.index(id)?;
        let kind = self.slots[index].kind();
        if kind != SlotKind::Passphrase {
            return Err(Error::WrongSlotKind { id, kind });
        }
        check_work(self.passphrase_work(Some(id)) + work(params))?;
        let note = std::mem::take(&mut self.slots[index].note);
        self.slots[index] = Slot { note, ..self.passphrase_slot(id, root, store_id, new, params)? };
        Ok(())
    }

    /// Sets slot `id`'s note. [`Error::BadSlotNote`] if its text is refused (see
    /// [`SlotNote::check`]); [`Error::NoSuchSlot`] if there is no slot `id`.
    pub fn set_note(&mut self, id: SlotId, note: SlotNote) -> Result<(), Error> {
        note.check()?;
        let index = self.index(id)?;
        self.slots[index].note = note;
        Ok(())
    }

    /// The slots' ids, kinds and notes, in order.
    pub fn notes(&self) -> impl ExactSizeIterator<Item = (SlotId, SlotKind, &SlotNote)> + '_ {
        self.slots.iter().map(|s| (s.id, s.kind(), &s.note))
    }

    /// Removes slot `id`. [`Error::LastSlot`] if it is the only one; [`Error::NoSuchSlot`] if
    /// there is none with that id.
    pub fn remove_slot(&mut self, id: SlotId) -> Result<(), Error> {
        let index = self.index(id)?;
        if self.slots.len() == 1 {
            return Err(Error::LastSlot);
        }
        self.slots.remove(index);
        Ok(())
    }

    /// The custody slots (keys kept outside memfs), in order: id, kind and custody.
    pub fn custody_slots(&self) -> impl Iterator<Item = (SlotId, SlotKind, &Custody)> + '_ {
        self.slots.iter().filter_map(|s| s.source.custody_of().map(|c| (s.id, s.kind(), c)))
    }

    /// The slots' ids and kinds, in order.
    pub fn slots(&self) -> impl ExactSizeIterator<Item = (SlotId, SlotKind)> + '_ {
        self.slots.iter().map(|s| (s.id, s.kind()))
    }

    fn passphrase_slot(
        &self,
        id: SlotId,
        root: &RootKey,
        store_id: &[u8; 16],
        passphrase: &SecretString,
        params: KdfParams,
    ) -> Result<Slot, Error> {
        self.check_root(root)?;
        let mut salt = [0u8; 16];
        getrandom::fill(&mut salt).map_err(|_| Error::Random)?;
        let kek = derive::passphrase_kek(passphrase, &salt, params)?;
        Slot::new(id, KekSource::Passphrase { argon2id: params.into(), salt }, &kek, root, store_id)
    }

    /// [`Error::TooManySlots`] if the set is full.
    fn check_room(&self) -> Result<(), Error> {
        if self.slots.len() < Self::MAX_SLOTS { Ok(()) } else { Err(Error::TooManySlots) }
    }

    /// The Argon2id work a passphrase unlock may do: the sum over the passphrase slots it
    /// would try (those whose costs are in range; the others are skipped without Argon2),
    /// leaving out slot `except`.
    pub(crate) fn passphrase_work(&self, except: Option<SlotId>) -> u64 {
        let costs = self.slots.iter().filter(|s| Some(s.id) != except).filter_map(|s| match &s.source {
            KekSource::Passphrase { argon2id, .. } => argon2id.params().ok(),
            _ => None,
        });
        costs.map(work).sum()
    }

    /// [`Error::KeyMismatch`] unless `root` is this set's; constant-time (`blake3::Hash`
    /// equality).
    pub(crate) fn check_root(&self, root: &RootKey) -> Result<(), Error> {
        if root.check() == blake3::Hash::from(self.key_check) { Ok(()) } else { Err(Error::KeyMismatch) }
    }

    pub(crate) fn index(&self, id: SlotId) -> Result<usize, Error> {
        self.slots.iter().position(|s| s.id == id).ok_or(Error::NoSuchSlot { id })
    }

    /// One more than the highest id in use (ids start at 1); the lowest free id in the
    /// unreachable case that `u32::MAX` is taken.
    fn next_id(&self) -> SlotId {
        let max = self.slots.iter().map(|s| s.id.get()).max().unwrap_or(0);
        match max.checked_add(1) {
            Some(n) => SlotId::new(n),
            None => SlotId::new((1..).find(|n| self.slots.iter().all(|s| s.id.get() != *n)).unwrap_or(0)),
        }
    }
}

impl fmt::Debug for KeySlots {
    /// Ids and kinds only: the rest is opaque bytes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let KeySlots { version: _, key_check: _, roots: _, slots } = self;
        f.debug_struct("KeySlots").field("slots", &slots.iter().map(|s| (s.id, s.kind())).collect::<Vec<_>>()).finish()
    }
}

/// The `version` field: 2, the one version of the slot set (1 was a pre-release form); any
/// other is refused.
#[derive(Clone, Copy, PartialEq, Eq)]
struct SetVersion;

impl Serialize for SetVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(2)
    }
}

impl<'de> Deserialize<'de> for SetVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match u64::deserialize(d)? {
            2 => Ok(SetVersion),
            v => Err(de::Error::custom(format_args!("unsupported key slot format version {v}"))),
        }
    }
}

/// [`KeySlots`] as read, before checking that it has one to [`KeySlots::MAX_SLOTS`] slots,
/// that their ids are distinct, and that the chain of roots is in bounds. (The summed
/// Argon2id work is checked when a passphrase unlocks, not here: a key file still opens a
/// store whose passphrase slots are too costly.)
#[derive(Deserialize)]
struct UncheckedKeySlots {
    version: SetVersion,
    #[serde(with = "hex::array")]
    key_check: [u8; 32],
    roots: Vec<RootLink>,
    slots: Vec<Slot>,
}

impl TryFrom<UncheckedKeySlots> for KeySlots {
    type Error = String;

    fn try_from(u: UncheckedKeySlots) -> Result<Self, Self::Error> {
        let UncheckedKeySlots { version, key_check, roots, slots } = u;
        if slots.is_empty() {
            return Err("a key slot set needs at least one slot".into());
        }
        if slots.len() > KeySlots::MAX_SLOTS {
            return Err(format!("{} key slots, at most {} are accepted", slots.len(), KeySlots::MAX_SLOTS));
        }
        let mut seen = HashSet::new();
        if !slots.iter().all(|s| seen.insert(s.id)) {
            return Err("two key slots have the same id".into());
        }
        if let Some(Err(e)) = slots.iter().map(|s| s.note.check()).find(Result::is_err) {
            return Err(e.to_string());
        }
        if let Some(Err(e)) =
            slots.iter().filter_map(|s| s.source.custody_of()).map(Custody::check).find(Result::is_err)
        {
            return Err(e.into());
        }
        if roots.is_empty() || roots.len() > MAX_ROOTS {
            return Err(format!("a key slot set names 1 to {MAX_ROOTS} roots, not {}", roots.len()));
        }
        Ok(KeySlots { version, key_check, roots, slots })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::tests::argon2_runs;
    use crate::slot::Argon2Costs;

    fn kept(kind: SlotKind, key: &str, kek: u8) -> Credential {
        let custody = Custody { key: key.into(), region: None, wrapped: vec![kek; 3] };
        Credential::Kek(CustodyKek { kind, custody, kek: zeroize::Zeroizing::new([kek; 32]) })
    }

    fn cheap() -> KdfParams {
        KdfParams::new(8, 1, 1).unwrap()
    }

    fn phrase(s: &str) -> Credential {
        Credential::Passphrase(SecretString::from(s))
    }

    /// A note is stored with its slot, kept by a passphrase change, absent from slots made
    /// without one (as in sets written before notes, which still parse), and refused when
    /// written or read with text a terminal would act on.
    #[test]
    fn notes_round_trip_and_hostile_ones_are_refused() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&root, &store, &phrase("a"), cheap()).unwrap();
        let plain = serde_json::to_string(&slots).unwrap();
        assert!(!plain.contains("label") && !plain.contains("created_ms") && !plain.contains("host"), "{plain}");
        let note = SlotNote {
            label: Some("work \"laptop\"".into()),
            created_ms: Some(1_764_000_000_000),
            host: Some("h1".into()),
        };
        slots.set_note(SlotId::new(1), note.clone()).unwrap();
        slots.change_passphrase(&root, &store, SlotId::new(1), &SecretString::from("b"), cheap()).unwrap();
        let json = serde_json::to_string(&slots).unwrap();
        let back: KeySlots = serde_json::from_str(&json).unwrap();
        assert_eq!(back.notes().map(|(id, _, n)| (id, n.clone())).collect::<Vec<_>>(), [(SlotId::new(1), note)]);
        assert!(back.unlock(&phrase("b"), &store).is_ok());
        assert!(serde_json::from_str::<KeySlots>(&plain).unwrap().notes().all(|(_, _, n)| n.is_empty()));

        let bad = SlotNote { label: Some("\u{1b}]0;owned\u{7}".into()), ..SlotNote::default() };
        assert!(matches!(slots.set_note(SlotId::new(1), bad), Err(Error::BadSlotNote { what: "label", .. })));
        let hostile = json.replace("\"host\":\"h1\"", "\"host\":\"h\\u001b[2J\"");
        assert_ne!(hostile, json);
        let err = serde_json::from_str::<KeySlots>(&hostile).err().unwrap().to_string();
        assert!(err.starts_with("a key slot's host is refused: it holds a control character"), "{err}");
    }

    #[test]
    fn hostile_costs_are_refused_before_argon2() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        for (m, t, p) in [(u32::MAX, 3, 4), (65536, 1_000_000, 4), (65536, 3, 1 << 20), (0, 0, 0)] {
            let mut slots = KeySlots::with_slot(&root, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
            let KekSource::Passphrase { argon2id, .. } = &mut slots.slots[0].source else { unreachable!() };
            *argon2id = Argon2Costs { m_cost: m, t_cost: t, p_cost: p };
            let before = argon2_runs();
            let Err(err) = slots.unlock(&phrase("a"), &store) else { panic!("unlocked") };
            assert!(
                matches!(err, Error::KdfParams { m_cost, t_cost, p_cost } if (m_cost, t_cost, p_cost) == (m, t, p))
            );
            assert_eq!(argon2_runs(), before, "Argon2 ran for {m} {t} {p}");
        }
    }

    #[test]
    fn at_most_16_slots() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let file = KeyFile::from_bytes([3; 32]);
        let mut slots = KeySlots::with_key_file(&root, &store, &file).unwrap();
        for _ in 1..KeySlots::MAX_SLOTS {
            slots.add_key_file_slot(&root, &store, &file).unwrap();
        }
        assert!(matches!(slots.add_key_file_slot(&root, &store, &file), Err(Error::TooManySlots)));
        let before = argon2_runs();
        assert!(matches!(
            slots.add_slot(&root, &store, &Credential::Passphrase("a".into()), cheap()),
            Err(Error::TooManySlots)
        ));
        assert_eq!(argon2_runs(), before);
        // Sixteen read back; a seventeenth, written by hand, is refused when read.
        let mut json: serde_json::Value = serde_json::to_value(&slots).unwrap();
        serde_json::from_value::<KeySlots>(json.clone()).unwrap();
        let mut extra = json["slots"][0].clone();
        extra["id"] = 17.into();
        json["slots"].as_array_mut().unwrap().push(extra);
        let err = serde_json::from_value::<KeySlots>(json).err().unwrap();
        assert_eq!(err.to_string(), "17 key slots, at most 16 are accepted");
        assert_eq!(
            Error::TooManySlots.to_string(),
            format!("a store holds at most {} key slots; remove one first (memfs key remove)", KeySlots::MAX_SLOTS)
        );
    }

    #[test]
    fn summed_work_is_bounded_before_argon2() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&root, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        // Three slots of 1 GiB x 3 passes (each within the per-slot bounds): 9 GiB-passes.
        for i in 0..3 {
            slots.slots.push(Slot { id: SlotId::new(i + 2), ..slots.slots[0].clone() });
            let KekSource::Passphrase { argon2id, .. } = &mut slots.slots[i as usize + 1].source else {
                unreachable!()
            };
            *argon2id = Argon2Costs { m_cost: 1 << 20, t_cost: 3, p_cost: 4 };
        }
        let before = argon2_runs();
        let err = slots.unlock(&phrase("a"), &store).err().unwrap();
        assert!(matches!(err, Error::UnlockWork { mib_passes: 9217 }), "{err:?}");
        assert_eq!(
            err.to_string(),
            "the passphrase slots ask for 9217 MiB x passes of Argon2id in all (memory times passes, summed \
             over the slots); at most 8192 are accepted"
        );
        assert_eq!(KeySlots::MAX_UNLOCK_WORK_KIB.div_ceil(1024), 8192);
        assert_eq!(argon2_runs(), before);
        // A key file runs no Argon2, so the same passphrase slots do not stop it.
        let file = KeyFile::from_bytes([3; 32]);
        slots.slots.truncate(1);
        slots.add_key_file_slot(&root, &store, &file).unwrap();
        for i in 0..3 {
            slots.slots.push(Slot { id: SlotId::new(i + 3), ..slots.slots[0].clone() });
            let KekSource::Passphrase { argon2id, .. } = &mut slots.slots[i as usize + 2].source else {
                unreachable!()
            };
            *argon2id = Argon2Costs { m_cost: 1 << 20, t_cost: 3, p_cost: 4 };
        }
        assert!(slots.unlock(&Credential::KeyFile(file), &store).is_ok());
        // Adding past the bound is refused, before Argon2 runs; up to it is accepted.
        slots.slots.truncate(2);
        let two_gib_four = KdfParams::new(2 << 20, 4, 4).unwrap();
        let before = argon2_runs();
        let err = slots.add_slot(&root, &store, &Credential::Passphrase("b".into()), two_gib_four).err().unwrap();
        assert!(matches!(err, Error::UnlockWork { mib_passes: 8193 }), "{err:?}");
        assert_eq!(argon2_runs(), before);
        // The defaults, sixteen times, fit.
        assert!(16 * work(KdfParams::DEFAULT) <= KeySlots::MAX_UNLOCK_WORK_KIB);
        assert!(work(KdfParams::new(2 << 20, 4, 4).unwrap()) <= KeySlots::MAX_UNLOCK_WORK_KIB);
    }

    #[test]
    fn kind_and_id_are_authenticated() {
        // Even with the right KEK, a slot read as another kind or id does not open (the KEKs
        // of different kinds never match in practice: this is defence in depth).
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let file = KeyFile::from_bytes([3; 32]);
        let slots = KeySlots::with_key_file(&root, &store, &file).unwrap();
        let good = &slots.slots[0];
        assert!(good.unwrap(&file.kek(), &store).is_ok());
        let mut relabelled = good.clone();
        relabelled.source = KekSource::Passphrase { argon2id: cheap().into(), salt: [0; 16] };
        assert!(matches!(relabelled.unwrap(&file.kek(), &store), Err(Error::Decrypt)));
        let mut renumbered = good.clone();
        renumbered.id = SlotId::new(2);
        assert!(matches!(renumbered.unwrap(&file.kek(), &store), Err(Error::Decrypt)));
    }

    #[test]
    fn ids_grow_past_removed_ones() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let file = KeyFile::from_bytes([3; 32]);
        let mut slots = KeySlots::with_key_file(&root, &store, &file).unwrap();
        let two = slots.add_key_file_slot(&root, &store, &file).unwrap();
        let three = slots.add_key_file_slot(&root, &store, &file).unwrap();
        assert_eq!((two.get(), three.get()), (2, 3));
        slots.remove_slot(two).unwrap();
        assert_eq!(slots.add_key_file_slot(&root, &store, &file).unwrap().get(), 4);
        // Ids are now 1, 3, 4; with u32::MAX taken, the lowest free id is next.
        slots.slots[2].id = SlotId::new(u32::MAX);
        assert_eq!(slots.next_id(), SlotId::new(2));
    }

    /// What a custody slot names is shown on terminals: a control character or a name past
    /// the bound is refused when read, and so is a custody slot without a public key.
    #[test]
    fn hostile_custody_is_refused_when_read() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_key_file(&root, &store, &KeyFile::from_bytes([3; 32])).unwrap();
        slots.add_slot(&root, &store, &kept(SlotKind::Keychain, "memfs/x", 7), cheap()).unwrap();
        let json = serde_json::to_value(&slots).unwrap();
        let refused = |edit: &dyn Fn(&mut serde_json::Value)| {
            let mut bad = json.clone();
            edit(&mut bad);
            serde_json::from_value::<KeySlots>(bad).err().map(|e| e.to_string())
        };
        assert_eq!(
            refused(&|v| v["slots"][1]["key"] = "\u{1b}[2J".into()),
            Some("a key slot names an outside key with a control character".into())
        );
        assert_eq!(
            refused(&|v| v["slots"][1]["region"] = "r".repeat(2049).into()),
            Some("a key slot names an outside key longer than 2048 bytes".into())
        );
        assert!(refused(&|v| v["slots"][1]["wrapped_kek"] = "ab".repeat(16 * 1024 + 1).into()).is_some());
        assert!(refused(&|v| v["slots"][1]["wrapped_kek"] = "abc".into()).is_some());
        let no_public = refused(&|v| {
            v["slots"][1].as_object_mut().unwrap().remove("public");
            v["slots"][1].as_object_mut().unwrap().remove("root");
        });
        assert!(no_public.is_some());
        assert!(refused(&|_| {}).is_none());
    }
}
