//! Store URLs: which backend a URL names, and redaction for messages.

use std::path::PathBuf;

use memfs_store::Backend;

use crate::error::Error;

/// What a store URL names.
pub(crate) enum Location {
    /// `memory://`: ephemeral, random key.
    Memory,
    /// A backend that holds a persistent store.
    Persistent(Backend),
}

/// Parses a store URL: `memory://` or `file:///absolute/path`.
pub(crate) fn parse(url: &str) -> Result<Location, Error> {
    let bad = |reason: &str| Error::StoreUrl { url: redact(url), reason: reason.to_owned() };
    match url.split_once("://") {
        Some(("memory", rest)) if rest.is_empty() || rest == "/" => Ok(Location::Memory),
        Some(("memory", _)) => Err(bad("a memory:// store takes no path")),
        Some(("file", rest)) => {
            let path = PathBuf::from(percent_decode(rest));
            if !path.is_absolute() {
                return Err(bad("a file:// URL needs an absolute path, as in file:///home/me/memories"));
            }
            Ok(Location::Persistent(Backend::Local(path)))
        }
        Some((scheme, _)) => Err(bad(&format!("the `{scheme}` scheme is not supported yet; use file:// or memory://"))),
        None => Err(bad("expected SCHEME://…, for example file:///path/to/store or memory://")),
    }
}

fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s).decode_utf8_lossy().into_owned()
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
    use super::*;

    #[test]
    fn redacts_credentials() {
        assert_eq!(redact("s3://key:secret@bucket/p?token=x"), "s3://****@bucket/p?****");
        assert_eq!(redact("memory://"), "memory://");
    }

    #[test]
    fn parses_and_refuses() {
        let err = |u: &str| parse(u).err().unwrap().to_string();
        assert_eq!(
            err("ftp://user:pw@host/x"),
            "unsupported store URL ftp://****@host/x: the `ftp` scheme is not supported yet; use file:// or memory://"
        );
        assert_eq!(
            err("file://relative/x"),
            "unsupported store URL file://relative/x: a file:// URL needs an absolute path, as in file:///home/me/memories"
        );
        assert!(matches!(parse("memory://"), Ok(Location::Memory)));
        assert!(matches!(parse("file:///tmp/x"), Ok(Location::Persistent(Backend::Local(_)))));
        assert!(parse("nonsense").is_err());
    }
}
