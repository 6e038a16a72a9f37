//! V5, hostile key slots: whoever can write `memfs.keys` (a tenant of `memfs serve` owns its
//! prefix; a shared folder or bucket) fills it with slots. At most 16 slots are read, the
//! summed Argon2id work of one unlock is bounded and checked before Argon2 runs, and `memfs
//! serve` unlocks off its async workers, so other tenants are still answered.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{self, append_put, assert_text, log_entries, run, text};

const PASSPHRASE: &str = "hostile slots test passphrase";

/// The binary with a clean environment, its state under `root`.
fn memfs(root: &Path) -> Command {
    let mut cmd = support::memfs(root);
    cmd.env("MEMFS_PASSPHRASE", PASSPHRASE);
    cmd
}

/// `init` with a cheap passphrase slot (8 KiB, 1 pass): the attacks below add the cost.
fn init(root: &Path, store: &str, env: &[(&str, String)]) {
    let mut cmd = memfs(root);
    cmd.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
    cmd.args(["--store", store, "init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"]);
    let out = run(cmd, "");
    assert!(out.status.success(), "init: {}", text(&out.stderr));
}

/// What the attacker does to `memfs.keys`: `slots` of them, copies of the first with new ids
/// (each a well-formed slot that opens nothing), `costs` (m KiB, t) on the copies, placed
/// before the original so that a passphrase tries them first.
fn hostile(keys: &[u8], copies: u32, costs: Option<(u32, u32)>) -> Vec<u8> {
    let mut json: Value = serde_json::from_slice(keys).expect("memfs.keys is JSON");
    let mut first = json["slots"]["slots"][0].clone();
    // Without its note (the time and host it was added, which vary).
    for field in ["label", "created_ms", "host"] {
        first.as_object_mut().expect("a slot").remove(field);
    }
    let mut slots = Vec::new();
    for id in 2..2 + copies {
        let mut slot = first.clone();
        slot["id"] = id.into();
        if let Some((m, t)) = costs {
            slot["argon2id"] = serde_json::json!({ "m_cost": m, "t_cost": t, "p_cost": 1 });
        }
        slots.push(slot);
    }
    slots.push(first);
    json["slots"]["slots"] = Value::Array(slots);
    serde_json::to_vec(&json).expect("serialize")
}

/// Rewrites `memfs.keys` of the local store folder `store` with `change`.
fn rewrite_local_keys(store: &Path, change: impl FnOnce(&[u8]) -> Vec<u8>) {
    let keys = log_entries(store).get("memfs.keys").expect("memfs.keys in the log").bytes();
    append_put(store, "memfs.keys", &change(&keys));
}

/// What the attacker does to `memfs.keys`: its bytes in, the new bytes out.
type Change = dyn Fn(&[u8]) -> Vec<u8>;

/// A store URL, the URL of its `memfs.keys` object, and the environment that reaches it.
type S3Store = (String, String, Vec<(&'static str, String)>);

const VIEW: &str = "{\"command\":\"view\",\"path\":\"/memories\"}\n";

/// The two attacks, on a store that `rewrite` lets the attacker change, with the exact errors.
/// The costly slots ask for 2 GiB x 4 passes each (within the per-slot bounds, and exactly the
/// summed bound alone): one such Argon2 run takes about 15 s of one core here and 2 GiB of
/// memory, so an answer within 5 s means none ran.
fn refuses_hostile_slots(root: &Path, store: &str, env: &[(&str, String)], rewrite: &dyn Fn(&Change)) {
    let exec = || {
        let mut cmd = memfs(root);
        cmd.envs(env.iter().map(|(k, v)| (*k, v.as_str()))).args(["--store", store, "exec"]);
        cmd
    };
    let out = run(exec(), VIEW);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let original = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let keep = original.clone();
    rewrite(&move |keys| {
        *keep.borrow_mut() = keys.to_vec();
        hostile(keys, 16, None)
    });
    let out = run(exec(), VIEW);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert_text(
        "17 slots",
        &text(&out.stderr),
        &format!("memfs: store {store}: object memfs.keys is corrupt: 17 key slots, at most 16 are accepted\n"),
    );

    rewrite(&|keys| {
        let mut json: Value = serde_json::from_slice(keys).expect("JSON");
        json["slots"]["slots"].as_array_mut().expect("slots").retain(|slot| slot["id"] == 1);
        hostile(&serde_json::to_vec(&json).expect("JSON"), 2, Some((2 << 20, 4)))
    });
    let started = Instant::now();
    let out = run(exec(), VIEW);
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert_text(
        "costly slots",
        &text(&out.stderr),
        &format!(
            "memfs: store {store}: the passphrase slots ask for 16385 MiB x passes of Argon2id in all (memory times passes, summed over the slots); at most 8192 are accepted\n"
        ),
    );
    assert!(took < Duration::from_secs(5), "took {took:?}: an Argon2 run?");

    // Bounded again but still the attacker's: the passphrase opens its slot, and the key set,
    // whose tag the attacker cannot make, is refused.
    rewrite(&|keys| {
        let mut json: Value = serde_json::from_slice(keys).expect("JSON");
        json["slots"]["slots"].as_array_mut().expect("slots").drain(..2);
        serde_json::to_vec(&json).expect("JSON")
    });
    let out = run(exec(), VIEW);
    assert_text(
        "the attacker's slots",
        &text(&out.stderr),
        &format!(
            "memfs: store {store}: object memfs.keys is corrupt: the key slots fail their authentication: memfs.keys was changed by someone without the store's key\n"
        ),
    );
    // The owner's `memfs.keys` put back opens as before.
    rewrite(&move |_| original.borrow().clone());
    let out = run(exec(), VIEW);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn hostile_key_slots_in_a_folder_are_refused_before_argon2() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let folder = root.join("store");
    let store = format!("file://{}", folder.display());
    init(root, &store, &[]);
    refuses_hostile_slots(root, &store, &[], &|change| rewrite_local_keys(&folder, change));
}

/// The S3 store of the emulator (moto), under a fresh prefix, with its environment; `None`
/// when `scripts/emulators.sh` did not start it.
fn s3_store() -> Option<S3Store> {
    let required = std::env::var("MEMFS_TEST_CLOUD").as_deref() == Ok("required");
    let (Ok(endpoint), Ok(bucket)) = (std::env::var("MEMFS_TEST_S3_ENDPOINT"), std::env::var("MEMFS_TEST_S3_BUCKET"))
    else {
        assert!(!required, "MEMFS_TEST_CLOUD=required but MEMFS_TEST_S3_ENDPOINT/BUCKET are not set");
        eprintln!("skipping S3: MEMFS_TEST_S3_ENDPOINT is not set (scripts/emulators.sh sets it)");
        return None;
    };
    let mut id = [0u8; 8];
    getrandom::fill(&mut id).expect("random");
    let prefix: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let env = vec![
        ("AWS_ENDPOINT", endpoint.clone()),
        ("AWS_ALLOW_HTTP", "true".into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ACCESS_KEY_ID", "test".into()),
        ("AWS_SECRET_ACCESS_KEY", "test".into()),
    ];
    Some((format!("s3://{bucket}/slots/{prefix}"), format!("{endpoint}/{bucket}/slots/{prefix}/memfs.keys"), env))
}

const SIGNED: [&str; 5] = ["-sSf", "--aws-sigv4", "aws:amz:us-east-1:s3", "--user", "test:test"];

/// Rewrites the object at `url` with `change`, with requests signed for the emulator's
/// credentials (curl's SigV4): the bucket's owner, not memfs, writes it.
fn rewrite_object(url: &str, change: impl FnOnce(&[u8]) -> Vec<u8>) {
    let get = Command::new("curl").args(SIGNED).arg(url).output().expect("curl");
    assert!(get.status.success(), "GET {url}: {}", text(&get.stderr));
    // A file, not stdin: curl signs the body's hash before sending it.
    let body = tempfile::NamedTempFile::new().expect("a temporary file");
    std::fs::write(body.path(), change(&get.stdout)).expect("write the body");
    let put = Command::new("curl").args(SIGNED).arg("--upload-file").arg(body.path()).arg(url).output().expect("curl");
    assert!(put.status.success(), "PUT {url}: {}", text(&put.stderr));
}

#[test]
fn hostile_key_slots_in_a_bucket_are_refused_before_argon2() {
    let Some((store, keys_url, env)) = s3_store() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    init(tmp.path(), &store, &env);
    refuses_hostile_slots(tmp.path(), &store, &env, &|change| rewrite_object(&keys_url, change));
}

const TOKENS: [(&str, &str); 3] = [
    ("alice", "alice-token-0123456789abcdef0123456789"),
    ("bob", "bob-token-0123456789abcdef0123456789abc"),
    ("carol", "carol-token-0123456789abcdef0123456789"),
];

/// A running `memfs serve` and its address.
struct Served(Child, String);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn serve(root: &Path, store: &str) -> Served {
    use std::io::{BufRead, BufReader};
    use std::os::unix::fs::PermissionsExt;
    let tokens = root.join("tokens");
    std::fs::write(&tokens, TOKENS.map(|(ns, token)| format!("{ns} {token}\n")).concat()).expect("tokens");
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    let mut cmd = memfs(root);
    cmd.args(["--store", store, "serve", "--http", "127.0.0.1:0", "--tokens"]).arg(&tokens);
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    // Warnings first (a namespace without a store yet), then where it listens.
    let addr = lines
        .by_ref()
        .map(|line| line.expect("stderr"))
        .find_map(|line| line.strip_prefix("memfs: serving on http://").map(str::to_owned))
        .expect("memfs: serving on …");
    std::thread::spawn(move || lines.for_each(drop));
    Served(child, addr)
}

/// One POST /v1/memory over a fresh connection: the status line and the body.
fn post(addr: &str, token: &str, body: &str) -> (String, String) {
    let mut socket = TcpStream::connect(addr).expect("connect");
    socket.set_read_timeout(Some(Duration::from_secs(120))).expect("timeout");
    let request = format!(
        "POST /v1/memory HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    socket.write_all(request.as_bytes()).expect("send");
    let mut response = String::new();
    socket.read_to_string(&mut response).expect("read");
    let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
    (head.lines().next().unwrap_or_default().to_owned(), body.to_owned())
}

/// Two tenants whose stores appear after the server started (it unlocks the ones that exist
/// before it listens) rewrite their own `memfs.keys` with a costly slot (256 MiB x 8 passes,
/// allowed): each first request then runs seconds of Argon2 (and is then refused: the slots
/// were changed without the root). On a server with two async workers (this
/// machine's cores), that used to hold both; now the unlocks run on the blocking pool and a
/// third tenant, already open, is answered at once meanwhile.
#[test]
fn a_tenants_costly_slots_do_not_stall_the_others() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let folder = root.join("store");
    let store = format!("file://{}", folder.display());
    init(root, &store, &[("MEMFS_NAMESPACE", "bob".to_owned())]);
    let served = serve(root, &store);
    for ns in ["alice", "carol"] {
        init(root, &store, &[("MEMFS_NAMESPACE", ns.to_owned())]);
        rewrite_local_keys(&folder.join("ns").join(ns), |keys| hostile(keys, 1, Some((256 << 10, 8))));
    }
    let view = VIEW.trim_end();
    let answer = |ns: &str| {
        let (status, body) = post(&served.1, TOKENS.iter().find(|(n, _)| *n == ns).expect("a tenant").1, view);
        assert_text(&format!("{ns} status"), &status, "HTTP/1.1 200 OK");
        assert_text(
            &format!("{ns} body"),
            &body,
            r#"{"content":"Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:\n4.0K\t/memories","is_error":false}"#,
        );
        Instant::now()
    };
    answer("bob");

    let costly: Vec<_> = ["alice", "carol"]
        .map(|ns| {
            let (addr, token) = (served.1.clone(), TOKENS.iter().find(|(n, _)| *n == ns).expect("a tenant").1);
            std::thread::spawn(move || {
                let (status, _) = post(&addr, token, VIEW.trim_end());
                (status, Instant::now())
            })
        })
        .into();
    std::thread::sleep(Duration::from_millis(300));
    let mut last = Instant::now();
    for _ in 0..5 {
        let started = Instant::now();
        last = answer("bob");
        assert!(last - started < Duration::from_secs(3), "bob waited {:?}", last - started);
    }
    for handle in costly {
        let (status, done) = handle.join().expect("a costly tenant");
        assert_text("costly tenant status", &status, "HTTP/1.1 503 Service Unavailable");
        // Their unlocks were still running while bob was answered.
        assert!(done > last, "a costly unlock ended before bob's answers: not costly enough to show anything");
    }
}

/// `memfs key add` keeps the bounds: a 17th slot, and a passphrase slot that would take the
/// summed work past 8 GiB-passes, are refused before Argon2 runs, and nothing is written.
#[test]
fn key_add_refuses_a_17th_slot_and_work_past_the_bound() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path();
    let folder = root.join("store");
    let store = format!("file://{}", folder.display());
    init(root, &store, &[]);
    let add = |args: &[&str]| {
        let mut cmd = memfs(root);
        cmd.args(["--store", &store, "key", "add"]).args(args);
        run(cmd, "")
    };
    let passphrase = root.join("new-passphrase");
    std::fs::write(&passphrase, "another passphrase\n").expect("write");
    let passphrase = passphrase.to_str().expect("UTF-8");
    let started = Instant::now();
    let out = add(&["--new-passphrase-file", passphrase, "--kdf-memory-kib", "2097152", "--kdf-iterations", "4"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert_text(
        "work",
        &text(&out.stderr),
        &format!(
            "memfs: store {store}: the passphrase slots ask for 8193 MiB x passes of Argon2id in all (memory times passes, summed over the slots); at most 8192 are accepted\n"
        ),
    );
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}: an Argon2 run?", started.elapsed());

    for n in 2..=16 {
        let key = root.join(format!("{n}.key"));
        let out = add(&["--new-key-file", key.to_str().expect("UTF-8")]);
        assert_text("add", &text(&out.stdout), &format!("added key slot {n} (key file {})\n", key.display()));
    }
    let before = log_entries(&folder).get("memfs.keys").expect("memfs.keys").bytes();
    let key = root.join("17.key");
    let out = add(&["--new-key-file", key.to_str().expect("UTF-8")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert_text(
        "17th",
        &text(&out.stderr),
        &format!("memfs: store {store}: a store holds at most 16 key slots; remove one first (memfs key remove)\n"),
    );
    assert!(!key.exists(), "no key file for a slot never added");
    assert_eq!(log_entries(&folder).get("memfs.keys").expect("memfs.keys").bytes(), before, "memfs.keys unchanged");
}
