//! Partly loaded directories: a command run on a tree whose stored directories are fetched
//! one part at a time ([`Need::Entry`]) answers exactly as on the same tree held whole, and
//! fetches only the parts its names fall in.
//!
//! The "store" here cuts each directory into parts of [`PART`] entries in name order, as the
//! encrypted store cuts one into leaf pages; the resolver answers [`Need::Entry`] with the one
//! part that holds the name (merged with what it held before) and [`Need::Dir`] with the whole.

use std::collections::{BTreeSet, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use memfs_core::{
    Command, Dialect, Dir, DirRef, FileRef, MapResolver, Name, Need, Node, ObjectId, Part, Parts, Resolver, Tree,
    execute,
};
use proptest::prelude::*;

/// Entries per part.
const PART: usize = 4;

/// Whole directories by id (what the store holds), and what the caller fetched of them.
struct Parted {
    stored: HashMap<ObjectId, Arc<Dir>>,
    fetched: MapResolver,
    /// The parts read of each directory, as a store's cache keeps them.
    read: HashMap<ObjectId, BTreeSet<usize>>,
    /// How many parts were fetched, and how many whole directories.
    parts_fetched: usize,
    wholes_fetched: usize,
}

impl Parted {
    /// The parts of stored directory `id` read so far and the one that holds `name`, each
    /// bounded as the encrypted store bounds them: from just after the last name of the part
    /// before when that one is read too, else from its own first name.
    fn part(&mut self, id: &ObjectId, name: &Name) -> Dir {
        let whole = &self.stored[id];
        let entries: Vec<(&Name, &Node)> = whole.entries().collect();
        let chunks: Vec<&[(&Name, &Node)]> = entries.chunks(PART).collect();
        let count = chunks.len().max(1);
        // The first part whose last name is at or after `name`; the last part if none.
        let mut index = chunks.iter().position(|c| c.last().is_some_and(|(n, _)| *n >= name)).unwrap_or(count - 1);
        let read = self.read.entry(*id).or_default();
        read.insert(index);
        // Below the part's first name: the part before tells where it ends.
        if index > 0 && chunks.get(index).is_some_and(|c| name < c[0].0) {
            index -= 1;
            read.insert(index);
        }
        let mut held = Vec::new();
        let mut held_entries = Vec::new();
        for &i in read.iter() {
            let chunk = chunks.get(i).copied().unwrap_or(&[]);
            let low = match i {
                0 => Bound::Unbounded,
                i if read.contains(&(i - 1)) => Bound::Excluded(chunks[i - 1].last().unwrap().0.clone()),
                _ => Bound::Included(chunk[0].0.clone()),
            };
            let high = match chunk.last() {
                Some((n, _)) if i + 1 < count => Bound::Included((*n).clone()),
                _ => Bound::Unbounded,
            };
            held.push(Part { index: i as u32, low, high });
            held_entries.extend(chunk.iter().map(|(n, node)| ((*n).clone(), (*node).clone())));
        }
        let parts = Parts { base: *id, base_totals: whole.totals(), count: count as u32, held };
        Dir::partial(parts, whole.totals(), held_entries)
    }

    fn fetch(&mut self, need: Need) {
        match need {
            Need::Dir(id) => {
                self.wholes_fetched += 1;
                self.fetched.dirs.insert(id, self.stored[&id].clone());
            }
            Need::Entry { dir, totals, name } => {
                self.parts_fetched += 1;
                assert_eq!(totals, self.stored[&dir].totals(), "a need carries the directory's totals");
                let part = self.part(&dir, &name);
                let merged = match self.fetched.dirs.get(&dir) {
                    Some(held) => part.merge(held),
                    None => part,
                };
                assert!(merged.holds(&name));
                self.fetched.dirs.insert(dir, Arc::new(merged));
            }
            Need::Blob(id) => panic!("contents are all held: {id:?}"),
        }
    }
}

fn name(n: &str) -> Name {
    Name::parse(n).unwrap()
}

fn file(blobs: &mut MapResolver, text: &str) -> Node {
    let content: Arc<[u8]> = Arc::from(text.as_bytes());
    let id = blobs.address(&content);
    blobs.blobs.insert(id, content);
    Node::File(FileRef { id, size: text.len() as u64, accessed: 0 })
}

/// The same tree twice: held whole, and stored (every directory by id) with a resolver that
/// fetches parts. `/memories` holds `f00`..`f29`, and `d0` and `d1` with `g00`..`g09` each.
fn trees() -> (Tree, MapResolver, Tree, Parted) {
    let mut blobs = MapResolver::new();
    let mut stored = HashMap::new();
    let mut root_whole = Vec::new();
    let mut root_stored = Vec::new();
    for d in 0..2u8 {
        let entries: Vec<(Name, Node)> =
            (0..10).map(|i| (name(&format!("g{i:02}")), file(&mut blobs, &format!("g{i} in d{d}\n")))).collect();
        let dir = Dir::from_entries(entries);
        let id = ObjectId::from_bytes([d + 1; 32]);
        root_stored.push((name(&format!("d{d}")), Node::Dir(DirRef::stored(id, dir.totals()))));
        root_whole.push((name(&format!("d{d}")), Node::Dir(DirRef::new(dir.clone()))));
        stored.insert(id, Arc::new(dir));
    }
    for i in 0..30 {
        let f = file(&mut blobs, &format!("line one of f{i}\nline two\n"));
        root_whole.push((name(&format!("f{i:02}")), f.clone()));
        root_stored.push((name(&format!("f{i:02}")), f));
    }
    let root = Dir::from_entries(root_stored);
    let root_id = ObjectId::from_bytes([9; 32]);
    let parted_tree = Tree::from_root(DirRef::stored(root_id, root.totals()));
    stored.insert(root_id, Arc::new(root));
    let mut fetched = MapResolver::new();
    fetched.blobs = blobs.blobs.clone();
    let parted = Parted { stored, fetched, read: HashMap::new(), parts_fetched: 0, wholes_fetched: 0 };
    (Tree::from_root(DirRef::new(Dir::from_entries(root_whole))), blobs, parted_tree, parted)
}

fn run_parted(command: &Command, tree: &mut Tree, parted: &mut Parted) -> memfs_core::ToolResult {
    let mut needs = 0;
    let out = loop {
        match execute(command, tree, Dialect::PythonSdk, &parted.fetched) {
            Ok(out) => break out,
            Err(need) => {
                // Every need fetched is met: a command never asks for the same thing forever.
                needs += 1;
                assert!(needs < 100, "{command:?} keeps asking: {need:?}");
                parted.fetch(need);
            }
        }
    };
    if let Some(m) = out.mutation {
        *tree = m.tree;
        parted.fetched.keep(m.blobs);
    }
    out.result
}

fn run_whole(command: &Command, tree: &mut Tree, blobs: &mut MapResolver) -> memfs_core::ToolResult {
    let out = execute(command, tree, Dialect::PythonSdk, blobs).expect("a whole tree needs nothing");
    if let Some(m) = out.mutation {
        *tree = m.tree;
        blobs.keep(m.blobs);
    }
    out.result
}

fn path() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..34u8).prop_map(|i| format!("/memories/f{i:02}")),
        // Between two names, so sometimes between two parts.
        (0..34u8).prop_map(|i| format!("/memories/f{i:02}x")),
        (0..3u8, 0..12u8).prop_map(|(d, i)| format!("/memories/d{d}/g{i:02}")),
        (0..3u8).prop_map(|d| format!("/memories/d{d}")),
        Just("/memories".to_owned()),
        (0..34u8).prop_map(|i| format!("/memories/f{i:02}/below")),
    ]
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        3 => (path(), any::<bool>()).prop_map(|(path, range)| Command::View {
            path,
            view_range: range.then(|| vec![1, 1]),
        }),
        3 => (path(), "[a-z ]{0,12}").prop_map(|(path, file_text)| Command::Create { path, file_text }),
        2 => path().prop_map(|path| Command::StrReplace {
            path,
            old_str: "line two".into(),
            new_str: Some("second".into()),
        }),
        1 => path().prop_map(|path| Command::Insert { path, insert_line: 0, insert_text: "top".into() }),
        2 => path().prop_map(|path| Command::Delete { path }),
        2 => (path(), path()).prop_map(|(old_path, new_path)| Command::Rename { old_path, new_path }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(128),
        ..ProptestConfig::default()
    })]

    /// Any sequence of commands answers the same on the parted tree as on the whole one, and the
    /// trees end up with the same listing.
    #[test]
    fn a_parted_tree_answers_as_the_whole_one(commands in proptest::collection::vec(command(), 1..24)) {
        let (mut whole, mut blobs, mut tree, mut parted) = trees();
        for command in &commands {
            let expected = run_whole(command, &mut whole, &mut blobs);
            let got = run_parted(command, &mut tree, &mut parted);
            prop_assert_eq!(got, expected, "{:?}", command);
        }
        let view = Command::View { path: "/memories".into(), view_range: None };
        prop_assert_eq!(run_parted(&view, &mut tree, &mut parted), run_whole(&view, &mut whole, &mut blobs));
    }
}

/// A command on one name fetches the one part that holds it, not the directory.
#[test]
fn one_name_costs_one_part() {
    let (_, _, mut tree, mut parted) = trees();
    let view = Command::View { path: "/memories/f17".into(), view_range: None };
    assert!(!run_parted(&view, &mut tree, &mut parted).is_error);
    assert_eq!((parted.parts_fetched, parted.wholes_fetched), (1, 0));
    // A new name between two parts, in a subdirectory: one part of each directory on the way.
    let create = Command::Create { path: "/memories/d1/g055".into(), file_text: "new".into() };
    assert!(!run_parted(&create, &mut tree, &mut parted).is_error);
    assert_eq!((parted.parts_fetched, parted.wholes_fetched), (3, 0));
    // The copies the create made hold only those parts, plus the change.
    let root = tree.root().dir().unwrap();
    let Some(Node::Dir(d1)) = root.get(&name("d1")) else { panic!("d1 is a directory") };
    let d1 = d1.dir().unwrap();
    let held: Vec<_> = d1.entries().map(|(n, _)| n.as_str().to_owned()).collect();
    assert_eq!(held, ["g04", "g05", "g055", "g06", "g07"]);
    assert_eq!(d1.parts().unwrap().held.iter().map(|p| p.index).collect::<Vec<_>>(), [1]);
    assert_eq!(d1.totals().files, 11);
    // A listing needs every entry: the whole directory, completed with the copy's change.
    let list = Command::View { path: "/memories/d1".into(), view_range: None };
    let listing = run_parted(&list, &mut tree, &mut parted).content;
    assert_eq!(parted.wholes_fetched, 1);
    assert!(listing.contains("/memories/d1/g055\n"), "{listing}");
    assert_eq!(listing.lines().count(), 1 + 1 + 11);
}

/// A copy that holds a part read without the part before it still answers for a name between
/// the two once the part before is read: the parts merge to their wider bounds.
#[test]
fn a_name_between_two_parts_of_a_copy() {
    let (mut whole, mut blobs, mut tree, mut parted) = trees();
    // Root parts of 4: [d0 d1 f00 f01] [f02..f05] [f06..f09] [f10..f13] [f14..f17] ...
    // f15 needs only [f14..f17], held from f14 on; the edit copies it.
    let edit = Command::StrReplace { path: "/memories/f15".into(), old_str: "two".into(), new_str: Some("2".into()) };
    let view = Command::View { path: "/memories/f13x".into(), view_range: None };
    for command in [edit, view] {
        let expected = run_whole(&command, &mut whole, &mut blobs);
        assert_eq!(run_parted(&command, &mut tree, &mut parted), expected);
    }
    assert_eq!(parted.parts_fetched, 2);
}

/// `covers` says when merging a view into a directory would change nothing, so a caller may
/// skip the copy: a view that holds a part the directory lacks, or reaches further in one,
/// is not covered.
#[test]
fn covers_tells_when_a_merge_changes_nothing() {
    let (_, _, _, mut parted) = trees();
    let root = ObjectId::from_bytes([9; 32]);
    let parts = |dir: &Dir| dir.parts().unwrap().held.clone();
    let names = |dir: &Dir| dir.entries().map(|(n, _)| n.as_str().to_owned()).collect::<Vec<_>>();
    // Parts of 4 from d0: [d0 d1 f00 f01] [f02..f05] [f06..f09] [f10..f13] [f14..f17] ...
    let f15 = parted.part(&root, &name("f15"));
    // The part before it read too: part 4 now starts just after f13, not at f14.
    let f13x = parted.part(&root, &name("f13x"));
    assert_eq!(parts(&f15).iter().map(|p| p.index).collect::<Vec<_>>(), [4]);
    assert_eq!(parts(&f13x).iter().map(|p| p.index).collect::<Vec<_>>(), [3, 4]);
    let whole = Dir::clone(&parted.stored[&root]);

    assert!(f15.covers(&f15) && f13x.covers(&f13x));
    assert!(f13x.covers(&f15), "a wider part 4 and part 3 besides");
    assert!(!f15.covers(&f13x), "part 3 missing, part 4 narrower");
    assert!(whole.covers(&f15) && !f15.covers(&whole));
    // Where it covers, the merge is the directory as it was.
    let merged = f13x.merge(&f15);
    assert_eq!((parts(&merged), names(&merged)), (parts(&f13x), names(&f13x)));
    // Where it does not, the merge brings what was missing.
    let merged = f15.merge(&f13x);
    assert_eq!(parts(&merged), parts(&f13x));
    assert_eq!(names(&merged), ["f10", "f11", "f12", "f13", "f14", "f15", "f16", "f17"]);
}
