//! The caller's objects, as the pure core sees them: lookups of what is loaded, and the one
//! object it must fetch before asking again.
//!
//! A leaf: every module that walks a lazily loaded tree (`exec`, `access`, `graft`) names it,
//! and it names none of them.

use std::sync::Arc;

use crate::tree::{Dir, ObjectId};

/// What [`execute`](crate::execute), [`touch`](crate::touch) and [`graft`](crate::graft()) may
/// consult while they run. Pure lookups: no I/O happens behind it.
pub trait Resolver {
    /// A directory the caller has loaded, by id.
    fn dir(&self, id: &ObjectId) -> Option<Arc<Dir>>;
    /// File content the caller has loaded, by id.
    fn blob(&self, id: &ObjectId) -> Option<Arc<[u8]>>;
    /// The id new content will be stored under (for example a keyed hash of it).
    fn address(&self, content: &[u8]) -> ObjectId;
}

/// An object [`execute`](crate::execute) (or `touch`, `graft`) must see before it can answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// A directory.
    Dir(ObjectId),
    /// A file's content.
    Blob(ObjectId),
}
