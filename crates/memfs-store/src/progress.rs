//! Progress reports of long operations (`check`, `gc`), for a progress bar.

/// Receives progress of a long operation. Every method has a do-nothing default, and `()`
/// reports nowhere.
pub trait Progress: Send + Sync {
    /// A new phase starts (`"commits"`, `"directories"`, `"files"`), with `total` items if
    /// known in advance.
    fn phase(&self, name: &'static str, total: Option<u64>) {
        let _ = (name, total);
    }

    /// The phase found `n` more items to do.
    fn extend(&self, n: u64) {
        let _ = n;
    }

    /// `n` more items of the phase are done.
    fn advance(&self, n: u64) {
        let _ = n;
    }
}

impl Progress for () {}
