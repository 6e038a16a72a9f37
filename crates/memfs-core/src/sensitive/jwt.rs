//! JSON Web Tokens in compact serialization: JWS (RFC 7515 §7.1, three parts) and JWE (RFC 7516
//! §7.1, five parts), whose protected header is a base64url JSON object (`eyJ` is `{"`).

use std::sync::LazyLock;

use regex::Regex;

use super::{Detector, Finding, before, finding};

static JWT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*)?")
        .expect("built-in pattern compiles")
});

pub(super) fn find(text: &str, out: &mut Vec<Finding>) {
    for m in JWT.find_iter(text) {
        if before(text, m.start()).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            continue;
        }
        let token = m.as_str();
        let parts: Vec<&str> = token.split('.').collect();
        let Some(header) = decode(parts[0]).and_then(|h| serde_json::from_slice::<serde_json::Value>(&h).ok()) else {
            continue;
        };
        if !header.get("alg").is_some_and(serde_json::Value::is_string)
            || parts[1].is_empty()
            || decode(parts[1]).is_none()
        {
            continue;
        }
        // Five parts only for a JWE (its header names the content encryption); else the JWS is
        // the first three, and the rest is not part of the token.
        let len = if parts.len() == 5 && header.get("enc").is_some() {
            token.len()
        } else {
            parts[..3].iter().map(|p| p.len()).sum::<usize>() + 2
        };
        if decode(parts[2]).is_some() {
            out.push(finding(Detector::Jwt, m.start()..m.start() + len));
        }
    }
}

/// Decodes unpadded base64url (RFC 4648 §5), or `None` if `s` is not valid.
fn decode(s: &str) -> Option<Vec<u8>> {
    if s.len() % 4 == 1 {
        return None;
    }
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'-' => Some(62),
        b'_' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    for chunk in s.as_bytes().chunks(4) {
        let mut acc = 0u32;
        for &c in chunk {
            acc = (acc << 6) | u32::from(value(c)?);
        }
        let bits = chunk.len() * 6;
        acc <<= 24 - bits;
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..1 + bits / 8]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn base64url() {
        assert_eq!(decode("eyJhbGciOiJIUzI1NiJ9").unwrap(), br#"{"alg":"HS256"}"#);
        assert_eq!(decode("").unwrap(), b"");
        assert_eq!(decode("Zg").unwrap(), b"f");
        assert_eq!(decode("Zm8").unwrap(), b"fo");
        assert_eq!(decode("_-8").unwrap(), [0xff, 0xef]);
        assert_eq!(decode("Z"), None);
        assert_eq!(decode("Zm9v+A"), None);
    }
}
