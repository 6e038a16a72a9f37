//! Settling a compare-and-swap whose answer may have been lost.
//!
//! A conditional write whose answer never came back (a timeout, a reset connection, an answer
//! cut short) may have landed, even later; and a copy of it sent again, by memfs or inside the
//! object_store client, is then refused because of it. Neither "failed" nor "refused" is an
//! answer to act on until the object has been looked at. Every swap of the head, gc's state
//! and `memfs.keys` whose outcome matters goes through here: [`resend`] sends the very same
//! conditional write again while it fails (so at most one copy lands), [`patiently`] reads a
//! failing store again for a bounded time, and [`swap_settled`] reads the object back and
//! compares it with what was written (sealed with a fresh nonce: bytes that are no other
//! writer's). A commit of the history answers more (whether it is anywhere in the history, not
//! only at the head): see `EncryptedRepository::landed`.

use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::error::Error;
use crate::head::{HeadStore, HeadVersion};

/// How many times a write that failed (not refused) is sent again (after 200, 400, 800 ms).
const RESENDS: u32 = 3;

/// How long [`patiently`] reads a store that keeps failing before it gives up.
pub(crate) const PATIENCE: Duration = Duration::from_secs(10);

/// How a compare-and-swap ended once settled ([`swap_settled`]).
#[derive(Debug)]
pub(crate) enum Swapped {
    /// The object holds the bytes written: the swap landed (whichever copy of it).
    Landed,
    /// It holds other bytes: the write was refused or failed (its error, [`Error::Conflict`]
    /// when refused), or it landed and another write has replaced it since. A caller that must
    /// tell these apart looks further (the history, a counter).
    Not(Error),
    /// The object could not be read for [`PATIENCE`]: the write (which failed with this error,
    /// or was refused) may have landed.
    Unknown(Error),
}

/// `write` (a conditional write), sent again while it fails, up to [`RESENDS`] times: the very
/// same write, so whichever copy lands first wins and the others are refused. The last answer.
pub(crate) async fn resend<F: Future<Output = Result<(), Error>>>(write: impl Fn() -> F) -> Result<(), Error> {
    let mut answer = write().await;
    for resend in 1..=RESENDS {
        match &answer {
            Ok(()) | Err(Error::Conflict) => break,
            Err(_) => {
                tokio::time::sleep(Duration::from_millis(100 << resend)).await;
                answer = write().await;
            }
        }
    }
    answer
}

/// `read`, again after 100, 200, 400 ms… while it fails, for up to [`PATIENCE`]; `None` if it
/// never succeeded.
pub(crate) async fn patiently<T, F: Future<Output = Result<T, Error>>>(read: impl Fn() -> F) -> Option<T> {
    let deadline = Instant::now() + PATIENCE;
    let mut wait = Duration::from_millis(100);
    loop {
        match read().await {
            Ok(value) => return Some(value),
            Err(_) if Instant::now() + wait < deadline => {
                tokio::time::sleep(wait).await;
                wait *= 2;
            }
            Err(_) => return None,
        }
    }
}

/// Swaps `bytes` into `store` if it is still at `expected` (creates it when `None`), sent
/// again on failure ([`resend`]); if that was refused or failed, reads the object afresh
/// ([`patiently`]) for whether it holds `bytes` after all.
pub(crate) async fn swap_settled(store: &dyn HeadStore, expected: Option<&HeadVersion>, bytes: Bytes) -> Swapped {
    let write = || async {
        match expected {
            Some(version) => store.swap(version, bytes.clone()).await,
            None => store.create(bytes.clone()).await,
        }
    };
    let e = match resend(write).await {
        Ok(()) => return Swapped::Landed,
        Err(e) => e,
    };
    match patiently(|| store.read()).await {
        Some(Some((now, _))) if now == bytes => Swapped::Landed,
        Some(_) => Swapped::Not(e),
        None => Swapped::Unknown(e),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use object_store::memory::InMemory;
    use object_store::path::Path;

    use super::*;
    use crate::fault::{Fault, FaultPlan, FaultStore, OpClass, Target};
    use crate::head::ConditionalHead;

    /// A head in a fault store, holding `first`, its fault plan and its version.
    async fn head_with(first: &'static [u8]) -> (ConditionalHead, Arc<FaultPlan>, HeadVersion) {
        let store = FaultStore::new(InMemory::new());
        let plan = store.plan().clone();
        let head = ConditionalHead::new(crate::storage::PutByPut::storage(Arc::new(store)), Path::from("head"));
        head.create(Bytes::from_static(first)).await.unwrap();
        let (_, version) = head.read().await.unwrap().unwrap();
        (head, plan, version)
    }

    #[tokio::test]
    async fn a_swap_whose_answer_was_lost_and_whose_resend_was_refused_landed() {
        let (head, plan, version) = head_with(b"one").await;
        plan.arm(Target::Class(OpClass::Put), 1, Fault::FailAfter);
        let swapped = swap_settled(&head, Some(&version), Bytes::from_static(b"two")).await;
        assert!(matches!(swapped, Swapped::Landed), "{swapped:?}");
        assert_eq!(plan.injected(), 1, "the answer was lost");
        assert_eq!(head.read().await.unwrap().unwrap().0, Bytes::from_static(b"two"));
    }

    #[tokio::test]
    async fn a_swap_refused_for_another_writers_bytes_did_not_land() {
        let (head, _, version) = head_with(b"one").await;
        head.swap(&version, Bytes::from_static(b"theirs")).await.unwrap();
        let swapped = swap_settled(&head, Some(&version), Bytes::from_static(b"ours")).await;
        assert!(matches!(swapped, Swapped::Not(Error::Conflict)), "{swapped:?}");
    }
}
