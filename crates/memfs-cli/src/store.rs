//! Which store, and how to unlock it: the global options ([`StoreArgs`]), and finding the
//! store and its credential from them, the environment and the platform directories.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::Args;
use memfs::{Credential, KeyFile, Location, Memfs, OpenOptions, StateDir};

use crate::parse_error::Refused;

/// Which store, and how to unlock it. Shared by every command, and shown under their own
/// heading after each command's own options.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct StoreArgs {
    /// The store: file:///absolute/path or /absolute/path (an encrypted folder; also
    /// ./relative or ../relative, from the current folder), s3://bucket/prefix,
    /// gs://bucket/prefix, az://container/prefix, or memory:// (ephemeral, for the life of the
    /// process), or the NAME of a [stores.NAME] table in $XDG_CONFIG_HOME/memfs/config.toml
    /// (url, options, namespace, key_file, passphrase_file, passphrase_command, actor,
    /// dialect, max_line_bytes; the command line wins over the table). Default: the local store in
    /// $XDG_DATA_HOME/memfs/default.
    ///
    /// Cloud stores read the usual environment variables (AWS_*, GOOGLE_*, AZURE_*); see
    /// docs/CLOUD.md for AWS, GCS, Azure, R2 and MinIO.
    #[arg(long, global = true, env = "MEMFS_STORE", value_name = "URL|PATH|NAME")]
    pub(crate) store: Option<String>,

    /// An option of a cloud store, as KEY=VALUE (repeatable; wins over the environment), such
    /// as aws_endpoint=https://…, aws_region=eu-west-1, timeout=30s, max_retries=4. An unknown
    /// key is refused. Values are never printed.
    #[arg(long = "store-option", global = true, value_name = "KEY=VALUE", value_parser = parse_store_option)]
    pub(crate) store_options: Vec<(String, String)>,

    /// A tenant's namespace: its own store, with its own keys, under PREFIX/ns/NAME of
    /// the store URL. Each namespace is created with `memfs init`.
    #[arg(long, global = true, env = "MEMFS_NAMESPACE", value_name = "NAME")]
    pub(crate) namespace: Option<String>,

    /// Answer reads from a head up to this old (30s, 500ms, 2m) without asking the store: a
    /// warm read then costs no round trip, but may miss what other clients committed that
    /// long ago. Writes stay safe (compare-and-swap). Default: every command checks the head.
    #[arg(long, global = true, env = "MEMFS_MAX_STALENESS", value_name = "DURATION", value_parser = crate::value::parse_duration)]
    pub(crate) max_staleness: Option<std::time::Duration>,

    /// Also keep fetched objects (sealed, as stored) in this folder, so a new process reads
    /// them without a round trip; verified on every read. Default: memory only.
    #[arg(long, global = true, env = "MEMFS_CACHE_DIR", value_name = "PATH")]
    pub(crate) cache_dir: Option<PathBuf>,

    /// The memory a process may use to cache decrypted objects (directories, contents,
    /// commits), such as 64MiB (the default) or 512MiB; past it, the least used are dropped
    /// and read again when needed. Bounds a long-running `serve` or `mcp`.
    #[arg(long, global = true, env = "MEMFS_CACHE_MEMORY", value_name = "SIZE", value_parser = crate::value::parse_memory)]
    pub(crate) cache_memory: Option<usize>,

    /// Read the passphrase from the first line of this file. (Or set MEMFS_PASSPHRASE.)
    ///
    /// An empty MEMFS_* variable counts as unset (an empty MEMFS_PASSPHRASE is no passphrase).
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "key_file")]
    pub(crate) passphrase_file: Option<PathBuf>,

    /// Run this command (`sh -c COMMAND`) and use the first line it prints as the passphrase,
    /// as restic's --password-command: `pass show memfs`, `op read op://vault/memfs/password`,
    /// `vault kv get -field=passphrase secret/memfs`. After --passphrase-file, before
    /// MEMFS_PASSPHRASE.
    #[arg(long, global = true, env = "MEMFS_PASSPHRASE_COMMAND", value_name = "COMMAND")]
    pub(crate) passphrase_command: Option<String>,

    /// Unlock with this key file (32 random bytes). For `init`: where to create it.
    #[arg(long, global = true, env = "MEMFS_KEY_FILE", value_name = "PATH")]
    pub(crate) key_file: Option<PathBuf>,

    /// Unlock the store's age slots (`--age-recipient`) with this identity: an age identity
    /// file (AGE-SECRET-KEY-1…, or a plugin's AGE-PLUGIN-…) or an unencrypted SSH private key.
    /// Keychain and KMS slots need no option: with no passphrase or key file given, memfs tries
    /// every slot kept outside it, in order (KMS credentials from the cloud's usual
    /// environment).
    #[arg(long, global = true, env = "MEMFS_AGE_IDENTITY", value_name = "PATH")]
    pub(crate) age_identity: Option<PathBuf>,

    /// Accept the store's head even if it does not descend from the newest commit this
    /// client has seen (the answer to a "fork detected" or "rollback detected" error): give
    /// the commit id the error names (at least 8 hex digits). From then on that commit is the
    /// one remembered. Check what the store holds first (`memfs check`, `memfs log`).
    #[arg(long, global = true, env = "MEMFS_TRUST_HEAD", value_name = "COMMIT")]
    pub(crate) trust_head: Option<String>,

    /// The agent or user name recorded with every change.
    #[arg(long, global = true, env = "MEMFS_ACTOR", value_name = "NAME", default_value = "")]
    pub(crate) actor: String,
}

/// Parses `KEY=VALUE` for --store-option; the message names the key only.
fn parse_store_option(s: &str) -> Result<(String, String), Refused> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.trim().to_owned(), v.to_owned())),
        _ => Err(Refused("expected KEY=VALUE, as in aws_region=eu-west-1")),
    }
}

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
        Some(url) => (relative_path(url)?.unwrap_or_else(|| url.clone()), false),
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

/// `./PATH` or `../PATH` as the absolute path it names from the current folder. Only these
/// two: a bare word (`memories`) may be a mistyped URL, and keeps the library's refusal.
fn relative_path(store: &str) -> anyhow::Result<Option<String>> {
    if !(store.starts_with("./") || store.starts_with("../") || store == "." || store == "..") {
        return Ok(None);
    }
    // `absolute` drops the `.` components and keeps `..` (resolving it would follow links).
    let path = std::path::absolute(store).context("finding the current folder, to resolve --store")?;
    Ok(Some(path.display().to_string()))
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// The keys kept outside memfs that can unlock a store here: the keychain, the KMS services
/// (with the cloud's usual credentials), and the age identity given.
pub(crate) fn custodian(args: &StoreArgs) -> anyhow::Result<Credential> {
    let identities = memfs_custody::AgeIdentities::read(args.age_identity.as_slice())?;
    Ok(Credential::Custodian(std::sync::Arc::new(memfs_custody::Unlock::new(identities))))
}

/// The credential to unlock with: `--key-file`, `--passphrase-file`, `MEMFS_PASSPHRASE`, (for
/// the default store) the default key file, or else the keys kept outside memfs
/// ([`custodian`]; a store with no slot of theirs answers as if no credential was given).
pub(crate) fn credential(args: &StoreArgs, is_default: bool) -> anyhow::Result<Credential> {
    match given_credential(args, is_default)? {
        Some(given) => Ok(given),
        None => custodian(args),
    }
}

/// The passphrase or key file given (or, for the default store, the default key file), if
/// any: [`credential`] without the keys kept outside memfs.
pub(crate) fn given_credential(args: &StoreArgs, is_default: bool) -> anyhow::Result<Option<Credential>> {
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

/// A passphrase from `--passphrase-file`, `--passphrase-command` or `MEMFS_PASSPHRASE`, if
/// given.
pub(crate) fn passphrase(args: &StoreArgs) -> anyhow::Result<Option<Credential>> {
    if let Some(path) = &args.passphrase_file {
        return passphrase_file(path).map(Some);
    }
    if let Some(command) = &args.passphrase_command {
        return passphrase_command(command).map(Some);
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

/// The first line `sh -c command` prints. Its stderr is memfs's (a password manager may say
/// why it failed there; one that asks for its own unlock does so on the terminal), its stdin
/// is empty (so it cannot eat `memfs exec`'s input), and its stdout is wiped after use. The
/// command's text is not repeated in errors: it may hold a token.
fn passphrase_command(command: &str) -> anyhow::Result<Credential> {
    let out = std::process::Command::new("sh")
        .args(["-c", command])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("running the --passphrase-command")?;
    let stdout = zeroize::Zeroizing::new(out.stdout);
    if !out.status.success() {
        bail!("the --passphrase-command failed ({}); nothing was unlocked", out.status);
    }
    let text = std::str::from_utf8(&stdout).context("the --passphrase-command printed something that is not UTF-8")?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        bail!("the --passphrase-command printed no passphrase");
    }
    Ok(Credential::passphrase(line.to_owned()))
}

/// `MEMFS_TODAY` (YYYY-MM-DD): the day to use as today for last-access days and expiration,
/// for tests and for previewing what expiration would do on a later day.
pub(crate) fn today() -> anyhow::Result<Option<memfs::Day>> {
    match std::env::var("MEMFS_TODAY") {
        Err(_) => Ok(None),
        Ok(s) if s.is_empty() => Ok(None),
        Ok(s) => parse_day(&s).map(Some).ok_or_else(|| {
            anyhow::anyhow!("MEMFS_TODAY={s:?} is not a date: expected YYYY-MM-DD, for example 2026-11-21")
        }),
    }
}

/// A calendar date (`2026-11-21`) as a day number; `None` if it is not one.
fn parse_day(s: &str) -> Option<memfs::Day> {
    let date: jiff::civil::Date = s.parse().ok()?;
    let days = date.since(jiff::civil::date(1970, 1, 1)).ok()?.get_days();
    memfs::Day::try_from(days).ok()
}

/// The options every command opens a store with (the global options), with `credential`.
pub(crate) fn options(
    args: &StoreArgs,
    dialect: memfs::Dialect,
    credential: Option<memfs::Credential>,
) -> anyhow::Result<OpenOptions> {
    Ok(OpenOptions {
        dialect,
        credential,
        state_dir: state_dir(),
        trust_head: args.trust_head.clone(),
        actor: args.actor.clone(),
        today: today()?,
        max_staleness: args.max_staleness,
        cache_dir: args.cache_dir.clone(),
        memory_cache_bytes: args.cache_memory,
        unwritten_bytes: None,
    })
}

/// Opens the store for a command; for `exec` on the default store, creates it on first use.
pub(crate) async fn open(args: &StoreArgs, dialect: memfs::Dialect, create_default: bool) -> anyhow::Result<Memfs> {
    let (url, is_default) = url(args)?;
    if is_default && create_default && !Memfs::exists(&url).await? {
        create_default_store(args, &url).await?;
    }
    let mut options = options(args, dialect, Some(credential(args, is_default)?))?;
    let memfs = match Memfs::open_with(&url, &options).await {
        Ok(memfs) => memfs,
        // An encrypted store and no credential: on a terminal, ask for the passphrase, as
        // `init` and `key add` do.
        Err(memfs::Error::CredentialRequired { store }) if std::io::stdin().is_terminal() => {
            options.credential = Some(crate::credential::prompt_once(&store)?);
            Memfs::open_with(&url, &options).await?
        }
        Err(memfs::Error::NoStore { store }) if is_default => {
            bail!(
                "no memfs store at {store} yet: the first `memfs exec` creates this default store (or run `memfs init`)"
            )
        }
        Err(e) => return Err(e.into()),
    };
    if let Some(confirmed) = memfs.confirmed() {
        eprintln!("memfs: {}", confirmed_line(confirmed));
    }
    Ok(memfs)
}

/// The confirmation opening the store made in its keys, in a line.
fn confirmed_line(confirmed: &memfs::Confirmed) -> String {
    let what = format!("key slot {} confirmed the root key of the last `memfs key rotate`", confirmed.slot);
    match &confirmed.commit {
        Ok(generation) => format!("{what}; recorded as @{generation} (see `memfs log`)"),
        Err(why) => format!("{what}; not recorded in the history yet ({why}): the next command that opens it will"),
    }
}

/// Creates the default store on first use, safely when several processes start at once: the
/// exclusive creation of the store's key slots picks one winner (and, for a key file, the
/// exclusive creation of the file before); the others open the store it made.
///
/// With no credential given, the store's key goes into the OS keychain where one answers, so
/// a copy of the disk holds the store but not its key; where none does (a headless Linux), into
/// the default key file (0600), with a one-line warning.
async fn create_default_store(args: &StoreArgs, url: &Location) -> anyhow::Result<()> {
    if args.key_file.is_some() || passphrase(args)?.is_some() {
        let credential = credential(args, true)?;
        return init_default(url, &credential, key_file_note()).await;
    }
    // A key file already there (made before keychains were used, or by a process racing this
    // one) keeps the store with it.
    let why = match memfs_custody::Keychain::unavailable() {
        Some(_) => "no OS keychain here: the store's key goes to a key file on this disk, beside the store".to_owned(),
        None if default_key_file()?.exists() => String::new(),
        None => {
            let keychain = Credential::Custodian(std::sync::Arc::new(memfs_custody::Keychain));
            let note = crate::credential::slot_note(Some("the OS keychain".to_owned()));
            match init_default(url, &keychain, note).await {
                // A keychain that answered but refused the entry (locked, no collection): say
                // so and keep the key in a file.
                Err(e)
                    if matches!(
                        e.downcast_ref::<memfs::Error>(),
                        Some(memfs::Error::Store { source: memfs::StoreError::Crypt(memfs::CryptError::Seal(_)), .. })
                    ) =>
                {
                    format!("the OS keychain refused the store's key ({e:#}); it goes to a key file instead")
                }
                done => return done,
            }
        }
    };
    init_default(url, &Credential::KeyFile(default_key(&why)?), key_file_note()).await
}

/// The note of the default key file's slot.
fn key_file_note() -> memfs::SlotNote {
    crate::credential::slot_note(Some("the default key file".to_owned()))
}

/// Makes the default store with one slot for `credential`; another process that made it
/// first is no error (the caller opens it).
async fn init_default(url: &Location, credential: &Credential, note: memfs::SlotNote) -> anyhow::Result<()> {
    match Memfs::init_with_note(url, credential, memfs::KdfParams::DEFAULT, note).await {
        Ok(()) => eprintln!("memfs: created a new encrypted store at {url}"),
        // Another process made it first: open it.
        Err(memfs::Error::Store { source: memfs::StoreError::AlreadyInitialized, .. }) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

/// The default key file: created (0600, saying `warning` first, if any: why a key file), or,
/// when another process created it first, read once
/// that process has written it whole.
fn default_key(warning: &str) -> anyhow::Result<KeyFile> {
    let path = default_key_file()?;
    match crate::credential::new_key_file(&path) {
        Ok(key) => {
            // Said by the one process that made the key file, not by each that raced it.
            if !warning.is_empty() {
                eprintln!("memfs: warning: {warning}");
            }
            eprintln!(
                "memfs: created the key file {} (mode 0600): keep it safe, the store cannot be read without it",
                path.display()
            );
            return Ok(key);
        }
        Err(e) if !already_exists(&e) => return Err(e),
        Err(_) => {}
    }
    // Its writer creates it empty, then writes 32 bytes and syncs: a short read is a write
    // under way. A writer that died mid-way leaves a short file, refused after a few seconds.
    let mut waited = std::time::Duration::ZERO;
    loop {
        match KeyFile::read(&path) {
            Ok(key) => return Ok(key),
            Err(_) if waited < KEY_FILE_WAIT => {
                std::thread::sleep(KEY_FILE_POLL);
                waited += KEY_FILE_POLL;
            }
            Err(e) => return Err(e).with_context(|| format!("reading key file {}", path.display())),
        }
    }
}

/// How long to wait for another process to finish writing the default key file.
const KEY_FILE_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
const KEY_FILE_POLL: std::time::Duration = std::time::Duration::from_millis(20);

/// Whether creating a file failed because it exists.
fn already_exists(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::AlreadyExists)
}
