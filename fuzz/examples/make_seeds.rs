//! Writes `seeds/<target>/` from the format-5 fixture store (`tests/fixtures/format-5`): its
//! log records and segment, `memfs.keys`, sealed objects and heads, and their plaintexts
//! (opened with the fixture's key file; directory pages and commits also in format 11's
//! binary form); policy, gc state, exec lines and HTTP bodies, which the fixture does not hold, are written
//! from small literal examples.
//!
//!   cd fuzz && cargo run --example make_seeds

use std::path::Path;

use futures::TryStreamExt;
use memfs_core::{ObjectId, Policy};
use memfs_crypt::ObjectKind;
use memfs_store::fuzzing::{LogParsed, parse_log_record};
use memfs_store::log_store::LogStore;
use object_store::{ObjectStore, ObjectStoreExt};

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/format-5/store");
const SEEDS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/seeds");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seeds = Path::new(SEEDS);
    let write = |target: &str, name: &str, bytes: &[u8]| {
        let dir = seeds.join(target);
        std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join(name), bytes))
    };

    // The segment, whole and cut after its first records; each record on its own.
    let segment = std::fs::read(Path::new(FIXTURE).join("log/0000000000000001"))?;
    let mut offset = 16;
    let mut boundaries = Vec::new();
    let version = u32::from_le_bytes(segment[8..12].try_into()?);
    while let LogParsed::Record(r) = parse_log_record(&segment[offset..], true, version) {
        boundaries.push(offset);
        if boundaries.len() <= 6 {
            write("log_record", &format!("record-{}", boundaries.len()), &segment[offset..offset + r.len])?;
        }
        offset += r.len;
    }
    write("log_segment", "format-5", &segment)?;
    write("log_segment", "format-5-first-5", &segment[..boundaries[5]])?;
    write("log_segment", "torn-tail", &segment[..boundaries[5] + 40])?;

    // The objects, read through a copy of the store (opening a log may create files).
    let copy = tempfile::tempdir()?;
    std::fs::create_dir(copy.path().join("log"))?;
    std::fs::write(copy.path().join("log/0000000000000001"), &segment)?;
    let store = LogStore::open(copy.path())?;
    let objects = memfs_fuzz::runtime().block_on(async {
        let mut objects = Vec::new();
        for meta in store.list(None).try_collect::<Vec<_>>().await? {
            let bytes = store.get(&meta.location).await?.bytes().await?;
            objects.push((meta.location.to_string(), bytes.to_vec()));
        }
        Ok::<_, object_store::Error>(objects)
    })?;

    let key = memfs_fuzz::master().object_key();
    let kinds = [
        (ObjectKind::Blob, "blob"),
        (ObjectKind::Dir, "directory_page"),
        (ObjectKind::Commit, "commit"),
        (ObjectKind::Policy, "policy"),
    ];
    for (path, bytes) in &objects {
        let (id, plain_target, kind) = match path.as_str() {
            "memfs.keys" => {
                write("keys", "format-5", bytes)?;
                continue;
            }
            "head" => (ObjectId::from_bytes([0; 32]), "head", ObjectKind::Head),
            _ => {
                let hex = path.rsplit('/').next().unwrap_or_default();
                let mut id = [0u8; 32];
                for (i, b) in id.iter_mut().enumerate() {
                    *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16)?;
                }
                let id = ObjectId::from_bytes(id);
                let Some(&(kind, target)) = kinds.iter().find(|(k, _)| key.open(*k, &id, bytes).is_ok()) else {
                    return Err(format!("{path} opens as no kind").into());
                };
                (id, target, kind)
            }
        };
        let plain = key.open(kind, &id, bytes)?;
        let name = &path.rsplit('/').next().unwrap_or_default()[..path.len().min(16)];
        let mut sealed = id.to_bytes().to_vec();
        sealed.extend_from_slice(bytes);
        write("sealed_object", &format!("{plain_target}-{name}"), &sealed)?;
        if plain_target != "blob" {
            write(plain_target, name, &plain)?;
        }
        // The fixture's pages, commits and head are JSON (format 5); format 11 writes pages
        // and commits in a binary form.
        if plain_target == "directory_page" {
            write(plain_target, &format!("{name}-binary"), &memfs_store::fuzzing::reencode_page(&plain)?)?;
        }
        if plain_target == "commit" {
            write(plain_target, &format!("{name}-binary"), &memfs_store::fuzzing::reencode_commit(&plain)?)?;
        }
        // And format 14 the head.
        if plain_target == "head" {
            write(plain_target, &format!("{name}-binary"), &memfs_store::fuzzing::encode_head_binary(&plain)?)?;
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
