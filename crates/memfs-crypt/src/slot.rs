//! Key slots: every way to unlock a store, one slot per credential.
//!
//! Each slot holds an X25519 key pair. Its secret key is
//! encrypted with AES-256-GCM under a key-encryption key (KEK): Argon2id of a passphrase (see
//! `derive.rs`), or a BLAKE3 derivation of a key file's 32 random bytes. Its public key is
//! stored in the clear, and the store's root key is wrapped to it (an ephemeral X25519 key,
//! as age does for its recipients). So the root can be replaced (`memfs key rotate`) and
//! wrapped to every remaining slot without any of their credentials, and a removed slot never
//! receives the new one. Since anyone can wrap a root to a public key, a slot accepts only a
//! root its holder confirmed (`tag`) or one that a chain of signatures, each root signing the
//! next (`roots`), leads to from one it confirmed.
//!
//! The associated data of a slot, never stored, binds it to its store and its place:
//!
//! ```text
//! "memfs keyslot v2" (16 bytes)
//!     || store id (16) || slot kind (1: passphrase 1, key file 2) || slot id (4, big-endian)
//! ```
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
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

use crate::aead::{self, Cipher, NONCE_LEN, TAG_LEN};
use crate::credential::Credential;
use crate::custody::{Custody, CustodyKek};
use crate::derive::{self, KdfParams};
use crate::error::Error;
use crate::hex;
use crate::keyfile::KeyFile;
use crate::root::RootKey;
use crate::slot_id::{SlotId, SlotKind};
use crate::slot_note::SlotNote;
use crate::wrap::{self, WRAPPED_32};

/// Domain label that starts the associated data of a slot (the "v2" is part of the label).
const AAD_LABEL: &[u8; 16] = b"memfs keyslot v2";
/// Domain label of the root wrapped to a slot.
const ROOT_AAD: &[u8; 10] = b"memfs root";

/// A slot's wrapped X25519 secret: ciphertext and tag.
const WRAPPED_LEN: usize = 32 + TAG_LEN;
/// The longest chain of roots a set holds (one per rotation, as many as the keyring's epochs).
const MAX_ROOTS: usize = 4096;

/// The root wrapped to a slot: ephemeral public key, nonce, ciphertext and tag.
const SLOT_ROOT_LEN: usize = 32 + WRAPPED_32;

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
    Keychain(Custody),
    AwsKms(Custody),
    GcpKms(Custody),
    AzureKeyVault(Custody),
    Age(Custody),
}

/// One way in.
#[derive(Clone, Serialize, Deserialize)]
struct Slot {
    id: SlotId,
    #[serde(flatten)]
    source: KekSource,
    #[serde(with = "hex::array")]
    nonce: [u8; NONCE_LEN],
    /// The slot's X25519 secret key.
    #[serde(with = "hex::array")]
    wrapped: [u8; WRAPPED_LEN],
    /// The slot's X25519 public key.
    #[serde(with = "hex::array")]
    public: [u8; 32],
    /// The root, wrapped to `public`.
    #[serde(with = "hex::array")]
    root: [u8; SLOT_ROOT_LEN],
    /// The slot holder's confirmation of a root of the chain (see [`KeySlots::unlock`]): a
    /// keyed hash of its public key under a key from the slot's secret.
    #[serde(with = "hex::array")]
    tag: [u8; 32],
    /// Shown to people (see [`SlotNote`]); absent in slots made before notes.
    #[serde(flatten)]
    note: SlotNote,
}

impl KekSource {
    fn kind(&self) -> SlotKind {
        match self {
            KekSource::Passphrase { .. } => SlotKind::Passphrase,
            KekSource::KeyFile => SlotKind::KeyFile,
            KekSource::Keychain(_) => SlotKind::Keychain,
            KekSource::AwsKms(_) => SlotKind::AwsKms,
            KekSource::GcpKms(_) => SlotKind::GcpKms,
            KekSource::AzureKeyVault(_) => SlotKind::AzureKeyVault,
            KekSource::Age(_) => SlotKind::Age,
        }
    }

    /// The source of a custody slot of `kind`; [`Error::Custodian`] for the other kinds.
    fn custody(kind: SlotKind, custody: Custody) -> Result<Self, Error> {
        Ok(match kind {
            SlotKind::Keychain => KekSource::Keychain(custody),
            SlotKind::AwsKms => KekSource::AwsKms(custody),
            SlotKind::GcpKms => KekSource::GcpKms(custody),
            SlotKind::AzureKeyVault => KekSource::AzureKeyVault(custody),
            SlotKind::Age => KekSource::Age(custody),
            SlotKind::Passphrase | SlotKind::KeyFile => return Err(Error::Custodian),
        })
    }

    /// A custody slot's custody.
    fn custody_of(&self) -> Option<&Custody> {
        match self {
            KekSource::Passphrase { .. } | KekSource::KeyFile => None,
            KekSource::Keychain(c)
            | KekSource::AwsKms(c)
            | KekSource::GcpKms(c)
            | KekSource::AzureKeyVault(c)
            | KekSource::Age(c) => Some(c),
        }
    }
}

impl Slot {
    fn kind(&self) -> SlotKind {
        self.source.kind()
    }

    /// A slot `id` under `kek`: a fresh X25519 key pair, its secret wrapped under
    /// `kek`, and `root` wrapped to its public key.
    fn new(id: SlotId, source: KekSource, kek: &[u8; 32], root: &RootKey, store_id: &[u8; 16]) -> Result<Self, Error> {
        let secret = random_secret()?;
        let public = PublicKey::from(&secret).to_bytes();
        let (nonce, wrapped) = seal_under_kek(kek, store_id, source.kind(), id, secret.as_bytes())?;
        let tag = slot_tag(&Zeroizing::new(secret.to_bytes()), store_id, id, &root.public());
        let root = wrap_root(&public, root, store_id, id)?;
        Ok(Slot { id, source, nonce, wrapped, public, root, tag, note: SlotNote::default() })
    }

    /// This slot's KEK from `credential`, if the kinds match. Runs Argon2 (once) for a
    /// passphrase slot whose costs are in range, and never for one whose costs are not.
    fn kek(&self, credential: &Credential) -> Result<Zeroizing<[u8; 32]>, Error> {
        match (&self.source, credential) {
            (KekSource::Passphrase { argon2id: c, salt }, Credential::Passphrase(passphrase)) => {
                derive::passphrase_kek(passphrase, salt, KdfParams::new(c.m_cost, c.t_cost, c.p_cost)?)
            }
            (KekSource::KeyFile, Credential::KeyFile(file)) => Ok(file.kek()),
            (source, Credential::Kek(CustodyKek { kind, custody, kek }))
                if source.kind() == *kind && source.custody_of() == Some(custody) =>
            {
                Ok(kek.clone())
            }
            _ => Err(Error::WrongKey),
        }
    }

    /// The X25519 secret this slot wraps under `kek`.
    fn unwrap(&self, kek: &[u8; 32], store_id: &[u8; 16]) -> Result<Zeroizing<[u8; 32]>, Error> {
        let mut buf = Zeroizing::new(self.wrapped);
        let aad = associated_data(store_id, self.kind(), self.id);
        let len = aead::open_in_place(&Cipher::new(kek), &self.nonce, &aad, &mut buf[..])?;
        let mut out = Zeroizing::new([0u8; 32]);
        if len != 32 {
            return Err(Error::Decrypt);
        }
        out.copy_from_slice(&buf[..32]);
        Ok(out)
    }

    /// The root this slot holds, given its X25519 secret.
    fn open_root(&self, secret: &Zeroizing<[u8; 32]>, store_id: &[u8; 16]) -> Result<RootKey, Error> {
        let (public, sealed) = (&self.public, &self.root);
        let secret = StaticSecret::from(**secret);
        if PublicKey::from(&secret).as_bytes() != public {
            return Err(Error::Decrypt);
        }
        let (ephemeral, wrapped) = sealed.split_at(32);
        let ephemeral: [u8; 32] = ephemeral.try_into().map_err(|_| Error::Decrypt)?;
        let wrapped: &[u8; WRAPPED_32] = wrapped.try_into().map_err(|_| Error::Decrypt)?;
        let shared = secret.diffie_hellman(&PublicKey::from(ephemeral));
        if !shared.was_contributory() {
            return Err(Error::Decrypt);
        }
        let key = derive::derive(derive::SLOT_ROOT_CONTEXT, &[shared.as_bytes(), &ephemeral, public]);
        let root: Zeroizing<[u8; 32]> = wrap::unwrap(&key, &root_aad(store_id, self.id), wrapped)?;
        Ok(RootKey::from_bytes(*root))
    }
}

/// The tag with which the holder of a slot's secret confirms the root whose public key is
/// `root`: `BLAKE3-keyed(derive_key("memfs v7 2026-11-26 slot root confirmation key", slot
/// secret), "memfs root tag" || store id || slot id || root)`.
fn slot_tag(secret: &Zeroizing<[u8; 32]>, store_id: &[u8; 16], id: SlotId, root: &[u8; 32]) -> [u8; 32] {
    let key = derive::subkey(derive::SLOT_TAG_CONTEXT, secret);
    let mut hasher = blake3::Hasher::new_keyed(&key);
    hasher.update(b"memfs root tag").update(store_id).update(&id.get().to_be_bytes()).update(root);
    *hasher.finalize().as_bytes()
}

/// One root of a store's chain: its public key, and the previous root's signature of it.
#[derive(Clone, Serialize, Deserialize)]
struct RootLink {
    #[serde(with = "hex::array")]
    public: [u8; 32],
    #[serde(default, skip_serializing_if = "Option::is_none", with = "hex::option_array")]
    vouch: Option<[u8; 64]>,
}

/// `secret` sealed under a slot's KEK with the slot's associated data: a fresh nonce, and
/// ciphertext and tag.
fn seal_under_kek(
    kek: &[u8; 32],
    store_id: &[u8; 16],
    kind: SlotKind,
    id: SlotId,
    secret: &[u8; 32],
) -> Result<([u8; NONCE_LEN], [u8; WRAPPED_LEN]), Error> {
    let nonce = aead::random_nonce()?;
    // `seal_into` copies the plaintext into `out` before encrypting it there: wipe it, and
    // size it exactly so it never reallocates.
    let mut out = Zeroizing::new(Vec::with_capacity(WRAPPED_LEN));
    aead::seal_into(&Cipher::new(kek), &nonce, &associated_data(store_id, kind, id), secret, &mut out)?;
    Ok((nonce, out[..].try_into().map_err(|_| Error::Decrypt)?))
}

/// A fresh X25519 secret from the operating system's RNG.
fn random_secret() -> Result<StaticSecret, Error> {
    let mut bytes = Zeroizing::new([0u8; 32]);
    getrandom::fill(&mut bytes[..]).map_err(|_| Error::Random)?;
    Ok(StaticSecret::from(*bytes))
}

/// `root` wrapped to the slot whose public key is `public`: a fresh ephemeral key pair, the
/// shared secret through BLAKE3, AES-256-GCM. `ephemeral public key || nonce || sealed root`.
fn wrap_root(public: &[u8; 32], root: &RootKey, store_id: &[u8; 16], id: SlotId) -> Result<[u8; SLOT_ROOT_LEN], Error> {
    let ephemeral = random_secret()?;
    let ephemeral_public = PublicKey::from(&ephemeral).to_bytes();
    let shared = ephemeral.diffie_hellman(&PublicKey::from(*public));
    // A low-order point planted as a slot's public key would make the shared secret public.
    if !shared.was_contributory() {
        return Err(Error::Decrypt);
    }
    let key = derive::derive(derive::SLOT_ROOT_CONTEXT, &[shared.as_bytes(), &ephemeral_public, public]);
    let wrapped: [u8; WRAPPED_32] = wrap::wrap(&key, &root_aad(store_id, id), root.expose())?;
    let mut out = [0u8; SLOT_ROOT_LEN];
    out[..32].copy_from_slice(&ephemeral_public);
    out[32..].copy_from_slice(&wrapped);
    Ok(out)
}

/// `"memfs root" || store id || slot id (4, big-endian)`.
fn root_aad(store_id: &[u8; 16], id: SlotId) -> [u8; 30] {
    let mut aad = [0u8; 30];
    aad[..10].copy_from_slice(ROOT_AAD);
    aad[10..26].copy_from_slice(store_id);
    aad[26..].copy_from_slice(&id.get().to_be_bytes());
    aad
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

/// `"memfs keyslot v2" || store id || kind || id`: 37 bytes, fixed length.
fn associated_data(store_id: &[u8; 16], kind: SlotKind, id: SlotId) -> [u8; 37] {
    let mut aad = [0u8; 37];
    aad[..16].copy_from_slice(AAD_LABEL);
    aad[16..32].copy_from_slice(store_id);
    aad[32] = kind.to_u8();
    aad[33..].copy_from_slice(&id.get().to_be_bytes());
    aad
}

/// A slot opened by a credential: which one, and the root it gave. Keeps the slot's KEK (wiped
/// on drop) so that a stale confirmation can be renewed, and the slot's secret kept, without a
/// second Argon2 run.
pub struct Opened {
    slot: SlotId,
    root: RootKey,
    kek: Zeroizing<[u8; 32]>,
    /// The slot's confirmation names an older root of the chain than the current one.
    stale: bool,
}

impl Opened {
    /// The slot the credential opened.
    pub fn slot(&self) -> SlotId {
        self.slot
    }

    /// The store's root key.
    pub fn root(&self) -> &RootKey {
        &self.root
    }

    /// The root, by value.
    pub fn into_root(self) -> RootKey {
        let Opened { slot: _, root, kek: _, stale: _ } = self;
        root
    }
}

impl Opened {
    /// The X25519 secret of the slot this credential opened, as it stands in `slots`, for an
    /// open store to follow a rotation without the credential ([`KeySlots::root_for`]).
    pub fn slot_secret(&self, slots: &KeySlots, store_id: &[u8; 16]) -> Result<SlotSecret, Error> {
        let slot = &slots.slots[slots.index(self.slot)?];
        Ok(SlotSecret { id: self.slot, secret: slot.unwrap(&self.kek, store_id)? })
    }
}

/// The X25519 secret of one slot, kept (wiped on drop, never printed) by a store that
/// stays open, so that it can unwrap the new root a rotation wraps to its slot.
pub struct SlotSecret {
    id: SlotId,
    secret: Zeroizing<[u8; 32]>,
}

impl SlotSecret {
    /// The slot's id.
    pub fn slot(&self) -> SlotId {
        self.id
    }
}

impl fmt::Debug for SlotSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlotSecret").field("slot", &self.id).finish_non_exhaustive()
    }
}

impl fmt::Debug for Opened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opened").field("slot", &self.slot).finish_non_exhaustive()
    }
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
    key_check: [u8; 32],
    /// The public keys of the store's roots, oldest first, each after the first signed by the
    /// one before; the last is the current root's.
    roots: Vec<RootLink>,
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

    /// The slot `credential` opens, and the root it gives.
    ///
    /// Tries only the slots of the credential's kind, in order, so with one passphrase slot
    /// this costs exactly one Argon2 run. Errors: [`Error::WrongKey`] if the credential opens
    /// none of them; [`Error::KdfParams`] if every such slot asks for out-of-range costs (no
    /// Argon2 run for those); [`Error::NoSlot`] if there is no slot of that kind.
    ///
    /// A passphrase first checks that the slots' summed Argon2id work is within
    /// [`MAX_UNLOCK_WORK_KIB`](Self::MAX_UNLOCK_WORK_KIB): [`Error::UnlockWork`] otherwise,
    /// with no Argon2 run. A key file runs no Argon2, so no such check.
    pub fn unlock(&self, credential: &Credential, store_id: &[u8; 16]) -> Result<Opened, Error> {
        let kind = credential.kind().ok_or(Error::Custodian)?;
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
            let Ok(inner) = slot.unwrap(&kek, store_id) else {
                failure = Error::WrongKey;
                continue;
            };
            let root = slot.open_root(&inner, store_id)?;
            let stale = self.confirmed(slot, &inner, &root, store_id)?;
            // Authentic but not this set's key: the set was assembled wrongly.
            self.check_root(&root)?;
            return Ok(Opened { slot: slot.id, root, kek, stale });
        }
        Err(failure)
    }

    /// Whether `root`, which `slot` unwrapped, is one its holder confirmed, or one a chain of
    /// signatures leads to from one it confirmed: `Ok(false)` for the root it confirmed last,
    /// `Ok(true)` for a later one (the confirmation is stale: [`KeySlots::renew`] renews it), [`Error::UntrustedRoot`] otherwise.
    ///
    /// Why: the root is wrapped to the slot's *public* key, which anyone can do. Without this,
    /// whoever holds the storage could wrap a root of their own to a slot, with a keyring and a
    /// tag of their own, and the slot's credential would open that store and seal new data
    /// under keys they know. The confirmation needs the slot's secret, and each later root the
    /// previous root's signature.
    fn confirmed(
        &self,
        slot: &Slot,
        secret: &Zeroizing<[u8; 32]>,
        root: &RootKey,
        store_id: &[u8; 16],
    ) -> Result<bool, Error> {
        self.current_root_is(root)?;
        let tag = blake3::Hash::from(slot.tag);
        let confirmed = self
            .roots
            .iter()
            .rposition(|link| blake3::Hash::from(slot_tag(secret, store_id, slot.id, &link.public)) == tag)
            .ok_or(Error::UntrustedRoot)?;
        for index in confirmed + 1..self.roots.len() {
            let (previous, link) = (&self.roots[index - 1], &self.roots[index]);
            let vouch = link.vouch.as_ref().ok_or(Error::UntrustedRoot)?;
            let at = u32::try_from(index).map_err(|_| Error::UntrustedRoot)?;
            if !crate::root::vouched(&previous.public, &link.public, store_id, at, vouch) {
                return Err(Error::UntrustedRoot);
            }
        }
        Ok(confirmed + 1 < self.roots.len())
    }

    /// [`Error::UntrustedRoot`] unless `root` is the last of the chain.
    fn current_root_is(&self, root: &RootKey) -> Result<(), Error> {
        match self.roots.last() {
            Some(link) if link.public == root.public() => Ok(()),
            _ => Err(Error::UntrustedRoot),
        }
    }

    /// Renews the confirmation of the slot `opened` came from, if it named an older root of
    /// the chain than the current one (another holder rotated the store since this slot last
    /// opened it): the slot then confirms `root`, the current root, which the chain vouched
    /// for. Returns whether it changed anything.
    pub fn renew(&mut self, opened: &Opened, root: &RootKey, store_id: &[u8; 16]) -> Result<bool, Error> {
        let index = self.index(opened.slot)?;
        if !opened.stale {
            return Ok(false);
        }
        self.check_root(root)?;
        let slot = &self.slots[index];
        let secret = slot.unwrap(&opened.kek, store_id)?;
        self.slots[index].tag = slot_tag(&secret, store_id, slot.id, &root.public());
        Ok(true)
    }

    /// The root this set wraps to the slot of `secret`: what an open store reads after a
    /// rotation. [`Error::NoSuchSlot`] if the slot was removed, [`Error::Decrypt`] if it no
    /// longer holds that key pair, [`Error::KeyMismatch`] if the root is not the set's.
    pub fn root_for(&self, secret: &SlotSecret, store_id: &[u8; 16]) -> Result<RootKey, Error> {
        let slot = &self.slots[self.index(secret.id)?];
        let root = slot.open_root(&secret.secret, store_id)?;
        self.check_root(&root)?;
        self.confirmed(slot, &secret.secret, &root, store_id)?;
        Ok(root)
    }

    /// Confirms `root` for the slot of `secret` (its holder is at hand: a rotation confirms the
    /// rotator's own slot, so its next unlock has nothing to renew). [`Error::NoSuchSlot`] if
    /// the slot is gone; [`Error::KeyMismatch`] if `root` is not this set's.
    pub fn confirm(&mut self, secret: &SlotSecret, root: &RootKey, store_id: &[u8; 16]) -> Result<(), Error> {
        self.check_root(root)?;
        let index = self.index(secret.id)?;
        self.slots[index].tag = slot_tag(&secret.secret, store_id, secret.id, &root.public());
        Ok(())
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

    /// Wraps `new_root` to every slot (by its public key: no credential needed) in place of
    /// `old_root`, this set's root, which signs the new one into the chain, for `memfs key
    /// rotate`. [`Error::TooManyEpochs`] past 4,096 roots.
    pub fn rewrap_root(&mut self, old_root: &RootKey, new_root: &RootKey, store_id: &[u8; 16]) -> Result<(), Error> {
        self.check_root(old_root)?;
        if self.roots.len() >= MAX_ROOTS {
            return Err(Error::TooManyEpochs);
        }
        let public = new_root.public();
        let index = u32::try_from(self.roots.len()).map_err(|_| Error::TooManyEpochs)?;
        self.roots.push(RootLink { public, vouch: Some(old_root.vouch(&public, store_id, index)) });
        for slot in &mut self.slots {
            slot.root = wrap_root(&slot.public, new_root, store_id, slot.id)?;
        }
        self.key_check = *new_root.check().as_bytes();
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
    fn passphrase_work(&self, except: Option<SlotId>) -> u64 {
        let costs = self.slots.iter().filter(|s| Some(s.id) != except).filter_map(|s| match &s.source {
            KekSource::Passphrase { argon2id: c, .. } => KdfParams::new(c.m_cost, c.t_cost, c.p_cost).ok(),
            _ => None,
        });
        costs.map(work).sum()
    }

    /// [`Error::KeyMismatch`] unless `root` is this set's; constant-time (`blake3::Hash`
    /// equality).
    fn check_root(&self, root: &RootKey) -> Result<(), Error> {
        if root.check() == blake3::Hash::from(self.key_check) { Ok(()) } else { Err(Error::KeyMismatch) }
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
    fn one_passphrase_slot_costs_one_argon2_run() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&root, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        let file = KeyFile::from_bytes([3; 32]);
        slots.add_key_file_slot(&root, &store, &file).unwrap();

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
    fn a_hostile_slot_does_not_hide_a_good_one() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&root, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        slots.add_slot(&root, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        let KekSource::Passphrase { argon2id, .. } = &mut slots.slots[0].source else { unreachable!() };
        argon2id.m_cost = u32::MAX;
        let id = slots.unlock(&phrase("a"), &store).unwrap().slot();
        assert_eq!(id, SlotId::new(2));
        // With a wrong passphrase the tried slot decides: WrongKey.
        assert!(matches!(slots.unlock(&phrase("b"), &store), Err(Error::WrongKey)));
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
    fn associated_data_layout() {
        let aad = associated_data(&[0xaa; 16], SlotKind::KeyFile, SlotId::new(0x01020304));
        assert_eq!(&aad[..16], b"memfs keyslot v2");
        assert_eq!(aad[16..32], [0xaa; 16]);
        assert_eq!(aad[32..], [2, 1, 2, 3, 4]);
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

    /// A new root reaches every slot through its public key, with no credential at hand; a
    /// removed slot, which kept its secret, opens only the old root.
    #[test]
    fn a_new_root_reaches_the_remaining_slots_only() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let (kept, removed) = (KeyFile::from_bytes([3; 32]), KeyFile::from_bytes([4; 32]));
        let mut slots = KeySlots::with_key_file(&root, &store, &kept).unwrap();
        let gone = slots.add_key_file_slot(&root, &store, &removed).unwrap();
        let before = slots.clone();
        slots.remove_slot(gone).unwrap();
        let new_root = RootKey::from_bytes([9; 32]);
        slots.rewrap_root(&root, &new_root, &store).unwrap();
        let opened = slots.unlock(&Credential::KeyFile(kept), &store).unwrap();
        assert_eq!(*opened.root().expose(), [9; 32]);
        // An open store follows with the slot's secret alone; the removed slot's cannot.
        let kept_secret = opened.slot_secret(&slots, &store).unwrap();
        assert_eq!(slots.root_for(&kept_secret, &store).map(|r| *r.expose()).unwrap(), [9; 32]);
        let gone_opened = before.unlock(&Credential::KeyFile(KeyFile::from_bytes([4; 32])), &store).unwrap();
        let gone_secret = gone_opened.slot_secret(&before, &store).unwrap();
        assert!(matches!(slots.root_for(&gone_secret, &store), Err(Error::NoSuchSlot { .. })));
        // The removed credential still opens its copy of the old set, and only the old root.
        let old = before.unlock(&Credential::KeyFile(KeyFile::from_bytes([4; 32])), &store).unwrap();
        assert_eq!(*old.root().expose(), [2; 32]);
        assert!(matches!(slots.unlock(&Credential::KeyFile(removed), &store), Err(Error::WrongKey)));
    }

    fn kept(kind: SlotKind, key: &str, kek: u8) -> Credential {
        let custody = Custody { key: key.into(), region: None, wrapped: vec![kek; 3] };
        Credential::Kek(CustodyKek { kind, custody, kek: Zeroizing::new([kek; 32]) })
    }

    /// A custody slot stores its custody (kind, outside key, wrapped KEK) in the clear and
    /// opens with exactly that custody and KEK; the root reaches it through its public key
    /// like any slot. A custodian itself is never taken here.
    #[test]
    fn a_custody_slot_opens_with_its_kek_and_custody_only() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_key_file(&root, &store, &KeyFile::from_bytes([3; 32])).unwrap();
        let age = slots.add_slot(&root, &store, &kept(SlotKind::Age, "age1xyz", 7), cheap()).unwrap();
        let kms = slots.add_slot(&root, &store, &kept(SlotKind::AwsKms, "alias/memfs", 8), cheap()).unwrap();
        let json = serde_json::to_value(&slots).unwrap();
        assert_eq!(json["slots"][1]["kind"], "age");
        assert_eq!(json["slots"][1]["key"], "age1xyz");
        assert_eq!(json["slots"][1]["wrapped_kek"], "070707");
        assert_eq!(json["slots"][2]["kind"], "aws-kms");
        let slots: KeySlots = serde_json::from_value(json).unwrap();
        let listed: Vec<_> = slots.custody_slots().map(|(id, kind, c)| (id, kind, c.key.clone())).collect();
        assert_eq!(listed, [(age, SlotKind::Age, "age1xyz".into()), (kms, SlotKind::AwsKms, "alias/memfs".into())]);
        assert_eq!(slots.unlock(&kept(SlotKind::Age, "age1xyz", 7), &store).unwrap().slot(), age);
        assert_eq!(slots.unlock(&kept(SlotKind::AwsKms, "alias/memfs", 8), &store).unwrap().slot(), kms);
        // Another KEK, another custody, another kind: no.
        assert!(matches!(slots.unlock(&kept(SlotKind::Age, "age1xyz", 8), &store), Err(Error::WrongKey)));
        assert!(matches!(slots.unlock(&kept(SlotKind::Age, "age1abc", 7), &store), Err(Error::WrongKey)));
        assert!(matches!(slots.unlock(&kept(SlotKind::GcpKms, "age1xyz", 7), &store), Err(Error::NoSlot { .. })));
        // A rotation reaches it with no outside key at hand.
        let mut rotated = slots.clone();
        rotated.rewrap_root(&root, &RootKey::from_bytes([9; 32]), &store).unwrap();
        let opened = rotated.unlock(&kept(SlotKind::Age, "age1xyz", 7), &store).unwrap();
        assert_eq!(*opened.root().expose(), [9; 32]);
        // A custodian must be asked by the store first; a custody kind is no passphrase.
        struct Nobody;
        #[async_trait::async_trait]
        impl crate::Custodian for Nobody {
            fn opens(&self, _: SlotKind) -> bool {
                true
            }
            async fn open(
                &self,
                _: SlotKind,
                _: &Custody,
                _: &[u8; 16],
            ) -> Result<Zeroizing<[u8; 32]>, crate::CustodyError> {
                Err(crate::CustodyError("no".into()))
            }
            async fn seal(&self, _: &[u8; 16]) -> Result<CustodyKek, crate::CustodyError> {
                Err(crate::CustodyError("no".into()))
            }
        }
        let nobody = Credential::Custodian(std::sync::Arc::new(Nobody));
        assert!(matches!(slots.unlock(&nobody, &store), Err(Error::Custodian)));
        assert!(matches!(slots.clone().add_slot(&root, &store, &nobody, cheap()), Err(Error::Custodian)));
        let not_custody = Custody { key: "k".into(), region: None, wrapped: Vec::new() };
        assert!(matches!(KekSource::custody(SlotKind::Passphrase, not_custody), Err(Error::Custodian)));
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

    /// A public key replaced by a low-order point would make the wrapping key public: such a
    /// slot is never wrapped to, and a root sealed with it never opens.
    #[test]
    fn a_low_order_public_key_is_refused() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_key_file(&root, &store, &KeyFile::from_bytes([3; 32])).unwrap();
        slots.slots[0].public = [0; 32];
        assert!(matches!(slots.rewrap_root(&root, &root, &store), Err(Error::Decrypt)));
    }

    /// The attack the chain of roots meets: the storage holder wraps a root of their own to a
    /// slot's public key (public: anyone can), with the set's check value and chain made to
    /// match. The slot's credential unlocks the slot, and the root is refused: the slot never
    /// confirmed it and no root it confirmed signed it.
    #[test]
    fn a_root_wrapped_to_a_slot_by_someone_else_is_refused() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let file = KeyFile::from_bytes([3; 32]);
        let genuine = KeySlots::with_key_file(&root, &store, &file).unwrap();
        let attacker = RootKey::from_bytes([66; 32]);
        let mut forged = genuine.clone();
        let public = forged.slots[0].public;
        forged.slots[0].root = wrap_root(&public, &attacker, &store, SlotId::new(1)).unwrap();
        forged.key_check = *attacker.check().as_bytes();
        forged.roots = vec![RootLink { public: attacker.public(), vouch: None }];
        assert!(matches!(forged.unlock(&Credential::KeyFile(file), &store), Err(Error::UntrustedRoot)));
        // Appending the attacker's root to the genuine chain needs the genuine root's signature.
        let mut appended = genuine.clone();
        appended.slots[0].root = forged.slots[0].root;
        appended.key_check = forged.key_check;
        let forged_vouch = attacker.vouch(&attacker.public(), &store, 1);
        appended.roots.push(RootLink { public: attacker.public(), vouch: Some(forged_vouch) });
        let file = KeyFile::from_bytes([3; 32]);
        assert!(matches!(appended.unlock(&Credential::KeyFile(file), &store), Err(Error::UntrustedRoot)));
    }

    /// After rotations by another slot's holder, a slot's confirmation names an older root; the
    /// chain of signatures vouches for the current one, and the next unlock confirms it.
    #[test]
    fn a_stale_confirmation_follows_the_chain_and_is_renewed() {
        let (store, first) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let (mine, theirs) = (KeyFile::from_bytes([3; 32]), KeyFile::from_bytes([4; 32]));
        let mut slots = KeySlots::with_key_file(&first, &store, &mine).unwrap();
        slots.add_key_file_slot(&first, &store, &theirs).unwrap();
        let (second, third) = (RootKey::from_bytes([5; 32]), RootKey::from_bytes([6; 32]));
        slots.rewrap_root(&first, &second, &store).unwrap();
        slots.rewrap_root(&second, &third, &store).unwrap();
        // The rotator confirms its own slot at once; the other holder's is renewed on unlock.
        let theirs_opened = slots.unlock(&Credential::KeyFile(KeyFile::from_bytes([4; 32])), &store).unwrap();
        let theirs_secret = theirs_opened.slot_secret(&slots, &store).unwrap();
        let mut confirmed = slots.clone();
        confirmed.confirm(&theirs_secret, &third, &store).unwrap();
        let fresh = confirmed.unlock(&Credential::KeyFile(KeyFile::from_bytes([4; 32])), &store).unwrap();
        assert!(!confirmed.renew(&fresh, &third, &store).unwrap(), "confirmed: nothing to renew");
        let opened = slots.unlock(&Credential::KeyFile(KeyFile::from_bytes([3; 32])), &store).unwrap();
        assert_eq!(*opened.root().expose(), [6; 32]);
        assert!(slots.renew(&opened, &third, &store).unwrap(), "the confirmation is renewed");
        let again = slots.unlock(&Credential::KeyFile(mine), &store).unwrap();
        assert!(!slots.renew(&again, &third, &store).unwrap(), "and then current");
        // A link whose signature is broken breaks the chain for a stale slot.
        let mut broken = slots.clone();
        broken.roots[2].vouch = Some([0; 64]);
        assert!(matches!(broken.unlock(&Credential::KeyFile(theirs), &store), Err(Error::UntrustedRoot)));
    }
}
