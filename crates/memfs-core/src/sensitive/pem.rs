//! Private key blocks: PEM (RFC 7468, any `… PRIVATE KEY` label, OpenSSH's included), OpenPGP
//! armor (RFC 4880 §6.2, `PGP PRIVATE KEY BLOCK`), SSH2 (RFC 4716 framing) and PuTTY `.ppk`.

use std::sync::LazyLock;

use regex::Regex;

use super::{Detector, Finding, finding};

/// A BEGIN line; group 1 or 2 is the label that the END line repeats.
static BEGIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"-----BEGIN ((?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?)-----|---- BEGIN (SSH2 ENCRYPTED PRIVATE KEY) ----|PuTTY-User-Key-File-[0-9]{1,2}: ",
    )
    .expect("built-in pattern compiles")
});

/// What must follow a BEGIN line: blank space (real or JSON-escaped newlines), up to eight
/// `Name: value` headers (`Proc-Type`, `DEK-Info`, `Version`, `Comment`), then 16 base64
/// characters. Anchored and bounded but for blank space, which no other BEGIN line shares.
static BODY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\A(?:[ \t\r\n]|\\[rn])*(?:[A-Za-z][A-Za-z0-9-]{0,40}:[^\r\n\\]{0,256}(?:\r?\n|\\r\\n|\\n)(?:[ \t\r\n]|\\[rn])*){0,8}[A-Za-z0-9+/]{16}",
    )
    .expect("built-in pattern compiles")
});

pub(super) fn find(text: &str, out: &mut Vec<Finding>) {
    let mut at = 0;
    while let Some(caps) = BEGIN.captures_at(text, at) {
        let begin = caps.get(0).expect("match");
        let end = if let Some(label) = caps.get(1) {
            if !has_body(&text[begin.end()..]) {
                at = begin.end();
                continue;
            }
            block_end(text, begin.end(), &format!("-----END {}-----", label.as_str()))
        } else if let Some(label) = caps.get(2) {
            if !has_body(&text[begin.end()..]) {
                at = begin.end();
                continue;
            }
            block_end(text, begin.end(), &format!("---- END {} ----", label.as_str()))
        } else {
            // PuTTY: the block ends with the `Private-MAC:` line; it must hold private lines.
            let end = text[begin.end()..].find("Private-MAC:").map_or(text.len(), |i| {
                let mac = begin.end() + i;
                text[mac..].find('\n').map_or(text.len(), |j| mac + j)
            });
            if !text[begin.end()..end].contains("Private-Lines:") {
                // A later header before `end` would end at the same line, without private
                // lines too: resume after it, so no text is searched twice.
                at = end.max(begin.end());
                continue;
            }
            end
        };
        out.push(finding(Detector::PrivateKey, begin.start()..end));
        at = end;
    }
}

/// Whether `rest`, the text after a BEGIN line, starts with a key's body.
pub(super) fn has_body(rest: &str) -> bool {
    BODY.is_match(rest)
}

/// Where the block whose body starts at `from` ends: after `marker`, or at the end of the text.
fn block_end(text: &str, from: usize, marker: &str) -> usize {
    text[from..].find(marker).map_or(text.len(), |i| from + i + marker.len())
}
