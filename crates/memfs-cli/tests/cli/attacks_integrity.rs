//! Issue 14, V1 and V3 and the rollback watermark, end to end through the binary: whoever holds
//! the storage puts back an old copy of the store (with its store id re-spelled), hides a
//! commit while another client builds on the state before it, and the clients must refuse
//! with an error naming both commits; purge and gc with retention must raise no false alarm;
//! the remembered commit is 0600 and never lowered by racing processes.
//!
//! Each attack runs on a local folder and on S3 (moto, under `scripts/emulators.sh`). The
//! attacker's hands are an `ObjectStore` on the store: the local folder's log through the
//! log format's own reader and writer (`LogStore`), the bucket through `object_store`'s S3
//! client, so the store is left as an attacker with write access would leave it.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use futures::StreamExt as _;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use serde_json::{Value, json};

use crate::support::{self, assert_text, text};

/// One store as the attacker sees it, and how the clients name it.
struct Site {
    name: &'static str,
    url: String,
    env: Vec<(&'static str, String)>,
    objects: Arc<dyn ObjectStore>,
    runtime: tokio::runtime::Runtime,
    _dir: tempfile::TempDir,
    key: PathBuf,
}

/// Every object of a store, by path.
type Copy = BTreeMap<String, Vec<u8>>;

impl Site {
    /// A new local folder store.
    fn local() -> Site {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("store");
        let url = format!("file://{}", folder.display());
        let site = |objects| Site {
            name: "local",
            url,
            env: Vec::new(),
            objects,
            runtime: runtime(),
            key: dir.path().join("team.key"),
            _dir: dir,
        };
        // The log exists once `init` has run; the attacker's view opens it then.
        let mut s = site(Arc::new(object_store::memory::InMemory::new()));
        s.init();
        s.objects = Arc::new(memfs_store::open_local_log(&folder).unwrap());
        s
    }

    /// A new store under a fresh prefix of the emulator's bucket; `None` without one.
    fn s3() -> Option<Site> {
        let (Ok(endpoint), Ok(bucket)) =
            (std::env::var("MEMFS_TEST_S3_ENDPOINT"), std::env::var("MEMFS_TEST_S3_BUCKET"))
        else {
            assert!(
                std::env::var("MEMFS_TEST_CLOUD").as_deref() != Ok("required"),
                "MEMFS_TEST_CLOUD=required but MEMFS_TEST_S3_ENDPOINT is not set"
            );
            eprintln!("skipping S3: MEMFS_TEST_S3_ENDPOINT is not set (scripts/emulators.sh sets it)");
            return None;
        };
        let mut id = [0u8; 8];
        getrandom::fill(&mut id).unwrap();
        let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
        let url = format!("s3://{bucket}/integrity/{id}");
        let env = vec![
            ("AWS_ENDPOINT", endpoint),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_ACCESS_KEY_ID", "test".to_owned()),
            ("AWS_SECRET_ACCESS_KEY", "test-secret".to_owned()),
        ];
        let cloud = memfs_store::cloud::CloudUrl::parse(&url).unwrap();
        let objects =
            memfs_store::cloud::build(&cloud, &[], env.iter().map(|(k, v)| ((*k).to_owned(), v.clone()))).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut s =
            Site { name: "s3", url, env, objects, runtime: runtime(), key: dir.path().join("team.key"), _dir: dir };
        s.init();
        Some(s)
    }

    fn init(&mut self) {
        let home = tempfile::tempdir().unwrap();
        let out = self.memfs(home.path()).arg("init").output().unwrap();
        assert!(out.status.success(), "{}: init: {}", self.name, text(&out.stderr));
    }

    /// `memfs` for the client whose home (state folder) is `home`, on this store.
    fn memfs(&self, home: &Path) -> Command {
        self.memfs_with(home, &self.key)
    }

    /// `memfs` for the client whose home is `home`, unlocking with the key file `key`.
    fn memfs_with(&self, home: &Path, key: &Path) -> Command {
        let mut cmd = support::memfs(home);
        cmd.envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .arg("--store")
            .arg(&self.url)
            .arg("--key-file")
            .arg(key)
            .stdin(Stdio::null());
        cmd
    }

    /// Every object, as stored now.
    fn copy(&self) -> Copy {
        self.runtime.block_on(async {
            let mut out = Copy::new();
            let mut list = self.objects.list(None);
            while let Some(meta) = list.next().await {
                let meta = meta.unwrap();
                let bytes = self.objects.get(&meta.location).await.unwrap().bytes().await.unwrap();
                out.insert(meta.location.to_string(), bytes.to_vec());
            }
            out
        })
    }

    /// Puts `copy` back: every object as it was, and nothing else.
    fn put_back(&self, copy: &Copy) {
        let now = self.copy();
        self.runtime.block_on(async {
            for path in now.keys().filter(|p| !copy.contains_key(*p)) {
                self.objects.delete(&ObjectPath::from(path.as_str())).await.unwrap();
            }
            for (path, bytes) in copy {
                if now.get(path) != Some(bytes) {
                    let payload = PutPayload::from(bytes.clone());
                    self.objects.put(&ObjectPath::from(path.as_str()), payload).await.unwrap();
                }
            }
        });
    }

    /// The store id as `memfs.keys` spells it.
    fn store_id(&self) -> String {
        let keys: Value = serde_json::from_slice(&self.copy()["memfs.keys"]).unwrap();
        keys["store_id"].as_str().unwrap().to_owned()
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

/// The sites every attack runs on: a local folder, and S3 when the emulator runs.
fn sites() -> Vec<Site> {
    std::iter::once(Site::local()).chain(Site::s3()).collect()
}

/// A client: its own home, so its own state folder.
struct Client(tempfile::TempDir);

impl Client {
    fn new() -> Self {
        Client(tempfile::tempdir().unwrap())
    }

    fn run(&self, site: &Site, args: &[&str]) -> Output {
        site.memfs(self.0.path()).args(args).output().unwrap()
    }

    /// A command that must succeed; its stdout.
    #[track_caller]
    fn ok(&self, site: &Site, args: &[&str]) -> String {
        support::succeeds(&format!("{}: memfs {args:?}", site.name), &self.run(site, args))
    }

    /// A command that must fail with status 1 and nothing on stdout; its stderr.
    #[track_caller]
    fn fails(&self, site: &Site, args: &[&str]) -> String {
        support::fails(&format!("{}: memfs {args:?}", site.name), 1, &self.run(site, args))
    }

    /// Tool inputs through `memfs exec`; the answers, one per line.
    fn exec(&self, site: &Site, inputs: &[Value]) -> String {
        let mut child = site
            .memfs(self.0.path())
            .arg("exec")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        for input in inputs {
            writeln!(stdin, "{input}").unwrap();
        }
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}: exec: {}", site.name, text(&out.stderr));
        text(&out.stdout)
    }

    /// Creates a file; the answer must be a success.
    #[track_caller]
    fn create(&self, site: &Site, path: &str) {
        let answer = self.exec(site, &[json!({"command": "create", "path": path, "file_text": path})]);
        assert_text(
            &format!("{}: create {path}", site.name),
            &answer,
            &format!("{}\n", json!({"content": format!("File created successfully at: {path}"), "is_error": false})),
        );
    }

    /// The remembered commit's file.
    fn mark(&self, site: &Site) -> PathBuf {
        self.0.path().join("state/memfs/generations").join(site.store_id())
    }
}

/// The newest commit as `memfs log` shows it: `@N` and its short id.
fn newest(client: &Client, site: &Site) -> (String, String) {
    let log = client.ok(site, &["log", "--limit", "1"]);
    let mut words = log.split_whitespace();
    (words.next().unwrap().to_owned(), words.next().unwrap().to_owned())
}

/// The advice the binary prints after a rollback or fork error.
fn advice(served: &str) -> String {
    format!(
        "memfs: the store no longer holds the history this client saw: whoever holds the storage may have rolled it back \
         or hidden commits (or it was restored from a backup). Run `memfs check` to see what it holds now; to accept it \
         as it is, run the command again with --trust-head {served}\n"
    )
}

#[test]
fn v1_a_store_id_spelled_otherwise_is_refused() {
    for site in sites() {
        let alice = Client::new();
        alice.create(&site, "/memories/a.md");
        let old = site.copy();
        alice.create(&site, "/memories/b.md");
        let refused = format!(
            "memfs: store {}: object memfs.keys is corrupt: its store id is not 32 lowercase hex digits\n",
            site.url
        );
        // The id alone re-spelled, on the current store.
        let id = site.store_id();
        let mut respelled = site.copy();
        let keys = String::from_utf8(respelled["memfs.keys"].clone()).unwrap();
        let upper = keys.replace(&id, &id.to_uppercase());
        assert_ne!(keys, upper);
        respelled.insert("memfs.keys".into(), upper.clone().into_bytes());
        site.put_back(&respelled);
        assert_text(site.name, &alice.fails(&site, &["log"]), &refused);
        // The old copy put back with its id upper-cased: the attack of V1 (before, the client
        // found no mark under the new spelling and served the old content).
        let mut attack = old.clone();
        attack.insert("memfs.keys".into(), upper.into_bytes());
        site.put_back(&attack);
        assert_text(site.name, &alice.fails(&site, &["log"]), &refused);
        assert_text(site.name, &Client::new().fails(&site, &["log"]), &refused);
        // With another spelling (mixed case, or one digit short) too.
        let mut short = old.clone();
        let keys = String::from_utf8(old["memfs.keys"].clone()).unwrap();
        short.insert("memfs.keys".into(), keys.replace(&id, &id[1..]).into_bytes());
        site.put_back(&short);
        assert_text(site.name, &alice.fails(&site, &["log"]), &refused);
    }
}

#[test]
fn a_plain_rollback_is_refused_naming_both_commits() {
    for site in sites() {
        let alice = Client::new();
        alice.create(&site, "/memories/a.md");
        let (_, first) = newest(&alice, &site);
        let old = site.copy();
        alice.create(&site, "/memories/b.md");
        let (_, second) = newest(&alice, &site);
        site.put_back(&old);
        let expected = format!(
            "memfs: store {}: rollback detected: the store serves commit {first} (@1), older than commit {second} (@2) \
             that this client has seen\n{}",
            site.url,
            advice(&first)
        );
        assert_text(site.name, &alice.fails(&site, &["log"]), &expected);
        // A write is refused too, and writes nothing.
        let answer = alice.exec(&site, &[json!({"command": "create", "path": "/memories/c.md", "file_text": "c"})]);
        let message = format!(
            "memfs: store {}: rollback detected: the store serves commit {first} (@1), older than commit {second} (@2) \
             that this client has seen",
            site.url
        );
        assert_text(site.name, &answer, &format!("{}\n", json!({"content": message, "is_error": true})));
        assert!(site.copy() == old, "{}: a refused command changed the store", site.name);
        // `memfs check` reports it and checks the store as served.
        let out = alice.run(&site, &["check"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(text(&out.stderr).starts_with("error: rollback detected"), "{}", text(&out.stderr));
        // Trusting the served head explicitly: accepted, and remembered from then on.
        let listed = alice.ok(&site, &["--trust-head", &first, "log"]);
        assert!(listed.starts_with(&format!("@1 {first} ")), "{listed}");
        assert_eq!(alice.ok(&site, &["log"]), listed);
    }
}

/// Issue 17: the storage holder keeps a copy of `memfs.keys` from before a slot was removed
/// and puts it back, with the removed key file's holder (a fresh client, remembering nothing)
/// or the owner reading next. The removal was recorded in a commit whose head names the key
/// set's change counter, so the older set is a rollback for both, and the store is left as it
/// was served. Putting the current set back makes the store open again.
#[test]
fn a_replayed_key_set_with_a_removed_slot_is_refused() {
    for site in sites() {
        let (alice, bob) = (Client::new(), Client::new());
        let bob_key = site._dir.path().join("bob.key");
        let bob_key_arg = bob_key.to_str().unwrap();
        assert_text(
            site.name,
            &alice.ok(&site, &["key", "add", "--new-key-file", bob_key_arg]),
            &format!("added key slot 2 (key file {bob_key_arg})\n"),
        );
        alice.create(&site, "/memories/a.md");
        let with_bob = site.copy();
        assert_text(site.name, &alice.ok(&site, &["key", "remove", "2", "--yes"]), "removed key slot 2\n");
        let bob_run = |args: &[&str]| site.memfs_with(bob.0.path(), &bob_key).args(args).output().unwrap();
        let refused = support::fails(&format!("{}: bob after the removal", site.name), 1, &bob_run(&["log"]));
        assert_text(site.name, &refused, &format!("memfs: store {}: wrong passphrase or key file\n", site.url));
        let current = site.copy();

        // The attacker puts back the key set that still had Bob's slot.
        let mut replayed = current.clone();
        replayed.insert("memfs.keys".into(), with_bob["memfs.keys"].clone());
        site.put_back(&replayed);
        let expected = format!(
            "memfs: store {}: rollback detected: memfs.keys is at change 2, older than change 3 that the head names \
             (an old copy of the key slots was put back?)\n",
            site.url
        );
        assert_text(site.name, &support::fails(&format!("{}: bob", site.name), 1, &bob_run(&["log"])), &expected);
        assert_text(site.name, &alice.fails(&site, &["log"]), &expected);
        let answer = alice.exec(&site, &[json!({"command": "create", "path": "/memories/b.md", "file_text": "b"})]);
        let message = expected.trim_end();
        assert_text(site.name, &answer, &format!("{}\n", json!({"content": message, "is_error": true})));
        assert!(site.copy() == replayed, "{}: a refused command changed the store", site.name);

        site.put_back(&current);
        assert!(alice.ok(&site, &["log", "--limit", "1"]).contains(" key remove slot 2"), "{}", site.name);
    }
}

/// `json` without the whitespace outside its strings: serde_json's compact form of what
/// memfs wrote pretty, field order kept (a `Value` would sort the keys).
fn compact(json: &str) -> String {
    let (mut out, mut in_string, mut escaped) = (String::new(), false, false);
    for c in json.chars() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (_, false, '"') => in_string = !in_string,
            (false, _, c) if c.is_whitespace() => continue,
            _ => {}
        }
        out.push(c);
    }
    out
}

/// `memfs.keys` as an attacker with no key rewrites it, following docs/FORMAT.md: a root
/// `R` of their own, wrapped to slot 1's public key (X25519 with an ephemeral key, BLAKE3,
/// AES-256-GCM), the check value, the chain of roots and a keyring all made from `R`, and
/// the tag under `R`. Everything verifies but the slot holder's confirmation, which needs the
/// slot's secret.
fn forge_root(keys: &[u8]) -> (Vec<u8>, memfs_crypt::RootKey) {
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    let random = || {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).unwrap();
        bytes
    };
    let original = compact(std::str::from_utf8(keys).unwrap());
    let value: Value = serde_json::from_str(&original).unwrap();
    let unhex = |s: &str| support::unhex(s).expect("hex");
    let hex = |b: &[u8]| -> String { b.iter().map(|x| format!("{x:02x}")).collect() };
    let store_id: [u8; 16] = unhex(value["store_id"].as_str().unwrap()).try_into().unwrap();
    let root_bytes = random();
    let root = memfs_crypt::RootKey::from_bytes(root_bytes);

    let slot = &value["slots"]["slots"][0];
    let public: [u8; 32] = unhex(slot["public"].as_str().unwrap()).try_into().unwrap();
    let ephemeral = x25519_dalek::StaticSecret::from(random());
    let ephemeral_public = x25519_dalek::PublicKey::from(&ephemeral).to_bytes();
    let shared = ephemeral.diffie_hellman(&x25519_dalek::PublicKey::from(public));
    let mut material = shared.as_bytes().to_vec();
    material.extend_from_slice(&ephemeral_public);
    material.extend_from_slice(&public);
    let wrapping = blake3::derive_key("memfs v7 2026-11-26 root wrapped to a slot", &material);
    let mut aad = b"memfs root".to_vec();
    aad.extend_from_slice(&store_id);
    aad.extend_from_slice(&1u32.to_be_bytes());
    let nonce = [7u8; 12];
    let sealed = aes_gcm::Aes256Gcm::new((&wrapping).into())
        .encrypt((&nonce).into(), Payload { msg: &root_bytes, aad: &aad })
        .unwrap();
    let wrapped_root = [&ephemeral_public[..], &nonce, &sealed].concat();

    let check = blake3::derive_key("memfs v7 2026-11-26 root key check", &root_bytes);
    let keyring = memfs_crypt::Keyring::new(&root, &store_id, &memfs_crypt::FirstKey::from_bytes(random())).unwrap();
    let mut forged = original
        .replace(slot["root"].as_str().unwrap(), &hex(&wrapped_root))
        .replace(value["slots"]["key_check"].as_str().unwrap(), &hex(&check))
        .replace(
            &compact(&value["slots"]["roots"].to_string()),
            &format!(r#"[{{"public":"{}"}}]"#, hex(&root.public())),
        );
    let ring_at = forged.find(r#","keyring":"#).unwrap();
    let mac_at = forged.find(r#","mac":"#).unwrap();
    forged.replace_range(ring_at..mac_at, &format!(r#","keyring":{}"#, serde_json::to_string(&keyring).unwrap()));
    let body = forged[..forged.find(r#","mac":"#).unwrap()].to_owned() + "}";
    let mac = root.mac(&support::keys_tag_body(body.as_bytes()));
    let signed = format!(r#"{},"mac":"{}"}}"#, &body[..body.len() - 1], hex(&mac));
    (signed.into_bytes(), root)
}

/// Issue 17: whoever holds the storage, with no key, wraps a root of their own to the owner's
/// slot (its public key is in `memfs.keys`), with a check value, chain, keyring and tag all
/// made from that root ([`forge_root`]). Had it been accepted, the owner's next memories would
/// be sealed under the attacker's keys. The owner's key file unlocks the slot and the root is
/// refused, for the owner and for a client that never saw the store; nothing is written.
#[test]
fn v6_a_root_wrapped_to_a_slot_by_the_storage_holder_is_refused() {
    for site in sites() {
        let alice = Client::new();
        alice.create(&site, "/memories/a.md");
        let genuine = site.copy();
        let (forged, root) = forge_root(&genuine["memfs.keys"]);
        // The forgery is whole: its tag is the attacker's root's, by memfs's own verifier.
        let body = compact(std::str::from_utf8(&forged).unwrap());
        let mac = &body[body.find(r#","mac":"#).unwrap()..];
        let mac = support::unhex(&mac[8..72]).expect("the tag's hex");
        root.verify(&support::keys_tag_body(&forged), &mac.try_into().unwrap()).expect("the forged tag verifies");

        let mut served = genuine.clone();
        served.insert("memfs.keys".into(), forged);
        site.put_back(&served);
        let expected = format!(
            "memfs: store {}: the key slots name a root key that this slot never confirmed and that no root it \
             confirmed vouches for: memfs.keys was replaced by someone without the store's key\n",
            site.url
        );
        assert_text(site.name, &alice.fails(&site, &["log"]), &expected);
        assert_text(site.name, &Client::new().fails(&site, &["log"]), &expected);
        // `exec` opens the store before it reads a line: it stops there.
        assert_text(site.name, &alice.fails(&site, &["exec"]), &expected);
        assert!(site.copy() == served, "{}: a refused command changed the store", site.name);
        site.put_back(&genuine);
        assert!(alice.ok(&site, &["log", "--limit", "1"]).contains(" create /memories/a.md"), "{}", site.name);
    }
}

#[test]
fn v3_a_fork_is_refused_and_writes_nothing() {
    for site in sites() {
        let (alice, bob) = (Client::new(), Client::new());
        alice.create(&site, "/memories/shared.md");
        bob.ok(&site, &["log"]);
        let before_x = site.copy();
        // X: Alice's acknowledged commit, which the storage holder then hides.
        alice.create(&site, "/memories/x.md");
        let (_, x) = newest(&alice, &site);
        site.put_back(&before_x);
        // Bob builds two generations on the state before X.
        bob.create(&site, "/memories/bob1.md");
        bob.create(&site, "/memories/bob2.md");
        let (at, bob2) = newest(&bob, &site);
        assert_eq!(at, "@3");
        let forked = site.copy();
        let fork = format!(
            "memfs: store {}: fork detected: the store serves commit {bob2} (@3), which does not descend from commit {x} \
             (@2) that this client has seen",
            site.url
        );
        // Alice's next command: refused, nothing written.
        let answer =
            alice.exec(&site, &[json!({"command": "create", "path": "/memories/alice2.md", "file_text": "a"})]);
        assert_text(site.name, &answer, &format!("{}\n", json!({"content": fork, "is_error": true})));
        assert!(site.copy() == forked, "{}: a refused command changed the store", site.name);
        assert_text(site.name, &alice.fails(&site, &["log"]), &format!("{fork}\n{}", advice(&bob2)));
        // The history holds no trace of Alice's attempt.
        let log = bob.ok(&site, &["log"]);
        assert!(!log.contains("alice2") && !log.contains("x.md"), "{log}");
        assert_eq!(log.lines().filter(|l| l.starts_with('@')).count(), 3, "{log}");
        // A prefix too short to name a commit trusts nothing.
        assert_text(
            site.name,
            &alice.fails(&site, &["--trust-head", &bob2[..7], "log"]),
            &format!("{fork}\n{}", advice(&bob2)),
        );
        // Trusting Bob's head explicitly lets her go on.
        assert_eq!(alice.ok(&site, &["--trust-head", &bob2, "log"]), log);
        alice.create(&site, "/memories/alice2.md");
        assert_eq!(newest(&bob, &site).0, "@4");
    }
}

#[test]
fn purge_by_one_client_raises_no_alarm_in_another() {
    for site in sites() {
        let (alice, bob) = (Client::new(), Client::new());
        alice.create(&site, "/memories/secret.md");
        alice.create(&site, "/memories/keep.md");
        // Bob remembers @2, whose id the purge changes (its parent is rewritten).
        let (_, before) = newest(&bob, &site);
        alice.ok(&site, &["purge", "--yes", "/memories/secret.md"]);
        let log = bob.ok(&site, &["log"]);
        let (at, after) = newest(&bob, &site);
        assert_eq!(at, "@3", "{log}");
        assert!(!log.contains(&before), "{}: the purge rewrote @2: {log}", site.name);
        assert_ne!(before, after);
        // And a fork made after a purge is still refused.
        let before_y = site.copy();
        bob.create(&site, "/memories/y.md");
        let (_, y) = newest(&bob, &site);
        site.put_back(&before_y);
        alice.create(&site, "/memories/z.md");
        let (_, z) = newest(&alice, &site);
        assert_text(
            site.name,
            &bob.fails(&site, &["log"]),
            &format!(
                "memfs: store {}: fork detected: the store serves commit {z} (@4), which does not descend from commit {y} \
                 (@4) that this client has seen\n{}",
                site.url,
                advice(&z)
            ),
        );
    }
}

#[test]
fn gc_retention_raises_no_alarm_in_a_client_that_remembers_a_cut_commit() {
    for site in sites() {
        let (alice, bob) = (Client::new(), Client::new());
        alice.create(&site, "/memories/a.md");
        // Bob remembers @1.
        assert_eq!(newest(&bob, &site).0, "@1");
        for name in ["b", "c", "d"] {
            alice.create(&site, &format!("/memories/{name}.md"));
        }
        alice.ok(&site, &["gc", "--keep-commits", "1", "--grace", "0"]);
        alice.ok(&site, &["gc", "--keep-commits", "1", "--grace", "0"]);
        // The cut commits are gone from the store: Bob's walk ends at the horizon and gc's
        // record of cut commits vouches for @1.
        let log = bob.ok(&site, &["log"]);
        assert!(log.starts_with("@4 "), "{}: {log}", site.name);
        assert_eq!(log.lines().filter(|l| l.starts_with('@')).count(), 1, "{log}");
    }
}

#[test]
fn the_remembered_commit_is_private_and_never_lowered_by_racing_processes() {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    let site = Site::local();
    let client = Client::new();
    client.create(&site, "/memories/first.md");
    let path = client.mark(&site);
    // A watcher reads the mark all along: its generation must never go down.
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (done, path) = (done.clone(), path.clone());
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while !done.load(Ordering::Relaxed) {
                if let Ok(mark) = std::fs::read_to_string(&path) {
                    let generation: u64 = mark.split(' ').next().unwrap().trim().parse().unwrap();
                    if seen.last() != Some(&generation) {
                        seen.push(generation);
                    }
                }
            }
            seen
        })
    };
    // Writers and readers of one client (one state folder) at once: a reader raises the mark
    // to each new head it reads, which a writer may have passed by the time it writes.
    const WRITERS: usize = 4;
    const CREATES: usize = 8;
    let mut children = Vec::new();
    for i in 0..2 * WRITERS {
        let mut child = site
            .memfs(client.0.path())
            .arg("exec")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let lines: Vec<Value> = match i % 2 {
            0 => (0..CREATES)
                .map(|j| json!({"command": "create", "path": format!("/memories/w{i}-{j}.md"), "file_text": "x"}))
                .collect(),
            _ => (0..60).map(|_| json!({"command": "view", "path": "/memories"})).collect(),
        };
        for line in lines {
            writeln!(stdin, "{line}").unwrap();
        }
        children.push(child);
    }
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    done.store(true, Ordering::Relaxed);
    let seen = watcher.join().unwrap();
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "the mark went down: {seen:?}");
    let (at, short) = newest(&client, &site);
    assert_eq!(at, format!("@{}", 1 + WRITERS * CREATES));
    let mark = std::fs::read_to_string(&path).unwrap();
    assert!(
        mark.starts_with(&format!("{} {short}", 1 + WRITERS * CREATES)),
        "the mark is {mark:?}, the head {at} {short}"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    let folder = path.parent().unwrap().to_owned();
    assert_eq!(std::fs::metadata(&folder).unwrap().permissions().mode() & 0o777, 0o700);
    // Only the mark and its lock: no temporary file left behind.
    let mut names: Vec<String> =
        std::fs::read_dir(&folder).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let id = site.store_id();
    assert_eq!(names, [id.clone(), format!("{id}.lock")]);
}
