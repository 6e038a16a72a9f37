//! The mark `memfs.keys` carries while a change made when a store opened is not yet
//! recorded in a commit (docs/FORMAT.md, `unrecorded`), and the record that commit holds.

use serde::{Deserialize, Serialize};

use crate::record::Operation;

/// A change `memfs.keys` took when a credential opened it (see `carry_over.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CarryOver {
    /// What changed.
    pub change: CarryOverKind,
    /// The slot that opened the store.
    pub slot: u32,
    /// The format `memfs.keys` was at before: 5 or 6 for [`CarryOverKind::Migrate`].
    pub from: u64,
    /// `memfs.keys`' change counter once the change is written: a head naming it (or a later
    /// one) comes after the commit that records the change.
    pub counter: u64,
}

/// What a [`CarryOver`] changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CarryOverKind {
    /// The store, from format 5 or 6 to format 7 (a root and a keyring made; no object changed).
    Migrate,
    /// One slot made before format 7, in a format-7 store, made a format-7 slot.
    CarryOver,
    /// A slot confirmed the root a rotation wrapped to it, the first time it opened since.
    Confirm,
}

impl CarryOver {
    /// The operation its commit records, `memfs.keys` being at change `counter`.
    pub(super) fn operation(self, counter: u64) -> Operation {
        let change = match self.change {
            CarryOverKind::Migrate => "migrate",
            CarryOverKind::CarryOver => "carry-over",
            CarryOverKind::Confirm => "confirm",
        };
        Operation::Keys { change: change.into(), counter, slot: Some(self.slot) }
    }
}
