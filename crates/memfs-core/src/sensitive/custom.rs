//! A store's own detectors: a name and a regular expression.

use std::fmt;
use std::sync::Arc;

use regex::{Regex, RegexBuilder};

use super::{Detector, Finding};

/// Longest accepted custom rule name, in bytes.
const MAX_NAME_BYTES: usize = 64;

/// Longest accepted pattern, in bytes.
const MAX_PATTERN_BYTES: usize = 4096;

/// Most memory a compiled pattern may take (the `regex` crate's `size_limit`), which bounds the
/// cost of a rule whose few bytes expand into a huge automaton (`\w{1000}{1000}`).
const MAX_COMPILED_BYTES: usize = 1 << 20;

/// Haystacks on which a pattern is tried for an empty match: together they offer every kind of
/// position at which an empty match can occur (start, end, word boundaries, line starts and
/// ends, between non-word characters, inside non-ASCII text).
const EMPTY_PROBES: [&str; 3] = ["", "a a\n\n0_-. \t\r\nZ", "é€😀 \u{0}\n"];

/// The id of a custom rule, `custom:<name>`, as it appears in [`Detector::Custom`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RuleId(Arc<str>);

impl RuleId {
    /// The whole id, `custom:<name>`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The rule's name, without the `custom:` prefix.
    pub fn name(&self) -> &str {
        &self.0["custom:".len()..]
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A detector a store's policy adds: findings are the pattern's matches, reported as
/// `custom:<name>` (marker `[REDACTED:custom:<name>]`).
///
/// The pattern uses the `regex` crate's syntax, with Unicode-aware `\d`, `\w`, `\s`, `\b` and
/// `(?i)`; matching is linear-time (no look-around, no back-references). If it has a capture
/// group named `secret`, only that group is reported, so a label can stay readable:
///
/// ```
/// use memfs_core::sensitive::{self, CustomRule};
/// let rule = CustomRule::new("db-password", r"(?i)db_pass(?:word)?\s*=\s*(?P<secret>\S+)")?;
/// let text = "DB_PASSWORD = hunter2-but-longer\n";
/// let findings = sensitive::scan(text, &[rule]);
/// assert_eq!(sensitive::redact(text, &findings), "DB_PASSWORD = [REDACTED:custom:db-password]\n");
///
/// // A rule that could match nothing at all would flag every text: refused.
/// let err = CustomRule::new("ids", r"\d*").unwrap_err();
/// assert_eq!(err.to_string(), r#"custom rule "ids": the pattern can match the empty string"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct CustomRule {
    id: RuleId,
    regex: Regex,
    /// Index of the capture group named `secret`, if the pattern has one.
    secret: Option<usize>,
}

impl fmt::Debug for CustomRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The pattern is the owner's configuration, not a secret; show it for diagnostics.
        let CustomRule { id, regex, secret: _ } = self;
        f.debug_struct("CustomRule").field("name", &id.name()).field("pattern", &regex.as_str()).finish()
    }
}

/// Why [`CustomRule::new`] refused a rule. Messages name the rule, never any scanned text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CustomRuleError {
    /// The name is empty, too long, or has a character other than ASCII letters, digits, `-`,
    /// `_` and `.` (it appears in markers and messages).
    #[error("custom rule name {name:?} is invalid: use 1 to {MAX_NAME_BYTES} ASCII letters, digits, '-', '_' or '.'")]
    InvalidName {
        /// The refused name.
        name: String,
    },
    /// The pattern does not compile (or compiles larger than the size limit); `message` is the
    /// `regex` crate's explanation, pointing at the offending part.
    #[error("custom rule {name:?}: invalid pattern: {message}")]
    InvalidPattern {
        /// The rule's name.
        name: String,
        /// What is wrong with the pattern.
        message: String,
    },
    /// The pattern is longer than the limit.
    #[error("custom rule {name:?}: the pattern is longer than {MAX_PATTERN_BYTES} bytes")]
    PatternTooLong {
        /// The rule's name.
        name: String,
    },
    /// The pattern can match the empty string, so it would report a finding in every text.
    #[error("custom rule {name:?}: the pattern can match the empty string")]
    MatchesEmpty {
        /// The rule's name.
        name: String,
    },
}

impl CustomRule {
    /// A rule named `name` (1 to 64 ASCII letters, digits, `-`, `_`, `.`) that reports matches
    /// of `pattern`.
    ///
    /// Refused: an invalid name, a pattern longer than 4096 bytes, one that does not compile or
    /// whose compiled form exceeds 1 MiB, and one that can match the empty string (tried on
    /// probe texts that offer every kind of empty position; [`scan`](super::scan) also skips
    /// empty matches, so a pattern that slips through only reports non-empty ones).
    pub fn new(name: &str, pattern: &str) -> Result<CustomRule, CustomRuleError> {
        let valid = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.');
        if name.is_empty() || name.len() > MAX_NAME_BYTES || !name.bytes().all(valid) {
            return Err(CustomRuleError::InvalidName { name: name.to_owned() });
        }
        let name_owned = || name.to_owned();
        if pattern.len() > MAX_PATTERN_BYTES {
            return Err(CustomRuleError::PatternTooLong { name: name_owned() });
        }
        let regex = RegexBuilder::new(pattern)
            .size_limit(MAX_COMPILED_BYTES)
            .build()
            .map_err(|e| CustomRuleError::InvalidPattern { name: name_owned(), message: e.to_string() })?;
        if EMPTY_PROBES.iter().any(|probe| regex.find_iter(probe).any(|m| m.is_empty())) {
            return Err(CustomRuleError::MatchesEmpty { name: name_owned() });
        }
        let secret = regex.capture_names().position(|n| n == Some("secret"));
        Ok(CustomRule { id: RuleId(format!("custom:{name}").into()), regex, secret })
    }

    /// The rule's name.
    pub fn name(&self) -> &str {
        self.id.name()
    }

    /// The rule's pattern, as given.
    pub fn pattern(&self) -> &str {
        self.regex.as_str()
    }

    /// The rule's id, `custom:<name>`.
    pub fn id(&self) -> &RuleId {
        &self.id
    }

    /// Appends the rule's non-empty matches in `text` to `out`.
    pub(super) fn find(&self, text: &str, out: &mut Vec<Finding>) {
        let detector = || Detector::Custom(self.id.clone());
        match self.secret {
            None => {
                for m in self.regex.find_iter(text).filter(|m| !m.is_empty()) {
                    out.push(Finding { detector: detector(), range: m.range() });
                }
            }
            Some(group) => {
                for caps in self.regex.captures_iter(text) {
                    let whole = caps.get(0).map(|m| m.range());
                    let range = caps.get(group).map(|m| m.range()).or(whole).unwrap_or_default();
                    if !range.is_empty() {
                        out.push(Finding { detector: detector(), range });
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(CustomRule::new("employee-id_2.x", "EMP").is_ok());
        for bad in ["", "has space", "brack]et", "é", &"n".repeat(65)] {
            assert_eq!(CustomRule::new(bad, "EMP").unwrap_err(), CustomRuleError::InvalidName { name: bad.to_owned() });
        }
        let rule = CustomRule::new("emp", "EMP-[0-9]+").unwrap();
        assert_eq!((rule.name(), rule.pattern(), rule.id().as_str()), ("emp", "EMP-[0-9]+", "custom:emp"));
        assert_eq!(format!("{rule:?}"), r#"CustomRule { name: "emp", pattern: "EMP-[0-9]+" }"#);
    }

    #[test]
    fn bad_patterns_are_explained() {
        let err = CustomRule::new("x", "EMP-(").unwrap_err();
        let CustomRuleError::InvalidPattern { name, message } = &err else { panic!("{err:?}") };
        assert_eq!(name, "x");
        assert!(message.contains("unclosed group"), "{message}");
        assert!(err.to_string().starts_with("custom rule \"x\": invalid pattern: "), "{err}");
        let big = CustomRule::new("x", r"\w{1000}{1000}").unwrap_err();
        assert!(matches!(big, CustomRuleError::InvalidPattern { .. }), "{big:?}");
        let long = CustomRule::new("x", &"a".repeat(4097)).unwrap_err();
        assert_eq!(long.to_string(), r#"custom rule "x": the pattern is longer than 4096 bytes"#);
        // Look-around is not supported by the linear-time engine: a clear error, not a panic.
        assert!(matches!(CustomRule::new("x", "a(?=b)"), Err(CustomRuleError::InvalidPattern { .. })));
    }

    #[test]
    fn empty_matches_are_refused() {
        for p in ["", "a*", "(?:abc)?", r"\b", r"\B", "^", "$", "(?m)^$", r"x|\s*", "[0-9]{0,4}", r"(?-u:\b)"] {
            assert_eq!(
                CustomRule::new("e", p).unwrap_err(),
                CustomRuleError::MatchesEmpty { name: "e".to_owned() },
                "{p:?}"
            );
        }
        assert!(CustomRule::new("ok", r"\bEMP-\d{6}\b").is_ok());
    }
}
