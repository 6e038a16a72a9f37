//! Revisions: how a user names a commit.
//!
//! The grammar, also in `memfs --help`:
//!
//! | form | names |
//! |---|---|
//! | `HEAD` | the newest commit |
//! | `HEAD~N` | the commit N steps before the newest (`HEAD~` is `HEAD~1`) |
//! | `@N` | the commit of generation N (the first commit is `@1`) |
//! | 8 to 64 hex digits | the commit whose id starts with them (must be unique) |
//!
//! Nothing else is accepted, so no string is both: `HEAD` and `@` are not hex digits.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

/// Fewest hex digits a commit id prefix may have.
pub const MIN_PREFIX: usize = 8;

/// A parsed revision; resolve it with
/// [`EncryptedRepository::resolve`](crate::EncryptedRepository::resolve).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revision {
    /// `HEAD~N`: this many commits before the newest (0 for `HEAD`).
    Head(u64),
    /// `@N`: the commit of this generation.
    Generation(u64),
    /// A commit id or a prefix of one: lowercase hex, 8 to 64 digits.
    Prefix(String),
}

/// A string that is not a revision.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("invalid revision `{rev}`: {reason}")]
pub struct RevisionError {
    /// The string as given.
    pub rev: String,
    /// What is wrong.
    pub reason: &'static str,
}

impl Revision {
    /// Parses a revision.
    ///
    /// ```
    /// use memfs_store::Revision;
    /// assert_eq!(Revision::parse("HEAD")?, Revision::Head(0));
    /// assert_eq!(Revision::parse("HEAD~")?, Revision::Head(1));
    /// assert_eq!(Revision::parse("HEAD~12")?, Revision::Head(12));
    /// assert_eq!(Revision::parse("@3")?, Revision::Generation(3));
    /// assert_eq!(Revision::parse("0A1B2C3D")?, Revision::Prefix("0a1b2c3d".into()));
    /// assert!(Revision::parse("@0").is_err());
    /// assert!(Revision::parse("0a1b2c3").is_err()); // too short to be unique in practice
    /// assert!(Revision::parse("HEAD^").is_err());
    /// # Ok::<(), memfs_store::RevisionError>(())
    /// ```
    pub fn parse(s: &str) -> Result<Self, RevisionError> {
        let err = |reason| RevisionError { rev: s.to_owned(), reason };
        if s == "HEAD" {
            return Ok(Revision::Head(0));
        }
        if let Some(n) = s.strip_prefix("HEAD~") {
            if n.is_empty() {
                return Ok(Revision::Head(1));
            }
            return number(n).map(Revision::Head).ok_or_else(|| err("HEAD~ must be followed by a number"));
        }
        if let Some(n) = s.strip_prefix('@') {
            return match number(n) {
                Some(0) => Err(err("generations start at @1, the first commit")),
                Some(g) => Ok(Revision::Generation(g)),
                None => Err(err("@ must be followed by a generation number")),
            };
        }
        if !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return match s.len() {
                n if n < MIN_PREFIX => Err(err("a commit id prefix needs at least 8 hex digits")),
                n if n > 64 => Err(err("a commit id has 64 hex digits")),
                _ => Ok(Revision::Prefix(s.to_ascii_lowercase())),
            };
        }
        Err(err("expected HEAD, HEAD~N, @GENERATION or a commit id (at least 8 hex digits)"))
    }
}

/// Decimal digits only (no sign, no spaces), within `u64`.
fn number(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl FromStr for Revision {
    type Err = RevisionError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Revision::parse(s)
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Revision::Head(0) => f.write_str("HEAD"),
            Revision::Head(n) => write!(f, "HEAD~{n}"),
            Revision::Generation(g) => write!(f, "@{g}"),
            Revision::Prefix(p) => f.write_str(p),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_with_reasons() {
        let reason = |s: &str| Revision::parse(s).unwrap_err().to_string();
        assert_eq!(reason("HEAD~x"), "invalid revision `HEAD~x`: HEAD~ must be followed by a number");
        assert_eq!(reason("HEAD~-1"), "invalid revision `HEAD~-1`: HEAD~ must be followed by a number");
        assert_eq!(reason("@"), "invalid revision `@`: @ must be followed by a generation number");
        assert_eq!(reason("@0"), "invalid revision `@0`: generations start at @1, the first commit");
        assert_eq!(reason("abc"), "invalid revision `abc`: a commit id prefix needs at least 8 hex digits");
        assert_eq!(
            reason(&"a".repeat(65)),
            format!("invalid revision `{}`: a commit id has 64 hex digits", "a".repeat(65))
        );
        assert_eq!(
            reason("main"),
            "invalid revision `main`: expected HEAD, HEAD~N, @GENERATION or a commit id (at least 8 hex digits)"
        );
        assert_eq!(
            reason(""),
            "invalid revision ``: expected HEAD, HEAD~N, @GENERATION or a commit id (at least 8 hex digits)"
        );
    }

    #[test]
    fn displays_canonically() {
        for s in ["HEAD", "HEAD~3", "@7", "0123456789abcdef"] {
            assert_eq!(Revision::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(Revision::parse("HEAD~0").unwrap().to_string(), "HEAD");
    }
}
