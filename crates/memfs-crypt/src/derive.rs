//! Every key derivation memfs performs, in one place.
//!
//! Each subkey comes from the master key with BLAKE3's `derive_key` and a context string that
//! names the application, the format version and the purpose, so no two purposes can ever share
//! a key. Never used on passwords: those go through Argon2id first.

/// Context for the key that names content objects (keyed BLAKE3 of the plaintext).
pub(crate) const ADDRESS_CONTEXT: &str = "memfs v1 2026-11-21 object address key";

/// Derives the 32-byte subkey for `context` from `master`.
pub(crate) fn subkey(context: &str, master: &[u8; 32]) -> [u8; 32] {
    blake3::derive_key(context, master)
}
