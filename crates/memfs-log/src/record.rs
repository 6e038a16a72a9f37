//! The bytes of a segment: its header and its records (the layout is in the parent module's
//! doc), and the one decision that matters for recovery: is a damaged record a torn tail or
//! corruption?

use std::borrow::Cow;

use super::checksum;
use super::fixed_keys::FixedKeys;

/// The first eight bytes of every segment.
pub(super) const MAGIC: [u8; 8] = *b"memfslog";
/// The format version in every segment's header: 2, records checksummed with XXH3-128 and
/// object paths stored as their ids. A reader refuses any other.
pub(super) const VERSION: u32 = 2;
/// Header flag: this segment supersedes every lower-numbered one.
pub(super) const FLAG_COMPACTED: u32 = 1;
/// Header length in bytes.
pub(super) const HEADER_LEN: u64 = 16;

const CHECKSUM_LEN: usize = checksum::LEN;
/// `len`, `len_check`, `op`, `time`, `path_len`.
const FIXED_LEN: usize = 21;
/// `origin` of a compacted put: its segment and offset.
const ORIGIN_LEN: usize = 16;
/// The smallest record: a delete of the empty path.
const MIN_RECORD_LEN: usize = FIXED_LEN + CHECKSUM_LEN;
/// 9999-12-31T23:59:59.999Z: later times are refused, so a time always converts to a date.
pub(super) const MAX_TIME_MS: u64 = 253_402_300_799_999;

const OP_PUT: u8 = 1;
const OP_DELETE: u8 = 2;
const OP_COMPACTED_PUT: u8 = 3;
/// Op flag: the path is a fixed-width key (`{prefix}{id[0..2]}/{id}`, see `fixed_keys.rs`)
/// stored as the 32 bytes of `id`, and `path_len` is 32. Every such path is stored so.
const OBJECT_PATH: u8 = 0x80;
/// The stored length of an object path under [`OBJECT_PATH`].
const OBJECT_PATH_LEN: usize = 32;

/// A decoded segment header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Header {
    pub(super) compacted: bool,
}

/// The header of a new segment.
pub(super) fn encode_header(compacted: bool) -> [u8; HEADER_LEN as usize] {
    let mut h = [0; HEADER_LEN as usize];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h[12..16].copy_from_slice(&(if compacted { FLAG_COMPACTED } else { 0 }).to_le_bytes());
    h
}

/// Decodes a header; the error says what is wrong with it.
pub(super) fn decode_header(bytes: &[u8]) -> Result<Header, String> {
    if bytes.len() < HEADER_LEN as usize {
        return Err(format!("shorter ({} bytes) than a segment header ({HEADER_LEN} bytes)", bytes.len()));
    }
    if bytes[..8] != MAGIC {
        return Err("not a memfs log segment (bad magic)".into());
    }
    let version = u32_at(bytes, 8);
    if version != VERSION {
        return Err(format!("unsupported log format version {version} (this build reads {VERSION})"));
    }
    let flags = u32_at(bytes, 12);
    if flags & !FLAG_COMPACTED != 0 {
        return Err(format!("unknown segment flags {flags:#x}"));
    }
    Ok(Header { compacted: flags & FLAG_COMPACTED != 0 })
}

/// What a record does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// A put. `origin` is set on a put copied by compaction: the position of the original
    /// put, which names its e_tag, so that a compaction does not change e_tags.
    Put { origin: Option<(u64, u64)> },
    /// A tombstone.
    Delete,
}

/// A checksum-valid record, borrowed from the buffer it was parsed from.
#[derive(Debug)]
pub(super) struct Record<'a> {
    pub(super) kind: Kind,
    pub(super) time_ms: u64,
    /// Borrowed, or spelled out from the 32 bytes of an object path.
    pub(super) path: Cow<'a, str>,
    /// How many bytes the path takes in the record.
    pub(super) path_len: usize,
    /// Where the data starts, from the start of the record.
    pub(super) data_start: usize,
    pub(super) data_len: usize,
    /// The whole record's length.
    pub(super) len: usize,
}

/// The result of parsing at one offset.
#[derive(Debug)]
pub(super) enum Parsed<'a> {
    /// A complete, checksum-valid record.
    Record(Record<'a>),
    /// More bytes are needed to decide: at least this many from the record's start, or (`None`)
    /// everything up to the end of the file. Never returned when the bytes reach the end.
    NeedMore(Option<usize>),
    /// The bytes ended exactly at a record boundary.
    End,
    /// An incomplete or damaged last record (or a zero-filled tail): not written yet, or torn
    /// by a crash. Everything from here to the end of the file is to be ignored.
    Tail,
    /// A damaged record that is not the last: refusing to go on, which would drop it and
    /// everything after it.
    Corrupt(&'static str),
}

/// Parses the record at the start of `avail`; `eof` says whether `avail` reaches the end of
/// the file.
///
/// The rule for damage: a record is torn, not corrupt, only if it is the last thing in the file.
/// A crash tears only the record being appended (or, after a power loss, leaves the unsynced
/// end of the file zero-filled), so damage followed by more data is not a torn write and must
/// not be dropped silently. When the length field itself is damaged, the record's end is
/// unknown: it is still the last record if the bytes up to the end of the file verify as one
/// record under a repaired length, or if they are all zero.
pub(super) fn parse<'a>(avail: &'a [u8], eof: bool, keys: &FixedKeys) -> Parsed<'a> {
    if avail.is_empty() {
        return if eof { Parsed::End } else { Parsed::NeedMore(Some(1)) };
    }
    if avail.len() < 8 {
        return if eof { Parsed::Tail } else { Parsed::NeedMore(Some(8)) };
    }
    let len = u32_at(avail, 0);
    if u32_at(avail, 4) == !len && len as usize >= MIN_RECORD_LEN {
        let len = len as usize;
        if avail.len() < len {
            return if eof { Parsed::Tail } else { Parsed::NeedMore(Some(len)) };
        }
        let record = &avail[..len];
        if checksum(record) == record[len - CHECKSUM_LEN..] {
            return decode(record, keys);
        }
        if avail[len..].iter().any(|&b| b != 0) {
            // Damage before the end of the log is no torn write (a crash only tears the end):
            // it is tampering or a failing disk. Never served: whoever can write the folder
            // would choose the bytes, and dropping the record would drop everything after it.
            return Parsed::Corrupt("a damaged record followed by more data");
        }
        if avail.len() > len && !eof {
            // Followed by zeros so far (filled ahead of the records): is anything after them?
            return Parsed::NeedMore(None);
        }
        return if eof { Parsed::Tail } else { Parsed::NeedMore(Some(len + 1)) };
    }
    if !eof {
        return Parsed::NeedMore(None);
    }
    if avail.iter().all(|&b| b == 0) {
        return Parsed::Tail;
    }
    // A last record whose length field alone is damaged, at the end of the file or followed
    // only by the zeros a writer filled the segment with ahead of its records: the record may
    // end anywhere from its last non-zero byte to 16 bytes later (its checksum's last bytes
    // may be zeros).
    let last_data = avail.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let repaired = (last_data..=avail.len().min(last_data + CHECKSUM_LEN)).any(|rest| {
        (MIN_RECORD_LEN..=u32::MAX as usize).contains(&rest)
            && checksum_with_repaired_len(&avail[..rest]) == avail[rest - CHECKSUM_LEN..rest]
    });
    if repaired {
        return Parsed::Tail;
    }
    Parsed::Corrupt("damaged record length")
}

/// The checksum of `record`: over its bytes before the checksum. Not a MAC: it detects torn
/// writes, so a plain comparison is fine.
fn checksum(record: &[u8]) -> [u8; CHECKSUM_LEN] {
    checksum::of(&[&record[..record.len() - CHECKSUM_LEN]])
}

/// The checksum `record` would have if its length field were intact and said `record.len()`:
/// recognises a last record whose length field alone is damaged.
fn checksum_with_repaired_len(record: &[u8]) -> [u8; CHECKSUM_LEN] {
    let len = record.len() as u32;
    checksum::of(&[&len.to_le_bytes(), &(!len).to_le_bytes(), &record[8..record.len() - CHECKSUM_LEN]])
}

/// Decodes a checksum-valid record. A record that verifies but does not decode was written
/// whole by something that is not this format: corrupt.
fn decode<'a>(record: &'a [u8], keys: &FixedKeys) -> Parsed<'a> {
    let len = record.len();
    let (op, compact) = (record[8] & !OBJECT_PATH, record[8] & OBJECT_PATH != 0);
    let time_ms = u64_at(record, 9);
    let path_len = u32_at(record, 17) as usize;
    let (kind, path_start) = match op {
        OP_PUT => (Kind::Put { origin: None }, FIXED_LEN),
        OP_DELETE => (Kind::Delete, FIXED_LEN),
        OP_COMPACTED_PUT if len >= MIN_RECORD_LEN + ORIGIN_LEN => {
            let origin = (u64_at(record, FIXED_LEN), u64_at(record, FIXED_LEN + 8));
            (Kind::Put { origin: Some(origin) }, FIXED_LEN + ORIGIN_LEN)
        }
        OP_COMPACTED_PUT => return Parsed::Corrupt("compacted put too short for its origin"),
        _ => return Parsed::Corrupt("unknown record op"),
    };
    let body_end = len - CHECKSUM_LEN;
    let Some(path_end) = path_start.checked_add(path_len).filter(|&e| e <= body_end) else {
        return Parsed::Corrupt("path overruns its record");
    };
    let stored = &record[path_start..path_end];
    let path = if compact {
        if !keys.any() {
            return Parsed::Corrupt("a fixed-width key in a log without them");
        }
        if path_len != OBJECT_PATH_LEN {
            return Parsed::Corrupt("an object path that is not 32 bytes");
        }
        let mut spelled = String::with_capacity(75);
        keys.spell(stored, &mut spelled);
        Cow::Owned(spelled)
    } else {
        let Ok(path) = std::str::from_utf8(stored) else {
            return Parsed::Corrupt("path is not UTF-8");
        };
        // One spelling per path, so that a record's length follows from its path.
        if keys.id(path).is_some() {
            return Parsed::Corrupt("an object path not stored as its id");
        }
        Cow::Borrowed(path)
    };
    if kind == Kind::Delete && path_end != body_end {
        return Parsed::Corrupt("delete record carries data");
    }
    if time_ms > MAX_TIME_MS {
        return Parsed::Corrupt("record time out of range");
    }
    Parsed::Record(Record { kind, time_ms, path, path_len, data_start: path_end, data_len: body_end - path_end, len })
}

/// Encodes a record into `buf` (cleared first); returns where its data starts, or `None` if
/// the record would not fit the 32-bit length.
pub(super) fn encode(
    buf: &mut Vec<u8>,
    kind: Kind,
    time_ms: u64,
    path: &str,
    data: &[&[u8]],
    keys: &FixedKeys,
) -> Option<usize> {
    let data_len: usize = data.iter().map(|d| d.len()).sum();
    let origin_len = if matches!(kind, Kind::Put { origin: Some(_) }) { ORIGIN_LEN } else { 0 };
    let id = keys.id(path);
    let stored: &[u8] = match &id {
        Some(id) => id,
        None => path.as_bytes(),
    };
    let len = FIXED_LEN + origin_len + stored.len() + data_len + CHECKSUM_LEN;
    let len32 = u32::try_from(len).ok()?;
    let path_len = u32::try_from(stored.len()).ok()?;
    buf.clear();
    buf.reserve(len);
    buf.extend_from_slice(&len32.to_le_bytes());
    buf.extend_from_slice(&(!len32).to_le_bytes());
    let op = match kind {
        Kind::Put { origin: None } => OP_PUT,
        Kind::Put { origin: Some(_) } => OP_COMPACTED_PUT,
        Kind::Delete => OP_DELETE,
    };
    buf.push(if id.is_some() { op | OBJECT_PATH } else { op });
    buf.extend_from_slice(&time_ms.to_le_bytes());
    buf.extend_from_slice(&path_len.to_le_bytes());
    if let Kind::Put { origin: Some((segment, offset)) } = kind {
        buf.extend_from_slice(&segment.to_le_bytes());
        buf.extend_from_slice(&offset.to_le_bytes());
    }
    buf.extend_from_slice(stored);
    let data_start = buf.len();
    for d in data {
        buf.extend_from_slice(d);
    }
    buf.extend_from_slice(&[0; CHECKSUM_LEN]);
    let checksum = checksum(buf);
    buf[len - CHECKSUM_LEN..].copy_from_slice(&checksum);
    Some(data_start)
}

/// Where the data of a put starts, from the start of its record: after the fixed fields, the
/// origin of a compacted put, and the path.
pub(super) fn data_start(compacted: bool, path_len: usize) -> usize {
    FIXED_LEN + if compacted { ORIGIN_LEN } else { 0 } + path_len
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut a = [0; 4];
    a.copy_from_slice(&b[at..at + 4]);
    u32::from_le_bytes(a)
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> FixedKeys {
        FixedKeys::under("objects/")
    }

    fn put(path: &str, data: &[u8]) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(&mut buf, Kind::Put { origin: None }, 1_700_000_000_000, path, &[data], &keys()).unwrap();
        buf
    }

    fn record(p: Parsed<'_>) -> Record<'_> {
        match p {
            Parsed::Record(r) => r,
            other => panic!("expected a record, got {other:?}"),
        }
    }

    /// The layout of the module doc, byte by byte.
    #[test]
    fn layout() {
        let r = put("head", b"xy");
        let len = 21 + 4 + 2 + 16;
        assert_eq!(r.len(), len);
        assert_eq!(r[..4], (len as u32).to_le_bytes());
        assert_eq!(r[4..8], (!(len as u32)).to_le_bytes());
        assert_eq!(r[8], 1);
        assert_eq!(r[9..17], 1_700_000_000_000u64.to_le_bytes());
        assert_eq!(r[17..21], 4u32.to_le_bytes());
        assert_eq!(&r[21..25], b"head");
        assert_eq!(&r[25..27], b"xy");
        assert_eq!(r[27..], twox_hash::XxHash3_128::oneshot(&r[..27]).to_le_bytes());
        assert_eq!(encode_header(true), *b"memfslog\x02\0\0\0\x01\0\0\0");
    }

    #[test]
    fn round_trip() {
        let mut buf = Vec::new();
        let start =
            encode(&mut buf, Kind::Put { origin: Some((3, 99)) }, 5, "objects/ab/cd", &[b"he", b"llo"], &keys());
        let r = record(parse(&buf, false, &keys()));
        assert_eq!(
            (r.kind, r.time_ms, &*r.path, r.len),
            (Kind::Put { origin: Some((3, 99)) }, 5, "objects/ab/cd", buf.len())
        );
        assert_eq!(Some(r.data_start), start);
        assert_eq!(&buf[r.data_start..r.data_start + r.data_len], b"hello");
        encode(&mut buf, Kind::Delete, 6, "x", &[], &keys()).unwrap();
        assert_eq!(record(parse(&buf, true, &keys())).kind, Kind::Delete);
        assert!(matches!(parse(&[], true, &keys()), Parsed::End));
        assert!(matches!(parse(&[], false, &keys()), Parsed::NeedMore(Some(1))));
    }

    /// `r` with its checksum computed again (after a change to its bytes).
    fn checksummed(mut r: Vec<u8>) -> Vec<u8> {
        let n = r.len() - CHECKSUM_LEN;
        let c = checksum::of(&[&r[..n]]);
        r[n..].copy_from_slice(&c);
        r
    }

    #[test]
    fn torn_or_corrupt() {
        let a = put("a", b"one");
        let b = put("b", b"two");
        // Any prefix of the last record is a tail at the end of the file, and needs more bytes
        // before it.
        for cut in 1..b.len() {
            assert!(matches!(parse(&b[..cut], true, &keys()), Parsed::Tail), "cut {cut}");
            assert!(matches!(parse(&b[..cut], false, &keys()), Parsed::NeedMore(_)), "cut {cut}");
        }
        // Any flipped byte: torn when last; followed by more data, corrupt (never served).
        for at in 0..a.len() {
            let mut last = a.clone();
            last[at] ^= 0x40;
            assert!(matches!(parse(&last, true, &keys()), Parsed::Tail), "last, byte {at}");
            let mut both = last.clone();
            both.extend_from_slice(&b);
            let expected = if at < 8 { "damaged record length" } else { "a damaged record followed by more data" };
            assert!(matches!(parse(&both, true, &keys()), Parsed::Corrupt(r) if r == expected), "middle, byte {at}");
            assert!(matches!(parse(&both, false, &keys()), Parsed::Corrupt(_) | Parsed::NeedMore(_)), "middle {at}");
        }
        // A zero-filled tail (a power loss after the size grew) is a tail; other junk is not.
        assert!(matches!(parse(&[0; 100], true, &keys()), Parsed::Tail));
        assert!(matches!(parse(&[1; 100], true, &keys()), Parsed::Corrupt(_)));
    }

    /// An object path takes its 32 id bytes (op flag 0x80), and only so.
    #[test]
    fn object_paths_take_32_bytes() {
        let id = "ab".repeat(32);
        let path = format!("objects/ab/{id}");
        let mut buf = Vec::new();
        let start = encode(&mut buf, Kind::Put { origin: None }, 5, &path, &[b"sealed"], &keys()).unwrap();
        assert_eq!((buf[8], u32_at(&buf, 17), start), (OP_PUT | OBJECT_PATH, 32, 21 + 32));
        assert_eq!(buf[21..53], [0xab; 32]);
        assert_eq!(buf.len(), 21 + 32 + 6 + 16);
        let r = record(parse(&buf, true, &keys()));
        assert_eq!((&*r.path, r.path_len, r.data_start, r.data_len), (path.as_str(), 32, 53, 6));
        assert_eq!(keys().stored_len(&path), 32);
        // The path spelled out: one spelling per path. (Encoded under a look-alike of the same
        // length, which is spelled out, then given the object path's bytes.)
        let mut spelled = Vec::new();
        encode(&mut spelled, Kind::Put { origin: None }, 5, &path.to_uppercase(), &[b"sealed"], &keys()).unwrap();
        assert_eq!((spelled[8], u32_at(&spelled, 17) as usize), (OP_PUT, path.len()));
        spelled[21..21 + path.len()].copy_from_slice(path.as_bytes());
        let spelled = checksummed(spelled);
        assert!(matches!(parse(&spelled, true, &keys()), Parsed::Corrupt("an object path not stored as its id")));
        // The flag on a path of another length.
        let mut short = put("head", b"xy");
        short[8] |= OBJECT_PATH;
        let short = checksummed(short);
        assert!(matches!(parse(&short, true, &keys()), Parsed::Corrupt("an object path that is not 32 bytes")));
        // The flag in a log that stores no path so.
        let flagged = record(parse(&buf, true, &keys())).len;
        assert_eq!(flagged, buf.len());
        let none = FixedKeys::default();
        assert!(matches!(parse(&buf, true, &none), Parsed::Corrupt("a fixed-width key in a log without them")));
        // Other paths, and uppercase look-alikes, are spelled out.
        assert_eq!(keys().stored_len("head"), 4);
        assert_eq!(keys().stored_len(&path.to_uppercase()), 75);
    }

    #[test]
    fn headers() {
        assert_eq!(decode_header(&encode_header(false)), Ok(Header { compacted: false }));
        assert_eq!(decode_header(&encode_header(true)), Ok(Header { compacted: true }));
        assert_eq!(VERSION, 2);
        let mut v1 = encode_header(false);
        v1[8] = 1;
        assert_eq!(decode_header(&v1), Err("unsupported log format version 1 (this build reads 2)".into()));
        assert!(decode_header(b"memfslog").unwrap_err().contains("shorter"));
        assert!(decode_header(&[0; 16]).unwrap_err().contains("magic"));
        let mut h = encode_header(false);
        h[8] = 3;
        assert!(decode_header(&h).unwrap_err().contains("version 3"));
        h = encode_header(false);
        h[12] = 4;
        assert!(decode_header(&h).unwrap_err().contains("flags 0x4"));
    }
}
