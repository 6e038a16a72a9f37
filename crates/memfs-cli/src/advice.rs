//! What the user can do about an error, where the error alone does not say: the library's
//! message said with the option that fixes it ([`reword`]; the library knows no flags),
//! appended to the message `main` prints ([`for_error`]), or printed on the line after it
//! ([`next_step`]).

use memfs::ConflictKind;
use memfs_store::UnsafePath;
use memfs_store::cloud::ConfigError;

/// The error and its causes, joined by `: `, each said once (backend errors repeat their
/// source in their own message, which would otherwise print three times), each in the words
/// of [`reword`] where it has some.
pub(crate) fn message(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let text = reword(c).unwrap_or_else(|| c.to_string());
        if !out.contains(text.trim()) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

/// A library error said with the command-line option (or command) that answers it.
fn reword(cause: &(dyn std::error::Error + 'static)) -> Option<String> {
    if let Some(memfs_store::Error::NoCredentials) = cause.downcast_ref() {
        return Some(
            "no credentials for the store: set them in the environment or with --store-option (docs/CLOUD.md); \
             the cloud's metadata service, tried instead, is not available"
                .to_owned(),
        );
    }
    if let Some(memfs::agent::AgentError::TurnLimit { turns }) = cause.downcast_ref() {
        return Some(format!(
            "the model still asked for tools after {turns} requests, the limit (raise max_turns; memfs agent --max-turns N)"
        ));
    }
    Some(match cause.downcast_ref::<memfs::Error>()? {
        memfs::Error::CredentialRequired { store } => format!(
            "store {store} is encrypted: give a passphrase (MEMFS_PASSPHRASE, --passphrase-file) or a key file (--key-file)"
        ),
        memfs::Error::NoStore { store } => format!("no memfs store at {store} yet: create one with `memfs init`"),
        memfs::Error::BadAt { at } => format!(
            "invalid --at `{at}`: expected a revision (HEAD, HEAD~N, @GENERATION, a commit id of at least 8 hex digits) \
             or a time (RFC 3339 such as 2025-06-01T12:00:00Z, a date such as 2025-06-01, or unix seconds)"
        ),
        memfs::Error::AmbiguousTime { .. } => format!("--at {cause}"),
        memfs::Error::CloudUrl { url, reason: ConfigError::CredentialsInUrl } => format!(
            "unsupported store URL {url}: credentials do not belong in the URL; use the environment or --store-option \
             (they are never printed)"
        ),
        memfs::Error::CloudUrl { url, reason: ConfigError::QueryInUrl } => format!(
            "unsupported store URL {url}: a store URL takes no query string or fragment; give options with --store-option"
        ),
        memfs::Error::NoOptions { url, scheme } => {
            format!("unsupported store URL {url}: {scheme}:// stores take no --store-option")
        }
        _ => return None,
    })
}

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
    if let Some(memfs::StoreError::Crypt(memfs::CryptError::OwnSlot { .. })) = cause.downcast_ref() {
        return Some("; unlock with another slot's credential, or pass --force".to_owned());
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

#[cfg(test)]
mod tests {
    use super::message;

    #[test]
    fn the_library_says_the_facts_and_the_binary_names_the_flag() {
        let e = memfs_store::Error::NoCredentials;
        assert_eq!(
            e.to_string(),
            "no credentials for the store: set them in the environment or as store options (docs/CLOUD.md); \
             the cloud's metadata service, tried instead, is not available"
        );
        assert_eq!(
            message(&e),
            "no credentials for the store: set them in the environment or with --store-option (docs/CLOUD.md); \
             the cloud's metadata service, tried instead, is not available"
        );
    }
}
