//! Errors of `memfs-crypt`.
//!
//! Rule: cryptographic failures are coarse. Nothing here says which byte, tag or key was wrong.

use thiserror::Error;

/// A cryptographic operation failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The operating system's random number generator failed.
    #[error("the system random number generator failed")]
    Random,
}
