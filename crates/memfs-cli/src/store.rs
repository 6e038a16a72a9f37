//! Finding the store and its credential from flags, environment and platform directories.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use memfs::{Credential, KeyFile, Location, Memfs, OpenOptions, StateDir};

use crate::cli::StoreArgs;

/// The environment variable holding a passphrase.
pub(crate) const PASSPHRASE_ENV: &str = "MEMFS_PASSPHRASE";

/// The default store's folder: `$XDG_DATA_HOME/memfs/default`.
pub(crate) fn default_store_dir() -> anyhow::Result<PathBuf> {
    let data = dirs::data_dir().context("cannot find the platform data directory; set --store")?;
    Ok(data.join("memfs").join("default"))
}

/// The default store's key file: `$XDG_CONFIG_HOME/memfs/default.key`, kept apart from the
/// store so that copying the store does not copy its key.
pub(crate) fn default_key_file() -> anyhow::Result<PathBuf> {
    let config = dirs::config_dir().context("cannot find the platform config directory; set --key-file")?;
    Ok(config.join("memfs").join("default.key"))
}

/// Where rollback and fork detection remembers each store's newest commit: the library's
/// default, `$XDG_STATE_HOME/memfs` (or the platform's equivalent).
pub(crate) fn state_dir() -> StateDir {
    StateDir::Platform
}

/// The store: `--store` (or `MEMFS_STORE`, or the default store), with `--store-option`s
/// and `--namespace`; and whether it is the default store.
pub(crate) fn url(args: &StoreArgs) -> anyhow::Result<(Location, bool)> {
    let (url, is_default) = match &args.store {
        Some(url) => (url.clone(), false),
        None => (file_url(&default_store_dir()?), true),
    };
    let mut location = Location::new(url);
    for (key, value) in &args.store_options {
        location = location.option(key, value);
    }
    if let Some(ns) = &args.namespace {
        location = location.namespace(ns);
    }
    Ok((location, is_default))
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The credential to unlock with: `--key-file`, `--passphrase-file`, `MEMFS_PASSPHRASE`, or
/// (for the default store) the default key file.
pub(crate) fn credential(args: &StoreArgs, is_default: bool) -> anyhow::Result<Option<Credential>> {
    if let Some(path) = &args.key_file {
        let key = KeyFile::read(path).with_context(|| format!("reading key file {}", path.display()))?;
        return Ok(Some(Credential::KeyFile(key)));
    }
    if let Some(p) = passphrase(args)? {
        return Ok(Some(p));
    }
    if is_default {
        let path = default_key_file()?;
        if path.exists() {
            let key = KeyFile::read(&path).with_context(|| format!("reading key file {}", path.display()))?;
            return Ok(Some(Credential::KeyFile(key)));
        }
    }
    Ok(None)
}

/// A passphrase from `--passphrase-file` or `MEMFS_PASSPHRASE`, if given.
pub(crate) fn passphrase(args: &StoreArgs) -> anyhow::Result<Option<Credential>> {
    if let Some(path) = &args.passphrase_file {
        return passphrase_file(path).map(Some);
    }
    match std::env::var(PASSPHRASE_ENV) {
        Ok(p) if !p.is_empty() => Ok(Some(Credential::passphrase(p))),
        _ => Ok(None),
    }
}

/// The first line of a passphrase file.
pub(crate) fn passphrase_file(path: &Path) -> anyhow::Result<Credential> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let line = text.lines().next().unwrap_or("").to_owned();
    if line.is_empty() {
        bail!("the passphrase file {} is empty", path.display());
    }
    Ok(Credential::passphrase(line))
}

/// `MEMFS_TODAY` (YYYY-MM-DD): the day to use as today for last-access days and expiration,
/// for tests and for previewing what expiration would do on a later day.
pub(crate) fn today() -> anyhow::Result<Option<memfs::Day>> {
    match std::env::var("MEMFS_TODAY") {
        Err(_) => Ok(None),
        Ok(s) => memfs::parse_day(&s).map(Some).ok_or_else(|| {
            anyhow::anyhow!("MEMFS_TODAY={s:?} is not a date: expected YYYY-MM-DD, for example 2026-11-21")
        }),
    }
}

/// Opens the store for a command; for `exec` on the default store, creates it on first use.
pub(crate) async fn open(args: &StoreArgs, dialect: memfs::Dialect, create_default: bool) -> anyhow::Result<Memfs> {
    let (url, is_default) = url(args)?;
    if is_default && create_default && !Memfs::exists(&url).await? {
        let key_path = default_key_file()?;
        let credential = match credential(args, true)? {
            Some(c) => c,
            None => {
                let key = crate::init::new_key_file(&key_path)?;
                eprintln!(
                    "memfs: created the key file {} (mode 0600): keep it safe, the store cannot be read without it",
                    key_path.display()
                );
                Credential::KeyFile(key)
            }
        };
        Memfs::init(&url, &credential, memfs::KdfParams::DEFAULT).await?;
        eprintln!("memfs: created a new encrypted store at {url}");
    }
    let credential = credential(args, is_default)?;
    let options = OpenOptions {
        dialect,
        credential,
        state_dir: state_dir(),
        trust_head: args.trust_head.clone(),
        actor: args.actor.clone(),
        today: today()?,
        max_staleness: args.max_staleness,
        cache_dir: args.cache_dir.clone(),
    };
    Ok(Memfs::open(&url, options).await?)
}
