//! Errors of the `memfs` library.
//!
//! Rules: a tool-level failure (bad path, missing file, …) is not an error here but a
//! [`ToolResult`](memfs_core::ToolResult) with `is_error: true`, because the model must read
//! it. [`Error`](enum@Error) is for failures of the store itself and of opening it; messages name the
//! store (with credentials redacted) and never contain key material or file contents.

use thiserror::Error;

/// Which of the failures a program may want to catch apart an [`Error`](enum@Error) is (the Python and
/// Node packages raise one exception class per kind).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// No store at that location.
    NoStore,
    /// The store is encrypted and the credential given (or none) does not open it.
    Credential,
    /// The store could not be read or written.
    Store,
    /// A change whose answer was lost may have landed, and the store could not be read long
    /// enough to know: it must not be made again blindly (a kind of [`ErrorKind::Store`] that
    /// the packages raise as a subclass of theirs). `memfs log` (or, for the key slots,
    /// `memfs key list`) shows whether it is in.
    OutcomeUnknown,
    /// Anything else (a bad revision, a refused history command, …).
    Other,
}

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
    /// A cloud store URL that is malformed or carries what does not belong in it.
    #[error("unsupported store URL {url}: {reason}")]
    CloudUrl {
        /// The URL, redacted.
        url: String,
        /// What is wrong with it (not a `source`: the message already says it).
        reason: memfs_store::cloud::ConfigError,
    },
    /// Options given for a store that takes none (`file://`, `memory://`).
    #[error("unsupported store URL {url}: {scheme}:// stores take no options")]
    NoOptions {
        /// The URL, redacted.
        url: String,
        /// Its scheme.
        scheme: String,
    },
    /// A cloud store's options are wrong (an unknown key, an invalid value).
    #[error("store {store}: {source}")]
    StoreConfig {
        /// Which store, redacted.
        store: String,
        /// What is wrong; never an option's value.
        source: memfs_store::cloud::ConfigError,
    },
    /// A persistent store was opened without a passphrase or key file. (`memfs` names its
    /// options for them.)
    #[error("store {store} is encrypted: give a passphrase or a key file to open it")]
    CredentialRequired {
        /// Which store, redacted.
        store: String,
    },
    /// There is no store at this location yet, and no credential was given to open one: said
    /// instead of asking for a credential that could open nothing. (`memfs` says what creates
    /// one.)
    #[error("no memfs store at {store}")]
    NoStore {
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
    /// History commands need a store that keeps history.
    #[error("store {store} keeps no history")]
    NoHistory {
        /// Which store.
        store: String,
    },
    /// A path that does not exist at a revision.
    #[error("{path} does not exist at {rev}")]
    NotFound {
        /// The path, normalised.
        path: String,
        /// The revision as given.
        rev: String,
    },
    /// A restore's revision or time that is neither (`memfs restore --at`).
    #[error(
        "invalid revision or time `{at}`: expected a revision (HEAD, HEAD~N, @GENERATION, a commit id of at least 8 hex digits) or a time (RFC 3339 such as 2025-06-01T12:00:00Z, or unix seconds)"
    )]
    BadAt {
        /// The value as given.
        at: String,
    },
    /// A restore's digits that are both unix seconds and a commit id prefix.
    #[error(
        "`{at}` is both a commit id prefix and a time in unix seconds: give more of the id, or the time in RFC 3339"
    )]
    AmbiguousTime {
        /// The value as given.
        at: String,
    },
    /// No retained commit is as old as the time asked for.
    #[error("no commit was made at or before {time}")]
    NoCommitAt {
        /// The time as given.
        time: String,
    },
    /// `undo` with nothing to undo.
    #[error("nothing to undo: {reason}")]
    NothingToUndo {
        /// Why.
        reason: String,
    },
    /// `purge` of `/memories` itself.
    #[error("cannot purge /memories itself: name a file or directory below it")]
    PurgeRoot,
    /// `purge` of a path no stored commit holds.
    #[error("nothing to purge: {path} is not in the tree, in its kept history or in any other stored commit")]
    NothingToPurge {
        /// The path, normalised.
        path: String,
    },
    /// `purge` of a path whose content or lineage live files elsewhere hold; nothing was
    /// written. The binary names the flag that erases them too.
    #[error("{path} has live copies: {}", copies.join(", "))]
    PurgeLiveCopies {
        /// The path, normalised.
        path: String,
        /// The live paths outside it that hold one of its contents or its renamed copy.
        copies: Vec<String>,
    },
    /// `purge` refused for another reason.
    #[error("cannot purge: {reason}")]
    Purge {
        /// Why.
        reason: String,
    },
    /// An import that clashes with the store: every clash, nothing imported.
    #[error("nothing was imported: {} clash with the store:{}", plural_paths(conflicts.len()), bounded_lines(conflicts))]
    ImportConflicts {
        /// Each clash, in path order.
        conflicts: Vec<crate::conflict::Conflict>,
    },
    /// The store's rules (its policy: size limits, the sensitive-data filter) refused an
    /// imported file; nothing was imported.
    #[error("nothing was imported: {reason}")]
    ImportRefused {
        /// The file, normalised.
        path: String,
        /// The store's answer, as a `create` of the file would get it.
        reason: String,
    },
    /// Several imported entries refused, each for its own reason (each an
    /// [`Error::ImportRefused`], [`Error::BadImport`] or a path the rules refuse), in path
    /// order; nothing was imported. One refusal alone is reported as itself.
    #[error("nothing was imported: {} entries are refused:{}", refusals.len(), refusal_lines(refusals))]
    ImportRefusals {
        /// Each refusal.
        refusals: Vec<Error>,
    },
    /// An import stopped while it planned ([`Memfs::import_until`](crate::Memfs::import_until)):
    /// nothing was written.
    #[error("the import was stopped before its commit: nothing was imported")]
    ImportStopped,
    /// An import whose entries contradict each other.
    #[error("cannot import {path}: {reason}")]
    BadImport {
        /// The entry's path, normalised.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A stored file that is not UTF-8 text (a tool call cannot write one).
    #[error("the file {path} is not valid UTF-8 text")]
    NotText {
        /// The file, normalised.
        path: String,
    },
    /// A revision that does not parse.
    #[error(transparent)]
    Revision(#[from] memfs_store::RevisionError),
    /// A path outside `/memories`, or otherwise refused.
    #[error(transparent)]
    Path(#[from] memfs_core::PathError),
    /// Key generation or other cryptography failed.
    #[error(transparent)]
    Crypt(#[from] memfs_crypt::Error),
    /// A policy setting that cannot be made.
    #[error(transparent)]
    Policy(#[from] memfs_core::PolicyError),
}

fn plural_paths(n: usize) -> String {
    match n {
        1 => "1 path".to_owned(),
        n => format!("{n} paths"),
    }
}

/// How many refusals [`Error::ImportRefusals`] (or clashes, [`Error::ImportConflicts`], or a
/// folder's refused entries, `FolderError::Refused`) lists; it counts the rest.
const LISTED_REFUSALS: usize = 20;

/// One indented line per refusal (a refused file by the store's answer alone), at most
/// [`LISTED_REFUSALS`], then how many more.
fn refusal_lines(refusals: &[Error]) -> String {
    let reasons: Vec<String> = refusals
        .iter()
        .map(|e| match e {
            Error::ImportRefused { reason, .. } => reason.clone(),
            e => e.to_string(),
        })
        .collect();
    bounded_lines(&reasons)
}

/// One indented line per item, at most [`LISTED_REFUSALS`], then how many more: an import of
/// a big folder into a store that holds it already clashes at every path.
pub(crate) fn bounded_lines<T: std::fmt::Display>(items: &[T]) -> String {
    let mut out = lines(&items[..items.len().min(LISTED_REFUSALS)]);
    if items.len() > LISTED_REFUSALS {
        out.push_str(&format!("\n  … and {} more", items.len() - LISTED_REFUSALS));
    }
    out
}

/// One indented line per item.
fn lines<T: std::fmt::Display>(items: &[T]) -> String {
    items.iter().map(|item| format!("\n  {item}")).collect()
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

impl Error {
    /// Which kind of failure this is (see [`ErrorKind`]).
    pub fn kind(&self) -> ErrorKind {
        use memfs_crypt::Error as Crypt;
        match self {
            Error::NoStore { .. } => ErrorKind::NoStore,
            Error::CredentialRequired { .. } => ErrorKind::Credential,
            Error::Store {
                source:
                    memfs_store::Error::Crypt(
                        Crypt::WrongKey
                        | Crypt::NoSlot { .. }
                        | Crypt::NoCustodySlot
                        | Crypt::CustodyFailed { .. }
                        | Crypt::KeyFile { .. }
                        | Crypt::KeyFilePermissions { .. },
                    ),
                ..
            } => ErrorKind::Credential,
            Error::Store {
                source:
                    memfs_store::Error::OutcomeUnknown { .. }
                    | memfs_store::Error::Keys(memfs_crypt::KeysError::OutcomeUnknown),
                ..
            } => ErrorKind::OutcomeUnknown,
            Error::Store { .. } => ErrorKind::Store,
            _ => ErrorKind::Other,
        }
    }
}
