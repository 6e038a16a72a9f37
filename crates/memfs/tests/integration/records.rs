//! The commit records of the fixture stores (tests/fixtures: formats 5 and 6, written by
//! earlier versions) read as typed records, and write back to the very bytes stored.

use std::path::Path;

use memfs::history::{Operation, Record};
use memfs::{Command, Credential, Dialect, KeyFile, Memfs, OpenOptions, StateDir};

/// A copy of `tests/fixtures/{name}` at `into`, with the modes of a store folder (0700
/// folders, 0600 files; git keeps none).
fn fixture(name: &str, into: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures").join(name);
    let run = |command: &mut std::process::Command| assert!(command.status().unwrap().success(), "{command:?}");
    run(std::process::Command::new("cp").arg("-R").arg(&from).arg(into));
    run(std::process::Command::new("chmod").args(["-R", "u=rwX,go="]).arg(into));
}

#[tokio::test]
async fn the_fixture_stores_records_read_as_tool_commands_and_keep_their_bytes() {
    let create = |path: &str, text: &str| Command::Create { path: path.into(), file_text: text.into() };
    // The scratch file's text is the one thing the two sessions typed differently.
    for (name, scratch) in [("format-5", "x\n"), ("format-6", "temporary\n")] {
        let expected = [
            Command::Delete { path: "/memories/tmp.md".into() },
            create("/memories/tmp.md", scratch),
            Command::Rename {
                old_path: "/memories/projects/plan.md".into(),
                new_path: "/memories/projects/roadmap.md".into(),
            },
            Command::StrReplace {
                path: "/memories/notes.md".into(),
                old_str: "beta".into(),
                new_str: Some("gamma".into()),
            },
            create("/memories/projects/plan.md", "step one\n"),
            create("/memories/notes.md", "alpha\nbeta\n"),
        ];
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join(name);
        fixture(name, &root);
        let key = KeyFile::read(&root.join("store.key")).unwrap();
        let options = OpenOptions {
            dialect: Dialect::Spec,
            credential: Some(Credential::KeyFile(key)),
            state_dir: StateDir::Off,
            ..Default::default()
        };
        let url = format!("file://{}", root.join("store").display());
        let memfs = Memfs::open(url.as_str(), options).await.unwrap();
        let log = memfs.log(None, None).await.unwrap();
        let records: Vec<Record> = log.iter().map(|c| c.record()).collect();
        // The first open carried the store over to format 7, and recorded it (docs/FORMAT.md).
        let migrated = Operation::Keys { change: "migrate".into(), counter: 1, slot: Some(1) };
        let expected: Vec<Record> =
            std::iter::once(Record::Memfs(migrated)).chain(expected.iter().cloned().map(Record::Tool)).collect();
        assert_eq!(records, expected, "{name}");
        for c in &log {
            assert_eq!(c.record().to_json(), c.command, "{name} @{}", c.generation);
        }
    }
}
