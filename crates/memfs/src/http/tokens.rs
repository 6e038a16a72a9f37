//! Bearer tokens, each bound to one namespace.
//!
//! Only a keyed BLAKE3 hash of each token is kept, under a random key made for this process
//! (never stored, never printed): a copy of the server's memory (a core dump, swap) holds no
//! hash an attacker could test guesses against offline, nor one that matches another server's.
//! A request's token is hashed the same way and compared with every entry in constant time ([`blake3::Hash`]'s `==`), so neither the answer
//! time nor anything kept in memory reveals a token. Tokens never appear in a message: errors
//! name the file (or variable) and the line.

use std::collections::BTreeSet;
use std::fmt;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use zeroize::{Zeroize, Zeroizing};

use super::TokenError;

/// The shortest token accepted, in characters (a token from [`new_token`] has 70).
pub const MIN_TOKEN_LEN: usize = 32;

/// The largest tokens file read, in bytes: enough for about ten thousand tokens.
const MAX_FILE_LEN: u64 = 1 << 20;

/// The key of token hashes: 32 random bytes, made once per process on first use.
static HASH_KEY: OnceLock<[u8; 32]> = OnceLock::new();

/// The process's token-hash key, made on the first call.
fn hash_key() -> Result<&'static [u8; 32], TokenError> {
    if let Some(key) = HASH_KEY.get() {
        return Ok(key);
    }
    let mut fresh = [0u8; 32];
    getrandom::fill(&mut fresh).map_err(|_| TokenError::Random)?;
    let key = HASH_KEY.get_or_init(|| fresh);
    fresh.zeroize();
    Ok(key)
}

/// The tokens a server accepts, each bound to one namespace.
///
/// The text form (a tokens file, or `MEMFS_SERVE_TOKENS`) is one `NAMESPACE TOKEN` pair a
/// line, separated by spaces or tabs. `#` starts a comment (to the end of the line); blank
/// lines are ignored. A namespace follows the rules of `--namespace` (1 to 64 lowercase
/// letters, digits, `-` and `_`, starting with a letter or digit). A token is at least
/// [`MIN_TOKEN_LEN`] characters of the bearer-token alphabet (RFC 6750 `b64token`: letters,
/// digits, `-._~+/`, then `=` padding only). A namespace may have several tokens (to rotate
/// them); a token may appear only once.
///
/// ```
/// use memfs::http::Tokens;
///
/// let tokens = Tokens::parse("# team tokens\nalice  0123456789abcdef0123456789abcdef\n", "tokens")?;
/// assert_eq!(tokens.namespace_of("0123456789abcdef0123456789abcdef"), Some("alice"));
/// assert_eq!(tokens.namespace_of("0123456789abcdef0123456789abcdeF"), None);
/// assert_eq!(
///     Tokens::parse("alice short", "tokens").unwrap_err().to_string(),
///     "tokens line 1: the token is shorter than 32 characters"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Default)]
pub struct Tokens {
    entries: Vec<Entry>,
}

struct Entry {
    hash: blake3::Hash,
    namespace: Arc<str>,
    /// Where it was given (`FILE line N`), for duplicate errors.
    origin: String,
}

impl Tokens {
    /// No tokens: every request is refused.
    pub fn new() -> Self {
        Tokens::default()
    }

    /// Parses the text form (see [`Tokens`]); `origin` names its source in errors (a path, or
    /// `MEMFS_SERVE_TOKENS`).
    pub fn parse(text: &str, origin: &str) -> Result<Self, TokenError> {
        let mut tokens = Tokens::new();
        for (index, line) in text.lines().enumerate() {
            let line_number = index + 1;
            let content = line.split_once('#').map_or(line, |(before, _)| before);
            let fields: Vec<&str> = content.split_whitespace().collect();
            let invalid = |reason: String| TokenError::Invalid { origin: origin.to_owned(), line: line_number, reason };
            match fields.as_slice() {
                [] => continue,
                [namespace, token] => {
                    memfs_store::check_namespace(namespace).map_err(invalid)?;
                    check_token(token).map_err(|reason| invalid(reason.to_owned()))?;
                    tokens.insert(namespace, token, format!("{origin} line {line_number}"))?;
                }
                _ => return Err(invalid("expected `NAMESPACE TOKEN`".to_owned())),
            }
        }
        Ok(tokens)
    }

    /// Reads a tokens file. Like a private key, it must not be readable or writable by group
    /// or others: on Unix a mode with any of the bits `0o077` set is refused.
    pub fn read_file(path: &Path) -> Result<Self, TokenError> {
        let io = |source| TokenError::Read { path: path.to_owned(), source };
        let file = std::fs::File::open(path).map_err(io)?;
        // The open file's own mode (not the path's again), so a swap in between changes nothing.
        let metadata = file.metadata().map_err(io)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = metadata.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(TokenError::Permissions { path: path.to_owned(), mode });
            }
        }
        if metadata.len() > MAX_FILE_LEN {
            return Err(TokenError::TooLarge { path: path.to_owned(), limit: MAX_FILE_LEN });
        }
        // Sized once from the length, so the buffer does not reallocate (leaving copies of the
        // tokens behind) unless the file grew meanwhile; wiped when dropped.
        let capacity = usize::try_from(metadata.len()).unwrap_or(0).saturating_add(1);
        let mut bytes = Zeroizing::new(Vec::with_capacity(capacity));
        file.take(MAX_FILE_LEN + 1).read_to_end(&mut bytes).map_err(io)?;
        if bytes.len() as u64 > MAX_FILE_LEN {
            return Err(TokenError::TooLarge { path: path.to_owned(), limit: MAX_FILE_LEN });
        }
        let text = std::str::from_utf8(&bytes).map_err(|_| TokenError::NotText { path: path.to_owned() })?;
        Tokens::parse(text, &path.display().to_string())
    }

    /// Adds the tokens of `other`; a token already here is refused.
    pub fn extend(&mut self, other: Tokens) -> Result<(), TokenError> {
        for entry in other.entries {
            self.push(entry)?;
        }
        Ok(())
    }

    fn insert(&mut self, namespace: &str, token: &str, origin: String) -> Result<(), TokenError> {
        self.push(Entry { hash: hash(hash_key()?, token), namespace: namespace.into(), origin })
    }

    fn push(&mut self, entry: Entry) -> Result<(), TokenError> {
        if let Some(first) = self.entries.iter().find(|e| e.hash == entry.hash) {
            return Err(TokenError::Duplicate { origin: entry.origin, first: first.origin.clone() });
        }
        self.entries.push(entry);
        Ok(())
    }

    /// The namespace `token` is bound to, if it is one of these tokens. Every entry is compared,
    /// in constant time, whatever the token.
    pub fn namespace_of(&self, token: &str) -> Option<&str> {
        // No entry was made without the key, so without it nothing matches.
        let candidate = hash(HASH_KEY.get()?, token);
        let mut found = None;
        for entry in &self.entries {
            // `blake3::Hash`'s `==` is constant-time; no early exit either.
            if entry.hash == candidate {
                found = Some(&*entry.namespace);
            }
        }
        found
    }

    /// How many tokens there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The namespaces that have a token, sorted.
    pub fn namespaces(&self) -> BTreeSet<&str> {
        self.entries.iter().map(|e| &*e.namespace).collect()
    }
}

impl fmt::Debug for Tokens {
    /// The namespaces and how many tokens; never a token or a hash.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens").field("count", &self.len()).field("namespaces", &self.namespaces()).finish()
    }
}

fn hash(key: &[u8; 32], token: &str) -> blake3::Hash {
    blake3::keyed_hash(key, token.as_bytes())
}

/// A token's syntax: RFC 6750 §2.1 `b64token` (`1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
/// "+" / "/" ) *"="`), at least [`MIN_TOKEN_LEN`] long. The message never quotes the token.
fn check_token(token: &str) -> Result<(), &'static str> {
    if token.len() < MIN_TOKEN_LEN {
        return Err("the token is shorter than 32 characters");
    }
    let body = token.trim_end_matches('=');
    let ok = !body.is_empty()
        && body.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'+' | b'/'));
    if ok {
        Ok(())
    } else {
        Err("the token has a character outside A-Z a-z 0-9 - . _ ~ + / (and = padding at the end)")
    }
}

/// A tokens-file line `NAMESPACE TOKEN` binding a [`new_token`] to `namespace`, which must
/// follow the rules of `--namespace`.
pub fn new_token_line(namespace: &str) -> Result<String, TokenError> {
    memfs_store::check_namespace(namespace).map_err(|reason| TokenError::Namespace { reason })?;
    Ok(format!("{namespace} {}", new_token()?))
}

/// A fresh random token: `memfs_` and 64 hex digits (256 bits from the operating system).
pub fn new_token() -> Result<String, TokenError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|_| TokenError::Random)?;
    let mut token = String::with_capacity(70);
    token.push_str("memfs_");
    for b in bytes {
        token.push(char::from(HEX[usize::from(b >> 4)]));
        token.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    Ok(token)
}

const HEX: &[u8; 16] = b"0123456789abcdef";

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

    fn err(text: &str) -> String {
        Tokens::parse(text, "tokens.txt").unwrap_err().to_string()
    }

    #[test]
    fn parses_comments_blank_lines_and_tabs() {
        let text = format!("# header\n\n  alice\t{A}  # laptop\nbob {B}\nalice {A}x\n");
        let tokens = Tokens::parse(&text, "t").unwrap();
        assert_eq!(tokens.len(), 3);
        assert_eq!(tokens.namespace_of(A), Some("alice"));
        assert_eq!(tokens.namespace_of(B), Some("bob"));
        assert_eq!(tokens.namespace_of(&format!("{A}x")), Some("alice"));
        assert_eq!(tokens.namespace_of(""), None);
        assert_eq!(tokens.namespace_of(&A[1..]), None);
        assert_eq!(tokens.namespaces().into_iter().collect::<Vec<_>>(), ["alice", "bob"]);
        assert_eq!(format!("{tokens:?}"), r#"Tokens { count: 3, namespaces: {"alice", "bob"} }"#);
    }

    #[test]
    fn refuses_bad_lines_without_quoting_tokens() {
        assert_eq!(err(&format!("alice {A} extra")), "tokens.txt line 1: expected `NAMESPACE TOKEN`");
        assert_eq!(err("\nalice"), "tokens.txt line 2: expected `NAMESPACE TOKEN`");
        assert_eq!(
            err(&format!("Alice {A}")),
            "tokens.txt line 1: namespace \"Alice\" is not valid: use 1 to 64 lowercase letters, digits, `-` and `_`, starting with a letter or digit"
        );
        assert_eq!(err("alice secret-but-short"), "tokens.txt line 1: the token is shorter than 32 characters");
        let bad = format!("{A}\"{A}");
        let message = err(&format!("alice {bad}"));
        assert_eq!(
            message,
            "tokens.txt line 1: the token has a character outside A-Z a-z 0-9 - . _ ~ + / (and = padding at the end)"
        );
        assert_eq!(
            err(&format!("alice {A}\nbob {A}")),
            "tokens.txt line 2: this token is already given on tokens.txt line 1 (a token is bound to one namespace)"
        );
        assert_eq!(err(&format!("alice ={A}")), err(&format!("alice {A}=x=")));
        assert!(Tokens::parse(&format!("alice {A}=="), "t").is_ok());
    }

    #[test]
    fn extend_refuses_duplicates_across_sources() {
        let mut tokens = Tokens::parse(&format!("alice {A}"), "/etc/memfs/tokens").unwrap();
        tokens.extend(Tokens::parse(&format!("bob {B}"), "MEMFS_SERVE_TOKENS").unwrap()).unwrap();
        assert_eq!(
            tokens
                .extend(Tokens::parse(&format!("\ncarol {A}"), "MEMFS_SERVE_TOKENS").unwrap())
                .unwrap_err()
                .to_string(),
            "MEMFS_SERVE_TOKENS line 2: this token is already given on /etc/memfs/tokens line 1 (a token is bound to one namespace)"
        );
    }

    #[test]
    fn new_tokens_are_valid_and_differ() {
        let (t1, t2) = (new_token().unwrap(), new_token().unwrap());
        assert_ne!(t1, t2);
        assert_eq!(t1.len(), 70);
        assert!(t1.starts_with("memfs_"));
        assert_eq!(check_token(&t1), Ok(()));
        let line = new_token_line("team-a").unwrap();
        let tokens = Tokens::parse(&line, "t").unwrap();
        assert_eq!(tokens.namespace_of(line.strip_prefix("team-a ").unwrap()), Some("team-a"));
        assert_eq!(
            new_token_line("Team A").unwrap_err().to_string(),
            "namespace \"Team A\" is not valid: use 1 to 64 lowercase letters, digits, `-` and `_`, starting with a letter or digit"
        );
    }
}
