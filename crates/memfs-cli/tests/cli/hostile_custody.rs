//! Issue 41, custody endpoints: whoever can write a store's `memfs.keys` (a shared folder or
//! bucket, a tenant's prefix) plants a custody slot naming a server of their own, to be sent
//! the credential that opens it. A slot is read before anything can vouch for it (the key
//! set's tag needs the root the slot gives), so memfs reaches only the cloud's official hosts
//! or an endpoint the local configuration gives, and checks an AWS slot's region and key
//! before any request.
//!
//! Each attack is the attacker's edit of `memfs.keys` in a store folder (a record appended to
//! its log), a listener on 127.0.0.1 standing for their server, and the victim's `memfs` run
//! with the clouds' credentials in its environment. The listener records every connection; a
//! control run that gives its address as the user's own endpoint shows that it would see one.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{self, append_put, assert_text, log_entries, run, text};

const PASSPHRASE: &str = "hostile custody test passphrase";
/// The victim's Azure access token, which the attacker wants.
const AZURE_TOKEN: &str = "victim-azure-token-NEVER-SENT";
/// The victim's AWS secret access key and session token.
const AWS_SECRET: &str = "victim-aws-secret-NEVER-SENT";
const AWS_SESSION: &str = "victim-aws-session-NEVER-SENT";
const VIEW: &str = "{\"command\":\"view\",\"path\":\"/memories\"}\n";

/// The attacker's server: every connection to it, with the bytes it sent (up to the end of its
/// headers), answered with a refusal so that no client waits.
struct Listener {
    origin: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Listener {
    fn start() -> Listener {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let origin = format!("http://{}", listener.local_addr().expect("address"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                stream.set_read_timeout(Some(Duration::from_secs(2))).expect("timeout");
                let mut request = Vec::new();
                let mut buffer = [0u8; 4096];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buffer) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buffer[..n]),
                    }
                }
                record.lock().expect("lock").push(String::from_utf8_lossy(&request).into_owned());
                let body = r#"{"__type":"NotFoundException","message":"refused by the test's listener"}"#;
                let answer = format!(
                    "HTTP/1.1 400 Bad Request\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        Listener { origin, seen }
    }

    /// The connections made so far (each request's head).
    fn connections(&self) -> Vec<String> {
        // A connection is recorded before it is answered, and memfs has exited: all are in.
        self.seen.lock().expect("lock").clone()
    }
}

/// A store folder under a temporary directory, made with a cheap passphrase slot (slot 1).
struct Victim {
    dir: tempfile::TempDir,
}

impl Victim {
    fn new() -> Victim {
        let victim = Victim { dir: tempfile::tempdir().expect("tempdir") };
        let mut cmd = victim.memfs();
        cmd.env("MEMFS_PASSPHRASE", PASSPHRASE);
        cmd.args(["init", "--kdf-memory-kib", "8", "--kdf-iterations", "1", "--kdf-parallelism", "1"]);
        support::succeeds("init", &run(cmd, ""));
        victim
    }

    fn folder(&self) -> PathBuf {
        self.dir.path().join("store")
    }

    fn store(&self) -> String {
        format!("file://{}", self.folder().display())
    }

    /// The binary on the store, with every cloud's credentials in its environment and no
    /// passphrase: it unlocks with the keys kept outside memfs.
    fn memfs(&self) -> Command {
        let mut cmd = support::memfs(self.dir.path());
        cmd.arg("--store").arg(self.store());
        cmd.env("AZURE_ACCESS_TOKEN", AZURE_TOKEN)
            .env("AWS_REGION", "us-east-1")
            .env("AWS_ACCESS_KEY_ID", "AKIAVICTIM")
            .env("AWS_SECRET_ACCESS_KEY", AWS_SECRET)
            .env("AWS_SESSION_TOKEN", AWS_SESSION)
            .env("AWS_EC2_METADATA_DISABLED", "true")
            .env("GOOGLE_OAUTH_ACCESS_TOKEN", "victim-google-token-NEVER-SENT");
        cmd
    }

    /// What the attacker does: `memfs.keys` with `slot` (a copy of slot 1's keys under another
    /// kind and custody) put first, where it is tried first.
    fn plant(&self, slot: Value) {
        let folder = self.folder();
        let keys = log_entries(&folder).get("memfs.keys").expect("memfs.keys in the log").bytes();
        let mut json: Value = serde_json::from_slice(&keys).expect("memfs.keys is JSON");
        let mut planted = json["slots"]["slots"][0].clone();
        let fields = planted.as_object_mut().expect("a slot");
        for field in ["argon2id", "salt", "label", "created_ms", "host"] {
            fields.remove(field);
        }
        fields.extend(slot.as_object().expect("an object").clone());
        json["slots"]["slots"].as_array_mut().expect("slots").insert(0, planted);
        append_put(&folder, "memfs.keys", &serde_json::to_vec(&json).expect("JSON"));
    }

    /// `memfs exec` of one view by the victim, with `env` more; its exit code and stderr.
    fn exec(&self, env: &[(&str, &str)], args: &[&str]) -> (Option<i32>, String) {
        let mut cmd = self.memfs();
        cmd.envs(env.iter().copied()).args(args).arg("exec");
        let out = run(cmd, VIEW);
        (out.status.code(), text(&out.stderr))
    }
}

/// An Azure Key Vault slot naming the attacker's listener, tried first: the victim's
/// `AZURE_ACCESS_TOKEN` never reaches it, and the store is refused with the slot named. With
/// another endpoint given as the user's own (an emulator elsewhere) the same; given the
/// listener's own origin, as only the user could, memfs does connect (the control).
#[test]
fn a_planted_azure_key_vault_slot_gets_no_token() {
    let victim = Victim::new();
    let listener = Listener::start();
    let origin = &listener.origin;
    victim.plant(json!({
        "id": 3,
        "kind": "azure-key-vault",
        "key": format!("{origin}/keys/kek/0123abcd"),
        "wrapped_kek": "00".repeat(256),
    }));
    let refused = format!(
        "memfs: store {}: no key slot could be opened: key slot 3 (Azure Key Vault): names the endpoint {origin}: not \
         an official Azure Key Vault host (https://NAME.vault.azure.net, https://NAME.managedhsm.azure.net) nor one \
         given by MEMFS_AZURE_KEY_VAULT_ENDPOINT; nothing was sent\n",
        victim.store()
    );
    for env in [&[][..], &[("MEMFS_AZURE_KEY_VAULT_ENDPOINT", "http://127.0.0.1:1")][..]] {
        let (code, stderr) = victim.exec(env, &[]);
        assert_eq!(code, Some(1), "{stderr}");
        assert_text("planted Azure slot", &stderr, &refused);
        assert_eq!(listener.connections(), Vec::<String>::new(), "the attacker's listener was reached");
    }

    // The control: the user names the listener as their Key Vault emulator; then it is asked.
    let (code, stderr) = victim.exec(&[("MEMFS_AZURE_KEY_VAULT_ENDPOINT", origin)], &[]);
    assert_eq!(code, Some(1), "{stderr}");
    let seen = listener.connections();
    assert_eq!(seen.len(), 1, "{stderr}");
    assert!(
        seen[0].to_lowercase().contains(&format!("authorization: bearer {}", AZURE_TOKEN.to_lowercase())),
        "{}",
        seen[0]
    );
}

/// The attack on a store the victim opens with a custody slot of their own (an age identity):
/// the planted slot, tried first, is refused and nothing connects; the victim's slot then opens
/// the root, and the key set, whose tag the attacker could not make, is refused, naming the
/// planted slot.
#[test]
fn a_planted_azure_key_vault_slot_before_the_victims_own_gets_no_token() {
    let victim = Victim::new();
    let identity = victim.dir.path().join("agent.age");
    let keygen = age_identity(&identity);
    let mut cmd = victim.memfs();
    cmd.env("MEMFS_PASSPHRASE", PASSPHRASE).args(["key", "add", "--age-recipient", &keygen]);
    support::ok("key add", &run(cmd, ""));
    let (code, stderr) = victim.exec(&[], &["--age-identity", identity.to_str().expect("UTF-8")]);
    assert_eq!(code, Some(0), "{stderr}");

    let listener = Listener::start();
    victim.plant(json!({
        "id": 3,
        "kind": "azure-key-vault",
        "key": format!("{}/keys/kek/0123abcd", listener.origin),
        "wrapped_kek": "00".repeat(256),
    }));
    let (code, stderr) = victim.exec(&[], &["--age-identity", identity.to_str().expect("UTF-8")]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_text(
        "planted before the victim's slot",
        &stderr,
        &format!(
            "memfs: store {}: object memfs.keys is corrupt: the key slots fail their authentication: memfs.keys was \
             changed by someone without the store's key; it names what this machine does not allow: key slot 3 \
             (Azure Key Vault): names the endpoint {}: not an official Azure Key Vault host \
             (https://NAME.vault.azure.net, https://NAME.managedhsm.azure.net) nor one given by \
             MEMFS_AZURE_KEY_VAULT_ENDPOINT; nothing was sent\n",
            victim.store(),
            listener.origin
        ),
    );
    assert_eq!(listener.connections(), Vec::<String>::new(), "the attacker's listener was reached");
}

/// A new age X25519 identity in `path`; returns its recipient.
fn age_identity(path: &Path) -> String {
    use age::secrecy::ExposeSecret;
    let identity = age::x25519::Identity::generate();
    std::fs::write(path, format!("{}\n", identity.to_string().expose_secret())).expect("write the identity");
    identity.to_public().to_string()
}

/// AWS KMS slots whose region is not a region's name, or whose key is not a key's name: the
/// region would become part of the KMS host name, and nothing is sent for either. The user's
/// own KMS endpoint (`AWS_ENDPOINT_URL_KMS`) is the listener, so a request that went out would
/// be seen there; the control, a well-formed slot, shows it is.
#[test]
fn planted_aws_kms_slots_with_a_bad_region_or_key_send_nothing() {
    let listener = Listener::start();
    let endpoint = [("AWS_ENDPOINT_URL_KMS", listener.origin.as_str())];
    let cases = [
        (
            "x.evil.example",
            "alias/memfs",
            "names the AWS region \"x.evil.example\": not a region's name (as eu-west-1)",
        ),
        (
            "x.evil.example/",
            "alias/memfs",
            "names the AWS region \"x.evil.example/\": not a region's name (as eu-west-1)",
        ),
        (
            "us-east-1",
            "alias/../memfs",
            "names the AWS KMS key \"alias/../memfs\": not a key id, key ARN, alias name or alias ARN",
        ),
        (
            "us-east-1",
            "arn:aws:kms:x.evil.example:111122223333:alias/memfs",
            "names the AWS KMS key \"arn:aws:kms:x.evil.example:111122223333:alias/memfs\": not a key id, key ARN, \
             alias name or alias ARN",
        ),
    ];
    for (region, key, why) in cases {
        let victim = Victim::new();
        victim.plant(json!({"id": 3, "kind": "aws-kms", "key": key, "region": region, "wrapped_kek": "01".repeat(32)}));
        let (code, stderr) = victim.exec(&endpoint, &[]);
        assert_eq!(code, Some(1), "{stderr}");
        assert_eq!(listener.connections(), Vec::<String>::new(), "a request went out for {region:?}, {key:?}");
        assert_text(
            &format!("region {region:?}, key {key:?}"),
            &stderr,
            &format!(
                "memfs: store {}: no key slot could be opened: key slot 3 (AWS KMS): {why}; nothing was sent\n",
                victim.store()
            ),
        );
    }

    // The control: a well-formed slot goes to the user's endpoint, signed with their keys.
    let victim = Victim::new();
    victim.plant(json!({"id": 3, "kind": "aws-kms", "key": "alias/memfs", "region": "us-east-1", "wrapped_kek": "01".repeat(32)}));
    let (code, stderr) = victim.exec(&endpoint, &[]);
    assert_eq!(code, Some(1), "{stderr}");
    let seen = listener.connections();
    assert!(!seen.is_empty() && seen[0].to_lowercase().contains("aws4-hmac-sha256 credential=akiavictim/"), "{seen:?}");
    assert!(!stderr.contains(AWS_SECRET) && !stderr.contains(AZURE_TOKEN), "{stderr}");
}
