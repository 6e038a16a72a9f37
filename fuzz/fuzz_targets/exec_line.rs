//! `memfs exec` input, split into lines as `exec` splits it, each answered by
//! `protocol::handle_line` on one ephemeral store: a blank line gets no answer, any other
//! exactly one line of JSON with `content` and `is_error`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs::{Dialect, Memfs, protocol};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let memfs = Memfs::ephemeral(Dialect::Spec).expect("an ephemeral store");
    for line in text.lines() {
        let answer = memfs_fuzz::runtime().block_on(protocol::handle_line(&memfs, line));
        let Some(answer) = answer else {
            assert!(line.trim().is_empty());
            continue;
        };
        assert!(!answer.contains('\n'), "{answer}");
        let value: serde_json::Value = serde_json::from_str(&answer).expect("an answer is JSON");
        assert!(value["content"].is_string() && value["is_error"].is_boolean(), "{answer}");
    }
});
