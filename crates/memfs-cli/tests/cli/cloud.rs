//! Cloud store URLs through the binary: options from flags and the environment, unknown keys
//! refused, values never printed, clear errors for the usual set-up mistakes, and a whole
//! session (init, exec, log, check) on S3 (moto) and Azure (Azurite).
//!
//! The S3 and Azure cases need `scripts/emulators.sh` (which `scripts/test.sh` runs them
//! under); without its variables they are skipped, unless `MEMFS_TEST_CLOUD=required`.

use std::process::Output;

use crate::support::{assert_text, memfs, run, text};

/// A secret that must never appear in any output.
const SECRET: &str = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";

fn assert_no_secret(out: &Output) {
    for (what, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(!text(bytes).contains(SECRET), "{what} shows the secret: {}", text(bytes));
    }
}

#[test]
fn an_unknown_option_is_refused_naming_the_key_only() {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = memfs(home.path());
    cmd.args(["--store", "s3://bucket/team", "--store-option", &format!("aws_secret_acess_key={SECRET}"), "log"]);
    let out = run(cmd, "");
    assert_eq!(out.status.code(), Some(1));
    assert_text(
        "stderr",
        &text(&out.stderr),
        "memfs: store s3://bucket/team: unknown store option `aws_secret_acess_key` for s3:// stores (object_store ignores unknown keys; memfs refuses them). Keys look like aws_endpoint, aws_region, aws_access_key_id, aws_allow_http, plus memfs's max_retries, retry_timeout and retry_backoff\n",
    );
    assert_no_secret(&out);
}

#[test]
fn bad_values_urls_and_namespaces_are_refused_clearly() {
    let home = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--store", "s3://b/p", "--store-option", &format!("retry_timeout={SECRET}")],
            "memfs: store s3://b/p: store option `retry_timeout` has an invalid value: expected a duration such as 30s, 500ms or 2m\n",
        ),
        (
            &["--store", &format!("s3://AKIA:{SECRET}@b/p")],
            "memfs: unsupported store URL s3://****@b/p: credentials do not belong in the URL; use the environment or --store-option (they are never printed)\n",
        ),
        (
            &["--store", &format!("az://c/p?sig={SECRET}")],
            "memfs: unsupported store URL az://c/p?****: a store URL takes no query string or fragment; give options with --store-option\n",
        ),
        (
            &["--store", "file:///tmp/x", "--store-option", "aws_region=x"],
            "memfs: unsupported store URL file:///tmp/x: file:// stores take no --store-option\n",
        ),
        (
            &["--store", "gs://b/p", "--namespace", "Alpha"],
            "memfs: unsupported store URL gs://b/p: namespace \"Alpha\" is not valid: use 1 to 64 lowercase letters, digits, `-` and `_`, starting with a letter or digit\n",
        ),
        (&["--store", "s3://b/p", "--store-option", "novalue"], ""),
    ];
    for (args, expected) in cases {
        let mut cmd = memfs(home.path());
        cmd.args(args).arg("log");
        let out = run(cmd, "");
        assert_no_secret(&out);
        if expected.is_empty() {
            // clap's own error for a malformed KEY=VALUE.
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert!(text(&out.stderr).contains("expected KEY=VALUE, as in aws_region=eu-west-1"), "{args:?}");
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_text(&format!("{args:?}"), &text(&out.stderr), expected);
    }
}

#[test]
fn an_unreachable_endpoint_is_reported_in_seconds() {
    let home = tempfile::tempdir().unwrap();
    let mut cmd = memfs(home.path());
    cmd.env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env("AWS_REGION", "us-east-1")
        .args(["--store", "s3://bucket/p", "--key-file"])
        .arg(home.path().join("new.key"))
        .args(["--store-option", "aws_endpoint=http://127.0.0.1:1", "--store-option", "aws_allow_http=true"])
        .args(["--store-option", "max_retries=1", "--store-option", "retry_backoff=10ms", "init"]);
    let out = run(cmd, "");
    assert_no_secret(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_text(
        "stderr",
        &text(&out.stderr),
        "memfs: store s3://bucket/p: cannot reach the store's endpoint (read of memfs.keys): Connection refused (os error 111)\n",
    );
    assert!(!home.path().join("new.key").exists(), "a key file for a store that was not created");
    let mut cmd = memfs(home.path());
    cmd.env("AWS_ACCESS_KEY_ID", "test")
        .env("AWS_SECRET_ACCESS_KEY", SECRET)
        .env("AWS_REGION", "us-east-1")
        .env("MEMFS_PASSPHRASE", "a passphrase")
        .args(["--store", "s3://bucket/p"])
        .args(["--store-option", "aws_endpoint=http://127.0.0.1:1", "--store-option", "aws_allow_http=true"])
        .args(["--store-option", "max_retries=1", "--store-option", "retry_backoff=10ms", "log"]);
    let out = run(cmd, "");
    assert_no_secret(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_text(
        "stderr",
        &text(&out.stderr),
        "memfs: store s3://bucket/p: cannot reach the store's endpoint (read of memfs.keys): Connection refused (os error 111)\n",
    );
}

/// A cloud store of the emulators: its name, URL and environment.
pub(crate) type CloudStore = (&'static str, String, Vec<(&'static str, String)>);

/// The S3 and Azure stores of the emulators, each under a fresh random prefix.
pub(crate) fn cloud_stores() -> Vec<CloudStore> {
    let mut out = Vec::new();
    let required = std::env::var("MEMFS_TEST_CLOUD").as_deref() == Ok("required");
    let mut id = [0u8; 8];
    getrandom::fill(&mut id).unwrap();
    let id: String = id.iter().map(|b| format!("{b:02x}")).collect();
    match (std::env::var("MEMFS_TEST_S3_ENDPOINT"), std::env::var("MEMFS_TEST_S3_BUCKET")) {
        (Ok(endpoint), Ok(bucket)) => out.push((
            "s3",
            format!("s3://{bucket}/cli/{id}"),
            vec![
                ("AWS_ENDPOINT", endpoint),
                ("AWS_ALLOW_HTTP", "true".into()),
                ("AWS_REGION", "us-east-1".into()),
                ("AWS_ACCESS_KEY_ID", "test".into()),
                ("AWS_SECRET_ACCESS_KEY", SECRET.into()),
            ],
        )),
        _ if required => panic!("MEMFS_TEST_CLOUD=required but MEMFS_TEST_S3_ENDPOINT/BUCKET are not set"),
        _ => eprintln!("skipping S3: MEMFS_TEST_S3_ENDPOINT is not set (scripts/emulators.sh sets it)"),
    }
    match (std::env::var("AZURITE_BLOB_STORAGE_URL"), std::env::var("MEMFS_TEST_AZURE_CONTAINER")) {
        (Ok(url), Ok(container)) => out.push((
            "azure",
            format!("az://{container}/cli/{id}"),
            vec![("AZURITE_BLOB_STORAGE_URL", url), ("AZURE_STORAGE_USE_EMULATOR", "true".into())],
        )),
        _ if required => panic!("MEMFS_TEST_CLOUD=required but AZURITE_BLOB_STORAGE_URL is not set"),
        _ => eprintln!("skipping Azure: AZURITE_BLOB_STORAGE_URL is not set (scripts/emulators.sh sets it)"),
    }
    out
}

#[test]
fn a_session_on_each_cloud_store() {
    for (name, url, env) in cloud_stores() {
        let home = tempfile::tempdir().unwrap();
        let key = home.path().join("team.key");
        let cmd = |args: &[&str]| {
            let mut cmd = memfs(home.path());
            cmd.envs(env.iter().map(|(k, v)| (*k, v.as_str()))).arg("--store").arg(&url).arg("--key-file").arg(&key);
            cmd.args(args);
            cmd
        };
        let out = run(cmd(&["init"]), "");
        assert!(out.status.success(), "{name}: init: {}", text(&out.stderr));
        assert_text(
            &format!("{name} init"),
            &text(&out.stderr),
            &format!(
                "memfs: created a new encrypted store at {url}\nmemfs: its key file is {} (keep it safe: without it the store cannot be read)\n",
                key.display()
            ),
        );
        let session = concat!(
            r#"{"command":"create","path":"/memories/notes.md","file_text":"one\ntwo\n"}"#,
            "\n",
            r#"{"command":"str_replace","path":"/memories/notes.md","old_str":"two","new_str":"three"}"#,
            "\n",
            r#"{"command":"view","path":"/memories/notes.md"}"#,
            "\n"
        );
        let out = run(cmd(&["exec", "--stats"]), session);
        assert!(out.status.success(), "{name}: exec: {}", text(&out.stderr));
        assert_text(
            &format!("{name} exec"),
            &text(&out.stdout),
            concat!(
                r#"{"content":"File created successfully at: /memories/notes.md","is_error":false}"#,
                "\n",
                r#"{"content":"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n     1\tone\n     2\tthree\n     3\t","is_error":false}"#,
                "\n",
                r#"{"content":"Here's the content of /memories/notes.md with line numbers:\n     1\tone\n     2\tthree\n     3\t","is_error":false}"#,
                "\n"
            ),
        );
        assert_text(
            &format!("{name} stats"),
            &text(&out.stderr),
            "memfs: 3 commands, 2 commits, 0 conflicts retried\n",
        );
        let out = run(cmd(&["check"]), "");
        assert!(out.status.success(), "{name}: check: {}", text(&out.stderr));
        assert_text(
            &format!("{name} check"),
            &text(&out.stdout),
            "checked 2 commits (@1 to @2), 2 directories, 2 files (18 bytes, present with the right sizes)\nno problems found\n",
        );
        let out = run(cmd(&["init"]), "");
        assert_eq!(out.status.code(), Some(1), "{name}: a second init");
        assert_no_secret(&out);

        // A bucket or container that does not exist.
        let missing = url.replacen("memfs-test", "no-such-bucket", 1);
        let mut bad = memfs(home.path());
        bad.envs(env.iter().map(|(k, v)| (*k, v.as_str()))).args(["--store", &missing, "--key-file"]).arg(&key);
        bad.arg("log");
        let out = run(bad, "");
        assert_no_secret(&out);
        let code = if name == "s3" { "NoSuchBucket" } else { "ContainerNotFound" };
        assert_text(
            &format!("{name} missing bucket"),
            &text(&out.stderr),
            &format!(
                "memfs: store {missing}: the bucket or container does not exist (memfs does not create buckets or containers): the service says {code}\n"
            ),
        );

        if name == "azure" {
            // Azurite checks SharedKey signatures: a wrong account key is refused, and the
            // key (a secret) is not printed.
            let wrong = "V3JvbmdBY2NvdW50S2V5Rm9yQXp1cml0ZVdyb25nQWNjb3VudEtleUZvckF6dXJpdGU=";
            let mut bad = memfs(home.path());
            bad.envs(env.iter().map(|(k, v)| (*k, v.as_str()))).args(["--store", &url, "--key-file"]).arg(&key).args([
                "--store-option",
                &format!("azure_storage_account_key={wrong}"),
                "log",
            ]);
            let out = run(bad, "");
            assert!(!text(&out.stderr).contains(wrong), "the key was printed");
            assert_text(
                "azure wrong key",
                &text(&out.stderr),
                &format!(
                    "memfs: store {url}: the store refused the credentials (read of memfs.keys): the service says AuthorizationFailure; check them and their permissions (docs/CLOUD.md)\n"
                ),
            );
        }
    }
}
