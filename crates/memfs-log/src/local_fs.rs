//! Opening files and folders in a local store folder (and in memfs's disk cache, which uses
//! this module too) so that whoever else can write there gains nothing from it.
//!
//! The attack: a store folder on a shared, synced or network drive can be written by others.
//! Had memfs opened `log/<n>.tmp` with create-and-truncate, a symbolic link planted there would
//! have made the victim's next compaction overwrite any file the victim can write (the audit
//! replaced `~/.ssh/authorized_keys`). So here:
//!
//! - every file is opened with `O_NOFOLLOW`, and checked (on the open handle) to be a regular
//!   file: a link, a fifo, a folder or a device at a store file's name is refused, by name;
//! - a file memfs creates is created exclusively (`O_CREAT | O_EXCL`, which never follows a
//!   link either), after removing whatever stale entry has its name (`unlink` removes a link
//!   itself, never its target);
//! - the store folder and its `log/` folder are opened with `O_NOFOLLOW | O_DIRECTORY`, and
//!   refused unless (on that handle) they belong to the user memfs runs as and neither group
//!   nor others may write them. Checked once, on open; afterwards only their owner (or root)
//!   can change what is in them.
//!
//! What this does not cover: the folder's *parent*. Whoever can write it can swap the whole
//! store folder for another between the check and a later open by path; that folder must then
//! be theirs (and so is refused on the next open), but the open under way may already use it.

use std::fs::{File, FileType, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A local store folder, or a file in it, that memfs refuses to use (and why).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UnsafePath {
    /// A folder that group or others may write to: they could plant links in it or change
    /// its records.
    #[error("{} is writable by {writers} (mode {mode:04o})", path.display())]
    Writable {
        /// The folder.
        path: PathBuf,
        /// `group`, `others`, or `group and others`.
        writers: &'static str,
        /// Its permission bits.
        mode: u32,
    },
    /// A folder that belongs to another user, who could change it at any time.
    #[error("{} belongs to user {owner}, not to the user memfs runs as ({user})", path.display())]
    Owner {
        /// The folder.
        path: PathBuf,
        /// Its owner's user id.
        owner: u32,
        /// The effective user id of this process.
        user: u32,
    },
    /// Something else where a folder or a regular file belongs: a symbolic link (never
    /// followed), a fifo, a device, or a folder where a file belongs.
    #[error("{} is {found}, not {expected}", path.display())]
    NotPlain {
        /// The path.
        path: PathBuf,
        /// What is there: `a symbolic link`, `a fifo`, `a folder`, …
        found: &'static str,
        /// What belongs there: `a folder` or `a regular file`.
        expected: &'static str,
    },
}

/// Why an open failed: the path is refused, or the system call failed.
#[derive(Debug)]
pub enum OpenError {
    /// The path is refused.
    Unsafe(UnsafePath),
    /// The system call failed.
    Io(io::Error),
}

impl From<io::Error> for OpenError {
    fn from(e: io::Error) -> Self {
        OpenError::Io(e)
    }
}

const FOLDER: &str = "a folder";
const REGULAR: &str = "a regular file";

/// Opens a folder without following a link at `path`, and checks that it belongs to the
/// effective user and that neither group nor others may write it.
pub fn open_private_dir(path: &Path) -> Result<File, OpenError> {
    let dir = open_dir(path)?;
    let md = dir.metadata()?;
    let user = rustix::process::geteuid().as_raw();
    if md.uid() != user {
        return Err(OpenError::Unsafe(UnsafePath::Owner { path: path.to_owned(), owner: md.uid(), user }));
    }
    let mode = md.mode() & 0o7777;
    let writers = match (mode & 0o020 != 0, mode & 0o002 != 0) {
        (true, true) => "group and others",
        (true, false) => "group",
        (false, true) => "others",
        (false, false) => return Ok(dir),
    };
    Err(OpenError::Unsafe(UnsafePath::Writable { path: path.to_owned(), writers, mode }))
}

/// Opens a folder (to sync it, or to check it) without following a link at `path`.
pub fn open_dir(path: &Path) -> Result<File, OpenError> {
    let flags = rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::NOFOLLOW;
    let dir = OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(path)
        .map_err(|e| refused(path, e, FOLDER))?;
    let md = dir.metadata()?;
    if !md.is_dir() {
        return Err(not_plain(path, md.file_type(), FOLDER));
    }
    Ok(dir)
}

/// Opens an existing file (or, with `create`, a possibly new one) as `options` say, without
/// following a link at `path`, and checks on the open handle that it is a regular file.
/// `O_NONBLOCK` keeps a fifo planted at the name from blocking the open; it has no effect on
/// a regular file's reads and writes.
pub fn open_file(path: &Path, options: &mut OpenOptions) -> Result<File, OpenError> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = options.custom_flags(flags.bits() as i32).open(path).map_err(|e| refused(path, e, REGULAR))?;
    let md = file.metadata()?;
    if !md.is_file() {
        return Err(not_plain(path, md.file_type(), REGULAR));
    }
    Ok(file)
}

/// Creates `path` anew, readable and writable (mode `mode`): a stale entry of that name (a
/// crashed writer's temporary file, or a link someone planted) is unlinked first (which
/// removes a link, never its target), then the file is created exclusively, which fails
/// rather than follow a link that reappeared in between. A folder at the name is refused.
pub fn create_new(path: &Path, mode: u32) -> Result<File, OpenError> {
    match std::fs::symlink_metadata(path) {
        Ok(md) if md.is_dir() => return Err(not_plain(path, md.file_type(), REGULAR)),
        Ok(_) => match std::fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e.into()),
    }
    let flags = rustix::fs::OFlags::NOFOLLOW;
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(flags.bits() as i32)
        .open(path)?;
    Ok(file)
}

/// An open that failed: refused if a link (or, for a folder, anything else) is at `path`,
/// else the error as it is.
fn refused(path: &Path, e: io::Error, expected: &'static str) -> OpenError {
    if e.kind() != io::ErrorKind::NotFound
        && let Ok(md) = std::fs::symlink_metadata(path)
        && (md.is_symlink() || (expected == FOLDER && !md.is_dir()))
    {
        return not_plain(path, md.file_type(), expected);
    }
    OpenError::Io(e)
}

fn not_plain(path: &Path, t: FileType, expected: &'static str) -> OpenError {
    let found = if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        FOLDER
    } else if t.is_fifo() {
        "a fifo"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else if t.is_file() {
        REGULAR
    } else {
        "of an unknown kind"
    };
    OpenError::Unsafe(UnsafePath::NotPlain { path: path.to_owned(), found, expected })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn unsafe_path(r: Result<File, OpenError>) -> String {
        match r {
            Err(OpenError::Unsafe(u)) => u.to_string(),
            Err(OpenError::Io(e)) => panic!("an I/O error: {e}"),
            Ok(_) => panic!("opened"),
        }
    }

    #[test]
    fn links_are_refused_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true);
        assert_eq!(
            unsafe_path(open_file(&link, &mut options)),
            format!("{} is a symbolic link, not a regular file", link.display())
        );
        assert_eq!(unsafe_path(open_dir(&link)), format!("{} is a symbolic link, not a folder", link.display()));
        // A stale name is unlinked, the link's target untouched, and the file made anew.
        let created = create_new(&link, 0o600).unwrap();
        assert!(created.metadata().unwrap().is_file());
        assert!(!std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        // A folder where a file belongs, and a fifo.
        let sub = dir.path().join("sub");
        std::fs::create_dir(&sub).unwrap();
        assert_eq!(unsafe_path(create_new(&sub, 0o600)), format!("{} is a folder, not a regular file", sub.display()));
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        assert_eq!(
            unsafe_path(open_file(&fifo, OpenOptions::new().read(true))),
            format!("{} is a fifo, not a regular file", fifo.display())
        );
    }

    #[test]
    fn folders_others_may_write_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        open_private_dir(dir.path()).unwrap();
        for (mode, writers) in [(0o777, "group and others"), (0o770, "group"), (0o703, "others")] {
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(
                unsafe_path(open_private_dir(dir.path())),
                format!("{} is writable by {writers} (mode {mode:04o})", dir.path().display())
            );
        }
    }
}
