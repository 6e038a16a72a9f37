//! Arbitrary bytes as a tool `input`: JSON, then `Command::from_input`, then `execute` on an
//! empty tree and on a small seeded one, in both dialects. Nothing may panic, and a failed
//! command never carries a mutation.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use memfs_core::{Command, Dialect, MapResolver, Tree, execute};

/// `/memories/a.md`, `/memories/d/b.txt` and `/memories/.hidden/c`, for the edit commands.
fn seeded() -> &'static (Tree, MapResolver) {
    static SEEDED: OnceLock<(Tree, MapResolver)> = OnceLock::new();
    SEEDED.get_or_init(|| {
        let mut tree = Tree::empty();
        let mut blobs = MapResolver::new();
        for (path, text) in [
            ("/memories/a.md", "alpha\nbeta\nbeta\n"),
            ("/memories/d/b.txt", "one\r\ntwo"),
            ("/memories/.hidden/c", ""),
        ] {
            let cmd = Command::Create { path: path.into(), file_text: text.into() };
            let m = execute(&cmd, &tree, Dialect::Spec, &blobs).unwrap().mutation.unwrap();
            blobs.keep(m.blobs);
            tree = m.tree;
        }
        (tree, blobs)
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(command) = Command::from_input(&input) else { return };
    let empty = MapResolver::new();
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
