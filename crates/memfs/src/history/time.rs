//! Commit times: shown in RFC 3339 (UTC, whole seconds), read as RFC 3339 or unix seconds.

use jiff::Timestamp;

/// `2025-06-01T12:00:00Z`: RFC 3339 in UTC, to the second (the fraction is dropped).
pub(crate) fn format(time_ms: u64) -> String {
    let ms = i64::try_from(time_ms).unwrap_or(i64::MAX);
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Err(_) => format!("{time_ms}ms"),
    }
}

/// The last millisecond a time names: an RFC 3339 time with an offset, or unix seconds. A time
/// without a fraction covers its whole second, so a time copied from `memfs log` (which drops
/// the fraction) still includes the commit it was copied from.
pub(crate) fn parse(s: &str) -> Option<u64> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u64 = s.parse().ok()?;
        return secs.checked_mul(1000)?.checked_add(999);
    }
    let t: Timestamp = s.parse().ok()?;
    let ms = u64::try_from(t.as_millisecond()).ok()?;
    Some(if t.subsec_nanosecond() == 0 { ms + 999 } else { ms })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses() {
        assert_eq!(format(0), "1970-01-01T00:00:00Z");
        assert_eq!(format(1_748_779_200_123), "2025-06-01T12:00:00Z");
        assert_eq!(parse("2025-06-01T12:00:00Z"), Some(1_748_779_200_999));
        assert_eq!(parse("2025-06-01T14:00:00+02:00"), Some(1_748_779_200_999));
        assert_eq!(parse("2025-06-01T12:00:00.5Z"), Some(1_748_779_200_500));
        assert_eq!(parse("1748779200"), Some(1_748_779_200_999));
        assert_eq!(parse("2025-06-01"), None);
        assert_eq!(parse("HEAD"), None);
        assert_eq!(parse(""), None);
    }
}
