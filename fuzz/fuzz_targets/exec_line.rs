//! `memfs exec` input, split into lines at `\n` as `exec` splits it (a trailing `\r` dropped),
//! each answered by `protocol::handle_bytes` on one ephemeral store: bytes that are not UTF-8
//! included. A blank line gets no answer, any other exactly one line of JSON with `content`
//! and `is_error`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs::{Dialect, Memfs, protocol};

fuzz_target!(|data: &[u8]| {
    let memfs = Memfs::ephemeral(Dialect::Spec).expect("an ephemeral store");
    for line in data.split(|b| *b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let answer = memfs_fuzz::runtime().block_on(protocol::handle_bytes(&memfs, line));
        let Some(answer) = answer else {
            assert!(std::str::from_utf8(line).is_ok_and(|l| l.trim().is_empty()));
            continue;
        };
        assert!(!answer.contains('\n'), "{answer}");
        let value: serde_json::Value = serde_json::from_str(&answer).expect("an answer is JSON");
        assert!(value["content"].is_string() && value["is_error"].is_boolean(), "{answer}");
    }
});
