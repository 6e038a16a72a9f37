//! The caller's objects, as the pure core sees them: lookups of what is loaded, and the one
//! object it must fetch before asking again.
//!
//! A leaf: every module that walks a lazily loaded tree (`exec`, `access`, `graft`) names it,
//! and it names none of them.

use std::sync::Arc;

use crate::path::Name;
use crate::tree::{Dir, DirRef, ObjectId, Totals};

/// What [`execute`](crate::execute), [`touch`](crate::touch) and [`graft`](crate::graft()) may
/// consult while they run. Pure lookups: no I/O happens behind it.
pub trait Resolver {
    /// A directory the caller has loaded, by id: whole, or the parts of it loaded so far.
    fn dir(&self, id: &ObjectId) -> Option<Arc<Dir>>;
    /// File content the caller has loaded, by id.
    fn blob(&self, id: &ObjectId) -> Option<Arc<[u8]>>;
    /// The id new content will be stored under (for example a keyed hash of it).
    fn address(&self, content: &[u8]) -> ObjectId;
}

/// An object [`execute`](crate::execute) (or `touch`, `graft`) must see before it can answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// A whole directory.
    Dir(ObjectId),
    /// The part of a directory that holds `name`, with whatever the resolver held of it
    /// before (or the whole directory: that holds every name).
    Entry {
        /// The stored directory.
        dir: ObjectId,
        /// Its totals (a partial [`Dir`] carries the whole directory's).
        totals: Totals,
        /// The name.
        name: Name,
    },
    /// A file's content.
    Blob(ObjectId),
}

/// `dir` loaded far enough to answer for `name`, or whole for `None` (`memfs_core::load_dir`).
///
/// A copy a mutation made of part of a stored directory is completed from that directory
/// (its parts held here win), so it may be asked for more than the copy holds.
pub fn load(dir: &DirRef, name: Option<&Name>, resolver: &dyn Resolver) -> Result<Arc<Dir>, Need> {
    let enough = |d: &Dir| name.map_or(d.is_whole(), |n| d.holds(n));
    let need = |id: ObjectId, totals: Totals| match name {
        Some(name) => Need::Entry { dir: id, totals, name: name.clone() },
        None => Need::Dir(id),
    };
    let Some(loaded) = dir.dir() else {
        let id = dir.id().expect("a DirRef is loaded or stored");
        return resolver.dir(&id).filter(|d| enough(d)).ok_or_else(|| need(id, dir.totals()));
    };
    if enough(loaded) {
        return Ok(loaded.clone());
    }
    let parts = loaded.parts().expect("a whole directory answers for every name");
    match resolver.dir(&parts.base).map(|base| loaded.merge(&base)) {
        Some(merged) if enough(&merged) => Ok(Arc::new(merged)),
        _ => Err(need(parts.base, parts.base_totals)),
    }
}
