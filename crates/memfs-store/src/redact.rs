//! Secrets kept out of messages: option values given to a store, and URL query strings
//! (where Azure SAS tokens travel).
//!
//! A leaf: cloud configuration errors and backend errors (`cloud.rs`, `error.rs`) both scrub
//! their text here before anyone sees it.

/// Removes secrets from a message: every given value of 6 or more characters, and the query
/// string of every URL (Azure SAS tokens travel there).
pub fn scrub(message: &str, secrets: &[&str]) -> String {
    let mut out = message.to_owned();
    for s in secrets {
        if s.len() >= 6 {
            out = out.replace(s, "****");
        }
    }
    scrub_queries(&out)
}

/// Replaces the query string of each `http://` or `https://` URL in `text` with `****`.
pub(crate) fn scrub_queries(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("http") {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        if !(from.starts_with("http://") || from.starts_with("https://")) {
            out.push_str("http");
            rest = &from[4..];
            continue;
        }
        let end = from.find(|c: char| c.is_whitespace() || c == ')' || c == '"' || c == '\'').unwrap_or(from.len());
        let url = &from[..end];
        match url.split_once('?') {
            Some((base, _)) => {
                out.push_str(base);
                out.push_str("?****");
            }
            None => out.push_str(url),
        }
        rest = &from[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scrubs_secrets_and_queries() {
        let msg = "error sending request for url (https://acct.blob.core.windows.net/c/head?sv=2021&sig=abc%2F) with key hunter22";
        assert_eq!(
            scrub(msg, &["hunter22", "short"]),
            "error sending request for url (https://acct.blob.core.windows.net/c/head?****) with key ****"
        );
        assert_eq!(scrub_queries("httpx http://a/b"), "httpx http://a/b");
    }
}
