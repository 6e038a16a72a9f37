//! [`Heads`]: the store's head as this client knows it: the compare-and-swap cell it is kept
//! in, the head last opened, the newest commit remembered (rollback and fork detection), and
//! what a head this client writes may carry.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;

use super::OpenOptions;
use crate::format::HeadObject;
use crate::head::HeadStore;
use crate::rollback::Watermark;

/// The head's part of a repository.
pub(super) struct Heads {
    /// The compare-and-swap cell the sealed head is kept in.
    pub(super) cell: Box<dyn HeadStore>,
    /// The head last opened: its sealed bytes and what they hold (its inline objects are in
    /// the cache), so an unchanged head is not opened twice.
    parsed: Mutex<Option<(Bytes, Arc<HeadObject>)>>,
    /// Where the newest commit this client has seen is remembered; `None` with detection off.
    pub(super) watermark: Option<Watermark>,
    /// See [`OpenOptions::trust_head`].
    pub(super) trust: Option<String>,
    /// See [`OpenOptions::max_staleness`].
    pub(super) max_staleness: Option<Duration>,
    /// Plaintext bytes a commit puts into the head's snapshot.
    pub(super) snapshot_budget: usize,
    /// Of those, the most that objects carried unwritten may take (see
    /// [`OpenOptions::unwritten_bytes`]).
    pub(super) unwritten_budget: usize,
    /// How many commits back a head this client writes names (see
    /// [`RECENT_COMMITS`](super::RECENT_COMMITS)).
    pub(super) recent: usize,
}

impl Heads {
    /// The head kept in `cell`, with `snapshot_budget` bytes of snapshot and `recent` commits
    /// named in a head this client writes, under `options`.
    pub(super) fn new(
        cell: Box<dyn HeadStore>,
        watermark: Option<Watermark>,
        (snapshot_budget, recent): (usize, usize),
        options: &OpenOptions,
    ) -> Self {
        Heads {
            cell,
            parsed: Mutex::new(None),
            watermark,
            trust: options.trust_head.clone(),
            max_staleness: options.max_staleness,
            snapshot_budget,
            unwritten_budget: options.unwritten_bytes.unwrap_or(snapshot_budget / 2).min(snapshot_budget),
            recent,
        }
    }

    /// The head last opened.
    pub(super) fn parsed(&self) -> std::sync::MutexGuard<'_, Option<(Bytes, Arc<HeadObject>)>> {
        // Replaced whole: a poisoned lock is still sound.
        self.parsed.lock().unwrap_or_else(|p| p.into_inner())
    }
}
