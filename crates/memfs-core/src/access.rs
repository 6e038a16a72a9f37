//! Last-access days: recorded without making a read a write.
//!
//! A `view` of a file whose last-access day is older than today returns an [`Access`]
//! ([`Outcome::accessed`](crate::Outcome::accessed)). The caller keeps these and applies them
//! with [`touch`] to the tree of its next commit, or in a commit of their own when it flushes
//! (at the end of a session, or periodically). Because days are whole, a file read all day
//! long costs at most one update.

use std::sync::Arc;

use crate::path::{MemoryPath, Name};
use crate::resolver::{self, Need, Resolver};
use crate::tree::{Day, Dir, DirRef, Node, ObjectId, Tree};

/// A read of the file at `path` whose content was `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The file.
    pub path: MemoryPath,
    /// Its content when read: a file since replaced is not touched.
    pub id: ObjectId,
}

/// `tree` with each accessed file's last-access day raised to `day`, and how many files that
/// changed; `Ok(None)` if none (the files are gone, changed, or already marked). `Err(need)`
/// asks for a directory.
pub fn touch(
    tree: &Tree,
    accesses: &[Access],
    day: Day,
    resolver: &dyn Resolver,
) -> Result<Option<(Tree, usize)>, Need> {
    let mut root = tree.root().clone();
    let mut changed = 0;
    for access in accesses {
        if access.path.is_root() {
            continue;
        }
        if let Some(new_root) = touch_in(&root, access.path.components(), access.id, day, resolver)? {
            root = new_root;
            changed += 1;
        }
    }
    Ok((changed > 0).then(|| (Tree::from_root(root), changed)))
}

fn touch_in(
    dir: &DirRef,
    components: &[Name],
    id: ObjectId,
    day: Day,
    resolver: &dyn Resolver,
) -> Result<Option<DirRef>, Need> {
    let (first, rest) = components.split_first().expect("below the root");
    let loaded: Arc<Dir> = resolver::load(dir, Some(first), resolver)?;
    let node = match (loaded.get(first), rest.is_empty()) {
        (Some(Node::File(f)), true) if f.id == id && f.accessed < day => {
            Node::File(crate::tree::FileRef { accessed: day, ..*f })
        }
        (Some(Node::Dir(d)), false) => match touch_in(d, rest, id, day, resolver)? {
            Some(d) => Node::Dir(d),
            None => return Ok(None),
        },
        _ => return Ok(None),
    };
    let mut copy = Dir::clone(&loaded);
    copy.insert(first.clone(), node);
    Ok(Some(DirRef::new(copy)))
}
