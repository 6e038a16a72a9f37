//! Grafting: putting a node from one tree into another, for restoring history.
//!
//! A restore makes one path of the live tree equal to the same path of a past tree. The past
//! subtree is already stored, so the new tree only needs the directories on the path copied,
//! with the past [`Node`] (a [`FileRef`](crate::FileRef) or a stored [`DirRef`]) hung in at the
//! end: O(depth) new directories, no content copied, exactly like a tool command's mutation.

use crate::path::Name;
use crate::resolver::{self, Need, Resolver};
use crate::tree::{Dir, DirRef, Node, Tree};

/// A copy of `tree` with `node` at `components`, or with the entry removed for `None`.
///
/// Like [`execute`](crate::execute), it is pure: a directory on the path that `resolver` does
/// not hold stops it with [`Need::Dir`]; fetch it and call again. Putting a node creates
/// missing parent directories and replaces a file that stands where a parent directory must
/// be (the past tree had a directory there). Removing below a missing parent, or through a
/// file, changes nothing. At the root (`components` empty) a directory becomes the new root
/// and `None` empties the tree; a file cannot be the root, and leaves the tree as it is.
///
/// ```
/// use std::sync::Arc;
/// use memfs_core::{graft, Dir, FileRef, Name, Node, ObjectId, Resolver, Tree};
///
/// struct Nothing;
/// impl Resolver for Nothing {
///     fn dir(&self, _: &ObjectId) -> Option<Arc<Dir>> { None }
///     fn blob(&self, _: &ObjectId) -> Option<Arc<[u8]>> { None }
///     fn address(&self, _: &[u8]) -> ObjectId { ObjectId::from_bytes([0; 32]) }
/// }
///
/// let file = Node::File(FileRef { id: ObjectId::from_bytes([7; 32]), size: 3, accessed: 0 });
/// let path = [Name::parse("a")?, Name::parse("b.txt")?];
/// let tree = graft(&Tree::empty(), &path, Some(file), &Nothing).unwrap();
/// let root = tree.root().dir().unwrap();
/// let Some(Node::Dir(a)) = root.get(&path[0]) else { panic!("a is a directory") };
/// assert!(matches!(a.dir().unwrap().get(&path[1]), Some(Node::File(f)) if f.size == 3));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn graft(tree: &Tree, components: &[Name], node: Option<Node>, resolver: &dyn Resolver) -> Result<Tree, Need> {
    match (components.is_empty(), node) {
        (true, Some(Node::Dir(root))) => Ok(Tree::from_root(root)),
        (true, None) => Ok(Tree::empty()),
        (true, Some(Node::File(_))) => Ok(tree.clone()),
        (false, node) => match graft_in(tree.root(), components, node, resolver)? {
            Some(root) => Ok(Tree::from_root(root)),
            None => Ok(tree.clone()),
        },
    }
}

/// The new directory, or `None` when nothing changes.
fn graft_in(
    dir: &DirRef,
    components: &[Name],
    node: Option<Node>,
    resolver: &dyn Resolver,
) -> Result<Option<DirRef>, Need> {
    let (first, rest) = components.split_first().expect("graft below the root");
    let mut copy = Dir::clone(&*resolver::load(dir, Some(first), resolver)?);
    if rest.is_empty() {
        match node {
            Some(node) => copy.insert(first.clone(), node),
            None => {
                if copy.remove(first).is_none() {
                    return Ok(None);
                }
            }
        }
        return Ok(Some(DirRef::new(copy)));
    }
    let child = match (copy.get(first), &node) {
        (Some(Node::Dir(d)), _) => d.clone(),
        // Nothing to remove below a file or a missing directory.
        (_, None) => return Ok(None),
        // The past tree had a directory here: it replaces whatever is in the way.
        (_, Some(_)) => DirRef::new(Dir::new()),
    };
    let Some(child) = graft_in(&child, rest, node, resolver)? else { return Ok(None) };
    copy.insert(first.clone(), Node::Dir(child));
    Ok(Some(DirRef::new(copy)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::MapResolver;
    use crate::tree::{FileRef, ObjectId};

    fn names(path: &str) -> Vec<Name> {
        path.split('/').map(|n| Name::parse(n).unwrap()).collect()
    }

    fn file(byte: u8) -> Node {
        Node::File(FileRef { id: ObjectId::from_bytes([byte; 32]), size: u64::from(byte), accessed: 0 })
    }

    /// Every file of a loaded tree as `path=size`, in order.
    fn files(dir: &DirRef, prefix: &str, out: &mut Vec<String>) {
        for (name, node) in dir.dir().expect("loaded").entries() {
            match node {
                Node::File(f) => out.push(format!("{prefix}{name}={}", f.size)),
                Node::Dir(d) => files(d, &format!("{prefix}{name}/"), out),
            }
        }
    }

    fn listing(tree: &Tree) -> Vec<String> {
        let mut out = Vec::new();
        files(tree.root(), "", &mut out);
        out
    }

    #[test]
    fn puts_replaces_and_removes() {
        let r = MapResolver::new();
        let t = graft(&Tree::empty(), &names("a/b"), Some(file(1)), &r).unwrap();
        let t = graft(&t, &names("c"), Some(file(2)), &r).unwrap();
        assert_eq!(listing(&t), ["a/b=1", "c=2"]);
        // A file in the way of a parent directory is replaced.
        let t2 = graft(&t, &names("c/d"), Some(file(3)), &r).unwrap();
        assert_eq!(listing(&t2), ["a/b=1", "c/d=3"]);
        // Removing below a file or a missing directory changes nothing.
        assert_eq!(listing(&graft(&t, &names("c/d"), None, &r).unwrap()), ["a/b=1", "c=2"]);
        assert_eq!(listing(&graft(&t, &names("x/y"), None, &r).unwrap()), ["a/b=1", "c=2"]);
        assert_eq!(listing(&graft(&t, &names("a/b"), None, &r).unwrap()), ["c=2"]);
        // The root.
        assert!(listing(&graft(&t, &[], None, &r).unwrap()).is_empty());
        assert_eq!(listing(&graft(&t, &[], Some(file(4)), &r).unwrap()), ["a/b=1", "c=2"]);
    }

    #[test]
    fn asks_for_stored_directories() {
        let id = ObjectId::from_bytes([9; 32]);
        let tree = Tree::from_root(DirRef::stored(id, Default::default()));
        let mut r = MapResolver::new();
        let need = Need::Entry { dir: id, totals: Default::default(), name: Name::parse("a").unwrap() };
        assert_eq!(graft(&tree, &names("a"), Some(file(1)), &r).unwrap_err(), need);
        r.dirs.insert(id, Arc::new(Dir::from_entries([(Name::parse("z").unwrap(), file(5))])));
        assert_eq!(listing(&graft(&tree, &names("a"), Some(file(1)), &r).unwrap()), ["a=1", "z=5"]);
    }
}
