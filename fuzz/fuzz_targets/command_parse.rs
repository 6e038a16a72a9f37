//! Arbitrary bytes as a tool `input`: JSON, then `Command::from_input`, then `execute` on an
//! empty tree and on a small seeded one, in both dialects. Nothing may panic, and a failed
//! command never carries a mutation.
#![no_main]

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use memfs_core::{Command, Dialect, Dir, ObjectId, Resolver, Tree, execute};

/// Contents in a map, named by a std hash of the content.
#[derive(Default)]
struct Blobs(HashMap<ObjectId, Arc<[u8]>>);

impl Resolver for Blobs {
    fn dir(&self, _: &ObjectId) -> Option<Arc<Dir>> {
        None
    }
    fn blob(&self, id: &ObjectId) -> Option<Arc<[u8]>> {
        self.0.get(id).cloned()
    }
    fn address(&self, content: &[u8]) -> ObjectId {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        content.hash(&mut h);
        let mut id = [0u8; 32];
        id[..8].copy_from_slice(&h.finish().to_le_bytes());
        ObjectId::from_bytes(id)
    }
}

/// `/memories/a.md`, `/memories/d/b.txt` and `/memories/.hidden/c`, for the edit commands.
fn seeded() -> &'static (Tree, Blobs) {
    static SEEDED: OnceLock<(Tree, Blobs)> = OnceLock::new();
    SEEDED.get_or_init(|| {
        let mut tree = Tree::empty();
        let mut blobs = Blobs::default();
        for (path, text) in [
            ("/memories/a.md", "alpha\nbeta\nbeta\n"),
            ("/memories/d/b.txt", "one\r\ntwo"),
            ("/memories/.hidden/c", ""),
        ] {
            let cmd = Command::Create { path: path.into(), file_text: text.into() };
            let m = execute(&cmd, &tree, Dialect::Spec, &blobs).unwrap().mutation.unwrap();
            blobs.0.extend(m.blobs.into_iter().map(|b| (b.id, b.content)));
            tree = m.tree;
        }
        (tree, blobs)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(command) = Command::from_input(&input) else { return };
    let empty = Blobs::default();
    let (tree, blobs) = seeded();
    for dialect in Dialect::ALL {
        for (tree, resolver) in [(&Tree::empty(), &empty), (tree, blobs)] {
            let out = execute(&command, tree, dialect, resolver).expect("every object is loaded");
            if out.result.is_error {
                assert!(out.mutation.is_none(), "{command:?}: error with a mutation");
            } else if out.mutation.is_some() {
                assert!(command.is_mutation(), "{command:?}: a view returned a mutation");
            }
        }
    }
});
