//! Helpers shared by the modules.

/// Asserts two texts are equal, printing both in full (escaped) on mismatch.
#[track_caller]
pub(crate) fn assert_text(what: &str, actual: &str, expected: &str) {
    assert!(
        actual == expected,
        "{what}: text mismatch\nexpected: \"{}\"\n  actual: \"{}\"\n",
        expected.escape_debug(),
        actual.escape_debug()
    );
}

/// Process output as text.
pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 output")
}
