//! The record parser, for `memfs_store::fuzzing` and `fuzz/`: what `record::parse` decided about some bytes,
//! with the record copied out of the buffer, and `record::encode` to write it back.

use super::fixed_keys::FixedKeys;
use super::record::{self, Kind, Parsed};

/// What [`parse_log_record`] found at the start of the bytes (see `record::Parsed`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogParsed {
    /// A record of `len` bytes.
    Record(LogRecord),
    /// More bytes are needed: at least this many, or (`None`) up to the end of the file.
    NeedMore(Option<usize>),
    /// The bytes end at a record boundary.
    End,
    /// A torn last record.
    Tail,
    /// Corruption, and why.
    Corrupt(&'static str),
}

/// A decoded record, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// `Some(origin)` for a put copied by compaction, `None` for a put; ignored for a delete.
    pub origin: Option<(u64, u64)>,
    /// Whether it is a tombstone.
    pub delete: bool,
    /// The write time, ms since the Unix epoch.
    pub time_ms: u64,
    /// The object's path.
    pub path: String,
    /// The object's bytes (empty for a delete).
    pub data: Vec<u8>,
    /// The whole record's length in bytes.
    pub len: usize,
}

/// `record::parse(bytes, eof)`, owned, in a log whose fixed-width keys are under `prefix`
/// (`None`: a log without them).
pub fn parse_log_record(bytes: &[u8], eof: bool, prefix: Option<&str>) -> LogParsed {
    match record::parse(bytes, eof, &keys(prefix)) {
        Parsed::Record(r) => LogParsed::Record(LogRecord {
            origin: match r.kind {
                Kind::Put { origin } => origin,
                Kind::Delete => None,
            },
            delete: r.kind == Kind::Delete,
            time_ms: r.time_ms,
            path: r.path.into_owned(),
            data: bytes[r.data_start..r.data_start + r.data_len].to_vec(),
            len: r.len,
        }),
        Parsed::NeedMore(n) => LogParsed::NeedMore(n),
        Parsed::End => LogParsed::End,
        Parsed::Tail => LogParsed::Tail,
        Parsed::Corrupt(reason) => LogParsed::Corrupt(reason),
    }
}

/// `record::encode` of `r`, checksum included, in a log whose fixed-width keys are under
/// `prefix`; `None` if it does not fit a record.
pub fn encode_log_record(r: &LogRecord, prefix: Option<&str>) -> Option<Vec<u8>> {
    let kind = if r.delete { Kind::Delete } else { Kind::Put { origin: r.origin } };
    let mut buf = Vec::new();
    record::encode(&mut buf, kind, r.time_ms, &r.path, &[&r.data], &keys(prefix))?;
    Some(buf)
}

fn keys(prefix: Option<&str>) -> FixedKeys {
    prefix.map(FixedKeys::under).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fuzz target's round trip, on a compacted put and a delete.
    #[test]
    fn records_round_trip() {
        let put = LogRecord {
            origin: Some((2, 16)),
            delete: false,
            time_ms: 5,
            path: "objects/ab/cd".into(),
            data: b"sealed".to_vec(),
            len: 21 + 16 + 13 + 6 + 16,
        };
        let delete = LogRecord { origin: None, delete: true, time_ms: 6, path: "x".into(), data: Vec::new(), len: 38 };
        for r in [put, delete] {
            let bytes = encode_log_record(&r, Some("objects/")).unwrap();
            assert_eq!(parse_log_record(&bytes, true, Some("objects/")), LogParsed::Record(r.clone()));
            assert_eq!(parse_log_record(&bytes[..bytes.len() - 1], true, Some("objects/")), LogParsed::Tail);
        }
    }
}
