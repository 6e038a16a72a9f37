//! [`WithHistory`]: a [`Repository`] with the encrypted repository that keeps its history, the one
//! handle `memfs::Memfs` holds.

use crate::encrypted::EncryptedRepository;
use crate::repository::Repository;

/// A repository, and the encrypted repository that keeps its history, gc, key slots and
/// policy, if any: `memfs::Memfs` holds one `Arc<dyn WithHistory>` and reaches both through it.
///
/// [`EncryptedRepository`] is its own; a repository in front of one (a test's, which fails or
/// races reads and commits) names the one behind it; a repository that keeps no history says
/// `None`, and `memfs` refuses history commands on it.
///
/// ```
/// use memfs_store::{EncryptedRepository, WithHistory};
///
/// let repo = EncryptedRepository::ephemeral()?;
/// assert!(repo.history().is_some_and(|kept| std::ptr::eq(kept, &repo)));
/// # Ok::<(), memfs_store::Error>(())
/// ```
pub trait WithHistory: Repository {
    /// The encrypted repository that keeps this one's history (`None`: it keeps none).
    fn history(&self) -> Option<&EncryptedRepository>;
}

impl WithHistory for EncryptedRepository {
    fn history(&self) -> Option<&EncryptedRepository> {
        Some(self)
    }
}
