//! Issue 19, where keys live: key slots kept outside memfs, end to end through the binary.
//!
//! - age: a fleet of agents, each with its own identity (real X25519 identities as age-keygen
//!   makes them, and an SSH ed25519 key from ssh-keygen); one is revoked with `key remove
//!   --rotate`, and with its identity and every byte the store folder ever held it opens
//!   nothing written after the rotation.
//! - the OS keychain: the default store keeps its key there (a real Secret Service,
//!   gnome-keyring on a private D-Bus, from `scripts/secret-service.sh`), and without one it
//!   falls back to a key file with a warning.
//! - AWS KMS on moto (`scripts/emulators.sh`): a store whose slot is wrapped by a KMS key; a
//!   slot moved into another store is refused by KMS (the encryption context names the store);
//!   an unreachable KMS fails its slot and the next slot opens.
//!
//! The keychain and KMS cases need their servers: without their variables they are skipped,
//! unless `MEMFS_TEST_SECRET_SERVICE=required` / `MEMFS_TEST_CLOUD=required`.

use std::path::{Path, PathBuf};
use std::process::Command;

use age::secrecy::ExposeSecret;
use memfs_crypt::{Credential, CustodyKek, SlotKind};
use serde_json::{Value, json};

use crate::rotation::{keys_opened_by, opened_before_only};
use crate::support::{self, assert_text, log_history, run, text};

/// A store folder under a temporary directory, with the homes of its users.
struct Fleet {
    dir: tempfile::TempDir,
}

impl Fleet {
    fn new() -> Fleet {
        Fleet { dir: tempfile::tempdir().unwrap() }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn folder(&self) -> PathBuf {
        self.path("store")
    }

    /// The binary on the store, as `identity`'s holder (no key file, no passphrase).
    fn memfs(&self, identity: Option<&Path>) -> Command {
        let mut cmd = support::memfs(&self.path("home"));
        cmd.arg("--store").arg(format!("file://{}", self.folder().display()));
        if let Some(identity) = identity {
            cmd.arg("--age-identity").arg(identity);
        }
        cmd
    }

    #[track_caller]
    fn ok(&self, identity: Option<&Path>, args: &[&str]) -> String {
        support::ok(&format!("memfs {args:?}"), &run(self.memfs(identity).args(args), ""))
    }

    #[track_caller]
    fn fails(&self, identity: Option<&Path>, args: &[&str]) -> String {
        support::fails(&format!("memfs {args:?}"), 1, &run(self.memfs(identity).args(args), ""))
    }

    #[track_caller]
    fn exec(&self, identity: &Path, actor: &str, lines: &[Value]) -> String {
        let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let out = run(self.memfs(Some(identity)).args(["--actor", actor, "exec"]), input);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let answers = text(&out.stdout);
        assert!(!answers.contains("\"is_error\":true"), "{answers}");
        answers
    }
}

/// A new X25519 identity, written as age-keygen writes it; returns its file and recipient.
fn x25519_identity(dir: &Path, name: &str) -> (PathBuf, String) {
    let identity = age::x25519::Identity::generate();
    let recipient = identity.to_public().to_string();
    let path = dir.join(format!("{name}.age"));
    let body = format!("# public key: {recipient}\n{}\n", identity.to_string().expose_secret());
    std::fs::write(&path, body).unwrap();
    (path, recipient)
}

/// A new SSH ed25519 key pair from ssh-keygen (unencrypted); returns the private key's file
/// and the public key's line.
fn ssh_identity(dir: &Path, name: &str) -> (PathBuf, String) {
    let path = dir.join(name);
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
        .arg(&path)
        .output()
        .expect("ssh-keygen (openssh-client) runs");
    assert!(out.status.success(), "ssh-keygen: {}", text(&out.stderr));
    let public = std::fs::read_to_string(path.with_extension("pub")).unwrap();
    (path, public.trim().to_owned())
}

/// Issue 19's fleet: three agents with identities of their own (two X25519, one SSH), each
/// writing; agent 2 is revoked (`key remove 2 --rotate`). Its identity no longer opens the
/// store, and with every byte the folder ever held (as a versioned bucket keeps them) and every
/// slot its identity ever opened, it opens nothing written after the rotation, while it did
/// open what was written before. The others go on.
#[test]
fn a_fleet_of_age_agents_where_one_is_revoked() {
    let fleet = Fleet::new();
    let (one, one_r) = x25519_identity(fleet.dir.path(), "agent-1");
    let (two, two_r) = x25519_identity(fleet.dir.path(), "agent-2");
    let (three, three_r) = ssh_identity(fleet.dir.path(), "agent-3");
    let out = run(fleet.memfs(None).args(["init", "--age-recipient", &one_r, "--label", "agent-1"]), "");
    let said = support::succeeds("memfs init", &out);
    assert_text("init stdout", &said, "");
    assert_text(
        "init",
        &text(&out.stderr),
        &format!(
            "memfs: created a new encrypted store at file://{}\nmemfs: its key slot is kept by the age recipient {one_r}\n",
            fleet.folder().display()
        ),
    );
    for (recipient, label, id) in [(&two_r, "agent-2", 2), (&three_r, "agent-3", 3)] {
        let added = fleet.ok(Some(&one), &["key", "add", "--age-recipient", recipient, "--label", label]);
        assert_text("key add", &added, &format!("added key slot {id} (age recipient {recipient})\n"));
    }
    let listed: Vec<String> = fleet
        .ok(Some(&three), &["key", "list"])
        .lines()
        .map(|l| l.split(" added ").next().unwrap().to_owned())
        .collect();
    assert_eq!(listed, ["1 age \"agent-1\"", "2 age \"agent-2\"", "3 age \"agent-3\""]);
    let third = fleet.ok(Some(&three), &["key", "list"]).lines().nth(2).unwrap().to_owned();
    assert!(third.ends_with(&format!(" kept by {three_r} (in use)")), "{third}");
    for (identity, agent) in [(&one, "agent-1"), (&two, "agent-2"), (&three, "agent-3")] {
        let path = format!("/memories/{agent}.md");
        fleet.exec(
            identity,
            agent,
            &[json!({"command": "create", "path": path, "file_text": format!("BEFORE-{agent}\n")})],
        );
    }

    // The revocation: agent 2's slot goes, and the keys rotate.
    let removed = fleet.ok(Some(&one), &["key", "remove", "2", "--rotate", "--yes"]);
    assert_text(
        "remove --rotate",
        &removed,
        "removed key slot 2\nrotated the keys: key epoch 1, wrapped to key slots 1 and 3\n",
    );
    fleet.exec(
        &one,
        "agent-1",
        &[json!({"command": "create", "path": "/memories/after.md", "file_text": "AFTER-ROTATION-TEXT\n"})],
    );
    fleet.exec(&three, "agent-3", &[json!({"command": "str_replace", "path": "/memories/agent-3.md", "old_str": "BEFORE", "new_str": "EDITED-AFTER"})]);

    // Agent 2 through the binary: refused, naming the slots it tried.
    let refused = fleet.fails(Some(&two), &["cat", "/memories/after.md"]);
    assert_text(
        "revoked",
        &refused,
        &format!(
            "memfs: store file://{}: no key slot could be opened: key slot 1 (age): none of the age identities given is the one for {one_r}; key slot 3 (age): none of the age identities given is the one for {three_r}\n",
            fleet.folder().display()
        ),
    );
    // Agent 2 with every byte the folder ever held, and every slot its identity ever opened.
    let history = log_history(&fleet.folder());
    let identities = memfs_custody::AgeIdentities::read(std::slice::from_ref(&two)).unwrap();
    let keys = keys_opened_by(&history, &|slots, id| {
        slots.custody_slots().find_map(|(_, kind, custody)| {
            let kek = identities.open(custody).ok()?;
            let kek = Credential::Kek(CustodyKek { kind, custody: custody.clone(), kek });
            (kind == SlotKind::Age).then(|| slots.unlock(&kek, id).ok()).flatten()
        })
    });
    assert!(!keys.is_empty(), "agent 2's identity opened no version of memfs.keys");
    let rotation = history.iter().rposition(|(path, _)| path == "memfs.keys").unwrap();
    let opened_before = opened_before_only("agent 2", &history, &keys);

    // The others read everything, and the store checks clean.
    assert_text("cat", &fleet.ok(Some(&three), &["cat", "/memories/after.md"]), "AFTER-ROTATION-TEXT\n");
    assert_text("cat", &fleet.ok(Some(&one), &["cat", "/memories/agent-3.md"]), "EDITED-AFTER-agent-3\n");
    assert_text("cat", &fleet.ok(Some(&one), &["cat", "/memories/agent-2.md"]), "BEFORE-agent-2\n");
    assert!(fleet.ok(Some(&one), &["check", "--read-data"]).ends_with("no problems found\n"));
    let actors: Vec<String> = fleet
        .ok(Some(&one), &["log", "--json"])
        .lines()
        .filter_map(|l| {
            let commit: Value = serde_json::from_str(l).ok()?;
            Some(format!("{} {}", commit["actor"].as_str()?, commit["command"]["command"].as_str().unwrap_or("-")))
        })
        .collect();
    eprintln!(
        "age fleet: 3 agents (2 X25519, 1 SSH ed25519); agent 2 revoked by `key remove 2 --rotate`; \
         it opened {opened_before} objects written before the rotation and none of the {} written after; history: {actors:?}",
        history.len() - rotation - 1
    );
}

/// An identity that is not a slot's, a public key given as an identity, and a recipient that
/// is none: each said plainly, nothing written.
#[test]
fn wrong_age_identities_and_recipients_are_refused_clearly() {
    let fleet = Fleet::new();
    let (one, one_r) = x25519_identity(fleet.dir.path(), "agent-1");
    let (stranger, _) = x25519_identity(fleet.dir.path(), "stranger");
    support::succeeds("memfs init", &run(fleet.memfs(None).args(["init", "--age-recipient", &one_r]), ""));
    let store = format!("file://{}", fleet.folder().display());
    assert_text(
        "stranger",
        &fleet.fails(Some(&stranger), &["log"]),
        &format!(
            "memfs: store {store}: no key slot could be opened: key slot 1 (age): none of the age identities given is the one for {one_r}\n"
        ),
    );
    assert_text(
        "no identity",
        &fleet.fails(None, &["log"]),
        &format!(
            "memfs: store {store}: no key slot could be opened: key slot 1 (age): no age identity given (--age-identity or MEMFS_AGE_IDENTITY)\n"
        ),
    );
    let public = fleet.path("agent-1.pub");
    std::fs::write(&public, format!("{one_r}\n")).unwrap();
    assert_text(
        "a recipient as identity",
        &fleet.fails(Some(&public), &["log"]),
        &format!(
            "memfs: age identity {}: neither an age identity file (AGE-SECRET-KEY-1…) nor an SSH private key\n",
            public.display()
        ),
    );
    let before = log_history(&fleet.folder());
    assert_text(
        "not a recipient",
        &fleet.fails(Some(&one), &["key", "add", "--age-recipient", "age1notarecipient"]),
        "memfs: age recipient age1notarecipient: not an age recipient (age1…), an SSH public key (ssh-ed25519 …, ssh-rsa …) or a plugin's recipient\n",
    );
    assert_eq!(log_history(&fleet.folder()), before, "nothing was written");
    // A named store's table gives the identity (`age_identity`), as --age-identity would.
    let config = fleet.path("home/config/memfs");
    std::fs::create_dir_all(&config).unwrap();
    let table = format!("[stores.agent]\nurl = \"{store}\"\nage_identity = \"{}\"\n", one.display());
    std::fs::write(config.join("config.toml"), table).unwrap();
    let mut named = support::memfs(&fleet.path("home"));
    named.args(["--store", "agent", "log", "--json"]);
    assert_text("by name", &support::ok("named store", &run(named, "")), "");
    // An encrypted SSH key is named as such.
    let locked = fleet.path("locked");
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "a passphrase", "-f"])
        .arg(&locked)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_text(
        "encrypted ssh key",
        &fleet.fails(Some(&locked), &["log"]),
        &format!(
            "memfs: age identity {}: an SSH key encrypted with a passphrase; memfs reads unencrypted SSH keys and age identity files\n",
            locked.display()
        ),
    );
}

/// The private Secret Service of `scripts/secret-service.sh` (its D-Bus address), or `None`
/// (after saying so) when the tests run without it, a failure if it is required.
fn secret_service() -> Option<String> {
    match std::env::var("DBUS_SESSION_BUS_ADDRESS") {
        Ok(address) if std::env::var("MEMFS_TEST_SECRET_SERVICE").is_ok() => Some(address),
        _ if std::env::var("MEMFS_TEST_SECRET_SERVICE").as_deref() == Ok("required") => {
            panic!("MEMFS_TEST_SECRET_SERVICE=required but DBUS_SESSION_BUS_ADDRESS is not set")
        }
        _ => {
            eprintln!("skipping the keychain: no Secret Service (scripts/secret-service.sh starts one)");
            None
        }
    }
}

/// The laptop default where an OS keychain answers: the default store's key goes into it, no
/// key file is written, and the store opens with nothing given. Where the keychain cannot be
/// reached, the slot fails and says why; `init --keychain` makes such a store anywhere.
#[test]
fn the_default_store_keeps_its_key_in_the_os_keychain() {
    let Some(bus) = secret_service() else { return };
    let home = tempfile::tempdir().unwrap();
    let memfs = || {
        let mut cmd = support::memfs(home.path());
        cmd.env("DBUS_SESSION_BUS_ADDRESS", &bus);
        cmd
    };
    let store = home.path().join("data/memfs/default");
    let create = json!({"command": "create", "path": "/memories/a.md", "file_text": "kept\n"});
    let out = run(memfs().arg("exec"), format!("{create}\n"));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_text(
        "first exec",
        &text(&out.stderr),
        &format!("memfs: created a new encrypted store at file://{}\n", store.display()),
    );
    assert!(!home.path().join("config/memfs").exists(), "no key file was written");
    let listed = support::ok("key list", &run(memfs().args(["key", "list"]), ""));
    assert!(listed.starts_with("1 keychain \"the OS keychain\" added ") && listed.ends_with(" (in use)\n"), "{listed}");
    let out = run(memfs().arg("exec"), format!("{}\n", json!({"command": "view", "path": "/memories/a.md"})));
    assert!(support::ok("view", &out).contains("1\\tkept"));
    // Another keychain (another machine, another user): the slot fails and says so.
    let mut elsewhere = memfs();
    elsewhere.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/another-keychain");
    let refused = support::fails("no keychain", 1, &run(elsewhere.args(["cat", "/memories/a.md"]), ""));
    let prefix = format!(
        "memfs: store file://{}: no key slot could be opened: key slot 1 (keychain): no OS keychain here: ",
        store.display()
    );
    assert!(refused.starts_with(&prefix), "{refused}");
    // `init --keychain` on a store of its own.
    let other = format!("file://{}", home.path().join("other").display());
    let out = run(memfs().args(["--store", &other, "init", "--keychain"]), "");
    assert_text("init --keychain", &support::succeeds("init", &out), "");
    assert_text(
        "init stderr",
        &text(&out.stderr),
        &format!("memfs: created a new encrypted store at {other}\nmemfs: its key slot is kept by the OS keychain\n"),
    );
    let out = run(memfs().args(["--store", &other, "exec"]), format!("{create}\n"));
    assert!(support::ok("exec", &out).contains("File created successfully"));
}

/// moto's KMS, or `None` (after saying so) without the emulators, a failure if required.
fn moto() -> Option<String> {
    match std::env::var("MEMFS_TEST_S3_ENDPOINT") {
        Ok(endpoint) => Some(endpoint),
        Err(_) if std::env::var("MEMFS_TEST_CLOUD").as_deref() == Ok("required") => {
            panic!("MEMFS_TEST_CLOUD=required but MEMFS_TEST_S3_ENDPOINT is not set")
        }
        Err(_) => {
            eprintln!("skipping AWS KMS: MEMFS_TEST_S3_ENDPOINT is not set (scripts/emulators.sh sets it)");
            None
        }
    }
}

/// A secret access key no message may show.
const AWS_SECRET: &str = "memfs-test-aws-secret-NEVER-PRINTED";

/// A new symmetric KMS key on moto under a fresh alias; returns the alias.
fn kms_key(endpoint: &str) -> String {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let config = aws_config::defaults(aws_config::BehaviorVersion::latest())
            .endpoint_url(endpoint)
            .region(aws_config::Region::new("us-east-1"))
            .credentials_provider(aws_sdk_kms::config::Credentials::new("test", AWS_SECRET, None, None, "test"))
            .load()
            .await;
        let kms = aws_sdk_kms::Client::new(&config);
        let key = kms.create_key().send().await.expect("moto creates a KMS key");
        let id = key.key_metadata().expect("metadata").key_id().to_owned();
        let mut suffix = [0u8; 6];
        getrandom::fill(&mut suffix).unwrap();
        let alias = format!("alias/memfs-{}", suffix.iter().map(|b| format!("{b:02x}")).collect::<String>());
        kms.create_alias().alias_name(&alias).target_key_id(id).send().await.expect("moto creates an alias");
        alias
    })
}

/// AWS KMS on moto: a store whose one slot is wrapped by a KMS key opens with the usual AWS
/// environment and nothing else; its slot moved into another store (as whoever holds both
/// buckets could) is refused by KMS, whose encryption context names the store; an unreachable
/// KMS fails its slot and the next one (age) opens, and when none opens each slot says why.
/// No message shows the secret access key.
#[test]
fn an_aws_kms_slot_opens_with_the_cloud_s_credentials_and_is_bound_to_its_store() {
    let Some(endpoint) = moto() else { return };
    let alias = kms_key(&endpoint);
    let fleet = Fleet::new();
    let aws = |cmd: &mut Command| {
        cmd.env("AWS_ENDPOINT_URL_KMS", &endpoint)
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", "test")
            .env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
            .env("AWS_EC2_METADATA_DISABLED", "true");
    };
    let memfs = |store: &Path, identity: Option<&Path>| {
        let mut cmd = support::memfs(&fleet.path("home"));
        aws(&mut cmd);
        cmd.arg("--store").arg(format!("file://{}", store.display()));
        if let Some(identity) = identity {
            cmd.arg("--age-identity").arg(identity);
        }
        cmd
    };
    let (a, b) = (fleet.path("a"), fleet.path("b"));
    let mut said = String::new();
    for store in [&a, &b] {
        let out = run(memfs(store, None).args(["init", "--aws-kms", &alias, "--label", "kms"]), "");
        support::succeeds("init --aws-kms", &out);
        assert_text(
            "init",
            &text(&out.stderr),
            &format!(
                "memfs: created a new encrypted store at file://{}\nmemfs: its key slot is kept by the AWS KMS key {alias}\n",
                store.display()
            ),
        );
        said.push_str(&text(&out.stderr));
    }
    let create = json!({"command": "create", "path": "/memories/a.md", "file_text": "kept\n"});
    let out = run(memfs(&a, None).arg("exec"), format!("{create}\n"));
    said.push_str(&support::ok("exec", &out));
    let listed = support::ok("key list", &run(memfs(&a, None).args(["key", "list"]), ""));
    assert!(
        listed.starts_with("1 aws-kms \"kms\" added ") && listed.ends_with(&format!(" kept by {alias} (in use)\n")),
        "{listed}"
    );
    // The region is the slot's: another AWS_REGION in the environment does not matter.
    let out = run(memfs(&a, None).env("AWS_REGION", "eu-west-1").args(["cat", "/memories/a.md"]), "");
    assert_text("cat", &support::ok("cat", &out), "kept\n");

    // Store A's slot put in store B's memfs.keys, as an attacker with both folders would.
    let keys_of = |store: &Path| -> Value {
        let bytes = support::log_entries(store).get("memfs.keys").expect("memfs.keys").bytes();
        serde_json::from_slice(&bytes).unwrap()
    };
    let mut forged = keys_of(&b);
    forged["slots"]["slots"][0] = keys_of(&a)["slots"]["slots"][0].clone();
    support::append_put(&b, "memfs.keys", &serde_json::to_vec(&forged).unwrap());
    let refused = support::fails("moved slot", 1, &run(memfs(&b, None).args(["log"]), ""));
    assert_text(
        "moved slot",
        &refused,
        &format!(
            "memfs: store file://{}: no key slot could be opened: key slot 1 (AWS KMS): AWS KMS key {alias} in us-east-1: Decrypt failed: InvalidCiphertextException (the slot's ciphertext is not this store's, or was changed)\n",
            b.display()
        ),
    );
    said.push_str(&refused);

    // A second way in (age), then a KMS that cannot be reached.
    let (agent, recipient) = x25519_identity(fleet.dir.path(), "agent");
    support::ok("key add", &run(memfs(&a, None).args(["key", "add", "--age-recipient", &recipient]), ""));
    let unreachable = |identity: Option<&Path>| {
        let mut cmd = memfs(&a, identity);
        cmd.env("AWS_ENDPOINT_URL_KMS", "http://127.0.0.1:1");
        cmd.args(["cat", "/memories/a.md"]);
        run(cmd, "")
    };
    assert_text("the age slot opens", &support::ok("cat", &unreachable(Some(&agent))), "kept\n");
    let refused = support::fails("nothing opens", 1, &unreachable(None));
    let slot_1 = format!("key slot 1 (AWS KMS): AWS KMS key {alias} in us-east-1: Decrypt failed: dispatch failure: ");
    assert!(refused.contains(&slot_1) && refused.contains("Connection refused"), "{refused}");
    assert!(
        refused.ends_with("; key slot 2 (age): no age identity given (--age-identity or MEMFS_AGE_IDENTITY)\n"),
        "{refused}"
    );
    said.push_str(&refused);
    assert!(!said.contains(AWS_SECRET), "a message showed the secret access key: {said}");
}
