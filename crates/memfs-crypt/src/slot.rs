//! Key slots: the master key, wrapped once per way of unlocking the store.
//!
//! Each slot holds the 32-byte master key encrypted with AES-256-GCM under a key-encryption
//! key (KEK): Argon2id of a passphrase (see `derive.rs`), or a BLAKE3 derivation of a key
//! file's 32 random bytes. Adding, removing or re-keying a slot rewrites only the slot set:
//! the master key, and so every object, stays the same.
//!
//! The associated data of a slot, never stored, binds it to its store and its place:
//!
//! ```text
//! "memfs keyslot v1" (16 bytes) || store id (16) || slot kind (1: passphrase 1, key file 2)
//!     || slot id (4, big-endian)
//! ```
//!
//! Serialized (format v1) with serde; every byte string is lower-case hex:
//!
//! ```json
//! {
//!   "version": 1,
//!   "key_check": "<64 hex: BLAKE3 derive_key(\"memfs v1 2026-11-21 master key check\", master)>",
//!   "slots": [
//!     { "id": 1, "kind": "passphrase",
//!       "argon2id": { "m_cost": 65536, "t_cost": 3, "p_cost": 4 },
//!       "salt": "<32 hex>", "nonce": "<24 hex>", "wrapped": "<96 hex: ciphertext || tag>" },
//!     { "id": 2, "kind": "key-file", "nonce": "<24 hex>", "wrapped": "<96 hex>" }
//!   ]
//! }
//! ```
//!
//! `m_cost` is in KiB; Argon2id is version 0x13 with a 32-byte output. Nothing in the JSON is
//! secret; the costs are not authenticated, but changing them (or the salt) only yields a
//! wrong KEK, and [`KdfParams::new`] bounds each slot's before Argon2 runs. Whoever can write
//! `memfs.keys` can still add slots, so the set is bounded too: at most
//! [`KeySlots::MAX_SLOTS`] slots, and at most [`KeySlots::MAX_UNLOCK_WORK_KIB`] of Argon2id
//! work (memory × passes) summed over the passphrase slots one unlock may try, checked before
//! the first Argon2 run. `key_check` is a public
//! PRF output of the master key: it tells whether a master key given to `add_*` or
//! `change_passphrase` belongs to this set, so a slot can never wrap a stranger's key.

use std::collections::HashSet;
use std::fmt;

use secrecy::SecretString;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de};
use zeroize::Zeroizing;

use crate::aead::{self, Cipher, NONCE_LEN, TAG_LEN};
use crate::credential::Credential;
use crate::derive::{self, KdfParams};
use crate::error::Error;
use crate::hex;
use crate::key::MasterKey;
use crate::keyfile::KeyFile;
use crate::slot_id::{SlotId, SlotKind};
use crate::slot_note::SlotNote;

/// Domain label that starts the associated data of every slot.
const AAD_LABEL: &[u8; 16] = b"memfs keyslot v1";

/// A wrapped master key: ciphertext and tag.
const WRAPPED_LEN: usize = 32 + TAG_LEN;

/// Argon2id costs as read from JSON: unchecked until [`KdfParams::new`] bounds them.
#[derive(Clone, Copy, Serialize, Deserialize)]
struct Argon2Costs {
    m_cost: u32,
    t_cost: u32,
    p_cost: u32,
}

impl From<KdfParams> for Argon2Costs {
    fn from(p: KdfParams) -> Self {
        Argon2Costs { m_cost: p.m_cost(), t_cost: p.t_cost(), p_cost: p.p_cost() }
    }
}

/// Where a slot's KEK comes from.
#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
enum KekSource {
    Passphrase {
        argon2id: Argon2Costs,
        #[serde(with = "hex::array")]
        salt: [u8; 16],
    },
    KeyFile,
}

/// One wrapped copy of the master key.
#[derive(Clone, Serialize, Deserialize)]
struct Slot {
    id: SlotId,
    #[serde(flatten)]
    source: KekSource,
    #[serde(with = "hex::array")]
    nonce: [u8; NONCE_LEN],
    #[serde(with = "hex::array")]
    wrapped: [u8; WRAPPED_LEN],
    /// Shown to people, not authenticated (see [`SlotNote`]); absent in slots made before.
    #[serde(flatten)]
    note: SlotNote,
}

impl KekSource {
    fn kind(&self) -> SlotKind {
        match self {
            KekSource::Passphrase { .. } => SlotKind::Passphrase,
            KekSource::KeyFile => SlotKind::KeyFile,
        }
    }
}

impl Slot {
    fn kind(&self) -> SlotKind {
        self.source.kind()
    }

    /// Wraps `master` under `kek` as slot `id`.
    fn wrap(
        id: SlotId,
        source: KekSource,
        kek: &[u8; 32],
        master: &MasterKey,
        store_id: &[u8; 16],
    ) -> Result<Self, Error> {
        let nonce = aead::random_nonce()?;
        let kind = source.kind();
        // `seal_into` copies the plaintext into `out` before encrypting it there: wipe it, and
        // size it exactly so it never reallocates.
        let mut out = Zeroizing::new(Vec::with_capacity(WRAPPED_LEN));
        aead::seal_into(&Cipher::new(kek), &nonce, &associated_data(store_id, kind, id), master.expose(), &mut out)?;
        let wrapped = out[..].try_into().map_err(|_| Error::Decrypt)?;
        Ok(Slot { id, source, nonce, wrapped, note: SlotNote::default() })
    }

    /// This slot's KEK from `credential`, if the kinds match. Runs Argon2 (once) for a
    /// passphrase slot whose costs are in range, and never for one whose costs are not.
    fn kek(&self, credential: &Credential) -> Result<Zeroizing<[u8; 32]>, Error> {
        match (&self.source, credential) {
            (KekSource::Passphrase { argon2id: c, salt }, Credential::Passphrase(passphrase)) => {
                derive::passphrase_kek(passphrase, salt, KdfParams::new(c.m_cost, c.t_cost, c.p_cost)?)
            }
            (KekSource::KeyFile, Credential::KeyFile(file)) => Ok(file.kek()),
            _ => Err(Error::WrongKey),
        }
    }

    /// The master key, if `kek` is this slot's KEK and the slot belongs to store `store_id`.
    fn unwrap(&self, kek: &[u8; 32], store_id: &[u8; 16]) -> Result<MasterKey, Error> {
        let mut buf = Zeroizing::new(self.wrapped);
        let aad = associated_data(store_id, self.kind(), self.id);
        let len = aead::open_in_place(&Cipher::new(kek), &self.nonce, &aad, &mut buf[..])?;
        MasterKey::from_slice(&buf[..len]).ok_or(Error::Decrypt)
    }
}

/// Argon2id work of one run, in KiB × passes; at most 2^21 × 64 = 2^27 for a bounded slot,
/// so 16 of them cannot overflow.
fn work(params: KdfParams) -> u64 {
    u64::from(params.m_cost()) * u64::from(params.t_cost())
}

/// [`Error::UnlockWork`] if `total` (KiB × passes) is past [`KeySlots::MAX_UNLOCK_WORK_KIB`].
fn check_work(total: u64) -> Result<(), Error> {
    if total <= KeySlots::MAX_UNLOCK_WORK_KIB {
        Ok(())
    } else {
        Err(Error::UnlockWork { mib_passes: total.div_ceil(1024) })
    }
}

/// `"memfs keyslot v1" || store id || kind || id`: 37 bytes, fixed length.
fn associated_data(store_id: &[u8; 16], kind: SlotKind, id: SlotId) -> [u8; 37] {
    let mut aad = [0u8; 37];
    aad[..16].copy_from_slice(AAD_LABEL);
    aad[16..32].copy_from_slice(store_id);
    aad[32] = kind.to_u8();
    aad[33..].copy_from_slice(&id.get().to_be_bytes());
    aad
}

/// A store's key slots: every way to unlock its master key. Always holds at least one slot.
///
/// ```
/// use memfs_crypt::{Credential, KdfParams, KeyFile, KeySlots, MasterKey};
///
/// let store_id = [7u8; 16]; // the store id: 16 random bytes chosen when the store was created
/// let master = MasterKey::generate()?;
/// let cheap = KdfParams::new(8, 1, 1)?; // tests only: use KdfParams::DEFAULT
/// let mut slots = KeySlots::with_slot(&master, &store_id, &Credential::Passphrase("hunter2".into()), cheap)?;
/// let file = KeyFile::generate()?;
/// assert_eq!(slots.add_key_file_slot(&master, &store_id, &file)?.get(), 2);
///
/// let json = serde_json::to_string(&slots)?;
/// let slots: KeySlots = serde_json::from_str(&json)?;
/// let again = slots.unlock(&Credential::KeyFile(file), &store_id)?;
/// assert_eq!(again.address_key().address(b"x"), master.address_key().address(b"x"));
/// assert!(slots.unlock(&Credential::Passphrase("hunter3".into()), &store_id).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Serialize, Deserialize)]
#[serde(try_from = "UncheckedKeySlots")]
pub struct KeySlots {
    version: Version1,
    #[serde(with = "hex::array")]
    key_check: [u8; 32],
    slots: Vec<Slot>,
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

    /// A new set whose one slot opens `master` with `key_file`.
    pub fn with_key_file(master: &MasterKey, store_id: &[u8; 16], key_file: &KeyFile) -> Result<Self, Error> {
        Self::one_slot(master, |slots| slots.add_key_file_slot(master, store_id, key_file))
    }

    /// A new set whose one slot opens `master` with `credential`; `params` are the Argon2id
    /// costs if it is a passphrase (ignored for a key file).
    pub fn with_slot(
        master: &MasterKey,
        store_id: &[u8; 16],
        credential: &Credential,
        params: KdfParams,
    ) -> Result<Self, Error> {
        Self::one_slot(master, |slots| slots.add_slot(master, store_id, credential, params))
    }

    /// A new set for `master` holding the one slot `add` puts in it.
    fn one_slot(master: &MasterKey, add: impl FnOnce(&mut Self) -> Result<SlotId, Error>) -> Result<Self, Error> {
        let mut slots = KeySlots {
            version: Version1,
            key_check: *derive::key_check(master.expose()).as_bytes(),
            slots: Vec::new(),
        };
        add(&mut slots)?;
        Ok(slots)
    }

    /// The master key, unlocked with `credential`. See [`unlock_slot`](Self::unlock_slot).
    pub fn unlock(&self, credential: &Credential, store_id: &[u8; 16]) -> Result<MasterKey, Error> {
        self.unlock_slot(credential, store_id).map(|(_, master)| master)
    }

    /// The master key and the id of the slot that opened it.
    ///
    /// Tries only the slots of the credential's kind, in order, so with one passphrase slot
    /// this costs exactly one Argon2 run. Errors: [`Error::WrongKey`] if the credential opens
    /// none of them; [`Error::KdfParams`] if every such slot asks for out-of-range costs (no
    /// Argon2 run for those); [`Error::NoSlot`] if there is no slot of that kind.
    ///
    /// A passphrase first checks that the slots' summed Argon2id work is within
    /// [`MAX_UNLOCK_WORK_KIB`](Self::MAX_UNLOCK_WORK_KIB): [`Error::UnlockWork`] otherwise,
    /// with no Argon2 run. A key file runs no Argon2, so no such check.
    pub fn unlock_slot(&self, credential: &Credential, store_id: &[u8; 16]) -> Result<(SlotId, MasterKey), Error> {
        let kind = credential.kind();
        if kind == SlotKind::Passphrase {
            check_work(self.passphrase_work(None))?;
        }
        let mut failure = Error::NoSlot { kind };
        for slot in self.slots.iter().filter(|s| s.kind() == kind) {
            let kek = match slot.kek(credential) {
                Ok(kek) => kek,
                Err(e) => {
                    if matches!(failure, Error::NoSlot { .. }) {
                        failure = e;
                    }
                    continue;
                }
            };
            match slot.unwrap(&kek, store_id) {
                Ok(master) if self.owns(&master) => return Ok((slot.id, master)),
                // Authentic but not this set's key: the set was assembled wrongly.
                Ok(_) => return Err(Error::KeyMismatch),
                Err(_) => failure = Error::WrongKey,
            }
        }
        Err(failure)
    }

    /// Adds a slot that opens `master` with `credential` (Argon2id costs `params` if it is a
    /// passphrase, run once; ignored for a key file); returns its id. [`Error::KeyMismatch`] if
    /// `master` is not this set's key.
    pub fn add_slot(
        &mut self,
        master: &MasterKey,
        store_id: &[u8; 16],
        credential: &Credential,
        params: KdfParams,
    ) -> Result<SlotId, Error> {
        match credential {
            Credential::KeyFile(key_file) => self.add_key_file_slot(master, store_id, key_file),
            Credential::Passphrase(passphrase) => {
                self.check_room()?;
                check_work(self.passphrase_work(None) + work(params))?;
                let id = self.next_id();
                let slot = self.passphrase_slot(id, master, store_id, passphrase, params)?;
                self.slots.push(slot);
                Ok(id)
            }
        }
    }

    /// Adds a slot that opens `master` with `key_file`; returns its id.
    /// [`Error::KeyMismatch`] if `master` is not this set's key.
    pub fn add_key_file_slot(
        &mut self,
        master: &MasterKey,
        store_id: &[u8; 16],
        key_file: &KeyFile,
    ) -> Result<SlotId, Error> {
        self.check_owns(master)?;
        self.check_room()?;
        let id = self.next_id();
        self.slots.push(Slot::wrap(id, KekSource::KeyFile, &key_file.kek(), master, store_id)?);
        Ok(id)
    }

    /// Re-wraps passphrase slot `id` under `new` (fresh salt, fresh nonce, costs `params`),
    /// keeping its id. The old passphrase no longer opens it; the master key is unchanged.
    pub fn change_passphrase(
        &mut self,
        master: &MasterKey,
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
        self.slots[index] = Slot { note, ..self.passphrase_slot(id, master, store_id, new, params)? };
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

    /// The slots' ids and kinds, in order.
    pub fn slots(&self) -> impl ExactSizeIterator<Item = (SlotId, SlotKind)> + '_ {
        self.slots.iter().map(|s| (s.id, s.kind()))
    }

    fn passphrase_slot(
        &self,
        id: SlotId,
        master: &MasterKey,
        store_id: &[u8; 16],
        passphrase: &SecretString,
        params: KdfParams,
    ) -> Result<Slot, Error> {
        self.check_owns(master)?;
        let mut salt = [0u8; 16];
        getrandom::fill(&mut salt).map_err(|_| Error::Random)?;
        let kek = derive::passphrase_kek(passphrase, &salt, params)?;
        Slot::wrap(id, KekSource::Passphrase { argon2id: params.into(), salt }, &kek, master, store_id)
    }

    /// [`Error::TooManySlots`] if the set is full.
    fn check_room(&self) -> Result<(), Error> {
        if self.slots.len() < Self::MAX_SLOTS { Ok(()) } else { Err(Error::TooManySlots) }
    }

    /// The Argon2id work a passphrase unlock may do: the sum over the passphrase slots it
    /// would try (those whose costs are in range; the others are skipped without Argon2),
    /// leaving out slot `except`.
    fn passphrase_work(&self, except: Option<SlotId>) -> u64 {
        let costs = self.slots.iter().filter(|s| Some(s.id) != except).filter_map(|s| match &s.source {
            KekSource::Passphrase { argon2id: c, .. } => KdfParams::new(c.m_cost, c.t_cost, c.p_cost).ok(),
            KekSource::KeyFile => None,
        });
        costs.map(work).sum()
    }

    /// Whether `master` is this set's key; constant-time (`blake3::Hash` equality).
    fn owns(&self, master: &MasterKey) -> bool {
        derive::key_check(master.expose()) == blake3::Hash::from(self.key_check)
    }

    fn check_owns(&self, master: &MasterKey) -> Result<(), Error> {
        if self.owns(master) { Ok(()) } else { Err(Error::KeyMismatch) }
    }

    fn index(&self, id: SlotId) -> Result<usize, Error> {
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
        let KeySlots { version: _, key_check: _, slots } = self;
        f.debug_struct("KeySlots").field("slots", &slots.iter().map(|s| (s.id, s.kind())).collect::<Vec<_>>()).finish()
    }
}

/// The `version` field: serializes as 1 and refuses to deserialize anything else.
#[derive(Clone, Copy)]
struct Version1;

impl Serialize for Version1 {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(1)
    }
}

impl<'de> Deserialize<'de> for Version1 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match u64::deserialize(d)? {
            1 => Ok(Version1),
            v => Err(de::Error::custom(format_args!("unsupported key slot format version {v}"))),
        }
    }
}

/// [`KeySlots`] as read, before checking that it has one to [`KeySlots::MAX_SLOTS`] slots and
/// that their ids are distinct. (The summed Argon2id work is checked when a passphrase
/// unlocks, not here: a key file still opens a store whose passphrase slots are too costly.)
#[derive(Deserialize)]
struct UncheckedKeySlots {
    version: Version1,
    #[serde(with = "hex::array")]
    key_check: [u8; 32],
    slots: Vec<Slot>,
}

impl TryFrom<UncheckedKeySlots> for KeySlots {
    type Error = String;

    fn try_from(u: UncheckedKeySlots) -> Result<Self, Self::Error> {
        let UncheckedKeySlots { version, key_check, slots } = u;
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
        Ok(KeySlots { version, key_check, slots })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::derive::tests::argon2_runs;

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
        let (store, master) = ([1u8; 16], MasterKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&master, &store, &phrase("a"), cheap()).unwrap();
        let plain = serde_json::to_string(&slots).unwrap();
        assert!(!plain.contains("label") && !plain.contains("created_ms") && !plain.contains("host"), "{plain}");
        let note = SlotNote {
            label: Some("work \"laptop\"".into()),
            created_ms: Some(1_764_000_000_000),
            host: Some("h1".into()),
        };
        slots.set_note(SlotId::new(1), note.clone()).unwrap();
        slots.change_passphrase(&master, &store, SlotId::new(1), &SecretString::from("b"), cheap()).unwrap();
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
    fn one_passphrase_slot_costs_one_argon2_run() {
        let (store, master) = ([1u8; 16], MasterKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&master, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        let file = KeyFile::from_bytes([3; 32]);
        slots.add_key_file_slot(&master, &store, &file).unwrap();

        let before = argon2_runs();
        assert!(slots.unlock(&phrase("a"), &store).is_ok());
        assert_eq!(argon2_runs() - before, 1);
        assert!(matches!(slots.unlock(&phrase("b"), &store), Err(Error::WrongKey)));
        assert_eq!(argon2_runs() - before, 2);
        // A key file never runs Argon2, whatever passphrase slots there are.
        assert!(slots.unlock(&Credential::KeyFile(file), &store).is_ok());
        assert_eq!(argon2_runs() - before, 2);
    }

    #[test]
    fn hostile_costs_are_refused_before_argon2() {
        let (store, master) = ([1u8; 16], MasterKey::from_bytes([2; 32]));
        for (m, t, p) in [(u32::MAX, 3, 4), (65536, 1_000_000, 4), (65536, 3, 1 << 20), (0, 0, 0)] {
            let mut slots = KeySlots::with_slot(&master, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
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
    fn a_hostile_slot_does_not_hide_a_good_one() {
        let (store, master) = ([1u8; 16], MasterKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&master, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        slots.add_slot(&master, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        let KekSource::Passphrase { argon2id, .. } = &mut slots.slots[0].source else { unreachable!() };
        argon2id.m_cost = u32::MAX;
        let (id, _) = slots.unlock_slot(&phrase("a"), &store).unwrap();
        assert_eq!(id, SlotId::new(2));
        // With a wrong passphrase the tried slot decides: WrongKey.
        assert!(matches!(slots.unlock(&phrase("b"), &store), Err(Error::WrongKey)));
    }

    #[test]
    fn at_most_16_slots() {
        let (store, master) = ([1u8; 16], MasterKey::from_bytes([2; 32]));
        let file = KeyFile::from_bytes([3; 32]);
        let mut slots = KeySlots::with_key_file(&master, &store, &file).unwrap();
        for _ in 1..KeySlots::MAX_SLOTS {
            slots.add_key_file_slot(&master, &store, &file).unwrap();
        }
        assert!(matches!(slots.add_key_file_slot(&master, &store, &file), Err(Error::TooManySlots)));
        let before = argon2_runs();
        assert!(matches!(
            slots.add_slot(&master, &store, &Credential::Passphrase("a".into()), cheap()),
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
        let (store, master) = ([1u8; 16], MasterKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&master, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
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
        slots.add_key_file_slot(&master, &store, &file).unwrap();
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
        let err = slots.add_slot(&master, &store, &Credential::Passphrase("b".into()), two_gib_four).err().unwrap();
        assert!(matches!(err, Error::UnlockWork { mib_passes: 8193 }), "{err:?}");
        assert_eq!(argon2_runs(), before);
        // The defaults, sixteen times, fit.
        assert!(16 * work(KdfParams::DEFAULT) <= KeySlots::MAX_UNLOCK_WORK_KIB);
        assert!(work(KdfParams::new(2 << 20, 4, 4).unwrap()) <= KeySlots::MAX_UNLOCK_WORK_KIB);
    }

    #[test]
    fn associated_data_layout() {
        let aad = associated_data(&[0xaa; 16], SlotKind::KeyFile, SlotId::new(0x01020304));
        assert_eq!(&aad[..16], b"memfs keyslot v1");
        assert_eq!(aad[16..32], [0xaa; 16]);
        assert_eq!(aad[32..], [2, 1, 2, 3, 4]);
    }

    #[test]
    fn kind_and_id_are_authenticated() {
        // Even with the right KEK, a slot read as another kind or id does not open (the KEKs
        // of different kinds never match in practice: this is defence in depth).
        let (store, master) = ([1u8; 16], MasterKey::from_bytes([2; 32]));
        let file = KeyFile::from_bytes([3; 32]);
        let slots = KeySlots::with_key_file(&master, &store, &file).unwrap();
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
        let (store, master) = ([1u8; 16], MasterKey::from_bytes([2; 32]));
        let file = KeyFile::from_bytes([3; 32]);
        let mut slots = KeySlots::with_key_file(&master, &store, &file).unwrap();
        let two = slots.add_key_file_slot(&master, &store, &file).unwrap();
        let three = slots.add_key_file_slot(&master, &store, &file).unwrap();
        assert_eq!((two.get(), three.get()), (2, 3));
        slots.remove_slot(two).unwrap();
        assert_eq!(slots.add_key_file_slot(&master, &store, &file).unwrap().get(), 4);
        // Ids are now 1, 3, 4; with u32::MAX taken, the lowest free id is next.
        slots.slots[2].id = SlotId::new(u32::MAX);
        assert_eq!(slots.next_id(), SlotId::new(2));
    }
}
