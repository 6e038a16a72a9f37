//! The log store's internal errors. Each names the file it is about.
//!
//! All of them become `object_store::Error::Generic { store: "LogStore", .. }` at the
//! `ObjectStore` boundary: a missing *segment file* must never read as a missing *object*
//! (`NotFound`), which callers take as an answer. The object-level errors (`NotFound`,
//! `AlreadyExists`, `Precondition`) are built where they are decided, in the parent module.

use std::io;
use std::path::PathBuf;

use crate::local_fs::{OpenError, UnsafePath};

#[derive(Debug, thiserror::Error)]
pub(super) enum LogError {
    #[error("{op} {}: {source}", file.display())]
    Io {
        op: &'static str,
        file: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("{}: {reason}", file.display())]
    BadHeader { file: PathBuf, reason: String },
    /// A folder or file that is not safe to use (a link, a folder others may write).
    #[error(transparent)]
    Unsafe(#[from] UnsafePath),
    #[error("{}: corrupt record at offset {offset}: {reason}", file.display())]
    Corrupt { file: PathBuf, offset: u64, reason: &'static str },
    #[error("{}: incomplete record at offset {offset}, but a later segment exists", file.display())]
    TornNotLast { file: PathBuf, offset: u64 },
    #[error("{}: segment {missing:016x} is missing", dir.display())]
    Missing { dir: PathBuf, missing: u64 },
    #[error("{}: removed while being read (by a compaction)", file.display())]
    Vanished { file: PathBuf },
    #[error("{}: kept being compacted during {attempts} attempts to read it", dir.display())]
    Unstable { dir: PathBuf, attempts: u32 },
    #[error("{}: the index names segment {segment:016x}, which is not open", dir.display())]
    NotOpen { dir: PathBuf, segment: u64 },
    /// A segment's index file that cannot be used: the segment is read instead.
    #[error("{}: {reason}", file.display())]
    BadIndex { file: PathBuf, reason: &'static str },
    #[error("{path}: a record of this path and {size} bytes of data does not fit the log format (4 GiB at most)")]
    TooLarge { path: String, size: u64 },
}

impl LogError {
    pub(super) fn io(op: &'static str, file: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> LogError {
        let file = file.into();
        move |source| LogError::Io { op, file, source }
    }

    /// For an open in a store folder: the path refused as unsafe, or the I/O error.
    pub(super) fn open(op: &'static str, file: impl Into<PathBuf>) -> impl FnOnce(OpenError) -> LogError {
        let file = file.into();
        move |e| match e {
            OpenError::Unsafe(u) => LogError::Unsafe(u),
            OpenError::Io(source) => LogError::Io { op, file, source },
        }
    }

    /// The refusal inside an error of [`super::LogStore`], if that is what it is.
    pub(super) fn unsafe_path(e: object_store::Error) -> Result<UnsafePath, object_store::Error> {
        match e {
            object_store::Error::Generic { store, source } => match source.downcast::<LogError>() {
                Ok(log) => match *log {
                    LogError::Unsafe(u) => Ok(u),
                    other => Err(object_store::Error::Generic { store, source: Box::new(other) }),
                },
                Err(source) => Err(object_store::Error::Generic { store, source }),
            },
            other => Err(other),
        }
    }

    /// A segment went away under a reader (a compaction elsewhere): rebuilding is the cure.
    pub(super) fn is_vanished(&self) -> bool {
        matches!(self, LogError::Vanished { .. } | LogError::Missing { .. })
    }

    /// What a reader without the lock may see because others are writing: damage (a writer's
    /// truncation of a torn tail seen half-way), or segments that keep vanishing (compactions
    /// one after another). A reader checks again holding the lock, where neither can happen,
    /// before it reports it.
    pub(super) fn needs_lock(&self) -> bool {
        matches!(
            self,
            LogError::Corrupt { .. }
                | LogError::TornNotLast { .. }
                | LogError::Vanished { .. }
                | LogError::Missing { .. }
                | LogError::Unstable { .. }
        )
    }
}

impl From<LogError> for object_store::Error {
    fn from(e: LogError) -> Self {
        object_store::Error::Generic { store: "LogStore", source: Box::new(e) }
    }
}
