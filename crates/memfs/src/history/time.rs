//! Commit times as `--at` takes them: RFC 3339, a plain date or date and time (UTC), or unix
//! seconds.

use jiff::Timestamp;
use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;

/// The last millisecond a time names. A time names all it does not say: a time without a
/// fraction covers its whole second (so a time copied from `memfs log`, which drops the
/// fraction, still includes the commit it was copied from), one without seconds its whole
/// minute, and a plain date its whole day. Accepted: RFC 3339 with an offset (`T` or a space
/// between date and time, seconds optional); the same without an offset, read as UTC; a date
/// `YYYY-MM-DD` (UTC); unix seconds.
pub(crate) fn parse(s: &str) -> Option<u64> {
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let secs: u64 = s.parse().ok()?;
        return secs.checked_mul(1000)?.checked_add(999);
    }
    if s.len() == 10 {
        let date: Date = s.parse().ok()?;
        let start = date.to_zoned(TimeZone::UTC).ok()?.timestamp();
        return u64::try_from(start.as_millisecond()).ok()?.checked_add(86_400_000 - 1);
    }
    let t = match s.parse::<Timestamp>() {
        Ok(t) => t,
        Err(_) => s.parse::<DateTime>().ok()?.to_zoned(TimeZone::UTC).ok()?.timestamp(),
    };
    let ms = u64::try_from(t.as_millisecond()).ok()?;
    if t.subsec_nanosecond() != 0 {
        return Some(ms);
    }
    // `YYYY-MM-DDTHH:MM` then `:SS` or not: the fields are fixed width.
    let has_seconds = s.as_bytes().get(16) == Some(&b':');
    ms.checked_add(if has_seconds { 999 } else { 59_999 })
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
        assert_eq!(parse("HEAD"), None);
        assert_eq!(parse(""), None);
    }

    #[test]
    fn plain_dates_and_times_are_utc_and_cover_what_they_do_not_say() {
        // The whole day: its last millisecond.
        assert_eq!(parse("2025-06-01"), Some(1_748_822_399_999));
        assert_eq!(parse("2025-06-01T12:00:00"), Some(1_748_779_200_999));
        assert_eq!(parse("2025-06-01 12:00:00"), Some(1_748_779_200_999));
        assert_eq!(parse("2025-06-01 12:00:00Z"), Some(1_748_779_200_999));
        // The whole minute.
        assert_eq!(parse("2025-06-01T12:00"), Some(1_748_779_259_999));
        assert_eq!(parse("2025-06-01 12:00"), Some(1_748_779_259_999));
        assert_eq!(parse("2025-06-01T14:00+02:00"), Some(1_748_779_259_999));
        assert_eq!(parse("2025-06-01 12:00:00.25"), Some(1_748_779_200_250));
        assert_eq!(parse("2025-13-01"), None);
        assert_eq!(parse("2025-06-01T25:00"), None);
        assert_eq!(parse("1969-12-31"), None);
    }
}
