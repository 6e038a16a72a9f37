//! Errors of `memfs-store`.
//!
//! Rules: a lost compare-and-swap is [`Error::Conflict`], which the engine answers by running
//! the command again on the new head; every other variant names the object or store concerned
//! and is final for the command. Decryption failures are coarse (which object, never why), and
//! no message carries key material or plaintext. A variant with a `source` does not repeat it
//! in its own message; print the chain (`memfs::error_chain`, anyhow's `{:#}`).

use std::path::Path;

use thiserror::Error;

/// A storage operation failed.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// The head moved since it was read: another writer committed first.
    #[error("the store changed since it was read (another writer committed first)")]
    Conflict,
    /// A commit's head write failed or its answer was lost, and the store could not be read
    /// long enough to know whether it landed. The command must not run again: `memfs log`
    /// shows whether the commit is in.
    #[error(
        "the outcome is unknown: commit {commit} (@{generation}) may have landed, and the store could not be read \
         long enough to know; `memfs log` shows whether it is in"
    )]
    OutcomeUnknown {
        /// The commit's short id, as `memfs log` shows it.
        commit: String,
        /// Its generation.
        generation: u64,
    },
    /// An object the tree refers to is missing.
    #[error("object {id} is missing from the store")]
    MissingObject {
        /// The object's id (hex).
        id: String,
    },
    /// An object failed authentication: modified, swapped, truncated or under another key.
    #[error("object {object} failed authentication: it was modified, swapped or written under another key")]
    Tampered {
        /// The object's name in the store.
        object: String,
    },
    /// An object decrypted but its content is not what its id or kind promises.
    #[error("object {object} is corrupt: {reason}")]
    Corrupt {
        /// The object's name in the store.
        object: String,
        /// What is wrong.
        reason: String,
    },
    /// The store served a head older than the newest commit this client has seen.
    #[error(
        "rollback detected: the store serves commit {served} (@{served_generation}), older than commit {remembered} (@{remembered_generation}) that this client has seen"
    )]
    Rollback {
        /// The commit this client remembers (short id as `memfs log` shows it; empty if
        /// only its generation is known).
        remembered: String,
        /// Its generation.
        remembered_generation: u64,
        /// The commit the store's head names now (short id; empty for no head).
        served: String,
        /// Its generation.
        served_generation: u64,
    },
    /// The store served a head that does not descend from the newest commit this client has
    /// seen: history was forked, and the remembered commit is not in it.
    #[error(
        "fork detected: the store serves commit {served} (@{served_generation}), which does not descend from commit {remembered} (@{remembered_generation}) that this client has seen"
    )]
    Fork {
        /// The commit this client remembers (short id as `memfs log` shows it).
        remembered: String,
        /// Its generation.
        remembered_generation: u64,
        /// The commit the store's head names now (short id).
        served: String,
        /// Its generation.
        served_generation: u64,
    },
    /// Rollback and fork detection is on by default, and the platform has no state folder.
    #[error(
        "cannot find the platform's state folder to remember this store's newest commit in; set one (or turn detection off)"
    )]
    NoStateDir,
    /// The head names another store than `memfs.keys`: it was copied from another store.
    #[error("the head belongs to another store (its sealed store id is not this store's)")]
    ForeignHead,
    /// A revision names no commit in the retained history.
    #[error("revision {rev} does not exist: {reason}")]
    UnknownRevision {
        /// The revision as given.
        rev: String,
        /// Why: past the newest commit, before the first, removed by retention, no match.
        reason: String,
    },
    /// A commit id prefix matches more than one commit.
    #[error("revision {rev} is ambiguous: {count} commit ids start with it; give more hex digits")]
    AmbiguousRevision {
        /// The prefix as given.
        rev: String,
        /// How many commits match.
        count: usize,
    },
    /// Another `gc` changed the collection state while this one ran; this one deleted nothing.
    #[error("another memfs gc ran at the same time; this one deleted nothing (run it again)")]
    ConcurrentGc,
    /// `gc` deleted objects, but writers kept committing, so it could not confirm that none of
    /// them uses a deleted object.
    #[error(
        "gc gave up: writers kept committing ({attempts} attempts to fence the head); it put back every object it had deleted, try again later"
    )]
    FenceFailed {
        /// How many times the fence was tried.
        attempts: u32,
    },
    /// No memfs store at this location.
    #[error("no memfs store here (run `memfs init` to create one)")]
    NotInitialized,
    /// A memfs store already exists here.
    #[error("a memfs store already exists here")]
    AlreadyInitialized,
    /// An object is sealed in an envelope version this memfs does not read: written by a later
    /// memfs, or by a pre-release one (envelope version 1).
    #[error(
        "object {object} is sealed in envelope version {version}, and this memfs reads envelope version {} only",
        memfs_crypt::ENVELOPE_VERSION
    )]
    UnsupportedEnvelope {
        /// The object's name.
        object: String,
        /// The version found.
        version: u8,
    },
    /// The object store does not honour conditional writes (found by [`crate::probe`]).
    #[error("this object store cannot hold a memfs store safely: {check}; concurrent writers could lose updates")]
    Unsafe {
        /// Which check failed.
        check: &'static str,
    },
    /// The bucket or container does not exist.
    #[error("the bucket or container does not exist (memfs does not create buckets or containers): {detail}")]
    NoBucket {
        /// The service's error code, or the backend's message, scrubbed.
        detail: String,
    },
    /// The service refused the credentials (or they lack a permission).
    #[error(
        "the store refused the credentials ({op} of {path}): {detail}; check them and their permissions (docs/CLOUD.md)"
    )]
    AccessDenied {
        /// What was being done.
        op: &'static str,
        /// The object's path in the store.
        path: String,
        /// The service's error code, or the backend's message, scrubbed.
        detail: String,
    },
    /// No credentials were given, and none were found where the cloud's client looks.
    #[error(
        "no credentials for the store: set them in the environment or as store options (docs/CLOUD.md); the cloud's metadata service, tried instead, is not available"
    )]
    NoCredentials,
    /// The endpoint did not answer (after the retries).
    #[error("cannot reach the store's endpoint ({op} of {path}): {detail}")]
    Unreachable {
        /// What was being done.
        op: &'static str,
        /// The object's path in the store.
        path: String,
        /// The innermost cause (connection refused, a DNS failure, a timeout), scrubbed.
        detail: String,
    },
    /// The storage backend failed.
    #[error("storage {op} of {path} failed")]
    Backend {
        /// What was being done.
        op: &'static str,
        /// The object's path in the store.
        path: String,
        /// The backend's error (boxed: it is large, and errors travel in every `Result`).
        #[source]
        source: Box<object_store::Error>,
    },
    /// A local file operation failed.
    #[error("{path}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A local store folder, or a file in it, that memfs refuses to use: a folder others may
    /// write, or a link (never followed) where a file or folder belongs.
    #[error(transparent)]
    UnsafeLocal(#[from] crate::UnsafePath),
    /// Unlocking or sealing failed.
    #[error(transparent)]
    Crypt(#[from] memfs_crypt::Error),
    /// `memfs.keys` was refused, or a change to it was not made: a format or feature this
    /// memfs does not read, a rollback, a rotation since it was opened, a change whose outcome
    /// is unknown, or a shred that other slots would undo.
    ///
    /// Never [`KeysError::Missing`](memfs_crypt::KeysError::Missing),
    /// [`Exists`](memfs_crypt::KeysError::Exists),
    /// [`Conflict`](memfs_crypt::KeysError::Conflict),
    /// [`Corrupt`](memfs_crypt::KeysError::Corrupt) or
    /// [`Crypt`](memfs_crypt::KeysError::Crypt): those are this enum's
    /// [`NotInitialized`](Error::NotInitialized), [`AlreadyInitialized`](Error::AlreadyInitialized),
    /// [`Conflict`](Error::Conflict), [`Corrupt`](Error::Corrupt) and [`Crypt`](Error::Crypt),
    /// as for every other object.
    #[error(transparent)]
    Keys(memfs_crypt::KeysError),
}

impl Error {
    /// [`Error::OutcomeUnknown`] for commit `commit` at `generation`.
    pub(crate) fn outcome_unknown(commit: &memfs_core::ObjectId, generation: u64) -> Self {
        Error::OutcomeUnknown { commit: commit.to_hex()[..12].to_owned(), generation }
    }

    /// A backend failure. A message that carries a URL's query string (where an Azure SAS
    /// token travels) is kept only as scrubbed text.
    pub(crate) fn backend(op: &'static str, path: &object_store::path::Path, source: object_store::Error) -> Self {
        let text = chain(&source);
        let scrubbed = crate::redact::scrub_queries(&text);
        let source = if scrubbed == text {
            source
        } else {
            object_store::Error::Generic { store: "object store", source: Box::new(Scrubbed(scrubbed.clone())) }
        };
        let path = path.to_string();
        match classify(&source, &scrubbed) {
            Some(Class::NoBucket) => Error::NoBucket { detail: detail(&source, &scrubbed) },
            Some(Class::AccessDenied) => Error::AccessDenied { op, path, detail: detail(&source, &scrubbed) },
            Some(Class::NoCredentials) => Error::NoCredentials,
            Some(Class::Unreachable) => Error::Unreachable { op, path, detail: detail(&source, &scrubbed) },
            None => Error::Backend { op, path, source: Box::new(source) },
        }
    }

    /// An error opening a local folder's log: a refusal as [`Error::UnsafeLocal`].
    pub(crate) fn log_open(e: object_store::Error) -> Self {
        match memfs_log::unsafe_path(e) {
            Ok(refused) => Error::UnsafeLocal(refused),
            Err(e) => Error::backend("open", &object_store::path::Path::from("log"), e),
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io { path: path.display().to_string(), source }
    }
}

/// What a backend failure means for the user, when it is one of the common set-up mistakes.
enum Class {
    NoBucket,
    AccessDenied,
    NoCredentials,
    Unreachable,
}

/// Recognises a missing bucket, refused or missing credentials and an unreachable endpoint,
/// from the error's kind and (for what `object_store` reports as generic) its text.
fn classify(e: &object_store::Error, text: &str) -> Option<Class> {
    // The services' error codes: S3 and compatibles, Azure, GCS.
    const NO_BUCKET: [&str; 5] = [
        "NoSuchBucket",
        "ContainerNotFound",
        "The specified container does not exist",
        "The specified bucket does not exist",
        // Azurite, for an account it does not know (real Azure fails on the host name).
        "<Code>ResourceNotFound</Code>",
    ];
    if NO_BUCKET.iter().any(|m| text.contains(m)) {
        return Some(Class::NoBucket);
    }
    match e {
        object_store::Error::Unauthenticated { .. } | object_store::Error::PermissionDenied { .. } => {
            return Some(Class::AccessDenied);
        }
        object_store::Error::Generic { .. } => {}
        _ => return None,
    }
    // No key given: the client asked the cloud's instance metadata service, which is absent.
    const METADATA: [&str; 4] = ["169.254.169.254", "/latest/api/token", "metadata.google.internal", "computeMetadata"];
    if METADATA.iter().any(|m| text.contains(m)) {
        return Some(Class::NoCredentials);
    }
    const REFUSED: [&str; 5] =
        ["InvalidAccessKeyId", "SignatureDoesNotMatch", "AuthenticationFailed", "AuthorizationFailure", "AccessDenied"];
    if REFUSED.iter().any(|m| text.contains(m)) {
        return Some(Class::AccessDenied);
    }
    const UNREACHABLE: [&str; 5] =
        ["error sending request", "Connection refused", "dns error", "tcp connect error", "operation timed out"];
    if UNREACHABLE.iter().any(|m| text.contains(m)) {
        return Some(Class::Unreachable);
    }
    None
}

/// A short account of a backend error: the service's error code if its body names one (as S3
/// and Azure do, `<Code>NoSuchBucket</Code>`), else the innermost cause's message; scrubbed.
fn detail(e: &object_store::Error, scrubbed: &str) -> String {
    if let Some(start) = scrubbed.find("<Code>") {
        let code = &scrubbed[start + 6..];
        if let Some(end) = code.find("</Code>") {
            return format!("the service says {}", &code[..end]);
        }
    }
    let mut inner: &dyn std::error::Error = e;
    while let Some(next) = inner.source() {
        inner = next;
    }
    let text = crate::redact::scrub_queries(&inner.to_string());
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// An error's message followed by its sources', joined by `: `.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let text = s.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        next = s.source();
    }
    out
}

/// A backend error's text with secrets removed, standing in for the original.
#[derive(Debug)]
struct Scrubbed(String);

impl std::fmt::Display for Scrubbed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Scrubbed {}
