//! Why a commit's plan stopped before its end (`plan.rs`, `recut.rs`): something it must read
//! first, after which it plans again, or damage it found.

use memfs_core::ObjectId;

/// Why a commit's plan stopped: something to read before planning again, or damage found.
use crate::error::Error;
#[derive(Debug)]
pub(super) enum Missing {
    /// A page's plaintext.
    Page(ObjectId),
    /// A page read is damaged.
    Failed(Error),
}
