//! Reads whose last-access days are not recorded yet (why they wait: the module docs of `access`).

use std::time::{Duration, Instant};

use memfs_core::Access;

/// The reads noted since the last commit that recorded them.
#[derive(Debug, Default)]
pub(crate) struct Pending {
    accesses: Vec<Access>,
    since: Option<Instant>,
}

impl Pending {
    /// Notes a read; true when the oldest note is `due` old.
    pub(crate) fn note(&mut self, access: Access, due: Duration) -> bool {
        if !self.accesses.contains(&access) {
            self.accesses.push(access);
        }
        self.since.get_or_insert_with(Instant::now).elapsed() >= due
    }

    /// The reads noted.
    pub(crate) fn accesses(&self) -> Vec<Access> {
        self.accesses.clone()
    }

    /// Forgets the notes a commit recorded.
    pub(crate) fn recorded(&mut self, accesses: &[Access]) {
        if accesses.is_empty() {
            return;
        }
        self.accesses.retain(|a| !accesses.contains(a));
        if self.accesses.is_empty() {
            self.since = None;
        }
    }
}
