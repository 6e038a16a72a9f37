//! Every key derivation memfs performs, in one place.
//!
//! Keys from keys: each subkey comes from a 256-bit input key with BLAKE3's `derive_key` and a
//! context string that names the application, the format version, a date and the purpose, so
//! no two purposes can ever share a key (BLAKE3 spec §6.2: the context string is hard-coded,
//! globally unique and application-specific). `derive_key` is fast, so it only ever takes
//! uniformly random 256-bit inputs: a store's first key, or a key file's 32 random bytes.
//!
//! Keys from passphrases: Argon2id (RFC 9106), version 0x13, 32-byte output, with a 16-byte
//! random salt and costs stored in the key slot. Costs read from a slot are bounded by
//! [`KdfParams::new`] before Argon2 runs.

use argon2::{Algorithm, Argon2, AssociatedData, ParamsBuilder, Version};
use secrecy::{ExposeSecret, SecretString};
use zeroize::Zeroizing;

use crate::error::Error;

/// Context for the key that names content objects (keyed BLAKE3 of the plaintext).
pub(crate) const ADDRESS_CONTEXT: &str = "memfs v1 2026-11-21 object address key";

/// Context for the key that names directories and commits. Separate from blobs' so that a file
/// whose content happens to be a directory's serialization still gets another id (an id names
/// one sealed object, and the object's kind is bound into its encryption).
pub(crate) const TREE_ADDRESS_CONTEXT: &str = "memfs v1 2026-11-21 tree address key";

/// Context for the key-encryption key a key file's bytes give.
pub(crate) const KEY_FILE_CONTEXT: &str = "memfs v1 2026-11-21 key file key-encryption key";

/// The data key of one sealed object (docs/FORMAT.md, "Keys"):
/// `derive_key(this, epoch key || 16-byte salt)`.
pub(crate) const DATA_CONTEXT: &str = "memfs v7 2026-11-26 object data key";

/// The public check value of a root key (`key_check` of the slot set).
pub(crate) const ROOT_CHECK_CONTEXT: &str = "memfs v7 2026-11-26 root key check";

/// The key that authenticates `memfs.keys` (keyed BLAKE3 over its body).
pub(crate) const KEYS_MAC_CONTEXT: &str = "memfs v7 2026-11-26 key set authentication key";

/// The Ed25519 signing key of a root: it signs the next root (`roots` in the slot set).
pub(crate) const ROOT_SIGN_CONTEXT: &str = "memfs v7 2026-11-26 root signing key";

/// The key, from a slot's X25519 secret, of the tag with which the slot's holder confirms a
/// root (only the holder of the slot's credential can make it).
pub(crate) const SLOT_TAG_CONTEXT: &str = "memfs v7 2026-11-26 slot root confirmation key";

/// The key that wraps each epoch key under the root.
pub(crate) const EPOCH_WRAP_CONTEXT: &str = "memfs v7 2026-11-26 epoch key wrapping key";

/// The key that wraps the two address keys under the root.
pub(crate) const ADDRESS_WRAP_CONTEXT: &str = "memfs v7 2026-11-26 address key wrapping key";

/// The key that wraps the root to one slot: `derive_key(this, X25519 shared secret ||
/// ephemeral public key || slot public key)`.
pub(crate) const SLOT_ROOT_CONTEXT: &str = "memfs v7 2026-11-26 root wrapped to a slot";

/// A 32-byte key for `context` from any number of input bytes (for inputs that are not one
/// 32-byte key: a key and a salt, a shared secret and public keys).
pub(crate) fn derive(context: &'static str, material: &[&[u8]]) -> Zeroizing<[u8; 32]> {
    let mut hasher = blake3::Hasher::new_derive_key(context);
    for part in material {
        hasher.update(part);
    }
    let key = Zeroizing::new(*hasher.finalize().as_bytes());
    // The hasher's state holds the input (key material): wipe it (blake3's `zeroize` feature).
    zeroize::Zeroize::zeroize(&mut hasher);
    key
}

/// Derives the 32-byte subkey for `context` from `master`.
pub(crate) fn subkey(context: &'static str, master: &[u8; 32]) -> Zeroizing<[u8; 32]> {
    Zeroizing::new(blake3::derive_key(context, master))
}

/// The key-encryption key of a key-file slot. The file is 32 random bytes, so a fast KDF is
/// right here: there is nothing to stretch.
pub(crate) fn key_file_kek(file: &[u8; 32]) -> Zeroizing<[u8; 32]> {
    subkey(KEY_FILE_CONTEXT, file)
}

/// Argon2id costs for a passphrase slot. Every value of this type is within the accepted range:
/// the only constructor is [`KdfParams::new`], which bounds it.
///
/// ```
/// use memfs_crypt::KdfParams;
/// assert!(KdfParams::new(65536, 3, 4).is_ok());
/// assert!(KdfParams::new(u32::MAX, 3, 4).is_err()); // 4 TiB: refused before Argon2 runs
/// assert!(KdfParams::new(8, 1, 2).is_err()); // Argon2 needs 8 KiB per lane
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KdfParams {
    m_cost: u32,
    t_cost: u32,
    p_cost: u32,
}

impl KdfParams {
    /// RFC 9106 §4's second recommended option: 64 MiB, 3 passes, 4 lanes.
    pub const DEFAULT: KdfParams = KdfParams { m_cost: 64 * 1024, t_cost: 3, p_cost: 4 };

    /// The largest memory cost accepted, in KiB (2 GiB).
    pub const MAX_M_COST: u32 = 2 * 1024 * 1024;
    /// The largest number of passes accepted.
    pub const MAX_T_COST: u32 = 64;
    /// The largest degree of parallelism accepted.
    pub const MAX_P_COST: u32 = 16;

    /// Argon2id costs: `m_cost` KiB of memory, `t_cost` passes, `p_cost` lanes.
    ///
    /// Accepted: `1 <= p_cost <= 16`, `8 * p_cost <= m_cost <= 2 GiB` (Argon2 needs 8 KiB per
    /// lane; the ceiling keeps a hostile slot from demanding more memory than a laptop has),
    /// `1 <= t_cost <= 64`. Anything else is [`Error::KdfParams`]. Small values are accepted
    /// (tests use `KdfParams::new(8, 1, 1)`): a slot's costs only weaken that slot.
    pub fn new(m_cost: u32, t_cost: u32, p_cost: u32) -> Result<Self, Error> {
        let ok = (1..=Self::MAX_P_COST).contains(&p_cost)
            && (8 * p_cost..=Self::MAX_M_COST).contains(&m_cost)
            && (1..=Self::MAX_T_COST).contains(&t_cost);
        if ok { Ok(KdfParams { m_cost, t_cost, p_cost }) } else { Err(Error::KdfParams { m_cost, t_cost, p_cost }) }
    }

    /// Memory cost in KiB.
    pub fn m_cost(&self) -> u32 {
        self.m_cost
    }

    /// Number of passes.
    pub fn t_cost(&self) -> u32 {
        self.t_cost
    }

    /// Degree of parallelism (lanes).
    pub fn p_cost(&self) -> u32 {
        self.p_cost
    }
}

impl Default for KdfParams {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The key-encryption key of a passphrase slot: Argon2id(passphrase, salt) with no secret and
/// no associated data, so it can be checked with any RFC 9106 implementation. The passphrase's
/// UTF-8 bytes are used as they are (no trimming, no Unicode normalisation).
pub(crate) fn passphrase_kek(
    passphrase: &SecretString,
    salt: &[u8; 16],
    params: KdfParams,
) -> Result<Zeroizing<[u8; 32]>, Error> {
    let mut kek = Zeroizing::new([0u8; 32]);
    argon2id(passphrase.expose_secret().as_bytes(), salt, &[], &[], params, &mut kek[..])?;
    Ok(kek)
}

/// Argon2id v0x13 with all of RFC 9106's inputs, so the known-answer test of §5.3 runs through
/// the same code as [`passphrase_kek`]. The `argon2` crate's `zeroize` feature wipes its
/// memory blocks when done.
fn argon2id(pwd: &[u8], salt: &[u8], secret: &[u8], ad: &[u8], params: KdfParams, out: &mut [u8]) -> Result<(), Error> {
    #[cfg(test)]
    tests::ARGON2_RUNS.with(|n| n.set(n.get() + 1));
    // Every argon2 error here is an input out of its range: the costs are already bounded, so
    // only absurd lengths remain (a passphrase over 4 GiB). Report them as the costs' error.
    let refused = || Error::KdfParams { m_cost: params.m_cost, t_cost: params.t_cost, p_cost: params.p_cost };
    let data = AssociatedData::new(ad).map_err(|_| refused())?;
    let argon_params = ParamsBuilder::new()
        .m_cost(params.m_cost)
        .t_cost(params.t_cost)
        .p_cost(params.p_cost)
        .data(data)
        .output_len(out.len())
        .build()
        .map_err(|_| refused())?;
    let ctx = if secret.is_empty() {
        Argon2::new(Algorithm::Argon2id, Version::V0x13, argon_params)
    } else {
        Argon2::new_with_secret(secret, Algorithm::Argon2id, Version::V0x13, argon_params).map_err(|_| refused())?
    };
    ctx.hash_password_into(pwd, salt, out).map_err(|_| refused())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::hex;

    thread_local! {
        /// How many times Argon2 ran on this thread (tests only): proves that unlocking costs
        /// one run per matching slot, and none for a hostile slot.
        pub(crate) static ARGON2_RUNS: Cell<u32> = const { Cell::new(0) };
    }

    /// Argon2 runs on this thread so far.
    pub(crate) fn argon2_runs() -> u32 {
        ARGON2_RUNS.with(Cell::get)
    }

    /// RFC 9106 §5.3 (Argon2id test vector): m = 32 KiB, t = 3, p = 4, password 32 × 0x01,
    /// salt 16 × 0x02, secret 8 × 0x03, associated data 12 × 0x04, tag length 32.
    #[test]
    fn argon2id_rfc9106_section_5_3() {
        let mut out = [0u8; 32];
        let params = KdfParams::new(32, 3, 4).unwrap();
        argon2id(&[0x01; 32], &[0x02; 16], &[0x03; 8], &[0x04; 12], params, &mut out).unwrap();
        assert_eq!(hex::encode(&out), "0d640df58d78766c08c037a34a8b53c9d01ef0452d75b65eb52520e96b01e659");
    }

    /// The reference implementation's test suite (P-H-C/phc-winner-argon2 `src/test.c`,
    /// Argon2id v0x13, `hashtest(..., 2, 8, 1, "password", "somesalt", ...)`): t = 2,
    /// m = 2^8 KiB, p = 1, no secret, no associated data, as memfs's passphrase slots use it.
    #[test]
    fn argon2id_reference_vector_without_secret() {
        let mut out = [0u8; 32];
        let params = KdfParams::new(256, 2, 1).unwrap();
        argon2id(b"password", b"somesalt", &[], &[], params, &mut out).unwrap();
        assert_eq!(hex::encode(&out), "9dfeb910e80bad0311fee20f9c0e2b12c17987b4cac90c2ef54d5b3021c68bfe");
    }

    #[test]
    fn passphrase_kek_is_plain_argon2id() {
        let params = KdfParams::new(256, 2, 1).unwrap();
        let mut expected = [0u8; 32];
        argon2id(b"password", &[7; 16], &[], &[], params, &mut expected).unwrap();
        let kek = passphrase_kek(&SecretString::from("password"), &[7; 16], params).unwrap();
        assert_eq!(*kek, expected);
    }

    #[test]
    fn kdf_params_are_bounded() {
        assert_eq!(KdfParams::default(), KdfParams::new(65536, 3, 4).unwrap());
        assert!(KdfParams::new(8, 1, 1).is_ok());
        assert!(KdfParams::new(KdfParams::MAX_M_COST, KdfParams::MAX_T_COST, KdfParams::MAX_P_COST).is_ok());
        for (m, t, p) in [
            (u32::MAX, 3, 4),
            (KdfParams::MAX_M_COST + 1, 3, 4),
            (65536, 1_000_000, 4),
            (65536, 65, 4),
            (65536, 0, 4),
            (65536, 3, 0),
            (65536, 3, 17),
            (65536, 3, u32::MAX),
            (31, 3, 4),
            (7, 1, 1),
        ] {
            assert!(
                matches!(KdfParams::new(m, t, p), Err(Error::KdfParams { m_cost, t_cost, p_cost }) if (m_cost, t_cost, p_cost) == (m, t, p)),
                "{m} {t} {p}"
            );
        }
    }

    /// Freezes the derivations from 32-byte keys: these contexts name keys in every store
    /// (the "v1"/"v7" in them are part of the label, not a version anyone reads).
    #[test]
    fn contexts_are_frozen() {
        let master = [0x42; 32];
        let got: Vec<String> = [ADDRESS_CONTEXT, KEY_FILE_CONTEXT, TREE_ADDRESS_CONTEXT]
            .iter()
            .map(|c| hex::encode(&subkey(c, &master)[..]))
            .collect();
        assert_eq!(ADDRESS_CONTEXT, "memfs v1 2026-11-21 object address key");
        assert_eq!(got, FROZEN.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        let data = hex::encode(&derive(DATA_CONTEXT, &[&master, &[0x24; 16]])[..]);
        assert_eq!(data, FROZEN_DATA_KEY);
    }

    /// `subkey(context, [0x42; 32])` for the three contexts above, in order.
    const FROZEN: [&str; 3] = [
        "4ec9ec935ac3bd254a37890b0b448ae8cee7550238a777d7afbee18222fac9e2",
        "e50e45b4f3cfaf9f1688e05444748ee906802c42d16c83d198002378ac272935",
        "3bd00bc50996930a749f2b904e6f406689a30f00b607c0a21500b95f3a8d71e2",
    ];

    /// The data key of epoch key `[0x42; 32]` and salt `[0x24; 16]` (the sealed object frozen
    /// in `seal.rs`).
    const FROZEN_DATA_KEY: &str = "c9e35403956e6ff4b3aa021ae312c7fdea31b9da252ea88846e4dd9d40c95e7f";
}
