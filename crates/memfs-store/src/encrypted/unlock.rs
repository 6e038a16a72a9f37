//! Unlocking a store's key slots off the async runtime.
//!
//! A passphrase runs Argon2id over every passphrase slot it tries: up to
//! [`KeySlots::MAX_UNLOCK_WORK_KIB`] of memory × passes, seconds of one core. Run inline, that
//! holds an async worker the whole time, and a server with a few workers (`memfs serve`) stops
//! answering every other tenant. So a passphrase unlocks on tokio's blocking pool.

use memfs_crypt::{Credential, KeySlots, Opened};

/// The slot `credential` opens in `slots`, and what it unlocks, for store `store_id`.
///
/// A key file runs no Argon2 (one BLAKE3 derivation and one AES-GCM open per key-file slot,
/// microseconds), so it unlocks in place; a passphrase moves to [`tokio::task::spawn_blocking`]
/// with copies of the slots and of the passphrase (a `SecretString`, wiped on drop).
pub(super) async fn unlock_slot(
    slots: &KeySlots,
    credential: &Credential,
    store_id: [u8; 16],
) -> Result<Opened, memfs_crypt::Error> {
    match credential {
        Credential::KeyFile(_) => slots.unlock(credential, &store_id),
        Credential::Passphrase(passphrase) => {
            let (slots, credential) = (slots.clone(), Credential::Passphrase(passphrase.clone()));
            let task = tokio::task::spawn_blocking(move || slots.unlock(&credential, &store_id));
            // A blocking task is only cancelled when the runtime shuts down, and then no one
            // polls this future: the error can only be a panic, which goes on up.
            task.await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
        }
    }
}
