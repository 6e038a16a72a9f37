//! Shared helpers: exact text assertions and a store wrapper that checks results and reads
//! the tree back.

use memfs::StateDir;
use memfs::{Credential, Dialect, KdfParams, KeyFile, Location, Memfs, OpenOptions, ToolResult};
use serde_json::{Value, json};

/// Compares two strings exactly; on a mismatch panics with both in full, escaped, plus the
/// first differing character.
#[track_caller]
pub(crate) fn check_text(what: &str, actual: &str, expected: &str) {
    if actual == expected {
        return;
    }
    let same = actual.chars().zip(expected.chars()).take_while(|(a, e)| a == e).count();
    panic!(
        "{what}: text mismatch (first difference at character {same}; expected {} bytes, got {} bytes)\n\
         expected: \"{}\"\n  actual: \"{}\"\n",
        expected.len(),
        actual.len(),
        expected.escape_debug(),
        actual.escape_debug(),
    );
}

/// `assert_text!(actual, expected)` or `assert_text!(actual, expected, "context {}", x)`:
/// exact string equality, both sides printed in full with escapes on failure.
macro_rules! assert_text {
    ($actual:expr, $expected:expr $(,)?) => {
        $crate::support::check_text(stringify!($actual), ::std::convert::AsRef::<str>::as_ref(&$actual), ::std::convert::AsRef::<str>::as_ref(&$expected))
    };
    ($actual:expr, $expected:expr, $($context:tt)+) => {
        $crate::support::check_text(&format!($($context)+), ::std::convert::AsRef::<str>::as_ref(&$actual), ::std::convert::AsRef::<str>::as_ref(&$expected))
    };
}

/// A fresh, empty store answering in one dialect, on the backend `MEMFS_TEST_BACKEND` names.
pub(crate) struct Mem {
    pub(crate) fs: Memfs,
    pub(crate) dialect: Dialect,
    /// The folder of a `local` store, removed on drop.
    _dir: Option<tempfile::TempDir>,
}

/// The view header of a directory listing, per dialect.
pub(crate) fn listing_header(path: &str, dialect: Dialect) -> String {
    match dialect {
        Dialect::Spec | Dialect::TypescriptSdk => format!(
            "Here're the files and directories up to 2 levels deep in {path}, excluding hidden items and node_modules:"
        ),
        Dialect::PythonSdk => {
            format!("Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:")
        }
    }
}

/// Shortens a JSON input for a panic message (some inputs hold megabytes).
fn show_input(input: &Value) -> String {
    let s = input.to_string();
    match s.char_indices().nth(400) {
        Some((cut, _)) => format!("{}… ({} bytes)", &s[..cut], s.len()),
        None => s,
    }
}

impl Mem {
    /// An empty store on the backend `MEMFS_TEST_BACKEND` names: `memory` (the default),
    /// `local` (an encrypted folder), `s3` (`MEMFS_TEST_S3_ENDPOINT`, `MEMFS_TEST_S3_BUCKET`)
    /// or `azure` (`AZURITE_BLOB_STORAGE_URL`, `MEMFS_TEST_AZURE_CONTAINER`); the cloud ones
    /// under a fresh random prefix. `scripts/test.sh` runs this suite on each of them.
    pub(crate) async fn new(dialect: Dialect) -> Self {
        let backend = std::env::var("MEMFS_TEST_BACKEND").unwrap_or_else(|_| "memory".into());
        if backend == "memory" {
            let fs = Memfs::ephemeral(dialect).expect("memory:// opens");
            assert_eq!(fs.dialect(), dialect);
            return Mem { fs, dialect, _dir: None };
        }
        let (location, dir) = persistent_location(&backend).unwrap_or_else(|| {
            panic!(
                "MEMFS_TEST_BACKEND={backend:?}: expected memory, local, or s3/azure with the emulators' variables set"
            )
        });
        let key = || Credential::KeyFile(KeyFile::from_bytes([0x42; 32]));
        Memfs::init(&location, &key(), KdfParams::DEFAULT).await.expect("the test store initialises");
        let options = OpenOptions { dialect, credential: Some(key()), state_dir: StateDir::Off, ..Default::default() };
        let fs = Memfs::open(&location, options).await.expect("the test store opens");
        assert_eq!(fs.dialect(), dialect);
        Mem { fs, dialect, _dir: dir }
    }

    /// Runs one input in the store's dialect.
    pub(crate) async fn call(&self, input: Value) -> ToolResult {
        self.fs.call(&input).await
    }

    /// Runs `input` and checks the exact answer and `is_error`.
    pub(crate) async fn expect(&self, input: Value, is_error: bool, expected: &str) {
        let result = self.call(input.clone()).await;
        let what = format!("[{}] {}", self.dialect, show_input(&input));
        check_text(&what, &result.content, expected);
        assert_eq!(
            result.is_error,
            is_error,
            "{what}: is_error should be {is_error} for content \"{}\"",
            result.content.escape_debug()
        );
    }

    /// Runs `input`, which must succeed with exactly `expected`.
    pub(crate) async fn ok(&self, input: Value, expected: &str) {
        self.expect(input, false, expected).await;
    }

    /// Runs `input`, which must fail with exactly `expected`.
    pub(crate) async fn err(&self, input: Value, expected: &str) {
        self.expect(input, true, expected).await;
    }

    /// Runs `input`, which must succeed; returns its content.
    pub(crate) async fn ok_content(&self, input: Value) -> String {
        let result = self.call(input.clone()).await;
        assert!(
            !result.is_error,
            "[{}] {} failed: \"{}\"",
            self.dialect,
            show_input(&input),
            result.content.escape_debug()
        );
        result.content
    }

    /// Creates a file and checks the exact success answer (the same in both dialects).
    pub(crate) async fn create(&self, path: &str, text: &str) {
        self.ok(
            json!({"command": "create", "path": path, "file_text": text}),
            &format!("File created successfully at: {path}"),
        )
        .await;
    }

    /// A file's exact content, rebuilt from a `python-sdk` view (which shows every `\n`-separated
    /// line verbatim, `\r` included).
    pub(crate) async fn content(&self, path: &str) -> String {
        let result = self.fs.call_with(&json!({"command": "view", "path": path}), Dialect::PythonSdk).await;
        assert!(!result.is_error, "view {path} failed: \"{}\"", result.content.escape_debug());
        let header = format!("Here's the content of {path} with line numbers:\n");
        let body = result
            .content
            .strip_prefix(&header)
            .unwrap_or_else(|| panic!("view {path} is not a file view: \"{}\"", result.content.escape_debug()));
        let lines: Vec<&str> = body
            .split('\n')
            .enumerate()
            .map(|(i, numbered)| {
                let prefix = format!("{:>6}\t", i + 1);
                numbered.strip_prefix(&prefix).unwrap_or_else(|| {
                    panic!("view {path}: line {} is not numbered: \"{}\"", i + 1, numbered.escape_debug())
                })
            })
            .collect();
        lines.join("\n")
    }

    /// Checks a file's exact content.
    pub(crate) async fn assert_content(&self, path: &str, expected: &str) {
        let actual = self.content(path).await;
        check_text(&format!("content of {path}"), &actual, expected);
    }

    /// The listing of `/memories` in the store's dialect.
    pub(crate) async fn listing(&self) -> String {
        self.ok_content(json!({"command": "view", "path": "/memories"})).await
    }

    /// Every non-hidden directory (`path/`) and file (`path = "content"`) below `/memories`,
    /// at any depth, sorted: the tree's whole visible state as one string.
    pub(crate) async fn snapshot(&self) -> String {
        let mut entries = Vec::new();
        let mut dirs = vec!["/memories".to_owned()];
        while let Some(dir) = dirs.pop() {
            let view = self.fs.call_with(&json!({"command": "view", "path": dir}), Dialect::PythonSdk).await;
            assert!(!view.is_error, "view {dir} failed: \"{}\"", view.content.escape_debug());
            let mut rows = view.content.split('\n');
            assert_text!(rows.next().unwrap_or_default(), listing_header(&dir, Dialect::PythonSdk));
            assert_text!(rows.next().unwrap_or_default(), format!("4K\t{dir}"));
            for row in rows {
                let (_, path) =
                    row.split_once('\t').unwrap_or_else(|| panic!("bad listing row \"{}\"", row.escape_debug()));
                let rel = path
                    .strip_prefix(&format!("{dir}/"))
                    .unwrap_or_else(|| panic!("row \"{}\" is not under {dir}", row.escape_debug()));
                let name = rel.trim_end_matches('/');
                if name.contains('/') {
                    continue; // a grandchild: listed again when its parent is walked
                }
                if rel.ends_with('/') {
                    entries.push(format!("{dir}/{name}/"));
                    dirs.push(format!("{dir}/{name}"));
                } else {
                    let file = format!("{dir}/{name}");
                    let content = self.content(&file).await;
                    entries.push(format!("{file} = {content:?}"));
                }
            }
        }
        entries.sort();
        entries.join("\n")
    }

    /// Checks the whole visible tree.
    pub(crate) async fn assert_snapshot(&self, expected: &[&str]) {
        let actual = self.snapshot().await;
        check_text("tree snapshot", &actual, &expected.join("\n"));
    }
}

/// A fresh location on a persistent backend: `local` (a temporary folder, returned too),
/// `s3` (moto: `MEMFS_TEST_S3_ENDPOINT`, `MEMFS_TEST_S3_BUCKET`) or `azure` (Azurite:
/// `AZURITE_BLOB_STORAGE_URL`, `MEMFS_TEST_AZURE_CONTAINER`), the cloud ones under a random
/// prefix. `None` if the backend's variables are not set.
pub(crate) fn persistent_location(backend: &str) -> Option<(Location, Option<tempfile::TempDir>)> {
    let var = |v: &str| std::env::var(v).ok();
    match backend {
        "local" => {
            let dir = tempfile::tempdir().expect("a temporary folder");
            Some((Location::new(format!("file://{}", dir.path().join("store").display())), Some(dir)))
        }
        "s3" => {
            let url = format!("s3://{}/suite/{}", var("MEMFS_TEST_S3_BUCKET")?, random_name());
            let location = Location::new(url)
                .option("aws_endpoint", var("MEMFS_TEST_S3_ENDPOINT")?)
                .option("aws_allow_http", "true")
                .option("aws_region", "us-east-1")
                .option("aws_access_key_id", "test")
                .option("aws_secret_access_key", "test")
                .option("max_retries", "2");
            Some((location, None))
        }
        "azure" => {
            var("AZURITE_BLOB_STORAGE_URL")?;
            let url = format!("az://{}/suite/{}", var("MEMFS_TEST_AZURE_CONTAINER")?, random_name());
            Some((Location::new(url).option("azure_storage_use_emulator", "true").option("max_retries", "2"), None))
        }
        other => panic!("unknown test backend {other:?}"),
    }
}

/// The persistent backends to run a test on: `local` always; `s3` and `azure` when the
/// emulators' variables are set. With `MEMFS_TEST_CLOUD=required` (as `scripts/test.sh`
/// sets), a missing variable fails the test instead of skipping the backend.
pub(crate) fn persistent_backends() -> Vec<&'static str> {
    let mut out = vec!["local"];
    for (backend, var) in [("s3", "MEMFS_TEST_S3_ENDPOINT"), ("azure", "AZURITE_BLOB_STORAGE_URL")] {
        if std::env::var(var).is_ok() {
            out.push(backend);
        } else if std::env::var("MEMFS_TEST_CLOUD").as_deref() == Ok("required") {
            panic!("MEMFS_TEST_CLOUD=required but {var} is not set");
        } else {
            eprintln!("skipping the {backend} backend: {var} is not set (scripts/emulators.sh sets it)");
        }
    }
    out
}

/// 16 random hex digits, for a fresh prefix in a shared bucket.
fn random_name() -> String {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).expect("random bytes");
    b.iter().map(|x| format!("{x:02x}")).collect()
}
