//! A store's safeguards: size limits, read pagination, the sensitive-data filter and expiration.
//!
//! A [`Policy`] is data: the store keeps it encrypted and versioned with every commit, and
//! [`execute_in`](crate::execute_in) enforces it whatever client calls. Every setting has a
//! key (`memfs policy set KEY VALUE`); [`Policy::set`] and [`Policy::unset`] change one,
//! [`Policy::settings`] lists them all.
//!
//! The defaults never change the answer of a normal session, in either dialect: the limits are
//! far above what a memory directory holds, pagination only cuts views longer than the tool's
//! own guidance (16,000 characters), and the filter only warns (the content is stored
//! encrypted either way). Expiration is off until a store turns it on.
//!
//! ```
//! use memfs_core::{Policy, SensitiveMode};
//! let mut policy = Policy::default();
//! policy.set("sensitive", "redact")?;
//! policy.set("max-file-bytes", "64KiB")?;
//! policy.set("rule.employee-id", r"\bEMP-\d{6}\b")?;
//! assert_eq!(policy.sensitive, SensitiveMode::Redact);
//! assert_eq!(policy.max_file_bytes, Some(65_536));
//! assert_eq!(policy.get("rule.employee-id")?, r"\bEMP-\d{6}\b");
//! policy.unset("max-file-bytes")?;
//! assert_eq!(policy.max_file_bytes, Policy::default().max_file_bytes);
//! assert!(policy.set("max-files", "lots").is_err());
//! # Ok::<(), memfs_core::PolicyError>(())
//! ```

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::sensitive::{self, CustomRule, CustomRuleError, Detector};

/// Default largest file, in bytes: 16 MiB. Far above any memory file, and above the largest
/// file the SDK's own tests write (the 999,999-line boundary, 5 MB), so that the SDK's answers
/// stay reachable; pagination is what keeps a large file out of the context.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 16 << 20;
/// Default largest store, in bytes of file content: 1 GiB.
pub const DEFAULT_MAX_STORE_BYTES: u64 = 1 << 30;
/// Default most files in a store.
pub const DEFAULT_MAX_FILES: u64 = 100_000;
/// Default most characters one `view` returns: the memory tool's guidance.
pub const DEFAULT_VIEW_MAX_CHARS: u64 = 16_000;
/// Fewest characters a view may be cut to: room for a listing's header, which names a path of
/// up to 4,096 bytes twice, and its note, so that no answer ever exceeds the maximum.
pub const MIN_VIEW_MAX_CHARS: u64 = 10_000;

/// The prefix of custom-rule keys: `rule.NAME`.
pub const RULE_PREFIX: &str = "rule.";

/// What the sensitive-data filter does with a finding in text being written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SensitiveMode {
    /// No scanning.
    Off,
    /// Write the text as given and report the findings in the result.
    #[default]
    Warn,
    /// Replace each finding with `[REDACTED:<detector>]`, write, and report.
    Redact,
    /// Refuse the write with an error naming the findings; nothing is written.
    Reject,
}

impl SensitiveMode {
    /// The setting's value.
    pub fn as_str(self) -> &'static str {
        match self {
            SensitiveMode::Off => "off",
            SensitiveMode::Warn => "warn",
            SensitiveMode::Redact => "redact",
            SensitiveMode::Reject => "reject",
        }
    }
}

/// A store's policy: the settings the module documentation describes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(try_from = "PolicyData", into = "PolicyData")]
pub struct Policy {
    /// Largest file content in bytes; `None`: unlimited.
    pub max_file_bytes: Option<u64>,
    /// Largest total of file contents in bytes; `None`: unlimited.
    pub max_store_bytes: Option<u64>,
    /// Most files; `None`: unlimited.
    pub max_files: Option<u64>,
    /// Most characters one `view` returns; `None`: unlimited (the SDK's behaviour).
    pub view_max_chars: Option<u64>,
    /// The sensitive-data filter's mode.
    pub sensitive: SensitiveMode,
    /// Custom detectors, in name order.
    pub rules: Vec<CustomRule>,
    /// Files not read or written for this many days leave the live tree on their own;
    /// `None`: only `memfs expire` removes them.
    pub expire_unused_after_days: Option<u32>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            max_file_bytes: Some(DEFAULT_MAX_FILE_BYTES),
            max_store_bytes: Some(DEFAULT_MAX_STORE_BYTES),
            max_files: Some(DEFAULT_MAX_FILES),
            view_max_chars: Some(DEFAULT_VIEW_MAX_CHARS),
            sensitive: SensitiveMode::default(),
            rules: Vec::new(),
            expire_unused_after_days: None,
        }
    }
}

impl Policy {
    /// No safeguards at all: the reference implementations' behaviour.
    pub fn unlimited() -> Self {
        Policy {
            max_file_bytes: None,
            max_store_bytes: None,
            max_files: None,
            view_max_chars: None,
            sensitive: SensitiveMode::Off,
            rules: Vec::new(),
            expire_unused_after_days: None,
        }
    }
}

impl PartialEq for Policy {
    fn eq(&self, other: &Self) -> bool {
        PolicyData::from(self.clone()) == PolicyData::from(other.clone())
    }
}

/// A setting that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// No such key.
    #[error(
        "unknown policy key `{key}`: expected max-file-bytes, max-store-bytes, max-files, view-max-chars, sensitive, \
         expire-unused-after or rule.NAME"
    )]
    UnknownKey {
        /// The key as given.
        key: String,
    },
    /// The value does not fit the key.
    #[error("invalid value `{value}` for {key}: {expected}")]
    InvalidValue {
        /// The key.
        key: String,
        /// The value as given.
        value: String,
        /// What the key takes.
        expected: &'static str,
    },
    /// A custom rule that does not compile or is not allowed.
    #[error(transparent)]
    Rule(#[from] CustomRuleError),
    /// A custom rule that matches the `[REDACTED:…]` markers redaction writes.
    #[error("custom rule \"{name}\": the pattern matches the [REDACTED:…] markers that redaction writes")]
    RuleMatchesMarkers {
        /// The rule's name.
        name: String,
    },
    /// `rule.NAME` names no rule.
    #[error("no custom rule named `{name}`")]
    NoSuchRule {
        /// The name.
        name: String,
    },
}

const SIZE_EXPECTED: &str = "a number of bytes (suffixes KiB, MiB, GiB, KB, MB, GB) or `none` for no limit";
const COUNT_EXPECTED: &str = "a whole number or `none` for no limit";

impl Policy {
    /// Every key and its value, in a fixed order (custom rules last, by name).
    pub fn settings(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> =
            KEYS.iter().map(|k| ((*k).to_owned(), self.get(k).expect("a key"))).collect();
        out.extend(self.rules.iter().map(|r| (format!("{RULE_PREFIX}{}", r.name()), r.pattern().to_owned())));
        out
    }

    /// One setting's value, as `settings` shows it.
    pub fn get(&self, key: &str) -> Result<String, PolicyError> {
        let limit = |v: Option<u64>| v.map_or_else(|| "none".to_owned(), |n| n.to_string());
        Ok(match key {
            "max-file-bytes" => limit(self.max_file_bytes),
            "max-store-bytes" => limit(self.max_store_bytes),
            "max-files" => limit(self.max_files),
            "view-max-chars" => limit(self.view_max_chars),
            "sensitive" => self.sensitive.as_str().to_owned(),
            "expire-unused-after" => {
                self.expire_unused_after_days.map_or_else(|| "off".to_owned(), |d| format!("{d}d"))
            }
            _ => {
                let name = rule_name(key)?;
                let rule = self.rules.iter().find(|r| r.name() == name);
                rule.map(|r| r.pattern().to_owned()).ok_or_else(|| PolicyError::NoSuchRule { name: name.to_owned() })?
            }
        })
    }

    /// Sets `key` to `value` (parsed as `settings` shows it; sizes also take unit suffixes).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), PolicyError> {
        let invalid = |expected| PolicyError::InvalidValue { key: key.to_owned(), value: value.to_owned(), expected };
        match key {
            "max-file-bytes" => self.max_file_bytes = parse_size(value).ok_or_else(|| invalid(SIZE_EXPECTED))?,
            "max-store-bytes" => self.max_store_bytes = parse_size(value).ok_or_else(|| invalid(SIZE_EXPECTED))?,
            "max-files" => self.max_files = parse_count(value).ok_or_else(|| invalid(COUNT_EXPECTED))?,
            "view-max-chars" => {
                let expected = "a whole number of characters, at least 10000, or `none` for no limit";
                let n = parse_count(value).ok_or_else(|| invalid(expected))?;
                if n.is_some_and(|n| n < MIN_VIEW_MAX_CHARS) {
                    return Err(invalid(expected));
                }
                self.view_max_chars = n;
            }
            "sensitive" => {
                self.sensitive = match value {
                    "off" => SensitiveMode::Off,
                    "warn" => SensitiveMode::Warn,
                    "redact" => SensitiveMode::Redact,
                    "reject" => SensitiveMode::Reject,
                    _ => return Err(invalid("off, warn, redact or reject")),
                }
            }
            "expire-unused-after" => {
                self.expire_unused_after_days = match value {
                    "off" => None,
                    _ => Some(parse_days(value).ok_or_else(|| invalid("a number of days such as `90d`, or `off`"))?),
                }
            }
            _ => {
                let rule = CustomRule::new(rule_name(key)?, value)?;
                // A rule that finds the markers would find what redaction just wrote.
                let markers: String = Detector::BUILTIN
                    .iter()
                    .map(|d| format!("[REDACTED:{d}] "))
                    .chain([format!("[REDACTED:custom:{}]", rule.name())])
                    .collect();
                if sensitive::scan(&markers, std::slice::from_ref(&rule))
                    .iter()
                    .any(|f| matches!(f.detector, Detector::Custom(_)))
                {
                    return Err(PolicyError::RuleMatchesMarkers { name: rule.name().to_owned() });
                }
                self.rules.retain(|r| r.name() != rule.name());
                self.rules.push(rule);
                self.rules.sort_by(|a, b| a.name().cmp(b.name()));
            }
        }
        Ok(())
    }

    /// Puts `key` back to its default (a custom rule: removes it).
    pub fn unset(&mut self, key: &str) -> Result<(), PolicyError> {
        let d = Policy::default();
        match key {
            "max-file-bytes" => self.max_file_bytes = d.max_file_bytes,
            "max-store-bytes" => self.max_store_bytes = d.max_store_bytes,
            "max-files" => self.max_files = d.max_files,
            "view-max-chars" => self.view_max_chars = d.view_max_chars,
            "sensitive" => self.sensitive = d.sensitive,
            "expire-unused-after" => self.expire_unused_after_days = d.expire_unused_after_days,
            _ => {
                let name = rule_name(key)?;
                let before = self.rules.len();
                self.rules.retain(|r| r.name() != name);
                if self.rules.len() == before {
                    return Err(PolicyError::NoSuchRule { name: name.to_owned() });
                }
            }
        }
        Ok(())
    }
}

impl fmt::Display for Policy {
    /// One `key value` line per setting, the keys aligned.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let settings = self.settings();
        let width = settings.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        for (k, v) in settings {
            writeln!(f, "{k:<width$}  {v}")?;
        }
        Ok(())
    }
}

/// The fixed keys, in display order.
const KEYS: [&str; 6] =
    ["max-file-bytes", "max-store-bytes", "max-files", "view-max-chars", "sensitive", "expire-unused-after"];

fn rule_name(key: &str) -> Result<&str, PolicyError> {
    key.strip_prefix(RULE_PREFIX).ok_or_else(|| PolicyError::UnknownKey { key: key.to_owned() })
}

fn parse_count(value: &str) -> Option<Option<u64>> {
    if value == "none" {
        return Some(None);
    }
    digits(value).map(Some)
}

fn parse_size(value: &str) -> Option<Option<u64>> {
    if value == "none" {
        return Some(None);
    }
    let units: [(&str, u64); 6] =
        [("KiB", 1 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("KB", 1_000), ("MB", 1_000_000), ("GB", 1_000_000_000)];
    for (suffix, factor) in units {
        if let Some(n) = value.strip_suffix(suffix) {
            return digits(n.trim_end()).and_then(|n| n.checked_mul(factor)).map(Some);
        }
    }
    digits(value).map(Some)
}

/// A byte size as the policy writes it: `65536`, `64KiB`, `2MB` (KiB, MiB, GiB; KB, MB, GB).
pub fn parse_bytes(value: &str) -> Option<u64> {
    parse_size(value).flatten()
}

/// A number of days as the policy and `memfs expire` write it (`90d`, at least `1d`).
pub fn parse_days(value: &str) -> Option<u32> {
    let n = digits(value.strip_suffix('d')?)?;
    u32::try_from(n).ok().filter(|&n| n > 0)
}

/// Decimal digits only.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// The stored form: plain values, rules as name → pattern. Absent fields take their defaults
/// (a limit written as `null` is no limit; an absent one is the default limit), so a policy
/// object written before a setting existed still reads; fields it does not know (a later
/// writer's settings) are skipped: a later memfs names a setting an older one must not skip in
/// `memfs.keys`' `requires` (docs/FORMAT.md, "Versions").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
struct PolicyData {
    max_file_bytes: Option<u64>,
    max_store_bytes: Option<u64>,
    max_files: Option<u64>,
    view_max_chars: Option<u64>,
    sensitive: SensitiveMode,
    rules: BTreeMap<String, String>,
    expire_unused_after_days: Option<u32>,
}

impl Default for PolicyData {
    fn default() -> Self {
        PolicyData::from(Policy::default())
    }
}

impl From<Policy> for PolicyData {
    fn from(p: Policy) -> Self {
        PolicyData {
            max_file_bytes: p.max_file_bytes,
            max_store_bytes: p.max_store_bytes,
            max_files: p.max_files,
            view_max_chars: p.view_max_chars,
            sensitive: p.sensitive,
            rules: p.rules.iter().map(|r| (r.name().to_owned(), r.pattern().to_owned())).collect(),
            expire_unused_after_days: p.expire_unused_after_days,
        }
    }
}

impl TryFrom<PolicyData> for Policy {
    type Error = PolicyError;

    fn try_from(d: PolicyData) -> Result<Self, PolicyError> {
        let rules = d.rules.iter().map(|(n, p)| CustomRule::new(n, p)).collect::<Result<Vec<_>, _>>()?;
        Ok(Policy {
            max_file_bytes: d.max_file_bytes,
            max_store_bytes: d.max_store_bytes,
            max_files: d.max_files,
            view_max_chars: d.view_max_chars,
            sensitive: d.sensitive,
            rules,
            expire_unused_after_days: d.expire_unused_after_days,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_values_and_refuses_with_reasons() {
        let mut p = Policy::default();
        for (v, want) in [("0", Some(0)), ("1KiB", Some(1024)), ("2 MB", Some(2_000_000)), ("none", None)] {
            p.set("max-store-bytes", v).unwrap();
            assert_eq!(p.max_store_bytes, want, "{v}");
        }
        let err = |k: &str, v: &str| Policy::default().set(k, v).unwrap_err().to_string();
        assert_eq!(
            err("max-file-bytes", "-1"),
            "invalid value `-1` for max-file-bytes: a number of bytes (suffixes KiB, MiB, GiB, KB, MB, GB) or `none` \
             for no limit"
        );
        assert_eq!(
            err("max-file-bytes", "99999999999GiB").split(':').next(),
            Some("invalid value `99999999999GiB` for max-file-bytes")
        );
        assert_eq!(
            err("view-max-chars", "9999"),
            "invalid value `9999` for view-max-chars: a whole number of characters, at least 10000, or `none` for no \
             limit"
        );
        assert_eq!(err("sensitive", "loud"), "invalid value `loud` for sensitive: off, warn, redact or reject");
        assert_eq!(
            err("expire-unused-after", "0d"),
            "invalid value `0d` for expire-unused-after: a number of days such as `90d`, or `off`"
        );
        assert!(err("colour", "red").starts_with("unknown policy key `colour`"));
        assert_eq!(err("rule.x", "a*"), "custom rule \"x\": the pattern can match the empty string");
        assert_eq!(
            err("rule.x", "REDACTED"),
            "custom rule \"x\": the pattern matches the [REDACTED:…] markers that redaction writes"
        );
        assert_eq!(
            err("rule.y", r"custom:\w+"),
            "custom rule \"y\": the pattern matches the [REDACTED:…] markers that redaction writes"
        );
        assert_eq!(Policy::default().unset("rule.x").unwrap_err().to_string(), "no custom rule named `x`");
    }

    #[test]
    fn absent_fields_take_their_defaults() {
        let p: Policy = serde_json::from_str(r#"{"sensitive": "redact", "max_files": null}"#).unwrap();
        let want = Policy { sensitive: SensitiveMode::Redact, max_files: None, ..Policy::default() };
        assert_eq!(p, want);
        // A later memfs's setting is skipped (docs/FORMAT.md, "Versions").
        let later: Policy = serde_json::from_str(r#"{"max_files": 3, "max_line_chars": 80}"#).unwrap();
        assert_eq!(later, Policy { max_files: Some(3), ..Policy::default() });
    }

    #[test]
    fn round_trips_through_json_and_lists_settings() {
        let mut p = Policy::default();
        p.set("rule.b", "bbb").unwrap();
        p.set("rule.a", "aaa").unwrap();
        p.set("expire-unused-after", "90d").unwrap();
        p.set("max-files", "none").unwrap();
        let json = serde_json::to_string(&p).unwrap();
        let back: Policy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, p);
        assert_eq!(
            p.to_string(),
            "max-file-bytes       16777216\nmax-store-bytes      1073741824\nmax-files            none\n\
             view-max-chars       16000\nsensitive            warn\nexpire-unused-after  90d\nrule.a               aaa\n\
             rule.b               bbb\n"
        );
    }
}
