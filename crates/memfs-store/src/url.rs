//! Store URLs: the one place a URL's scheme is matched to a backend.
//!
//! `memory://` (ephemeral), `file:///absolute/path` or a plain `/absolute/path` (a local
//! folder), `s3://bucket/prefix`, `gs://bucket/prefix` and `az://container/prefix` (the
//! [`cloud`] stores). A namespace (a tenant's own store) is `ns/NAME` under the folder or
//! prefix.
//!
//! ```
//! use std::path::PathBuf;
//! use memfs_store::StoreUrl;
//!
//! let url = StoreUrl::parse("file:///srv/my%20memories", Some("team-a"), false)?;
//! assert_eq!(url, StoreUrl::Local(PathBuf::from("/srv/my memories/ns/team-a")));
//! let err = StoreUrl::parse("ftp://host/x", None, false).unwrap_err();
//! assert_eq!(err.to_string(), "the `ftp` scheme is not supported; use file://, memory://, s3://, gs:// or az://");
//! # Ok::<(), memfs_store::UrlError>(())
//! ```

use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::cloud::{self, CloudUrl, ConfigError, Scheme};
use crate::encrypted::Backend;

/// What a store URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreUrl {
    /// `memory://`: an ephemeral store, with a random key.
    Memory,
    /// A local folder (the namespace's, if one was given).
    Local(PathBuf),
    /// A cloud store (its prefix the namespace's, if one was given).
    Cloud(CloudUrl),
}

/// A store URL memfs does not understand. The messages name neither the URL nor an option's
/// value: the caller names the store, redacted.
#[derive(Debug, Error)]
pub enum UrlError {
    /// The URL (or the namespace) is not one memfs understands.
    #[error("{reason}")]
    Unsupported {
        /// What is wrong with it.
        reason: String,
    },
    /// A cloud store URL that is malformed or carries what does not belong in it.
    #[error("{0}")]
    Cloud(ConfigError),
    /// Options given for a store that takes none (`file://`, `memory://`).
    #[error("{scheme}:// stores take no options")]
    NoOptions {
        /// Its scheme.
        scheme: &'static str,
    },
}

impl StoreUrl {
    /// Parses a store URL, with `namespace` (checked by [`check_namespace`]) if given;
    /// `with_options` says whether backend options were given (only a cloud store takes any).
    pub fn parse(url: &str, namespace: Option<&str>, with_options: bool) -> Result<Self, UrlError> {
        let bad = |reason: &str| UrlError::Unsupported { reason: reason.to_owned() };
        if let Some(ns) = namespace {
            check_namespace(ns).map_err(|reason| UrlError::Unsupported { reason })?;
        }
        let no_options = |scheme| if with_options { Err(UrlError::NoOptions { scheme }) } else { Ok(()) };
        let parsed = match url.split_once("://") {
            Some(("memory", rest)) if rest.is_empty() || rest == "/" => {
                no_options("memory")?;
                if namespace.is_some() {
                    return Err(bad("a memory:// store has no namespaces"));
                }
                return Ok(StoreUrl::Memory);
            }
            Some(("memory", _)) => return Err(bad("a memory:// store takes no path")),
            Some(("file", rest)) => {
                no_options("file")?;
                let path = PathBuf::from(percent_encoding::percent_decode_str(rest).decode_utf8_lossy().into_owned());
                if !path.is_absolute() {
                    return Err(bad("a file:// URL needs an absolute path, as in file:///home/me/memories"));
                }
                StoreUrl::Local(path)
            }
            Some((scheme, _)) if Scheme::named(scheme).is_some() => {
                StoreUrl::Cloud(CloudUrl::parse(url).map_err(UrlError::Cloud)?)
            }
            Some((scheme, _)) => {
                return Err(bad(&format!(
                    "the `{scheme}` scheme is not supported; use file://, memory://, s3://, gs:// or az://"
                )));
            }
            // A plain absolute path is a folder, as `file://` + the path (not percent-decoded:
            // it is a path, not a URL). A relative one is refused: it would name a different
            // store in each working directory (`memfs` resolves `./` and `../` itself).
            None if Path::new(url).is_absolute() => {
                no_options("file")?;
                StoreUrl::Local(PathBuf::from(url))
            }
            None => {
                return Err(bad(
                    "expected SCHEME://… or an absolute path, for example file:///path/to/store, /path/to/store, s3://bucket/prefix or memory://",
                ));
            }
        };
        Ok(match namespace {
            Some(ns) => parsed.in_namespace(ns),
            None => parsed,
        })
    }

    /// The namespace `ns` of this persistent store: `ns/NAME` under its folder or prefix.
    fn in_namespace(self, ns: &str) -> Self {
        match self {
            StoreUrl::Memory => StoreUrl::Memory,
            StoreUrl::Local(path) => StoreUrl::Local(path.join("ns").join(ns)),
            StoreUrl::Cloud(mut url) => {
                url.prefix = [url.prefix.as_str(), "ns", ns]
                    .iter()
                    .filter(|s| !s.is_empty())
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("/");
                StoreUrl::Cloud(url)
            }
        }
    }

    /// The backend of a persistent store (`None` for `memory://`): a cloud store's client built
    /// from `options` and `env` as [`cloud::build`] does.
    pub fn backend(
        self,
        options: &[(String, String)],
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Option<Backend>, ConfigError> {
        Ok(match self {
            StoreUrl::Memory => None,
            StoreUrl::Local(path) => Some(Backend::Local(path)),
            StoreUrl::Cloud(url) => Some(Backend::ObjectStore(cloud::build(&url, options, env)?)),
        })
    }
}

/// A namespace is 1 to 64 lowercase letters, digits, `-` and `_`, starting with a letter or
/// digit; the error is the reason it is not one.
pub fn check_namespace(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && name.as_bytes()[0].is_ascii_alphanumeric();
    if ok {
        Ok(())
    } else {
        Err(format!(
            "namespace {name:?} is not valid: use 1 to 64 lowercase letters, digits, `-` and `_`, starting with a letter or digit"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_under_a_folder_and_a_prefix() {
        let url = StoreUrl::parse("s3://b/team", Some("a"), true).unwrap();
        assert_eq!(
            url,
            StoreUrl::Cloud(CloudUrl { scheme: Scheme::S3, bucket: "b".into(), prefix: "team/ns/a".into() })
        );
        let url = StoreUrl::parse("gs://b", Some("a"), false).unwrap();
        assert_eq!(url, StoreUrl::Cloud(CloudUrl { scheme: Scheme::Gcs, bucket: "b".into(), prefix: "ns/a".into() }));
        assert_eq!(StoreUrl::parse("/srv/m", Some("a"), false).unwrap(), StoreUrl::Local("/srv/m/ns/a".into()));
        assert_eq!(StoreUrl::parse("memory:///", None, false).unwrap(), StoreUrl::Memory);
        let err = |url: &str| StoreUrl::parse(url, None, false).unwrap_err().to_string();
        assert_eq!(err("memory://x"), "a memory:// store takes no path");
        assert_eq!(
            err("az://Upper"),
            "a bucket or container name holds lowercase letters, digits, `-`, `.` and `_` only"
        );
    }
}
