//! `NativeStore`: one open memfs store, shared by any number of Python threads (`Memfs` is
//! `Send + Sync`); every call releases the GIL while memfs works.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use memfs::{Credential, Dialect, KdfParams, KeyFile, Location, Memfs, OpenOptions, StateDir};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::error::{MemfsError, raise};
use crate::runtime::block_on;

/// An open store (the Python package's `memfs.Store` wraps it).
#[pyclass(frozen, module = "memfs._memfs")]
pub(crate) struct NativeStore {
    memfs: Arc<Memfs>,
}

/// Where the store is: its URL (or path), cloud options and namespace.
fn location(url: &str, namespace: Option<&str>, options: Option<BTreeMap<String, String>>) -> Location {
    let mut location = Location::from_path_or_url(url);
    for (key, value) in options.unwrap_or_default() {
        location = location.option(key, value);
    }
    if let Some(namespace) = namespace {
        location = location.namespace(namespace);
    }
    location
}

/// What unlocks the store: a key file, a passphrase, else the keys kept outside memfs (the OS
/// keychain, KMS with the cloud's usual credentials, and the age identity given).
fn credential(
    key_file: Option<PathBuf>,
    passphrase: Option<String>,
    age_identity: Option<PathBuf>,
) -> PyResult<Credential> {
    match (key_file, passphrase) {
        (Some(_), Some(_)) => Err(PyValueError::new_err("give a key file or a passphrase, not both")),
        (Some(path), None) => {
            KeyFile::read(&path).map(Credential::KeyFile).map_err(|e| MemfsError::new_err(e.to_string()))
        }
        (None, Some(passphrase)) => Ok(Credential::passphrase(passphrase)),
        (None, None) => {
            let identities = memfs_custody::AgeIdentities::read(age_identity.as_slice())
                .map_err(|e| MemfsError::new_err(e.to_string()))?;
            Ok(Credential::Custodian(Arc::new(memfs_custody::Unlock::new(identities))))
        }
    }
}

fn dialect(name: &str) -> PyResult<Dialect> {
    name.parse::<Dialect>().map_err(|e| PyValueError::new_err(e.to_string()))
}

#[pymethods]
impl NativeStore {
    /// Opens the store at `url`.
    #[staticmethod]
    #[pyo3(signature = (url, *, key_file=None, passphrase=None, age_identity=None, dialect="python-sdk", namespace=None, actor=None, options=None))]
    #[allow(clippy::too_many_arguments)]
    fn open(
        py: Python<'_>,
        url: &str,
        key_file: Option<PathBuf>,
        passphrase: Option<String>,
        age_identity: Option<PathBuf>,
        dialect: &str,
        namespace: Option<&str>,
        actor: Option<String>,
        options: Option<BTreeMap<String, String>>,
    ) -> PyResult<NativeStore> {
        let location = location(url, namespace, options);
        let options = OpenOptions {
            dialect: self::dialect(dialect)?,
            credential: Some(credential(key_file, passphrase, age_identity)?),
            state_dir: StateDir::Platform,
            actor: actor.unwrap_or_default(),
            ..OpenOptions::default()
        };
        let memfs = block_on(py, Memfs::open_with(&location, &options))?.map_err(raise)?;
        Ok(NativeStore { memfs: Arc::new(memfs) })
    }

    /// Creates a new store at `url`, its one key slot opened by `key_file` (created, mode
    /// 0600, if it does not exist) or `passphrase` (Argon2id with `kdf`: memory KiB,
    /// iterations, parallelism).
    #[staticmethod]
    #[pyo3(signature = (url, *, key_file=None, passphrase=None, namespace=None, options=None, kdf=None))]
    fn init(
        py: Python<'_>,
        url: &str,
        key_file: Option<PathBuf>,
        passphrase: Option<String>,
        namespace: Option<&str>,
        options: Option<BTreeMap<String, String>>,
        kdf: Option<(u32, u32, u32)>,
    ) -> PyResult<()> {
        let credential = match (key_file, passphrase) {
            (Some(path), None) if !path.exists() => {
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| MemfsError::new_err(format!("{}: {e}", dir.display())))?;
                }
                let key = KeyFile::generate().map_err(|e| MemfsError::new_err(e.to_string()))?;
                key.write_new(&path).map_err(|e| MemfsError::new_err(e.to_string()))?;
                Credential::KeyFile(key)
            }
            (Some(path), None) => credential(Some(path), None, None)?,
            (None, Some(passphrase)) => Credential::passphrase(passphrase),
            (None, None) => return Err(PyValueError::new_err("a new store needs a key_file or a passphrase")),
            (Some(_), Some(_)) => return Err(PyValueError::new_err("give a key file or a passphrase, not both")),
        };
        let kdf = match kdf {
            Some((m, t, p)) => KdfParams::new(m, t, p).map_err(|e| PyValueError::new_err(e.to_string()))?,
            None => KdfParams::DEFAULT,
        };
        let location = location(url, namespace, options);
        block_on(py, Memfs::init(&location, &credential, kdf))?.map_err(raise)
    }

    /// Runs one memory-tool call, given as its JSON `input`: `(content, is_error)`.
    #[pyo3(signature = (input, dialect=None))]
    fn call(&self, py: Python<'_>, input: &str, dialect: Option<&str>) -> PyResult<(String, bool)> {
        let input: serde_json::Value =
            serde_json::from_str(input).map_err(|e| PyValueError::new_err(format!("the input is not JSON: {e}")))?;
        let dialect = match dialect {
            Some(name) => self::dialect(name)?,
            None => self.memfs.dialect(),
        };
        let memfs = self.memfs.clone();
        let answer = block_on(py, async move { memfs.call_with(&input, dialect).await })?;
        Ok((answer.content, answer.is_error))
    }

    /// The history, newest first, as JSON objects (one string each): `limit` commits at most,
    /// those that touched `path` if given.
    #[pyo3(signature = (limit=None, path=None))]
    fn log(&self, py: Python<'_>, limit: Option<usize>, path: Option<&str>) -> PyResult<Vec<String>> {
        let commits = block_on(py, self.memfs.log(limit, path))?.map_err(raise)?;
        commits.iter().map(|c| serde_json::to_string(c).map_err(|e| MemfsError::new_err(e.to_string()))).collect()
    }

    /// Undoes the newest commit (a new commit): its generation, or `None` if it changed nothing.
    fn undo(&self, py: Python<'_>) -> PyResult<Option<u64>> {
        Ok(block_on(py, self.memfs.undo(false))?.map_err(raise)?.generation)
    }

    /// Puts the tree (or `path`) back as it was at `at` (a revision or a time): the new
    /// commit's generation, or `None` if nothing differed.
    #[pyo3(signature = (at, path=None))]
    fn restore(&self, py: Python<'_>, at: &str, path: Option<&str>) -> PyResult<Option<u64>> {
        Ok(block_on(py, self.memfs.restore(at, path, false))?.map_err(raise)?.generation)
    }

    /// Records the last-access days of the files read (a commit, if any were): call before
    /// dropping the store.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        block_on(py, self.memfs.flush())?.map_err(raise)?;
        Ok(())
    }

    /// The answer dialect calls use by default.
    #[getter]
    fn dialect(&self) -> &'static str {
        self.memfs.dialect().as_str()
    }
}
