//! One key slot: a way to unlock a store, one per credential (the set of them is
//! `slot_set.rs`, opening one and the chain of roots `slot_unlock.rs`).
//!
//! Each slot holds an X25519 key pair. Its secret key is encrypted with AES-256-GCM under a
//! key-encryption key (KEK): Argon2id of a passphrase (see `derive.rs`), a BLAKE3 derivation of
//! a key file's 32 random bytes, or 32 random bytes kept outside memfs (`custody.rs`). Its
//! public key is stored in the clear, and the store's root key is wrapped to it (an ephemeral
//! X25519 key, as age does for its recipients), so a new root reaches every slot without any
//! credential. Its `tag` is its holder's confirmation of a root (`slot_unlock.rs`).
//!
//! The associated data of a slot's secret, never stored, binds it to its store and its place:
//!
//! ```text
//! "memfs keyslot v2" (16 bytes) || store id (16) || slot kind (1: passphrase 1, key file 2, …)
//!     || slot id (4, big-endian)
//! ```

use serde::{Deserialize, Serialize};
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

use crate::aead::{self, Cipher, NONCE_LEN, TAG_LEN};
use crate::credential::Credential;
use crate::custody::{Custody, CustodyKek};
use crate::derive::{self, KdfParams};
use crate::error::Error;
use crate::hex;
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

/// The root wrapped to a slot: ephemeral public key, nonce, ciphertext and tag.
const SLOT_ROOT_LEN: usize = 32 + WRAPPED_32;

/// Argon2id costs as read from JSON: unchecked until [`KdfParams::new`] bounds them.
#[derive(Clone, Copy, Serialize, Deserialize)]
pub(crate) struct Argon2Costs {
    pub(crate) m_cost: u32,
    pub(crate) t_cost: u32,
    pub(crate) p_cost: u32,
}

impl Argon2Costs {
    /// The costs, once [`KdfParams::new`] bounds them.
    pub(crate) fn params(self) -> Result<KdfParams, Error> {
        KdfParams::new(self.m_cost, self.t_cost, self.p_cost)
    }
}

impl From<KdfParams> for Argon2Costs {
    fn from(p: KdfParams) -> Self {
        Argon2Costs { m_cost: p.m_cost(), t_cost: p.t_cost(), p_cost: p.p_cost() }
    }
}

/// Where a slot's KEK comes from.
#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub(crate) enum KekSource {
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
pub(crate) struct Slot {
    pub(crate) id: SlotId,
    #[serde(flatten)]
    pub(crate) source: KekSource,
    #[serde(with = "hex::array")]
    pub(crate) nonce: [u8; NONCE_LEN],
    /// The slot's X25519 secret key.
    #[serde(with = "hex::array")]
    pub(crate) wrapped: [u8; WRAPPED_LEN],
    /// The slot's X25519 public key.
    #[serde(with = "hex::array")]
    pub(crate) public: [u8; 32],
    /// The root, wrapped to `public`.
    #[serde(with = "hex::array")]
    pub(crate) root: [u8; SLOT_ROOT_LEN],
    /// The slot holder's confirmation of a root of the chain (see [`crate::KeySlots::unlock`]): a
    /// keyed hash of its public key under a key from the slot's secret.
    #[serde(with = "hex::array")]
    pub(crate) tag: [u8; 32],
    /// Shown to people (see [`SlotNote`]); absent in slots made before notes.
    #[serde(flatten)]
    pub(crate) note: SlotNote,
}

impl KekSource {
    pub(crate) fn kind(&self) -> SlotKind {
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
    pub(crate) fn custody(kind: SlotKind, custody: Custody) -> Result<Self, Error> {
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
    pub(crate) fn custody_of(&self) -> Option<&Custody> {
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
    pub(crate) fn kind(&self) -> SlotKind {
        self.source.kind()
    }

    /// A slot `id` under `kek`: a fresh X25519 key pair, its secret wrapped under
    /// `kek`, and `root` wrapped to its public key.
    pub(crate) fn new(
        id: SlotId,
        source: KekSource,
        kek: &[u8; 32],
        root: &RootKey,
        store_id: &[u8; 16],
    ) -> Result<Self, Error> {
        let secret = random_secret()?;
        let public = PublicKey::from(&secret).to_bytes();
        let (nonce, wrapped) = seal_under_kek(kek, store_id, source.kind(), id, secret.as_bytes())?;
        let tag = slot_tag(&Zeroizing::new(secret.to_bytes()), store_id, id, &root.public());
        let root = wrap_root(&public, root, store_id, id)?;
        Ok(Slot { id, source, nonce, wrapped, public, root, tag, note: SlotNote::default() })
    }

    /// This slot's KEK from `credential`, if the kinds match. Runs Argon2 (once) for a
    /// passphrase slot whose costs are in range, and never for one whose costs are not.
    pub(crate) fn kek(&self, credential: &Credential) -> Result<Zeroizing<[u8; 32]>, Error> {
        match (&self.source, credential) {
            (KekSource::Passphrase { argon2id: c, salt }, Credential::Passphrase(passphrase)) => {
                derive::passphrase_kek(passphrase, salt, c.params()?)
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
    pub(crate) fn unwrap(&self, kek: &[u8; 32], store_id: &[u8; 16]) -> Result<Zeroizing<[u8; 32]>, Error> {
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
    pub(crate) fn open_root(&self, secret: &Zeroizing<[u8; 32]>, store_id: &[u8; 16]) -> Result<RootKey, Error> {
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
pub(crate) fn slot_tag(secret: &Zeroizing<[u8; 32]>, store_id: &[u8; 16], id: SlotId, root: &[u8; 32]) -> [u8; 32] {
    let key = derive::subkey(derive::SLOT_TAG_CONTEXT, secret);
    let mut hasher = blake3::Hasher::new_keyed(&key);
    hasher.update(b"memfs root tag").update(store_id).update(&id.get().to_be_bytes()).update(root);
    *hasher.finalize().as_bytes()
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
pub(crate) fn wrap_root(
    public: &[u8; 32],
    root: &RootKey,
    store_id: &[u8; 16],
    id: SlotId,
) -> Result<[u8; SLOT_ROOT_LEN], Error> {
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

/// `"memfs keyslot v2" || store id || kind || id`: 37 bytes, fixed length.
fn associated_data(store_id: &[u8; 16], kind: SlotKind, id: SlotId) -> [u8; 37] {
    let mut aad = [0u8; 37];
    aad[..16].copy_from_slice(AAD_LABEL);
    aad[16..32].copy_from_slice(store_id);
    aad[32] = kind.to_u8();
    aad[33..].copy_from_slice(&id.get().to_be_bytes());
    aad
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn associated_data_layout() {
        let aad = associated_data(&[0xaa; 16], SlotKind::KeyFile, SlotId::new(0x01020304));
        assert_eq!(&aad[..16], b"memfs keyslot v2");
        assert_eq!(aad[16..32], [0xaa; 16]);
        assert_eq!(aad[32..], [2, 1, 2, 3, 4]);
    }
}
