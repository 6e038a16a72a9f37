//! The commit that records a key slot confirming the root another holder's `memfs key
//! rotate` gave it, the first time the slot opens the store since (docs/FORMAT.md,
//! `unrecorded`).
//!
//! The confirmation is written when the store opens, before anything else: by compare-and-swap
//! of `memfs.keys`, marked unrecorded (a [`Confirmation`] in `memfs.keys`' field `unrecorded`).
//! The open then makes one commit that records it (the tree unchanged, the head naming the new
//! change counter) and clears the mark. A crash between leaves the mark, so the next open makes
//! the commit; two clients opening at once make it once, because a commit is skipped when the
//! head already names the counter (see [`EncryptedRepository::record_unless_named`]).

use memfs_crypt::Confirmation;

use super::EncryptedRepository;
use super::key_set::{KeysHead, confirm_operation};
use crate::error::Error;

/// A confirmation opening the store made ([`EncryptedRepository::confirmed`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmed {
    /// The slot that confirmed the root of the last rotation.
    pub slot: u32,
    /// The generation of the commit that records it, or why that commit could not be made
    /// (the confirmation itself is written; the next open makes the commit).
    pub commit: Result<u64, String>,
}

impl EncryptedRepository {
    /// Records `mark` in a commit unless a head already names its counter, then clears the
    /// mark. Returns what to report: `None` if another client made the commit.
    pub(super) async fn record_confirmation(&self, mark: Confirmation, actor: &str) -> Option<Confirmed> {
        let slot = mark.slot;
        let generation =
            match self.record_unless_named(actor, confirm_operation(mark, mark.counter), mark.counter).await {
                Ok(None) => None,
                Ok(Some(generation)) => Some(generation),
                // The store stays open (a `check` of a damaged store must still run); the mark
                // stays, so the next open tries again.
                Err(e) => return Some(Confirmed { slot, commit: Err(e.to_string()) }),
            };
        // The commit is made (or another client's is): a mark left because this fails costs
        // the next open one read of the head, which then names the counter and clears it.
        let _ = self.clear_mark(mark).await;
        generation.map(|generation| Confirmed { slot, commit: Ok(generation) })
    }

    /// Removes `mark` from `memfs.keys` (its tag made again under the root this client holds),
    /// by compare-and-swap; nothing if the mark is gone or another client changed `memfs.keys`
    /// meanwhile (its own write took the mark, or its next open will).
    async fn clear_mark(&self, mark: Confirmation) -> Result<(), Error> {
        let clear = |object: &mut memfs_crypt::KeysObject| self.objects.keys.with_root(|root| object.clear_mark(root));
        KeysHead::plain(&*self.keys_cell).clear_mark(mark, clear).await
    }
}
