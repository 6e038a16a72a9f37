//! `MemoryPath::parse` on arbitrary UTF-8: whatever it accepts is inside `/memories`, made of
//! safe components, and normalises to a fixed point.
//!
//! Each input is parsed as sent and behind `/memories`: without a sanitizer, libFuzzer does
//! not see string comparisons, so it would hardly ever guess the prefix by itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs_core::{MAX_NAME_BYTES, MAX_PATH_BYTES, MemoryPath, Name};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else { return };
    check(input);
    check(&format!("/memories{input}"));
});

fn check(input: &str) {
    let Ok(path) = MemoryPath::parse(input) else { return };

    assert!(input.len() <= MAX_PATH_BYTES);
    assert_eq!(path.as_sent(), input);
    let normalized = path.normalized();
    assert!(normalized == "/memories" || normalized.starts_with("/memories/"), "{input:?} -> {normalized:?}");
    assert_eq!(path.is_root(), path.components().is_empty());
    for c in path.components() {
        let s = c.as_str();
        assert!(!s.is_empty() && s != "." && s != "..", "{input:?}: component {s:?}");
        assert!(!s.contains(['/', '\\']) && !s.chars().any(char::is_control), "{input:?}: component {s:?}");
        assert!(s.len() <= MAX_NAME_BYTES, "{input:?}: component of {} bytes", s.len());
        assert_eq!(Name::parse(s).as_ref(), Ok(c), "{input:?}: Name::parse disagrees on {s:?}");
    }
    // The canonical spelling parses back to the same components (normalisation is idempotent).
    let again = MemoryPath::parse(&normalized).unwrap_or_else(|e| panic!("{input:?} -> {normalized:?}: {e}"));
    assert_eq!(again.components(), path.components());
    assert_eq!(again.normalized(), normalized);
}
