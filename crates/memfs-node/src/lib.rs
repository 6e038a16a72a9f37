//! memfs for Node.js (issue 20): the native addon of the npm package `memfs-store`
//! (`crates/memfs-node/package.json`), built by `@napi-rs/cli`. The package's JavaScript
//! (`memfs.js`) wraps it with typed errors and `memfsMemoryTool`, the TypeScript SDK's memory
//! tool backed by a store; `scripts/test-packages.sh` packs it, installs it into a fresh folder
//! with the real SDK and runs it with the SDK's tool runner.
//!
//! Every method returns a promise and runs on napi-rs's tokio runtime: the event loop never
//! waits on the store.
//!
//! The workspace's module map: `crates/README.md`.
//! # Errors
//!
//! A refused command is an answer (`isError: true`), never an exception. Opening, creating and
//! the history methods reject with an `Error` whose message starts with the kind in brackets,
//! which `memfs.js` turns into its error classes: `[NoStore]` (no store there),
//! `[Credential]` (the credential given does not open it), `[Store]` (the store could not be
//! read or written), `[Memfs]` (anything else), `[Input]` (a bad argument).

// Denied, not forbidden: napi-rs's macros generate the addon's (unsafe) registration code
// under an allow of their own; nothing else here is unsafe.
#![deny(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use memfs::{Credential, Dialect, KdfParams, KeyFile, Location, Memfs, StateDir};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// How to open a store.
#[napi(object)]
#[derive(Default)]
pub struct OpenOptions {
    /// The key file that unlocks it.
    pub key_file: Option<String>,
    /// The passphrase that unlocks it.
    pub passphrase: Option<String>,
    /// An age identity file (its age slots; with neither a key file nor a passphrase, the
    /// keys kept outside memfs are tried: the OS keychain, KMS, this identity).
    pub age_identity: Option<String>,
    /// `typescript-sdk` (the default: the strings of the SDK's own tool), `python-sdk` or `spec`.
    pub dialect: Option<String>,
    /// A tenant's own store under the URL.
    pub namespace: Option<String>,
    /// Recorded with every change.
    pub actor: Option<String>,
    /// Cloud options, such as `{ aws_region: 'eu-west-1' }`.
    pub options: Option<HashMap<String, String>>,
}

/// How to create a store.
#[napi(object)]
#[derive(Default)]
pub struct InitOptions {
    /// A key file: written (random, mode 0600) unless it exists.
    pub key_file: Option<String>,
    /// A passphrase.
    pub passphrase: Option<String>,
    /// A tenant's own store under the URL.
    pub namespace: Option<String>,
    /// Cloud options.
    pub options: Option<HashMap<String, String>>,
    /// Argon2id costs of a passphrase slot: memory KiB, iterations, parallelism.
    pub kdf: Option<Vec<u32>>,
}

/// One answer of the memory tool.
#[napi(object)]
pub struct Answer {
    /// The text the model reads.
    pub content: String,
    /// Whether it is an error result.
    pub is_error: bool,
}

/// An open store.
#[napi]
pub struct Store {
    memfs: Arc<Memfs>,
}

fn failed(kind: &str, message: impl std::fmt::Display) -> Error {
    Error::new(Status::GenericFailure, format!("[{kind}] {message}"))
}

/// A memfs error as a rejection of its kind.
fn rejected(e: memfs::Error) -> Error {
    let kind = match e.kind() {
        memfs::ErrorKind::NoStore => "NoStore",
        memfs::ErrorKind::Credential => "Credential",
        memfs::ErrorKind::Store => "Store",
        memfs::ErrorKind::OutcomeUnknown => "OutcomeUnknown",
        _ => "Memfs",
    };
    failed(kind, memfs::error_chain(&e))
}

fn location(url: &str, namespace: Option<&str>, options: Option<HashMap<String, String>>) -> Location {
    let mut location = Location::from_path_or_url(url);
    // Sorted: the same options give the same location whatever the map's order.
    let mut options: Vec<(String, String)> = options.unwrap_or_default().into_iter().collect();
    options.sort();
    for (key, value) in options {
        location = location.option(key, value);
    }
    if let Some(namespace) = namespace {
        location = location.namespace(namespace);
    }
    location
}

fn dialect(name: Option<&str>) -> Result<Dialect> {
    name.unwrap_or("typescript-sdk").parse::<Dialect>().map_err(|e| failed("Input", e))
}

fn credential(options: &OpenOptions) -> Result<Credential> {
    match (&options.key_file, &options.passphrase) {
        (Some(_), Some(_)) => Err(failed("Input", "give a key file or a passphrase, not both")),
        (Some(path), None) => {
            KeyFile::read(std::path::Path::new(path)).map(Credential::KeyFile).map_err(|e| failed("Credential", e))
        }
        (None, Some(passphrase)) => Ok(Credential::passphrase(passphrase.clone())),
        (None, None) => {
            let paths: Vec<PathBuf> = options.age_identity.iter().map(PathBuf::from).collect();
            let identities = memfs_custody::AgeIdentities::read(&paths).map_err(|e| failed("Credential", e))?;
            Ok(Credential::Custodian(Arc::new(memfs_custody::Unlock::new(identities))))
        }
    }
}

#[napi]
impl Store {
    /// Opens the store at `url` (`/absolute/path`, `file:///…`, `s3://…`, `gs://…`, `az://…`,
    /// `memory://`).
    #[napi(factory)]
    pub async fn open(url: String, options: Option<OpenOptions>) -> Result<Store> {
        let options = options.unwrap_or_default();
        let location = location(&url, options.namespace.as_deref(), options.options.clone());
        let open = memfs::OpenOptions {
            dialect: dialect(options.dialect.as_deref())?,
            credential: Some(credential(&options)?),
            state_dir: StateDir::Platform,
            actor: options.actor.clone().unwrap_or_default(),
            ..memfs::OpenOptions::default()
        };
        let memfs = Memfs::open_with(&location, &open).await.map_err(rejected)?;
        Ok(Store { memfs: Arc::new(memfs) })
    }

    /// Creates a new store at `url`, its one key slot opened by `keyFile` (written unless it
    /// exists) or `passphrase`.
    #[napi]
    pub async fn init(url: String, options: Option<InitOptions>) -> Result<()> {
        let options = options.unwrap_or_default();
        let credential = match (&options.key_file, &options.passphrase) {
            (Some(path), None) if !std::path::Path::new(path).exists() => {
                let path = std::path::Path::new(path);
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| failed("Memfs", format!("{}: {e}", dir.display())))?;
                }
                let key = KeyFile::generate().map_err(|e| failed("Memfs", e))?;
                key.write_new(path).map_err(|e| failed("Memfs", e))?;
                Credential::KeyFile(key)
            }
            (Some(path), None) => KeyFile::read(std::path::Path::new(path))
                .map(Credential::KeyFile)
                .map_err(|e| failed("Credential", e))?,
            (None, Some(passphrase)) => Credential::passphrase(passphrase.clone()),
            (None, None) => return Err(failed("Input", "a new store needs a keyFile or a passphrase")),
            (Some(_), Some(_)) => return Err(failed("Input", "give a key file or a passphrase, not both")),
        };
        let kdf = match options.kdf.as_deref() {
            Some(&[m, t, p]) => KdfParams::new(m, t, p).map_err(|e| failed("Input", e))?,
            Some(_) => return Err(failed("Input", "kdf is [memory KiB, iterations, parallelism]")),
            None => KdfParams::DEFAULT,
        };
        let location = location(&url, options.namespace.as_deref(), options.options);
        Memfs::init(&location, &credential, kdf).await.map_err(rejected)
    }

    /// Runs one memory-tool call, its input as the model sent it: the answer (a refused command
    /// is an answer with `isError: true`).
    #[napi]
    pub async fn call(&self, input: serde_json::Value, dialect: Option<String>) -> Result<Answer> {
        let dialect = match dialect {
            Some(name) => self::dialect(Some(&name))?,
            None => self.memfs.dialect(),
        };
        let answer = self.memfs.call_with(&input, dialect).await;
        Ok(Answer { content: answer.content, is_error: answer.is_error })
    }

    /// The history, newest first (each commit as `memfs log --json` gives it).
    #[napi]
    pub async fn log(&self, limit: Option<u32>, path: Option<String>) -> Result<Vec<serde_json::Value>> {
        let commits = self.memfs.log(limit.map(|l| l as usize), path.as_deref()).await.map_err(rejected)?;
        commits.iter().map(|c| serde_json::to_value(c).map_err(|e| failed("Memfs", e))).collect()
    }

    /// Undoes the newest commit: the new commit's generation, or `null` if nothing changed.
    #[napi]
    pub async fn undo(&self) -> Result<Option<u32>> {
        let undone = self.memfs.undo(false).await.map_err(rejected)?;
        Ok(undone.generation.map(|g| u32::try_from(g).unwrap_or(u32::MAX)))
    }

    /// Puts the tree (or `path`) back as it was at `at`: the new commit's generation, or
    /// `null` if nothing differed.
    #[napi]
    pub async fn restore(&self, at: String, path: Option<String>) -> Result<Option<u32>> {
        let restored = self.memfs.restore(&at, path.as_deref(), false).await.map_err(rejected)?;
        Ok(restored.generation.map(|g| u32::try_from(g).unwrap_or(u32::MAX)))
    }

    /// Records the last-access days of the files read (call when done with the store).
    #[napi]
    pub async fn close(&self) -> Result<()> {
        self.memfs.flush().await.map_err(rejected)?;
        Ok(())
    }

    /// The answers' default dialect.
    #[napi(getter)]
    pub fn dialect(&self) -> String {
        self.memfs.dialect().as_str().to_owned()
    }
}
