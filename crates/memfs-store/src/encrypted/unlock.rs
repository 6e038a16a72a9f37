//! Unlocking a store's key slots off the async runtime, and through custodians.
//!
//! A passphrase runs Argon2id over every passphrase slot it tries: up to
//! [`KeySlots::MAX_UNLOCK_WORK_KIB`] of memory × passes, seconds of one core. Run inline, that
//! holds an async worker the whole time, and a server with a few workers (`memfs serve`) stops
//! answering every other tenant. So a passphrase unlocks on tokio's blocking pool.
//!
//! A custodian (keys kept outside memfs: a keychain, a KMS, an age identity) is asked, slot by
//! slot in the set's order, for the KEK of each custody slot of a kind it opens; the first
//! KEK that opens its slot wins. A slot that fails (the service refused, the key is disabled,
//! no identity for the recipient, or the KEK it gave does not open the slot) is noted and the
//! next one tried, so one unreachable KMS does not lock out a store another slot opens; if none
//! opens, the error names every slot tried and why. The custody slots it would send nothing
//! for (an endpoint, region or key this machine does not allow) are found first and kept, to
//! be named if the set fails its authentication (`Custodian::refuses`).

use memfs_crypt::{Credential, CustodyFailure, CustodyKek, Error, KeySlots, Opened};

/// The slot a credential opened, and the custody slots of the set its custodian refuses.
pub(super) struct SlotOpened {
    pub(super) opened: Opened,
    /// Empty unless the credential is a custodian.
    pub(super) refused: Vec<CustodyFailure>,
}

/// The slot `credential` opens in `slots`, and what it unlocks, for store `store_id`.
///
/// A key file runs no Argon2 (one BLAKE3 derivation and one AES-GCM open per key-file slot,
/// microseconds), so it unlocks in place; a passphrase moves to [`tokio::task::spawn_blocking`]
/// with copies of the slots and of the passphrase (a `SecretString`, wiped on drop). A
/// custodian's KEKs are zeroized when dropped, right after their slot is tried.
pub(super) async fn unlock_slot(
    slots: &KeySlots,
    credential: &Credential,
    store_id: [u8; 16],
) -> Result<SlotOpened, Error> {
    let opened = |opened| SlotOpened { opened, refused: Vec::new() };
    match credential {
        Credential::KeyFile(_) | Credential::Kek(_) => slots.unlock(credential, &store_id).map(opened),
        Credential::Passphrase(passphrase) => {
            let (slots, credential) = (slots.clone(), Credential::Passphrase(passphrase.clone()));
            let task = tokio::task::spawn_blocking(move || slots.unlock(&credential, &store_id));
            // A blocking task is only cancelled when the runtime shuts down, and then no one
            // polls this future: the error can only be a panic, which goes on up.
            task.await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())).map(opened)
        }
        Credential::Custodian(custodian) => {
            let refused: Vec<CustodyFailure> = slots
                .custody_slots()
                .filter_map(|(slot, kind, custody)| {
                    custodian.refuses(kind, custody).map(|e| CustodyFailure { slot, kind, cause: e.0 })
                })
                .collect();
            let mut failures = Vec::new();
            for (slot, kind, custody) in slots.custody_slots().filter(|(_, kind, _)| custodian.opens(*kind)) {
                let cause = match custodian.open(kind, custody, &store_id).await {
                    Ok(kek) => {
                        let kek = Credential::Kek(CustodyKek { kind, custody: custody.clone(), kek });
                        match slots.unlock(&kek, &store_id) {
                            Ok(opened) => return Ok(SlotOpened { opened, refused }),
                            Err(Error::WrongKey) => "the key it gave does not open the slot".to_owned(),
                            Err(e) => return Err(e),
                        }
                    }
                    Err(e) => e.0,
                };
                failures.push(CustodyFailure { slot, kind, cause });
            }
            if failures.is_empty() { Err(Error::NoCustodySlot) } else { Err(Error::CustodyFailed { failures }) }
        }
    }
}
