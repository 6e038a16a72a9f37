//! A plain folder of memory files on the local disk: read into [`Entry`]s for
//! [`Memfs::import`](crate::Memfs::import), written from them after
//! [`Memfs::export`](crate::Memfs::export).
//!
//! Both sides refuse what could make memfs read or write somewhere other than the folder it
//! was given (docs/SECURITY.md, "import and export"): no symbolic link is ever followed, and
//! nothing but folders and regular files is read or replaced. Reading re-checks that the file
//! opened is the one examined (its device and inode), since a link can be put in its place
//! between the two; writing creates every file exclusively (`O_EXCL`), which refuses anything,
//! a link included, that appeared at its path since it was checked.
//!
//! ```
//! use memfs::{Entry, FolderTarget, read_folder};
//!
//! let dir = tempfile::tempdir()?;
//! let out = dir.path().join("out");
//! let entries = vec![
//!     Entry::Dir { path: "/memories/notes".into() },
//!     Entry::File { path: "/memories/notes/a.md".into(), text: "hi\n".into() },
//! ];
//! // Checked before anything is read from the store: a missing folder is created 0700.
//! let target = FolderTarget::check(&out, false)?;
//! target.write(&entries, &())?;
//! assert_eq!(std::fs::read_to_string(out.join("notes/a.md"))?, "hi\n");
//! assert_eq!(read_folder(&out, &())?, entries);
//!
//! // A folder that is not empty is written into only when asked (`force`).
//! assert_eq!(FolderTarget::check(&out, false).unwrap_err().to_string(), format!("{} is not empty", out.display()));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use memfs_store::Progress;

use crate::error::bounded_lines;
use crate::import::Entry;

/// What the folder stands for.
const ROOT: &str = "/memories";

/// Reading or writing a plain folder failed, or was refused; nothing outside the folder was
/// read or written. Messages name the local path (the user's own), never a file's content.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FolderError {
    /// A path could not be read (its metadata, a folder's listing, a file).
    #[error("reading {}", path.display())]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A path could not be resolved to its real location.
    #[error("resolving {}", path.display())]
    Resolve {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A folder or file could not be created.
    #[error("creating {}", path.display())]
    Create {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// An existing file could not be removed to be replaced.
    #[error("replacing {}", path.display())]
    Replace {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A created file could not be written.
    #[error("writing {}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The folder to read is itself a symbolic link.
    #[error(
        "refusing {}: it is a symbolic link, and memfs import never follows one; give the folder it points to",
        path.display()
    )]
    RootIsLink {
        /// The folder as given.
        path: PathBuf,
    },
    /// The folder to read is something else.
    #[error("{} is not a folder", path.display())]
    NotAFolder {
        /// The path as given.
        path: PathBuf,
    },
    /// A symbolic link inside the folder being read.
    #[error("refusing {}: it is a symbolic link, and memfs import never follows one", path.display())]
    LinkInSource {
        /// The link.
        path: PathBuf,
    },
    /// A name in the folder being read that is not UTF-8 (a memory path is text).
    #[error("refusing {}: its name is not valid UTF-8", path.display())]
    NameNotUtf8 {
        /// The entry.
        path: PathBuf,
    },
    /// An entry whose real location is outside the folder being read.
    #[error("refusing {}: it resolves to {}, outside {}", path.display(), resolved.display(), root.display())]
    Outside {
        /// The entry.
        path: PathBuf,
        /// Where it resolves to.
        resolved: PathBuf,
        /// The folder's real location.
        root: PathBuf,
    },
    /// An entry that is neither a folder nor a regular file (a socket, a device, a FIFO).
    #[error("refusing {}: it is neither a regular file nor a folder", path.display())]
    NotPlain {
        /// The entry.
        path: PathBuf,
    },
    /// The file opened is not the one examined: something was put in its place meanwhile.
    #[error("refusing {}: it changed while the folder was being read", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
    },
    /// A file that is not UTF-8 text.
    #[error("refusing {}: it is not UTF-8 text (memory files are text)", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
    /// Several entries of the folder being read are refused (each one of the refusals
    /// above: a link, a name or text that is not UTF-8, something neither a file nor a folder,
    /// something outside, a file that changed); all of them, in path order. One refusal alone
    /// is reported as itself.
    #[error("refusing {} entries of the folder:{}", refusals.len(), bounded_lines(refusals))]
    Refused {
        /// Each refusal.
        refusals: Vec<FolderError>,
    },
    /// A symbolic link where a folder is to be written, or in the way inside it.
    #[error("refusing {}: it is a symbolic link, and memfs export never follows one", path.display())]
    LinkInTarget {
        /// The link.
        path: PathBuf,
    },
    /// The folder to write into exists and is something else.
    #[error("{} exists and is not a folder", path.display())]
    TargetNotAFolder {
        /// The path as given.
        path: PathBuf,
    },
    /// The folder to write into holds something already (see [`FolderTarget::check`]).
    #[error("{} is not empty", path.display())]
    NotEmpty {
        /// The folder.
        path: PathBuf,
    },
    /// A file where a folder is to be written.
    #[error("cannot write the folder {}: a file is in the way", path.display())]
    FileInTheWay {
        /// The file.
        path: PathBuf,
    },
    /// Something other than a regular file where a file is to be written.
    #[error("cannot write the file {}: something other than a file is in the way", path.display())]
    NotAFileInTheWay {
        /// What is there.
        path: PathBuf,
    },
}

/// Every folder and file below `root`, as `/memories` entries, parents first and names in
/// byte order (the order [`Memfs::export`](crate::Memfs::export) gives). Symbolic links (`root`
/// included), anything that is neither a folder nor a regular file, anything that resolves
/// outside `root`, names that are not UTF-8 and files that are not UTF-8 text are refused,
/// naming the path: every one of them, read on past each ([`FolderError::Refused`] when there
/// are several; nothing below a refused entry is read). `progress` counts the files read.
pub fn read_folder(root: &Path, progress: &dyn Progress) -> Result<Vec<Entry>, FolderError> {
    let meta = fs::symlink_metadata(root).map_err(|source| FolderError::Read { path: root.to_owned(), source })?;
    if meta.file_type().is_symlink() {
        return Err(FolderError::RootIsLink { path: root.to_owned() });
    }
    if !meta.is_dir() {
        return Err(FolderError::NotAFolder { path: root.to_owned() });
    }
    let resolved = resolve(root)?;
    progress.phase("reading", Some(0));
    let mut entries = Vec::new();
    let mut refusals = Vec::new();
    walk(root, &resolved, ROOT, (&mut entries, &mut refusals), progress)?;
    match refusals.len() {
        0 => Ok(entries),
        1 => Err(refusals.remove(0)),
        _ => Err(FolderError::Refused { refusals }),
    }
}

fn resolve(path: &Path) -> Result<PathBuf, FolderError> {
    fs::canonicalize(path).map_err(|source| FolderError::Resolve { path: path.to_owned(), source })
}

/// Walks `dir` into `out.0`; what is refused goes to `out.1` and the walk goes on. A failure
/// to read (not a refusal) ends it.
fn walk(
    dir: &Path,
    root: &Path,
    at: &str,
    out: (&mut Vec<Entry>, &mut Vec<FolderError>),
    progress: &dyn Progress,
) -> Result<(), FolderError> {
    let (entries, refusals) = out;
    let mut children = fs::read_dir(dir)
        .and_then(|read| read.collect::<Result<Vec<_>, _>>())
        .map_err(|source| FolderError::Read { path: dir.to_owned(), source })?;
    children.sort_by_key(fs::DirEntry::file_name);
    for child in children {
        let path = child.path();
        let Ok(name) = child.file_name().into_string() else {
            refusals.push(FolderError::NameNotUtf8 { path });
            continue;
        };
        let memory_path = format!("{at}/{name}");
        let meta = fs::symlink_metadata(&path).map_err(|source| FolderError::Read { path: path.clone(), source })?;
        let kind = meta.file_type();
        if kind.is_symlink() {
            refusals.push(FolderError::LinkInSource { path });
            continue;
        }
        let resolved = resolve(&path)?;
        if !resolved.starts_with(root) {
            refusals.push(FolderError::Outside { path, resolved, root: root.to_owned() });
            continue;
        }
        if kind.is_dir() {
            entries.push(Entry::Dir { path: memory_path.clone() });
            walk(&path, root, &memory_path, (&mut *entries, &mut *refusals), progress)?;
        } else if kind.is_file() {
            progress.extend(1);
            match read_text(&path, &meta) {
                Ok(text) => entries.push(Entry::File { path: memory_path, text }),
                Err(refused @ (FolderError::Changed { .. } | FolderError::NotText { .. })) => refusals.push(refused),
                Err(e) => return Err(e),
            }
            progress.advance(1);
        } else {
            refusals.push(FolderError::NotPlain { path });
        }
    }
    Ok(())
}

/// The text of the regular file `path`, which `meta` (not following links) describes.
fn read_text(path: &Path, meta: &fs::Metadata) -> Result<String, FolderError> {
    let read = |source| FolderError::Read { path: path.to_owned(), source };
    let mut file = fs::File::open(path).map_err(read)?;
    // Opening follows links: make sure what was opened is the file that was checked, not a
    // link put in its place since.
    let opened = file.metadata().map_err(read)?;
    if (opened.dev(), opened.ino()) != (meta.dev(), meta.ino()) {
        return Err(FolderError::Changed { path: path.to_owned() });
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(read)?;
    String::from_utf8(bytes).map_err(|_| FolderError::NotText { path: path.to_owned() })
}

/// A folder checked to receive a tree of memory files (`memfs export`): not a link, a folder
/// if it exists, and empty unless `force`. Check it before reading the store, so that a
/// refused target costs nothing; then [`write`](Self::write).
#[derive(Debug, Clone)]
pub struct FolderTarget {
    dir: PathBuf,
    exists: bool,
}

impl FolderTarget {
    /// Checks `dir`: a symbolic link or something other than a folder is refused, and so is
    /// a folder that is not empty, unless `force` (then files at the same paths are replaced,
    /// and anything else in it is left alone).
    pub fn check(dir: &Path, force: bool) -> Result<Self, FolderError> {
        let read = |source| FolderError::Read { path: dir.to_owned(), source };
        let meta = match fs::symlink_metadata(dir) {
            Ok(meta) => meta,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Ok(FolderTarget { dir: dir.to_owned(), exists: false });
            }
            Err(e) => return Err(read(e)),
        };
        if meta.file_type().is_symlink() {
            return Err(FolderError::LinkInTarget { path: dir.to_owned() });
        }
        if !meta.is_dir() {
            return Err(FolderError::TargetNotAFolder { path: dir.to_owned() });
        }
        let mut listing = fs::read_dir(dir).map_err(read)?;
        if !force && listing.next().is_some() {
            return Err(FolderError::NotEmpty { path: dir.to_owned() });
        }
        Ok(FolderTarget { dir: dir.to_owned(), exists: true })
    }

    /// Creates the folder (0700, with its missing parents) if it did not exist. [`write`]
    /// does it too; calling it first lets a caller say something between the two.
    ///
    /// [`write`]: Self::write
    pub fn create(self) -> Result<Self, FolderError> {
        if !self.exists {
            fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.dir)
                .map_err(|source| FolderError::Create { path: self.dir.clone(), source })?;
        }
        Ok(FolderTarget { exists: true, ..self })
    }

    /// Writes `entries` below the folder, creating it first if it did not exist: folders
    /// 0700, files 0600, since they leave the store unencrypted. Entries come parents first,
    /// so every folder on the way was made or checked (not a link) before anything is written
    /// in it. `progress` counts the files written.
    pub fn write(self, entries: &[Entry], progress: &dyn Progress) -> Result<(), FolderError> {
        let target = self.create()?;
        let files = entries.iter().filter(|e| matches!(e, Entry::File { .. })).count();
        progress.phase("writing", Some(files as u64));
        for entry in entries {
            let path = target.local_path(entry.path());
            match entry {
                Entry::Dir { .. } => write_dir(&path)?,
                Entry::File { text, .. } => {
                    write_file(&path, text)?;
                    progress.advance(1);
                }
            }
        }
        Ok(())
    }

    /// Where a `/memories/...` path goes below the folder. The store's paths are validated
    /// (no `..`, no backslashes, no empty names), so each component is one plain name.
    fn local_path(&self, path: &str) -> PathBuf {
        let rel = path.strip_prefix("/memories/").unwrap_or(path);
        rel.split('/').fold(self.dir.clone(), |p, name| p.join(name))
    }
}

/// Makes the folder `target`, or accepts the folder (not a link) already there.
fn write_dir(target: &Path) -> Result<(), FolderError> {
    match fs::DirBuilder::new().mode(0o700).create(target) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => {
            let meta =
                fs::symlink_metadata(target).map_err(|source| FolderError::Read { path: target.to_owned(), source })?;
            if meta.file_type().is_symlink() {
                return Err(FolderError::LinkInTarget { path: target.to_owned() });
            }
            if !meta.is_dir() {
                return Err(FolderError::FileInTheWay { path: target.to_owned() });
            }
            Ok(())
        }
        Err(source) => Err(FolderError::Create { path: target.to_owned(), source }),
    }
}

/// Writes the file `target` anew, replacing a regular file (never a link) already there.
fn write_file(target: &Path, text: &str) -> Result<(), FolderError> {
    let path = || target.to_owned();
    match fs::symlink_metadata(target) {
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(source) => return Err(FolderError::Read { path: path(), source }),
        Ok(meta) if meta.file_type().is_symlink() => return Err(FolderError::LinkInTarget { path: path() }),
        Ok(meta) if meta.is_file() => {
            fs::remove_file(target).map_err(|source| FolderError::Replace { path: path(), source })?;
        }
        Ok(_) => return Err(FolderError::NotAFileInTheWay { path: path() }),
    }
    create_exclusive(target, text)
}

/// Creates the file `target` (0600) with `text`. `create_new` (`O_EXCL`) refuses anything at
/// the path, a link included (even one to nowhere), so what appeared since the check is never
/// written through.
fn create_exclusive(target: &Path, text: &str) -> Result<(), FolderError> {
    let mut file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(target)
        .map_err(|source| FolderError::Create { path: target.to_owned(), source })?;
    file.write_all(text.as_bytes()).map_err(|source| FolderError::Write { path: target.to_owned(), source })
}

#[cfg(test)]
mod tests;
