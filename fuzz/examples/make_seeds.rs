//! Writes `seeds/<target>/` from the fixture store (`tests/fixtures/format-1`): its log records
//! and segment, `memfs.keys`, its sealed head, and the objects the head carries (the fixture
//! holds every object in its head, unwritten, as a bucket would): their plaintexts, and each
//! sealed again under the fixture's keys as it would be stored. Policy, gc state, exec lines
//! and HTTP bodies, which the fixture does not hold, are written from small literal examples.
//!
//!   cd fuzz && cargo run --example make_seeds

use std::path::Path;

use futures::TryStreamExt;
use memfs_core::{ObjectId, Policy};
use memfs_crypt::ObjectKind;
use memfs_store::fuzzing::{InlineKind, Keys, LogParsed, parse_log_record};
use memfs_store::open_local_log;
use object_store::{ObjectStore, ObjectStoreExt};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/format-1/store");
const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seeds = Path::new(SEEDS);
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = seeds.join(target);
        std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join(name), bytes))
    };

    // The segment, whole and cut after its first record; each record on its own.
    let segment = std::fs::read(Path::new(FIXTURE).join("log/0000000000000001"))?;
    let mut offset = 16;
    let mut boundaries = Vec::new();
    while let LogParsed::Record(r) = parse_log_record(&segment[offset..], true) {
        boundaries.push(offset);
        write("log_record", &format!("record-{}", boundaries.len()), &segment[offset..offset + r.len])?;
        offset += r.len;
    }
    write("log_segment", "format-1", &segment)?;
    write("log_segment", "format-1-first", &segment[..boundaries[1]])?;
    write("log_segment", "torn-tail", &segment[..boundaries[1] + 40])?;

    // What the log holds, read through a copy of the store (opening a log may create files).
    let copy = tempfile::tempdir()?;
    std::fs::create_dir(copy.path().join("log"))?;
    std::fs::write(copy.path().join("log/0000000000000001"), &segment)?;
    let store = open_local_log(copy.path())?;
    let objects = memfs_fuzz::runtime().block_on(async {
        let mut objects = Vec::new();
        for meta in store.list(None).try_collect::<Vec<_>>().await? {
            let bytes = store.get(&meta.location).await?.bytes().await?;
            objects.push((meta.location.to_string(), bytes.to_vec()));
        }
        Ok::<_, object_store::Error>(objects)
    })?;
    let (_, keys_json) =
        objects.iter().find(|(path, _)| path == "memfs.keys").ok_or("the fixture has no memfs.keys")?;
    let keys = memfs_fuzz::store_keys_of(keys_json);
    let head_id = ObjectId::from_bytes([0; 32]);
    for (path, bytes) in &objects {
        match path.as_str() {
            "memfs.keys" => write("keys", "format-1", bytes)?,
            "head" => {
                let mut sealed = head_id.to_bytes().to_vec();
                sealed.extend_from_slice(bytes);
                write("sealed_object", "head", &sealed)?;
                write("head", "head", &keys.objects.open(ObjectKind::Head, &head_id, bytes)?)?;
            }
            other => return Err(format!("the fixture holds {other}: it should hold its objects in its head").into()),
        }
    }

    // The objects the head carries: plaintexts, and sealed as a store would hold them.
    let plain = std::fs::read(seeds.join("head/head"))?;
    let head = Keys::new(memfs_fuzz::store_keys_of(keys_json)).decode_head(&plain)?;
    for object in &head.inline {
        let (target, kind) = match object.kind {
            InlineKind::Commit => ("commit", ObjectKind::Commit),
            InlineKind::Policy => ("policy", ObjectKind::Policy),
            InlineKind::Dir => ("directory_page", ObjectKind::Dir),
            InlineKind::Blob => ("blob", ObjectKind::Blob),
        };
        let name = &object.id.to_string()[..16];
        let mut sealed = object.id.to_bytes().to_vec();
        sealed.extend_from_slice(&keys.objects.seal(kind, &object.id, &object.plain)?);
        write("sealed_object", &format!("{target}-{name}"), &sealed)?;
        if target != "blob" {
            write(target, name, &object.plain)?;
        }
    }

    // What the fixture does not hold.
    let mut policy = serde_json::to_value(Policy::default())?;
    write("policy", "default", &serde_json::to_vec(&policy)?)?;
    policy["rules"] = serde_json::json!({"ticket": "TICKET-[0-9]{4,}"});
    policy["sensitive"] = "reject".into();
    policy["expire_unused_after_days"] = 30.into();
    write("policy", "rules", &serde_json::to_vec(&policy)?)?;
    write("gc_state", "empty", br#"{"horizon":0,"pending":{}}"#)?;
    let pending = format!(r#"{{"horizon":4,"pending":{{"{}":1764000000000}}}}"#, "ab".repeat(32));
    write("gc_state", "pending", pending.as_bytes())?;

    let lines = [
        r#"{"command":"create","path":"/memories/notes.md","file_text":"alpha\nbeta\n"}"#,
        r#"{"command":"view","path":"/memories"}"#,
        r#"{"command":"str_replace","path":"/memories/notes.md","old_str":"beta","new_str":"gamma"}"#,
        r#"{"command":"insert","path":"/memories/notes.md","insert_line":1,"insert_text":"one\n"}"#,
        r#"{"command":"view","path":"/memories/notes.md","view_range":[1,2]}"#,
        r#"{"command":"rename","old_path":"/memories/notes.md","new_path":"/memories/d/n.md"}"#,
        r#"{"type":"tool_use","id":"toolu_01","name":"memory","input":{"command":"delete","path":"/memories/d"}}"#,
    ];
    write("exec_line", "session", lines.join("\n").as_bytes())?;
    write("exec_line", "not-json", b"{\"command\": \n\n   \n[1,2]")?;
    for (i, line) in lines.iter().enumerate().filter(|(i, _)| [0, 1, 6].contains(i)) {
        write("http_body", &format!("body-{i}"), line.as_bytes())?;
    }
    Ok(())
}
