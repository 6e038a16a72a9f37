//! Bytes at a record boundary of a segment through `record::parse`, as the end of the file and
//! followed by more. Whatever it accepts encodes back to the same bytes (the checksum aside
//! where more follows), and the end of the file changes only what was undecided.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs_store::fuzzing::{LogParsed, encode_log_record, parse_log_record};

fuzz_target!(|data: &[u8]| {
    let (at_end, more) = (parse_log_record(data, true), parse_log_record(data, false));
    if let LogParsed::Record(r) = &more {
        assert_eq!(at_end, more, "a record needs no knowledge of the end");
        let again = encode_log_record(r).expect("a parsed record fits a record");
        assert_eq!(again[..r.len - 16], data[..r.len - 16]);
    }
    match at_end {
        LogParsed::Record(r) if r.len == data.len() => assert_eq!(encode_log_record(&r).unwrap(), data),
        LogParsed::NeedMore(_) => panic!("more bytes asked for at the end of the file"),
        LogParsed::End => assert!(data.is_empty()),
        _ => {}
    }
    match more {
        LogParsed::NeedMore(Some(n)) => assert!(n > data.len(), "asked for {n} bytes, has {}", data.len()),
        LogParsed::End | LogParsed::Tail => panic!("{more:?} before the end of the file"),
        _ => {}
    }
});
