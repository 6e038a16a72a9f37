//! Commit times as `restore --at` takes them: RFC 3339 or unix seconds.

use jiff::Timestamp;

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
    fn parses() {
        assert_eq!(parse("2025-06-01T12:00:00Z"), Some(1_748_779_200_999));
        assert_eq!(parse("2025-06-01T14:00:00+02:00"), Some(1_748_779_200_999));
        assert_eq!(parse("2025-06-01T12:00:00.5Z"), Some(1_748_779_200_500));
        assert_eq!(parse("1748779200"), Some(1_748_779_200_999));
        assert_eq!(parse("2025-06-01"), None);
        assert_eq!(parse("HEAD"), None);
        assert_eq!(parse(""), None);
    }
}
