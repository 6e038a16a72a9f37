//! Store locations: a URL, options for its backend and a namespace; redaction for messages.

use std::fmt;

use memfs_store::{Backend, StoreUrl, UrlError};

use crate::error::Error;

/// Where a store is: a URL, options for its backend, and an optional namespace (a tenant).
///
/// URLs: `file:///absolute/path` or a plain `/absolute/path` (an encrypted folder), `memory://` (ephemeral),
/// `s3://bucket/prefix`, `gs://bucket/prefix`, `az://container/prefix`. A cloud store takes
/// options from the usual environment variables (`AWS_…`, `GOOGLE_…`, `AZURE_…`) and from
/// [`Location::option`], which wins; an unknown option key is refused (see
/// [`memfs_store::cloud`]).
///
/// A namespace is a store of its own under `PREFIX/ns/NAME/`, created with its own random
/// keys: tenants share a bucket and nothing else.
///
/// ```
/// use memfs::Location;
///
/// let location = Location::new("s3://team-bucket/memories")
///     .option("aws_region", "eu-west-1")
///     .option("aws_secret_access_key", "never-printed")
///     .namespace("alice");
/// assert_eq!(location.to_string(), "s3://team-bucket/memories (namespace alice)");
/// assert_eq!(format!("{location:?}"), r#"Location("s3://team-bucket/memories", options [aws_region, aws_secret_access_key], namespace Some("alice"))"#);
/// ```
#[derive(Clone, Default)]
pub struct Location {
    url: String,
    options: Vec<(String, String)>,
    namespace: Option<String>,
}

impl Location {
    /// A location from a URL, with no options and no namespace.
    pub fn new(url: impl Into<String>) -> Self {
        Location { url: url.into(), options: Vec::new(), namespace: None }
    }

    /// A location from what a program gives: a URL with a scheme as it is, anything else a
    /// local store folder (a path, absolute or from the current folder). The packages for
    /// Python and Node take stores so; the binary has rules of its own (a bare word there
    /// names a configured store).
    pub fn from_path_or_url(given: &str) -> Self {
        if given.contains("://") {
            return Location::new(given);
        }
        let path = std::path::absolute(given).unwrap_or_else(|_| given.into());
        Location::new(format!("file://{}", path.display()))
    }

    /// Adds a backend option (`--store-option key=value`).
    pub fn option(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.options.push((key.into(), value.into()));
        self
    }

    /// Selects a namespace (a tenant's own store under the URL's prefix).
    pub fn namespace(mut self, name: impl Into<String>) -> Self {
        self.namespace = Some(name.into());
        self
    }

    /// The URL as given.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether this is `memory://`: an ephemeral store, with no key slots to list.
    pub fn is_memory(&self) -> bool {
        matches!(self.parse(), Ok(StoreUrl::Memory))
    }

    /// What the URL names, with the namespace ([`StoreUrl::parse`]).
    fn parse(&self) -> Result<StoreUrl, UrlError> {
        StoreUrl::parse(&self.url, self.namespace.as_deref(), !self.options.is_empty())
    }

    /// The backend this location names.
    pub(crate) fn target(&self) -> Result<Target, Error> {
        let url = redact(&self.url);
        let parsed = self.parse().map_err(|e| match e {
            UrlError::Unsupported { reason } => Error::StoreUrl { url, reason },
            UrlError::Cloud(reason) => Error::CloudUrl { url, reason },
            UrlError::NoOptions { scheme } => Error::NoOptions { url, scheme: scheme.to_owned() },
        })?;
        let backend = parsed
            .backend(&self.options, std::env::vars())
            .map_err(|source| Error::StoreConfig { store: self.to_string(), source })?;
        Ok(backend.map_or(Target::Memory, Target::Persistent))
    }
}

impl fmt::Display for Location {
    /// The URL, redacted, and the namespace; never an option.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(&self.url))?;
        if let Some(ns) = &self.namespace {
            write!(f, " (namespace {ns})")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Location {
    /// Option keys only: values may be credentials.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let keys: Vec<&str> = self.options.iter().map(|(k, _)| k.as_str()).collect();
        write!(f, "Location({:?}, options [{}], namespace {:?})", redact(&self.url), keys.join(", "), self.namespace)
    }
}

impl From<&str> for Location {
    fn from(url: &str) -> Self {
        Location::new(url)
    }
}

impl From<&String> for Location {
    fn from(url: &String) -> Self {
        Location::new(url.as_str())
    }
}

impl From<String> for Location {
    fn from(url: String) -> Self {
        Location::new(url)
    }
}

impl From<&Location> for Location {
    fn from(location: &Location) -> Self {
        location.clone()
    }
}

/// What a location names.
pub(crate) enum Target {
    /// `memory://`: ephemeral, random key.
    Memory,
    /// A backend that holds a persistent store.
    Persistent(Backend),
}

/// Hides credentials a URL may carry (`user:password@`, query strings).
pub fn redact(url: &str) -> String {
    let (base, had_query) = match url.split_once('?') {
        Some((b, _)) => (b, true),
        None => (url, false),
    };
    let mut out = match base.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((_, host)) => format!("{scheme}://****@{host}"),
            None => base.to_owned(),
        },
        None => base.to_owned(),
    };
    if had_query {
        out.push_str("?****");
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn redacts_credentials() {
        assert_eq!(redact("s3://key:secret@bucket/p?token=x"), "s3://****@bucket/p?****");
        assert_eq!(redact("memory://"), "memory://");
    }

    fn err(location: Location) -> String {
        location.target().err().unwrap().to_string()
    }

    #[test]
    fn parses_and_refuses() {
        assert_eq!(
            err("ftp://user:pw@host/x".into()),
            "unsupported store URL ftp://****@host/x: the `ftp` scheme is not supported; use file://, memory://, s3://, gs:// or az://"
        );
        assert_eq!(
            err("file://relative/x".into()),
            "unsupported store URL file://relative/x: a file:// URL needs an absolute path, as in file:///home/me/memories"
        );
        assert_eq!(
            err("s3://AKIA:wJalr@bucket/x".into()),
            "unsupported store URL s3://****@bucket/x: credentials do not belong in the URL; give them in the environment or as store options (they are never printed)"
        );
        assert_eq!(
            err(Location::new("file:///tmp/x").option("aws_region", "x")),
            "unsupported store URL file:///tmp/x: file:// stores take no options"
        );
        assert_eq!(
            err(Location::new("s3://b/p").option("aws_secret_acess_key", "TOPSECRET")),
            "store s3://b/p: unknown store option `aws_secret_acess_key` for s3:// stores (object_store ignores unknown keys; memfs refuses them). Keys look like aws_endpoint, aws_region, aws_access_key_id, aws_allow_http, plus memfs's max_retries, retry_timeout and retry_backoff"
        );
        assert!(matches!(Location::new("memory://").target(), Ok(Target::Memory)));
        assert!(matches!(Location::new("file:///tmp/x").target(), Ok(Target::Persistent(Backend::Local(_)))));
        assert_eq!(
            err("nonsense".into()),
            "unsupported store URL nonsense: expected SCHEME://… or an absolute path, for example file:///path/to/store, /path/to/store, s3://bucket/prefix or memory://"
        );
        let Ok(Target::Persistent(Backend::Local(path))) = Location::new("/srv/my%20m").target() else {
            panic!("a plain absolute path is a local store")
        };
        assert_eq!(path, PathBuf::from("/srv/my%20m"));
        assert_eq!(
            err(Location::new("/srv/m").option("aws_region", "x")),
            "unsupported store URL /srv/m: file:// stores take no options"
        );
    }

    #[test]
    fn namespaces() {
        let Ok(Target::Persistent(Backend::Local(path))) = Location::new("file:///srv/m").namespace("team-a").target()
        else {
            panic!("a local namespace")
        };
        assert_eq!(path, PathBuf::from("/srv/m/ns/team-a"));
        assert_eq!(
            err(Location::new("file:///srv/m").namespace("../b")),
            "unsupported store URL file:///srv/m: namespace \"../b\" is not valid: use 1 to 64 lowercase letters, digits, `-` and `_`, starting with a letter or digit"
        );
        assert_eq!(
            err(Location::new("memory://").namespace("a")),
            "unsupported store URL memory://: a memory:// store has no namespaces"
        );
    }
}
