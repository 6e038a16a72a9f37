//! Errors of the HTTP endpoint's set-up and run.
//!
//! Rules: a message names the tokens file or variable and the line, never a token; a request
//! the server refuses is not an error here but an HTTP answer (see the module docs).

use std::path::PathBuf;

use thiserror::Error;

/// Reading or parsing tokens failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The tokens file cannot be read.
    #[error("cannot read the tokens file {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The tokens file can be read or written by group or others.
    #[error(
        "the tokens file {} can be read or written by others (mode {mode:04o}): it holds secrets; run chmod 600 {}",
        path.display(),
        path.display()
    )]
    Permissions {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The tokens file is larger than any tokens file should be.
    #[error("the tokens file {} is larger than {limit} bytes", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The limit.
        limit: u64,
    },
    /// The tokens file is not UTF-8 text.
    #[error("the tokens file {} is not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// A line that is not a valid `NAMESPACE TOKEN` pair.
    #[error("{origin} line {line}: {reason}")]
    Invalid {
        /// The file or variable.
        origin: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong (never the token).
        reason: String,
    },
    /// A token given twice (a token is bound to exactly one namespace).
    #[error("{origin}: this token is already given on {first} (a token is bound to one namespace)")]
    Duplicate {
        /// Where it is given again (`SOURCE line N`).
        origin: String,
        /// Where it was first given.
        first: String,
    },
    /// A namespace that does not follow the rules of `--namespace`.
    #[error("{reason}")]
    Namespace {
        /// What is wrong.
        reason: String,
    },
    /// The operating system's random number generator failed.
    #[error("the operating system's random number generator failed")]
    Random,
}

/// Serving failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The listener failed.
    #[error("serving HTTP failed")]
    Io(#[source] std::io::Error),
    /// After shutdown, recording a store's last-access days failed.
    #[error("recording last-access days at shutdown failed")]
    Flush(#[source] crate::Error),
}
