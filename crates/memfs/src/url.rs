//! Store URLs.

use std::sync::Arc;

use memfs_store::{MemoryRepository, Repository};

use crate::error::Error;

/// Opens the repository a URL names. `memory://` is an ephemeral store for the life of the
/// process, with a random key.
pub(crate) fn open(url: &str) -> Result<Arc<dyn Repository>, Error> {
    match url.split_once("://") {
        Some(("memory", rest)) if rest.is_empty() || rest == "/" => Ok(Arc::new(MemoryRepository::new()?)),
        Some(("memory", _)) => {
            Err(Error::StoreUrl { url: url.to_owned(), reason: "a memory:// store takes no path".into() })
        }
        Some((scheme, _)) => Err(Error::StoreUrl {
            url: redact(url),
            reason: format!("the `{scheme}` scheme is not supported yet; use memory://"),
        }),
        None => {
            Err(Error::StoreUrl { url: redact(url), reason: "expected SCHEME://…, for example memory://".into() })
        }
    }
}

/// Hides credentials a URL may carry (`user:password@`, query strings).
pub(crate) fn redact(url: &str) -> String {
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
    use super::*;

    #[test]
    fn redacts_credentials() {
        assert_eq!(redact("s3://key:secret@bucket/p?token=x"), "s3://****@bucket/p?****");
        assert_eq!(redact("memory://"), "memory://");
    }

    #[test]
    fn refuses_unknown_urls() {
        let err = open("ftp://user:pw@host/x").err().unwrap().to_string();
        assert_eq!(
            err,
            "unsupported store URL ftp://****@host/x: the `ftp` scheme is not supported yet; use memory://"
        );
        assert!(open("memory://").is_ok());
        assert!(open("nonsense").is_err());
    }
}
