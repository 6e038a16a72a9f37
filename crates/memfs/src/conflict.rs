//! How an imported path clashes with the store (shared by the import and its error).

use std::fmt;

/// Why an imported path cannot go where it should.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConflictKind {
    /// A file is already there ([`ImportOptions::overwrite`](crate::ImportOptions::overwrite) replaces it).
    FileExists,
    /// The import has a file where the store has a directory.
    IsDirectory,
    /// The import has a directory where the store has a file.
    IsFile,
    /// A parent directory of the path is a file in the store.
    UnderFile {
        /// That file, normalised.
        file: String,
    },
}

/// An imported path that clashes with the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The path, normalised.
    pub path: String,
    /// How it clashes.
    pub kind: ConflictKind,
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = &self.path;
        match &self.kind {
            ConflictKind::FileExists => write!(f, "{path} already exists"),
            ConflictKind::IsDirectory => write!(f, "{path} is a directory in the store"),
            ConflictKind::IsFile => write!(f, "{path} is a file in the store"),
            ConflictKind::UnderFile { file } => write!(f, "{path}: {file} is a file in the store"),
        }
    }
}
