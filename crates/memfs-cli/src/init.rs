//! `memfs init`: create a new encrypted store.

use std::path::Path;

use anyhow::{Context, bail};
use memfs::{Credential, KdfParams, KeyFile, Memfs};

use crate::cli::{InitArgs, StoreArgs};
use crate::store;

/// Writes a new random key file (0600, must not exist).
pub(crate) fn new_key_file(path: &Path) -> anyhow::Result<KeyFile> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let key = KeyFile::generate()?;
    key.write_new(path).with_context(|| format!("writing key file {}", path.display()))?;
    Ok(key)
}

pub(crate) async fn run(args: &StoreArgs, init: InitArgs) -> anyhow::Result<()> {
    let (url, _) = store::url(args)?;
    if Memfs::exists(&url).await? {
        bail!("a memfs store already exists at {url}");
    }
    let kdf = KdfParams::new(init.kdf_memory_kib, init.kdf_iterations, init.kdf_parallelism)?;
    let credential = match &args.key_file {
        Some(path) => Credential::KeyFile(new_key_file(path)?),
        None => match store::passphrase(args)? {
            Some(p) => p,
            None => prompt_twice()?,
        },
    };
    if let Err(e) = Memfs::init(&url, &credential, kdf).await {
        // A key file for a store that was never created would only mislead.
        if let Some(path) = &args.key_file {
            let _ = std::fs::remove_file(path);
        }
        return Err(e.into());
    }
    eprintln!("memfs: created a new encrypted store at {url}");
    if let Some(path) = &args.key_file {
        eprintln!("memfs: its key file is {} (keep it safe: without it the store cannot be read)", path.display());
    }
    Ok(())
}

pub(crate) fn prompt_twice() -> anyhow::Result<Credential> {
    let first = rpassword::prompt_password("New passphrase: ").context("reading the passphrase")?;
    if first.is_empty() {
        bail!("the passphrase is empty");
    }
    let second = rpassword::prompt_password("Repeat passphrase: ").context("reading the passphrase")?;
    if first != second {
        bail!("the passphrases do not match");
    }
    Ok(Credential::passphrase(first))
}
