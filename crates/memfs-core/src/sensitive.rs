//! Detectors of secrets and payment-card numbers in text written to memory files.
//!
//! [`scan`] runs every built-in [`Detector`] and the store's [`CustomRule`]s over a text and
//! returns [`Finding`]s: a detector and a byte range, never the matched text, so a finding can be
//! logged or shown without leaking what it found. [`redact`] replaces each range with a marker
//! such as `[REDACTED:aws-access-key]`; [`summary`] names the findings by detector and line, for
//! messages. Everything here is pure: no I/O, no policy (the engine decides off, warn, redact or
//! reject).
//!
//! ```
//! use memfs_core::sensitive::{self, CustomRule};
//!
//! let text = "deploy key: AKIA2E3MPLZQ7WX4KT5N\nbadge EMP-004211\ncard 4111 1111 1111 1111\n";
//! let rules = [CustomRule::new("employee-id", r"\bEMP-\d{6}\b")?];
//! let findings = sensitive::scan(text, &rules);
//! assert_eq!(
//!     sensitive::summary(text, &findings),
//!     "3 findings: aws-access-key (line 1), custom:employee-id (line 2), payment-card (line 3)"
//! );
//! assert_eq!(
//!     sensitive::redact(text, &findings),
//!     "deploy key: [REDACTED:aws-access-key]\nbadge [REDACTED:custom:employee-id]\n\
//!      card [REDACTED:payment-card]\n"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What a finding covers
//!
//! Where a secret comes with a label (`aws_secret_access_key = …`, `AccountKey=…`,
//! `"private_key": "…"`, `user:password@` in a URL, a Slack webhook's path) only the secret is
//! reported, so redaction keeps the label and the text stays readable. Tokens that carry their
//! own prefix (`sk-ant-…`, `ghp_…`, `AKIA…`) are reported whole. Each [`Detector`] variant says
//! exactly what it matches.
//!
//! Values that are plainly placeholders do not fire: a token body with fewer than six distinct
//! letters and digits (`ghp_xxxx…`, `AKIAXXXXXXXXXXXXXXXX`, `T00000000/B00000000/XXXX…`) or
//! that spells `EXAMPLE` (AWS's documented `AKIAIOSFODNN7EXAMPLE`), and the URL passwords listed
//! at [`Detector::UrlPassword`]. Other well-formed values fire whatever their origin, including
//! vendors' test values (the card `4111 1111 1111 1111`, a `sk_test_` key): the filter judges
//! form, not provenance.
//!
//! # Overlaps
//!
//! Findings are returned sorted by start, and never overlap: overlapping findings (a private key
//! that is also the `private_key` field of a service-account file, a custom rule that covers a
//! built-in's match) are merged into one finding over the union of their ranges, so redaction
//! hides everything any detector matched. The merged finding takes the detector of the longest
//! of them; on equal length the one that starts first; then the more specific detector, which
//! is the one listed first in [`Detector::BUILTIN`], built-ins before custom rules, and custom
//! rules in the order given. Findings that merely touch stay apart.
//!
//! # Cost
//!
//! Every built-in is a regular expression run with the `regex` crate (finite automata, no
//! backtracking) plus checks on each match, and each is written so that a search never rescans
//! text it has passed: the work is linear in the text's length times the number of detectors,
//! with no input that makes it worse (the tests scan megabytes of adversarial near-misses).
//! A custom rule is linear per search too, but a pathological pattern can make iterating over
//! its matches quadratic (the `regex` crate's documented worst case); custom rules are written
//! by the store's owner, not by the model, and are capped in size ([`CustomRule::new`]).

mod card;
mod custom;
mod jwt;
mod pem;
mod tokens;
mod url;

use std::fmt;
use std::ops::Range;

pub use custom::{CustomRule, CustomRuleError, RuleId};

/// What found a [`Finding`]: a built-in detector or a custom rule.
///
/// Each has a stable kebab-case id ([`as_str`](Self::as_str)), used in redaction markers
/// (`[REDACTED:<id>]`), in [`summary`] and in policy settings. Variants are listed from the most
/// specific to the most generic, which breaks ties between overlapping findings (see the
/// [module docs](self#overlaps)).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Detector {
    /// `aws-access-key`: an AWS access key id, `AKIA`, `ASIA`, `ABIA` or `ACCA` and 16 more
    /// capital letters or digits, not inside a longer run of letters and digits. Ids of users,
    /// roles and policies (`AIDA…`, `AROA…`) are identifiers, not credentials, and do not fire.
    AwsAccessKey,
    /// `aws-secret-key`: a 40-character AWS secret access key (letters, digits, `/`, `+`), only
    /// where a label names it: `aws_secret_access_key = …`, `AWS_SECRET_ACCESS_KEY=…`,
    /// `"SecretAccessKey": "…"`, `secretAccessKey: …`, `aws_secret_key => …` (any case, `_` or
    /// `-` or nothing between words; `=`, `:`, `=>` or `:=`; quotes optional). Only the value
    /// is reported. Unlabelled, 40 such characters are as likely a hash or base64 as a key.
    AwsSecretKey,
    /// `gcp-service-account-key`: the value of a `"private_key"` field holding a PEM private key,
    /// as in a Google Cloud service-account JSON file (or a Python dict with single quotes): from
    /// `-----BEGIN` to the closing quote (or the end of the text). Only the value is reported,
    /// not the whole object: the project id and `client_email` are identifiers the note may
    /// need, and the JSON stays valid after redaction (`"private_key": "[REDACTED:…]"`).
    GcpServiceAccountKey,
    /// `azure-connection-string`: the secret in an Azure connection string or SAS token: the
    /// value of `AccountKey=` or `SharedAccessKey=` (base64, at least 20 characters), and the
    /// `sig=` value of a shared access signature, when the same line shows it is one (`sv=`,
    /// `skn=` or `SharedAccessSignature`). Only the value is reported.
    AzureConnectionString,
    /// `anthropic-api-key`: `sk-ant-` followed by at least 20 letters, digits, `-` or `_` (API,
    /// admin and OAuth keys: `sk-ant-api03-…`, `sk-ant-admin01-…`, `sk-ant-oat01-…`).
    AnthropicApiKey,
    /// `openai-api-key`: `sk-proj-`, `sk-svcacct-`, `sk-admin-` or `sk-None-` followed by at
    /// least 20 letters, digits, `-` or `_`; or a legacy key, `sk-` and exactly 48 letters and
    /// digits. Never `sk-ant-…` (Anthropic) or `sk_live_…` (Stripe).
    OpenaiApiKey,
    /// `github-token`: `ghp_`, `gho_`, `ghu_`, `ghs_` or `ghr_` followed by 36 to 251 letters
    /// and digits, or a fine-grained `github_pat_` token (at least 50 more characters).
    GithubToken,
    /// `slack-token`: a Slack token, `xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`, `xoxe-`,
    /// `xoxe.xoxp-` or `xapp-` followed by at least 20 letters, digits and dashes that start
    /// with a digit, as every real token's do (`xoxb-your-token-here` does not fire; nor does
    /// `xoxo-`, a retired legacy prefix and a common sign-off);
    /// and the secret path of a webhook URL, `https://hooks.slack.com/services/…` (also
    /// `/workflows/` and `/triggers/`), where only the path after that segment is reported.
    SlackToken,
    /// `stripe-key`: a Stripe secret or restricted key, `sk_live_`, `rk_live_`, `sk_test_`,
    /// `rk_test_` and at least 16 letters and digits, or a webhook signing secret `whsec_` and at
    /// least 24. Publishable keys (`pk_live_…`, `pk_test_…`) do not fire: Stripe designs them
    /// to be public (they ship in every checkout page's JavaScript) and they can only create
    /// tokens, so flagging them would block ordinary integration notes for no protection. Test
    /// keys do fire: they read and write the account's test data.
    StripeKey,
    /// `jwt`: a JSON Web Token, three base64url parts joined by dots (five for an encrypted
    /// JWE), whose header starts with `eyJ` and decodes to a JSON object with an `"alg"` member,
    /// and whose payload is valid base64url. The whole token is reported.
    Jwt,
    /// `private-key`: a PEM or OpenSSH private key block, from its `-----BEGIN … PRIVATE KEY-----`
    /// line (any label: RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP `… PRIVATE KEY BLOCK`, PKCS #8;
    /// also RFC 4716 `---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----` and PuTTY `.ppk` files) to
    /// the matching END line, or to the end of the text when there is none (a key cut in half is
    /// still a key). The BEGIN line must be followed, after optional `Name: value` headers, by
    /// at least 16 base64 characters, so a sentence that merely quotes the BEGIN line does not
    /// fire. Public keys and certificates never fire.
    PrivateKey,
    /// `url-password`: the password in a URL's user info, `scheme://user:password@host` (also
    /// `scheme://:password@host`); only the password is reported. The authority ends at the
    /// first `/`, `?`, `#`, quote or space and user info at its last `@`, as URL parsers do.
    /// Not reported: no password (`https://user@host`, `git@github.com:org/repo.git`, `mailto:`),
    /// an empty one, and placeholders: `password`, `passwd`, `pass`, `pwd`, `secret` (any
    /// case), a value made only of `*`, `x`, `X`, `.`, `•` or `…`, a value wrapped in `<…>`,
    /// `{…}`, `[…]` or `%…%`, or starting with `$` (`${DB_PASSWORD}`, `$PGPASS`, `$(cat f)`),
    /// or `%s`. A real but well-known default (`guest:guest`) does fire.
    UrlPassword,
    /// `payment-card`: a card number that passes the Luhn check and has the prefix and length of
    /// a known brand (Visa, Mastercard including 2221–2720, American Express, Discover, JCB,
    /// Diners Club, UnionPay, Maestro, Mir). Written either as one run of 13 to 16 digits, or as
    /// 13 to 19 digits in groups separated by single spaces or by single dashes (not mixed) laid
    /// out as cards are printed (4-4-4-4, 4-4-4-4-3, 4-6-5, 4-6-4, a last group shorter). Not
    /// part of a longer number or identifier: not next to a letter, digit or `_`; not after `+`
    /// (phone numbers), `#`, `$`, `/`, `@`; not joined by `-` or `.` to a longer identifier or
    /// decimal number; not beside another group of exactly four digits (a longer number
    /// printed in fours, like a USPS tracking number); and not an entry of a comma-separated
    /// list whose neighbour is a long number (8 digits or more) that is not a card (a table of
    /// hash constants or ids). Unbroken runs of 17 to 19 digits are not reported: in text they
    /// are nearly always 64-bit integers, and such rare cards are printed in groups.
    PaymentCard,
    /// A store's [`CustomRule`]; its id is `custom:<name>`.
    Custom(RuleId),
}

impl Detector {
    /// Every built-in detector, most specific first.
    pub const BUILTIN: [Detector; 13] = [
        Detector::AwsAccessKey,
        Detector::AwsSecretKey,
        Detector::GcpServiceAccountKey,
        Detector::AzureConnectionString,
        Detector::AnthropicApiKey,
        Detector::OpenaiApiKey,
        Detector::GithubToken,
        Detector::SlackToken,
        Detector::StripeKey,
        Detector::Jwt,
        Detector::PrivateKey,
        Detector::UrlPassword,
        Detector::PaymentCard,
    ];

    /// The stable id: `private-key`, `aws-access-key`, …, or `custom:<name>`.
    pub fn as_str(&self) -> &str {
        match self {
            Detector::AwsAccessKey => "aws-access-key",
            Detector::AwsSecretKey => "aws-secret-key",
            Detector::GcpServiceAccountKey => "gcp-service-account-key",
            Detector::AzureConnectionString => "azure-connection-string",
            Detector::AnthropicApiKey => "anthropic-api-key",
            Detector::OpenaiApiKey => "openai-api-key",
            Detector::GithubToken => "github-token",
            Detector::SlackToken => "slack-token",
            Detector::StripeKey => "stripe-key",
            Detector::Jwt => "jwt",
            Detector::PrivateKey => "private-key",
            Detector::UrlPassword => "url-password",
            Detector::PaymentCard => "payment-card",
            Detector::Custom(id) => id.as_str(),
        }
    }

    /// The built-in detector with this id, if any (custom rules are named by the policy).
    pub fn builtin(id: &str) -> Option<Detector> {
        Detector::BUILTIN.into_iter().find(|d| d.as_str() == id)
    }
}

impl fmt::Display for Detector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Something sensitive in a text: which detector found it, and where.
///
/// It never holds the matched text; its `Debug` shows the detector and the range only.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Finding {
    /// What found it.
    pub detector: Detector,
    /// Byte range in the scanned text, on character boundaries.
    pub range: Range<usize>,
}

impl fmt::Debug for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Destructured so that a new field needs a decision about what it may show.
        let Finding { detector, range } = self;
        f.debug_struct("Finding").field("detector", &detector.as_str()).field("range", range).finish()
    }
}

/// Every finding in `text`, from the built-in detectors and from `custom`, sorted by start and
/// never overlapping (see the [module docs](self#overlaps)).
pub fn scan(text: &str, custom: &[CustomRule]) -> Vec<Finding> {
    let mut found = Vec::new();
    tokens::find(text, &mut found);
    jwt::find(text, &mut found);
    pem::find(text, &mut found);
    url::find(text, &mut found);
    card::find(text, &mut found);
    for rule in custom {
        rule.find(text, &mut found);
    }
    let rank = |d: &Detector| match d {
        Detector::Custom(id) => Detector::BUILTIN.len() + custom.iter().position(|r| r.id() == id).unwrap_or(0),
        d => Detector::BUILTIN.iter().position(|b| b == d).unwrap_or(0),
    };
    resolve(text, found, rank)
}

/// Sorts findings by start and merges overlapping ones (the rule is in the module docs). Ranges
/// are clamped to the text and widened to character boundaries first, so a hand-made finding
/// cannot make [`redact`] panic or leave part of a character showing.
fn resolve(text: &str, mut found: Vec<Finding>, rank: impl Fn(&Detector) -> usize) -> Vec<Finding> {
    for f in &mut found {
        let mut start = f.range.start.min(text.len());
        let mut end = f.range.end.clamp(start, text.len());
        while !text.is_char_boundary(start) {
            start -= 1;
        }
        while !text.is_char_boundary(end) {
            end += 1;
        }
        f.range = start..end;
    }
    found.retain(|f| !f.range.is_empty());
    found.sort_by(|a, b| {
        (a.range.start, std::cmp::Reverse(a.range.len()), rank(&a.detector)).cmp(&(
            b.range.start,
            std::cmp::Reverse(b.range.len()),
            rank(&b.detector),
        ))
    });
    let mut out: Vec<Finding> = Vec::with_capacity(found.len());
    // The longest original range in the current merged group: it names the group.
    let mut longest = 0;
    for f in found {
        match out.last_mut() {
            Some(last) if f.range.start < last.range.end => {
                if f.range.len() > longest {
                    longest = f.range.len();
                    last.detector = f.detector;
                }
                last.range.end = last.range.end.max(f.range.end);
            }
            _ => {
                longest = f.range.len();
                out.push(f);
            }
        }
    }
    out
}

/// `text` with each finding's range replaced by `[REDACTED:<id>]`.
///
/// `findings` may come in any order and overlap (they are resolved as [`scan`] does); ranges
/// past the end are clamped.
pub fn redact(text: &str, findings: &[Finding]) -> String {
    let resolved = resolve(text, findings.to_vec(), |d| {
        Detector::BUILTIN.iter().position(|b| b == d).unwrap_or(Detector::BUILTIN.len())
    });
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for f in &resolved {
        out.push_str(&text[at..f.range.start]);
        out.push_str("[REDACTED:");
        out.push_str(f.detector.as_str());
        out.push(']');
        at = f.range.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Line numbers shown per detector in a [`summary`] before "and N more".
const SUMMARY_LINES: usize = 5;

/// A one-line description of `findings` in `text` for messages: detectors and line numbers
/// (1-based, where each finding starts), never content.
///
/// ```
/// use memfs_core::sensitive::{summary, Detector, Finding};
/// let text = "a\nAKIA…\nb\n";
/// let f = |detector, line_start: usize| Finding { detector, range: line_start..line_start + 1 };
/// assert_eq!(summary(text, &[]), "no findings");
/// assert_eq!(summary(text, &[f(Detector::AwsAccessKey, 2)]), "1 finding: aws-access-key (line 2)");
/// assert_eq!(
///     summary(text, &[f(Detector::Jwt, 0), f(Detector::AwsAccessKey, 2), f(Detector::Jwt, 10)]),
///     "3 findings: jwt (lines 1, 3), aws-access-key (line 2)"
/// );
/// ```
pub fn summary(text: &str, findings: &[Finding]) -> String {
    if findings.is_empty() {
        return "no findings".to_owned();
    }
    let mut starts: Vec<(usize, usize)> = findings.iter().enumerate().map(|(i, f)| (f.range.start, i)).collect();
    starts.sort_unstable();
    // One pass over the text, in order of start, gives each finding its line.
    let mut lines = vec![0; findings.len()];
    let (mut line, mut at) = (1, 0);
    for (start, i) in starts {
        let start = start.min(text.len());
        line += text.as_bytes()[at..start].iter().filter(|&&b| b == b'\n').count();
        at = start;
        lines[i] = line;
    }
    // Detectors in order of first appearance, each with its distinct lines in order.
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by_key(|&i| (lines[i], findings[i].range.start));
    let mut groups: Vec<(&Detector, Vec<usize>)> = Vec::new();
    for i in order {
        let d = &findings[i].detector;
        match groups.iter_mut().find(|(g, _)| *g == d) {
            Some((_, ls)) if ls.last() == Some(&lines[i]) => {}
            Some((_, ls)) => ls.push(lines[i]),
            None => groups.push((d, vec![lines[i]])),
        }
    }
    let n = findings.len();
    let mut out = format!("{n} finding{}: ", if n == 1 { "" } else { "s" });
    for (g, (d, ls)) in groups.iter().enumerate() {
        if g > 0 {
            out.push_str(", ");
        }
        let shown: Vec<String> = ls.iter().take(SUMMARY_LINES).map(usize::to_string).collect();
        let more = ls.len().saturating_sub(SUMMARY_LINES);
        let word = if ls.len() == 1 { "line" } else { "lines" };
        out.push_str(&format!("{d} ({word} {}", shown.join(", ")));
        if more > 0 {
            out.push_str(&format!(" and {more} more"));
        }
        out.push(')');
    }
    out
}

/// Whether a token's random part is plainly a placeholder: fewer than six distinct ASCII
/// letters and digits (`xxxx…`, `XXXX…`, `0000…`, `T00000000/B00000000/XXXX…`), or the word
/// `EXAMPLE` (AWS's documented keys, `AKIAIOSFODNN7EXAMPLE`). A random body of 16 or more
/// characters has either with negligible probability.
fn placeholder(body: &str) -> bool {
    if body.contains("EXAMPLE") {
        return true;
    }
    let mut seen = [false; 128];
    let mut distinct = 0;
    for b in body.bytes().filter(u8::is_ascii_alphanumeric) {
        if !seen[usize::from(b)] {
            seen[usize::from(b)] = true;
            distinct += 1;
        }
    }
    distinct < 6
}

/// The byte before `at`, if any.
fn before(text: &str, at: usize) -> Option<u8> {
    at.checked_sub(1).map(|i| text.as_bytes()[i])
}

/// The byte at `at`, if any.
fn after(text: &str, at: usize) -> Option<u8> {
    text.as_bytes().get(at).copied()
}

/// A finding for `detector` over `range`.
fn finding(detector: Detector, range: Range<usize>) -> Finding {
    Finding { detector, range }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(detector: Detector, range: Range<usize>) -> Finding {
        Finding { detector, range }
    }

    #[test]
    fn ids_are_distinct_and_parse_back() {
        for d in Detector::BUILTIN {
            assert_eq!(Detector::builtin(d.as_str()), Some(d.clone()));
        }
        assert_eq!(Detector::builtin("custom"), None);
    }

    #[test]
    fn debug_shows_detector_and_range_only() {
        assert_eq!(format!("{:?}", f(Detector::Jwt, 3..9)), r#"Finding { detector: "jwt", range: 3..9 }"#);
    }

    #[test]
    fn overlaps_merge_into_the_longest() {
        let text = "0123456789abcdef";
        let merged = resolve(
            text,
            vec![f(Detector::PaymentCard, 4..8), f(Detector::Jwt, 2..6), f(Detector::UrlPassword, 7..12)],
            |d| Detector::BUILTIN.iter().position(|b| b == d).unwrap(),
        );
        assert_eq!(merged, vec![f(Detector::UrlPassword, 2..12)]);
        // Equal lengths: the earlier start, then the more specific detector.
        let tie = resolve(text, vec![f(Detector::PrivateKey, 0..4), f(Detector::GcpServiceAccountKey, 0..4)], |d| {
            Detector::BUILTIN.iter().position(|b| b == d).unwrap()
        });
        assert_eq!(tie, vec![f(Detector::GcpServiceAccountKey, 0..4)]);
        // Touching ranges stay apart.
        let apart = resolve(text, vec![f(Detector::Jwt, 4..8), f(Detector::Jwt, 0..4)], |_| 0);
        assert_eq!(apart, vec![f(Detector::Jwt, 0..4), f(Detector::Jwt, 4..8)]);
    }

    #[test]
    fn redact_clamps_and_widens_hand_made_ranges() {
        let text = "née 1234";
        assert_eq!(redact(text, &[f(Detector::Jwt, 2..3)]), "n[REDACTED:jwt]e 1234");
        assert_eq!(redact(text, &[f(Detector::Jwt, 5..99)]), "née [REDACTED:jwt]");
        assert_eq!(redact(text, &[f(Detector::Jwt, 99..100)]), text);
    }

    #[test]
    fn placeholders() {
        assert!(placeholder("XXXXXXXXXXXXXXXX"));
        assert!(placeholder("T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"));
        assert!(placeholder("IOSFODNN7EXAMPLE"));
        assert!(!placeholder("UJZDEGXDNCF32EPF"));
    }
}
