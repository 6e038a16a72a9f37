//! Small words shared by the history commands' output: times and one-line text.

use jiff::Timestamp;

/// A commit time as `log` shows it: RFC 3339 in UTC, to the second (the fraction is dropped).
pub(crate) fn format_time(time_ms: u64) -> String {
    let ms = i64::try_from(time_ms).unwrap_or(i64::MAX);
    match Timestamp::from_millisecond(ms) {
        Ok(t) => t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Err(_) => format!("{time_ms}ms"),
    }
}

/// `s` with control characters (a newline in an actor name or a policy value) escaped, so
/// that one entry stays on its lines and cannot imitate another.
pub(crate) fn one_line(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_times() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(1_748_779_200_123), "2025-06-01T12:00:00Z");
    }
}
