//! Errors of the `memfs` library.
//!
//! Rules: a tool-level failure (bad path, missing file, …) is not an error here but a
//! [`ToolResult`](memfs_core::ToolResult) with `is_error: true`, because the model must read
//! it. [`Error`](enum@Error) is for failures of the store itself and of opening it; messages name the
//! store (with credentials redacted) and never contain key material or file contents.

use thiserror::Error;

/// Opening or using a store failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The store URL is not one memfs understands.
    #[error("unsupported store URL {url}: {reason}")]
    StoreUrl {
        /// The URL, redacted.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A persistent store was opened without a passphrase or key file.
    #[error(
        "store {store} is encrypted: give a passphrase (MEMFS_PASSPHRASE, --passphrase-file) or a key file (--key-file)"
    )]
    CredentialRequired {
        /// Which store, redacted.
        store: String,
    },
    /// The storage layer failed.
    #[error("store {store}")]
    Store {
        /// Which store, redacted.
        store: String,
        /// What failed.
        #[source]
        source: memfs_store::Error,
    },
    /// Other writers kept winning the race for the head.
    #[error("store {store}: gave up after {attempts} attempts: the store kept changing under this command")]
    Contention {
        /// Which store.
        store: String,
        /// How many times the command ran.
        attempts: u32,
    },
    /// Key generation or other cryptography failed.
    #[error(transparent)]
    Crypt(#[from] memfs_crypt::Error),
}

/// The error and its sources, joined with `: ` (what a model or a log should read).
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        out.push_str(": ");
        out.push_str(&s.to_string());
        source = s.source();
    }
    out
}
