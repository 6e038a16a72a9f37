//! Named stores: `[stores.NAME]` tables in `$XDG_CONFIG_HOME/memfs/config.toml`, chosen with
//! `--store NAME` instead of repeating a URL, its options and its key source.
//!
//! ```toml
//! [stores.work]
//! url = "s3://team-bucket/memories"
//! options = { aws_region = "eu-west-1" }
//! passphrase_command = "pass show memfs/work"
//! dialect = "python-sdk"
//!
//! [stores.notes]
//! url = "/home/me/memfs-notes"
//! key_file = "/home/me/.config/memfs/notes.key"
//!
//! [stores.fleet]
//! url = "s3://fleet-bucket/memories"
//! age_identity = "/etc/memfs/agent-7.age"
//! ```
//!
//! What the command line gives wins: a `--store-option` over the same key in `options`, any
//! credential flag over the table's key source, `--dialect` over `dialect`, `exec
//! --max-line-bytes` over `max_line_bytes`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;

/// The file, as read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    stores: BTreeMap<String, Named>,
}

/// One named store.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Named {
    /// Its URL, or an absolute path for a local store.
    pub(crate) url: String,
    /// Cloud store options, as `--store-option KEY=VALUE`.
    #[serde(default)]
    pub(crate) options: BTreeMap<String, String>,
    /// As `--namespace`.
    pub(crate) namespace: Option<String>,
    /// As `--key-file`.
    pub(crate) key_file: Option<PathBuf>,
    /// As `--passphrase-file`.
    pub(crate) passphrase_file: Option<PathBuf>,
    /// As `--passphrase-command`.
    pub(crate) passphrase_command: Option<String>,
    /// As `--age-identity`.
    pub(crate) age_identity: Option<PathBuf>,
    /// As `--actor`.
    pub(crate) actor: Option<String>,
    /// As `--dialect` of `exec`, `mcp`, `serve` and `agent`: `spec`, `python-sdk` or `typescript-sdk`.
    pub(crate) dialect: Option<String>,
    /// As `--max-line-bytes` of `exec`: a size such as `64MiB`.
    pub(crate) max_line_bytes: Option<String>,
}

/// Where the named stores are kept.
pub(crate) fn path() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("memfs").join("config.toml"))
}

/// Whether `--store VALUE` names a store rather than giving a URL or a path.
pub(crate) fn is_name(value: &str) -> bool {
    !value.contains("://") && !value.starts_with('/') && !value.starts_with('.')
}

/// The store named `name` in the config file; an error if the file is unreadable, malformed,
/// writable by others (it can name a command memfs runs), or has no such store.
pub(crate) fn named(name: &str) -> anyhow::Result<Named> {
    let Some(path) = path() else { bail!("no store named {name}: cannot find the platform config directory") };
    let config = read(&path)?.with_context(|| {
        format!(
            "no store named {name}: {} does not exist; a store is a URL (file:///path/to/store, s3://bucket/prefix, \
             memory://), a path (/path/to/store, ./store) or the name of a [stores.NAME] table in that file",
            path.display()
        )
    })?;
    match config.stores.get(name) {
        Some(named) => Ok(named.clone()),
        None => {
            let known: Vec<&str> = config.stores.keys().map(String::as_str).collect();
            bail!("no store named {name} in {} (it names: {})", path.display(), known.join(", "))
        }
    }
}

fn read(path: &Path) -> anyhow::Result<Option<Config>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).with_context(|| format!("reading {}", path.display()))?.permissions().mode();
        if mode & 0o022 != 0 {
            bail!(
                "{} can be written by others (mode {:04o}): it names the commands and keys memfs uses; run chmod go-w {}",
                path.display(),
                mode & 0o777,
                path.display()
            );
        }
    }
    // The parser's message quotes the line, which may hold an option's value: say where only.
    let config: Config = toml::from_str(&text).map_err(|e| {
        let at = e.span().map_or(1, |s| text[..s.start].matches('\n').count() + 1);
        anyhow::anyhow!("{}: not a valid memfs config near line {at}", path.display())
    })?;
    Ok(Some(config))
}
