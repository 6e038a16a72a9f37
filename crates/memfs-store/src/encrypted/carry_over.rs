//! The commit that records a change `memfs.keys` took when a credential opened it: a store of
//! formats 5 and 6 carried over to format 7, a slot made before format 7 carried over, or a
//! slot confirming the root a rotation gave it.
//!
//! Such a change is written when a store opens, before anything else: by compare-and-swap of
//! `memfs.keys`, marked unrecorded ([`CarryOver`], in `memfs.keys`' field `unrecorded`). The open then
//! makes one commit that records it (the tree unchanged, the head naming the new change
//! counter) and clears the mark. A crash between leaves the mark, so the next open makes the
//! commit; two clients opening at once make it once, because a commit is skipped when the head
//! already names the counter (see [`EncryptedRepository::record_unless_named`]).

use object_store::path::Path;

use super::key_set::parse_keys;
use super::mark::CarryOver;
use super::{EncryptedRepository, KEYS_PATH};
use crate::error::Error;
use crate::head::{ConditionalHead, HeadStore};

/// What opening a store changed in `memfs.keys` ([`EncryptedRepository::carried_over`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CarriedOver {
    /// The change.
    pub change: CarryOver,
    /// The generation of the commit that records it, or why that commit could not be made
    /// (the change itself is written; the next open makes the commit).
    pub commit: Result<u64, String>,
}

impl EncryptedRepository {
    /// Records `change` (marked in `memfs.keys`) in a commit unless a head already names its
    /// counter, then clears the mark. Returns what to report: `None` if another client made
    /// the commit.
    pub(super) async fn finish_carry_over(&self, change: CarryOver, actor: &str) -> Option<CarriedOver> {
        let counter = change.counter;
        let generation = match self.record_unless_named(actor, change.operation(counter), counter).await {
            Ok(None) => None,
            Ok(Some(generation)) => Some(Ok(generation)),
            // The store stays open (a `check` of a damaged store must still run); the mark
            // stays, so the next open tries again.
            Err(e) => return Some(CarriedOver { change, commit: Err(e.to_string()) }),
        };
        // The commit is made (or another client's is): a mark left because this fails costs
        // the next open one read of the head, which then names the counter and clears it.
        let _ = self.clear_mark(change).await;
        generation.map(|generation| CarriedOver { change, commit: generation })
    }

    /// Removes the mark `change` from `memfs.keys` (its tag made again under the root this
    /// client holds), by compare-and-swap; nothing if the mark is gone or another client
    /// changed `memfs.keys` meanwhile (its own write took the mark, or its next open will).
    async fn clear_mark(&self, change: CarryOver) -> Result<(), Error> {
        let head = ConditionalHead::new(self.store.clone(), Path::from(KEYS_PATH));
        let Some((bytes, version)) = head.read().await? else { return Err(Error::NotInitialized) };
        let mut object = parse_keys(&bytes)?;
        if object.unrecorded != Some(change) {
            return Ok(());
        }
        let Some(sealed) = self.keys.with_root(|root| {
            object.authenticate(root)?;
            object.unrecorded = None;
            object.seal(root);
            Ok::<_, Error>(object.to_bytes())
        }) else {
            return Ok(());
        };
        match head.swap(&version, sealed?).await {
            Ok(()) | Err(Error::Conflict) => Ok(()),
            Err(e) => Err(e),
        }
    }
}
