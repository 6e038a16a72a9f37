//! The log store's internal errors. Each names the file it is about.
//!
//! All of them become `object_store::Error::Generic { store: "LogStore", .. }` at the
//! `ObjectStore` boundary: a missing *segment file* must never read as a missing *object*
//! (`NotFound`), which callers take as an answer. The object-level errors (`NotFound`,
//! `AlreadyExists`, `Precondition`) are built where they are decided, in the parent module.

use std::io;
use std::path::PathBuf;

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
    #[error("{path}: a record of this path and {size} bytes of data does not fit the log format (4 GiB at most)")]
    TooLarge { path: String, size: u64 },
}

impl LogError {
    pub(super) fn io(op: &'static str, file: impl Into<PathBuf>) -> impl FnOnce(io::Error) -> LogError {
        let file = file.into();
        move |source| LogError::Io { op, file, source }
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
