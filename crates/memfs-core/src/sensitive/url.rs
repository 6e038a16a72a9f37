//! Passwords in URLs' user info (RFC 3986 §3.2.1: `userinfo = user [ ":" password ]`, a
//! deprecated form that connection strings still use).

use std::sync::LazyLock;

use regex::Regex;

use super::{Detector, Finding, finding};

/// A scheme (RFC 3986 §3.1) and the authority, which ends at the first `/`, `?` or `#`, and,
/// in prose, at white space, quotes, angle brackets and backslashes.
static URL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"[A-Za-z][A-Za-z0-9+.-]*://([^\s/?#"'<>`\\]*)"#).expect("built-in pattern compiles"));

pub(super) fn find(text: &str, out: &mut Vec<Finding>) {
    for caps in URL.captures_iter(text) {
        let authority = caps.get(1).expect("group 1 always participates");
        // User info ends at the authority's last `@` (an unencoded `@` in a password is common
        // and parsers read it so); the password starts after its first `:`.
        let Some(at) = authority.as_str().rfind('@') else { continue };
        let userinfo = &authority.as_str()[..at];
        let Some(colon) = first_colon(userinfo) else { continue };
        let password = &userinfo[colon + 1..];
        if password.chars().count() >= MIN_PASSWORD_CHARS && !placeholder(password) {
            let start = authority.start() + colon + 1;
            out.push(finding(Detector::UrlPassword, start..start + password.len()));
        }
    }
}

/// The first `:` of user info that is not inside a redaction marker (`[REDACTED:…]`), so that
/// a text redacted once has nothing left to find.
fn first_colon(userinfo: &str) -> Option<usize> {
    let mut from = 0;
    loop {
        let colon = from + userinfo[from..].find(':')?;
        match userinfo[from..].find("[REDACTED:").map(|i| from + i) {
            Some(marker) if marker < colon => {
                from = userinfo[marker..].find(']').map_or(userinfo.len(), |i| marker + i + 1);
            }
            _ => return Some(colon),
        }
    }
}

/// Shorter passwords (`a:b@`, `foo:bar@`, `abc:xyz@`) are the examples of URL documentation
/// and parser tests, not credentials anyone uses.
const MIN_PASSWORD_CHARS: usize = 4;

/// Whether a URL password is a stand-in rather than a password (the list is in
/// [`Detector::UrlPassword`]'s docs).
fn placeholder(p: &str) -> bool {
    const WORDS: [&str; 5] = ["password", "passwd", "pass", "pwd", "secret"];
    let wrapped = |open: char, close: char| p.len() >= 2 && p.starts_with(open) && p.ends_with(close);
    WORDS.iter().any(|w| p.eq_ignore_ascii_case(w))
        || p.chars().all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '•' | '…'))
        || wrapped('<', '>')
        || wrapped('{', '}')
        || wrapped('[', ']')
        || wrapped('%', '%')
        || p.starts_with('$')
        || p == "%s"
}
