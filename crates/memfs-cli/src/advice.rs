//! What the user can do about an error, where the error alone does not say: appended to the
//! message `main` prints ([`for_error`]), or printed on the line after it ([`next_step`]).

use memfs::ConflictKind;
use memfs_store::UnsafePath;

/// The advice for `e` (starting with `: ` or `; `), or nothing.
pub(crate) fn for_error(e: &anyhow::Error) -> String {
    e.chain().find_map(|cause| unsafe_store(cause).or_else(|| flag(cause))).unwrap_or_default()
}

/// A refused store folder: why, and the fix.
fn unsafe_store(cause: &(dyn std::error::Error + 'static)) -> Option<String> {
    match cause.downcast_ref::<memfs_store::Error>()? {
        memfs_store::Error::UnsafeLocal(refused) => Some(unsafe_path(refused)),
        _ => None,
    }
}

/// The flag that gets past a refusal of the library, which knows no flags.
fn flag(cause: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some(memfs::FolderError::NotEmpty { .. }) = cause.downcast_ref() {
        return Some(": pass --force to write into it (files at the same paths are replaced)".to_owned());
    }
    match cause.downcast_ref::<memfs::Error>()? {
        memfs::Error::ImportConflicts { conflicts } if conflicts.iter().any(|c| c.kind == ConflictKind::FileExists) => {
            Some("\n(pass --overwrite to replace the files that exist)".to_owned())
        }
        _ => None,
    }
}

/// Why memfs refuses a local store folder, and the fix.
fn unsafe_path(refused: &UnsafePath) -> String {
    match refused {
        UnsafePath::Writable { path, .. } => format!(
            ": whoever can write it could plant links or change the store's records; make it private with `chmod 700 {}`",
            path.display()
        ),
        UnsafePath::Owner { path, user, .. } => format!(
            ": its owner could change it at any time; run memfs as that user, or make it yours with `sudo chown -R {user} {}`",
            path.display()
        ),
        UnsafePath::NotPlain { .. } => "; memfs never follows a link in a store folder, nor uses anything there but \
             folders and regular files: if you did not put it there, someone who can write the folder did; remove it \
             (or give the store folder's real path)"
            .to_owned(),
        _ => String::new(),
    }
}

/// What the user can do about an error, when there is something to say.
pub(crate) fn next_step(e: &anyhow::Error) -> Option<String> {
    let served = e.chain().find_map(|c| match c.downcast_ref::<memfs::StoreError>()? {
        memfs::StoreError::Fork { served, .. } | memfs::StoreError::Rollback { served, .. } => Some(served.clone()),
        _ => None,
    })?;
    let why = "memfs: the store no longer holds the history this client saw: whoever holds the storage may have rolled \
               it back or hidden commits (or it was restored from a backup). Run `memfs check` to see what it holds now";
    // A store with no head at all has no commit to trust.
    Some(match served.starts_with('(') {
        true => format!("{why}."),
        false => format!("{why}; to accept it as it is, run the command again with --trust-head {served}"),
    })
}
