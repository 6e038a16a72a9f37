//! A sealed segment's index file, `log/<n>.index`: the segment's records sorted by path, so
//! that opening the log reads one small header per sealed segment instead of every record,
//! and a lookup reads one block.
//!
//! The layout is in the parent module's doc. An index is a cache of what its segment says:
//! one that is missing, fails a checksum, or does not match its segment (length, last
//! checksum) is not used; the segment is read instead, and the next writer writes the index
//! again. An entry is checked once more when its record is read (path, kind, length).

use std::fs::{File, OpenOptions};
use std::path::{Path as FsPath, PathBuf};

use std::time::{Duration, UNIX_EPOCH};

use object_store::ObjectMeta;
use object_store::path::Path;

use integer_encoding::VarInt;

use super::checksum;
use super::error::LogError;
use super::fixed_keys::FixedKeys;
use super::record::{self, HEADER_LEN};
use super::segment;
use crate::local_fs::{self, OpenError};

mod writer;
pub(super) use writer::write;

const MAGIC: [u8; 8] = *b"memfsidx";
/// The header's length; blocks follow it.
const TABLE_HEADER_LEN: usize = 128;
const CHECKSUM_LEN: usize = checksum::LEN;
/// A block holds whole entries and its checksum, in at most this many bytes (unless one entry
/// is larger: then that entry is a block of its own). A lookup reads one block and decodes its
/// entries until it meets the key (a block holds about 38; blocks of 4 KiB made that a quarter
/// of a cold create's CPU in a store of 20,000 files); readers take any length.
const BLOCK_LEN: usize = 1024;
/// Bloom filter: bits per entry and probes. About 0.8% false positives.
const BLOOM_BITS_PER_ENTRY: u64 = 10;
const BLOOM_PROBES: u64 = 7;

/// Entry tag: the low bits are the record's op, bit 7 says the path is an object path stored
/// as its 32 id bytes.
const TAG_PUT: u8 = 1;
const TAG_DELETE: u8 = 2;
const TAG_COMPACTED_PUT: u8 = 3;
const TAG_OBJECT_PATH: u8 = 0x80;

/// The index version: 3, XXH3-128 checksums and bloom hash, entries in the compact form (a put
/// of an object path by the first [`PREFIX_LEN`] bytes of its id, numbers as varints). An
/// index file of any other version is not used.
const VERSION: u32 = 3;
/// How many of an object id's bytes an entry of a put keeps: enough to tell the ids of one
/// segment apart, and a hit is confirmed against the record, which holds the whole path.
const PREFIX_LEN: usize = 16;

/// Whether a lookup confirms a hit on an entry's id prefix against the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Confirm {
    /// Read the record's stored id: the answer is final (existence, metadata, replacing).
    Yes,
    /// The caller reads the whole record next and checks its path, distrusting the index on a
    /// mismatch: one read less on the way to an object's bytes.
    ByCaller,
}

/// What an index says of one path in its segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Slot {
    /// The path's newest record in the segment is a put.
    Live(Entry),
    /// Its newest record is a delete: older segments are not to be asked.
    Deleted,
}

/// Where a live path's data is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) segment: u64,
    /// Of the record, in the segment file.
    pub(super) offset: u64,
    /// The whole record's length.
    pub(super) record_len: u64,
    pub(super) time_ms: u64,
    /// The position of the put that wrote this version: its e_tag. `Some` for a put copied by
    /// compaction (op 3), whose record carries it.
    pub(super) origin: Option<(u64, u64)>,
    /// How many bytes the path takes in the record (32 for an object path), which with the op
    /// fixes where the data starts.
    pub(super) path_len: u64,
}

impl Entry {
    /// Where the data starts, from the start of the record.
    pub(super) fn data_start(&self) -> u64 {
        record::data_start(self.origin.is_some(), self.path_len as usize) as u64
    }

    pub(super) fn size(&self) -> u64 {
        self.record_len.saturating_sub(self.data_start() + CHECKSUM_LEN as u64)
    }

    pub(super) fn e_tag(&self) -> String {
        let (segment, offset) = self.origin.unwrap_or((self.segment, self.offset));
        format!("{segment}:{offset}")
    }

    pub(super) fn meta(&self, location: &Path) -> ObjectMeta {
        ObjectMeta {
            location: location.clone(),
            // In range: record times are at most MAX_TIME_MS. The conversion needs chrono's
            // `std` feature, which object_store turns on (`clock`).
            last_modified: (UNIX_EPOCH + Duration::from_millis(self.time_ms)).into(),
            size: self.size(),
            e_tag: Some(self.e_tag()),
            version: None,
        }
    }
}

/// What a table header names besides its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Seal {
    pub(super) segment: u64,
    /// How much of the segment the table describes, from its start: all of a sealed segment,
    /// the compacted part of a compacted segment appended to since.
    pub(super) covered_len: u64,
    /// The 16 bytes before `covered_len` (the last covered record's checksum), or zeros if it
    /// covers no record: a segment replaced by another of the same length does not match.
    pub(super) last_checksum: [u8; CHECKSUM_LEN],
    /// The dead bytes of the log (replaced and deleted records, tombstones) from its base
    /// through the end of this segment.
    pub(super) dead: u64,
}

impl Seal {
    /// The seal of `file` (segment `segment`, of `len` bytes) as it is now.
    pub(super) fn of(file: &File, file_path: &FsPath, segment: u64, len: u64, dead: u64) -> Result<Seal, LogError> {
        let mut last_checksum = [0; CHECKSUM_LEN];
        if len > HEADER_LEN {
            let read = segment::read_full_at(file, &mut last_checksum, len - CHECKSUM_LEN as u64)
                .map_err(LogError::io("read", file_path))?;
            if read < CHECKSUM_LEN {
                return Err(LogError::Corrupt { file: file_path.into(), offset: len, reason: "shorter than indexed" });
            }
        }
        Ok(Seal { segment, covered_len: len, last_checksum, dead })
    }
}

/// An open index file. The header is read when it is opened; the bloom filter and the block
/// directory when it is first asked about a path.
pub(super) struct Table {
    file: File,
    path: PathBuf,
    pub(super) seal: Seal,
    meta_offset: u64,
    meta_len: u64,
    bloom_words: u64,
    blocks: u64,
    meta_checksum: [u8; CHECKSUM_LEN],
    meta: Option<Meta>,
    /// Which paths the log stores as 32 bytes (`fixed_keys.rs`).
    keys: FixedKeys,
}

struct Meta {
    bloom: Vec<u64>,
    /// Each block's offset, length (without its checksum) and first path (or the shortest
    /// start of it that sorts after the block before: readers only compare keys against it).
    dir: Vec<BlockRef>,
}

struct BlockRef {
    offset: u64,
    len: u32,
    first: String,
}

/// The index file of segment `n`.
pub(super) fn path(log_dir: &FsPath, n: u64) -> PathBuf {
    log_dir.join(format!("{n:016x}.index"))
}

impl Table {
    /// Segment `n`'s index, if it has one that it can use: its header intact, naming `n`, and
    /// covering a prefix of the segment (`file`, of `len` bytes) that ends in the 16 bytes it
    /// names. `None`: there is none, or it is not to be used; the caller reads the segment.
    /// Records after the prefix are the caller's to read.
    pub(super) fn open(
        log_dir: &FsPath,
        n: u64,
        keys: &FixedKeys,
        file: &File,
        file_path: &FsPath,
        len: u64,
    ) -> Option<Table> {
        let table = Table::read(log_dir, n, keys)?;
        let covered = table.seal.covered_len;
        if table.seal.segment != n || covered < HEADER_LEN || covered > len {
            return None;
        }
        let here = Seal::of(file, file_path, n, covered, table.seal.dead).ok()?;
        (here == table.seal).then_some(table)
    }

    /// Segment `n`'s index file, if its header is intact (not checked against the segment).
    fn read(log_dir: &FsPath, n: u64, keys: &FixedKeys) -> Option<Table> {
        let path = path(log_dir, n);
        let file = match local_fs::open_file(&path, OpenOptions::new().read(true)) {
            Ok(f) => f,
            Err(OpenError::Io(_) | OpenError::Unsafe(_)) => return None,
        };
        let mut h = [0; TABLE_HEADER_LEN];
        if segment::read_full_at(&file, &mut h, 0).ok()? < TABLE_HEADER_LEN {
            return None;
        }
        if h[..8] != MAGIC || u32_at(&h, 8) != VERSION || u32_at(&h, 12) != 0 {
            return None;
        }
        if checksum::of_segment(0, &h[..TABLE_HEADER_LEN - CHECKSUM_LEN]) != h[TABLE_HEADER_LEN - CHECKSUM_LEN..] {
            return None;
        }
        let seal = Seal {
            segment: u64_at(&h, 16),
            covered_len: u64_at(&h, 24),
            last_checksum: h[32..48].try_into().ok()?,
            dead: u64_at(&h, 56),
        };
        Some(Table {
            file,
            path,
            seal,
            meta_offset: u64_at(&h, 64),
            meta_len: u64_at(&h, 72),
            bloom_words: u64_at(&h, 80),
            blocks: u64_at(&h, 88),
            meta_checksum: h[96..112].try_into().ok()?,
            meta: None,
            keys: keys.clone(),
        })
    }

    fn bad(&self, reason: &'static str) -> LogError {
        LogError::BadIndex { file: self.path.clone(), reason }
    }

    fn meta(&mut self) -> Result<&Meta, LogError> {
        if self.meta.is_none() {
            let meta = self.load_meta()?;
            self.meta = Some(meta);
        }
        Ok(self.meta.as_ref().expect("just loaded"))
    }

    fn load_meta(&self) -> Result<Meta, LogError> {
        // Bounded by what a segment can hold, so a damaged length cannot ask for more.
        if self.meta_len > self.seal.covered_len.saturating_mul(4).max(1 << 20) {
            return Err(self.bad("index metadata larger than its segment allows"));
        }
        let mut buf = vec![0; self.meta_len as usize];
        let read =
            segment::read_full_at(&self.file, &mut buf, self.meta_offset).map_err(LogError::io("read", &self.path))?;
        if read < buf.len() || checksum::of_segment(self.seal.segment, &buf) != self.meta_checksum {
            return Err(self.bad("index metadata fails its checksum"));
        }
        let bloom_len = usize::try_from(self.bloom_words.saturating_mul(8)).unwrap_or(usize::MAX);
        if bloom_len > buf.len() || self.bloom_words == 0 {
            return Err(self.bad("index bloom filter overruns its metadata"));
        }
        let bloom =
            buf[..bloom_len].chunks_exact(8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes"))).collect();
        let mut r = Reader { b: &buf, at: bloom_len, last_time: 0 };
        let mut dir = Vec::new();
        for _ in 0..self.blocks {
            let offset = r.u64().ok_or_else(|| self.bad("index directory cut short"))?;
            let len = r.u32().ok_or_else(|| self.bad("index directory cut short"))?;
            let first = r.str().ok_or_else(|| self.bad("index directory cut short"))?;
            dir.push(BlockRef { offset, len, first: first.to_owned() });
        }
        if r.at != buf.len() || dir.windows(2).any(|w| w[0].first >= w[1].first) {
            return Err(self.bad("index directory out of order"));
        }
        Ok(Meta { bloom, dir })
    }

    /// What this segment says of `location`: `None` if it has no record of it. `file`: the
    /// segment, where an entry's record confirms the whole path. `confirm`: whether a hit on
    /// an entry's id prefix is confirmed there (one read of the record's id);
    /// without it, the caller must read the record and check its path itself, as
    /// [`State::get`](super::state::State::get) does before it answers.
    pub(super) fn get(&mut self, location: &Key<'_>, file: &File, confirm: Confirm) -> Result<Option<Slot>, LogError> {
        let segment = self.seal.segment;
        let meta = self.meta()?;
        if !bloom_contains(&meta.bloom, location) {
            return Ok(None);
        }
        let key = location.path.as_ref();
        // The last block whose first path is at most the key.
        let i = meta.dir.partition_point(|b| b.first.as_str() <= key);
        let Some(i) = i.checked_sub(1) else { return Ok(None) };
        let (offset, len) = (meta.dir[i].offset, meta.dir[i].len);
        let body = self.read_block(offset, len)?;
        // Compared as stored: an object path by its id bytes, without spelling out each entry.
        let id = location.id(&self.keys);
        let mut r = Reader::new(&body);
        while r.at < body.len() {
            let (name, raw) = r.entry().ok_or_else(|| self.bad("index block entry cut short"))?;
            let hit = match (name, &id) {
                // As arrays: compared inline, not by a `memcmp` call per entry.
                (Name::Object(stored), Some(id)) => <[u8; 32]>::try_from(stored).is_ok_and(|s| s == *id),
                // Another id of the segment may share the prefix: the record says whose it is,
                // read here unless the caller reads it anyway and the next entry does not
                // share the prefix too.
                (Name::Prefix(stored), Some(id)) if stored == &id[..PREFIX_LEN] => {
                    let shared = || match r.clone().entry() {
                        Some((Name::Prefix(next) | Name::Object(next), _)) => next.get(..PREFIX_LEN) == Some(stored),
                        _ => false,
                    };
                    match confirm {
                        Confirm::ByCaller if !shared() => true,
                        _ => self.record_id(file, &raw, stored)? == *id,
                    }
                }
                (Name::Plain(stored), None) => stored == key,
                _ => false,
            };
            // The whole block is read, though entries are in path order: a block forged out of
            // order must not turn a stored path into a miss (the attack tests swap two).
            if hit {
                return Ok(Some(raw.into_slot(segment, key, &self.keys)));
            }
        }
        Ok(None)
    }

    /// Calls `visit` with each entry from the first path at least `from`, in order, until it
    /// returns `false`. Every path it is given parses as an `object_store` path.
    pub(super) fn scan_from(
        &mut self,
        from: &str,
        file: &File,
        mut visit: impl FnMut(&str, Slot) -> Result<bool, LogError>,
    ) -> Result<(), LogError> {
        let segment = self.seal.segment;
        let meta = self.meta()?;
        let start = meta.dir.partition_point(|b| b.first.as_str() <= from).saturating_sub(1);
        let blocks: Vec<(u64, u32)> = meta.dir[start..].iter().map(|b| (b.offset, b.len)).collect();
        let mut name = String::new();
        let mut last = String::new();
        for (offset, len) in blocks {
            let body = self.read_block(offset, len)?;
            let mut r = Reader::new(&body);
            let mut first = true;
            while r.at < body.len() {
                let (stored, raw) = r.entry().ok_or_else(|| self.bad("index block entry cut short"))?;
                match stored {
                    Name::Object(_) | Name::Prefix(_) if !self.keys.any() => {
                        return Err(self.bad("a fixed-width key in a log without them"));
                    }
                    Name::Object(id) => self.keys.spell(id, &mut name),
                    Name::Prefix(prefix) => self.keys.spell(&self.record_id(file, &raw, prefix)?, &mut name),
                    // Spelled out in the file: checked as a path once (an object path spelled
                    // from its id is one).
                    Name::Plain(s) if Path::parse(s).is_err() => return Err(self.bad("not an object_store path")),
                    Name::Plain(s) => {
                        name.clear();
                        name.push_str(s);
                    }
                }
                if !first && last >= name {
                    return Err(self.bad("index block out of order"));
                }
                first = false;
                std::mem::swap(&mut last, &mut name);
                if last.as_str() < from {
                    continue;
                }
                if !visit(&last, raw.into_slot(segment, &last, &self.keys))? {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// The object id of the record an entry names by a prefix (`raw`, whose id starts with
    /// `prefix`): the entry keeps part of the id, its record all of it. A record that cannot be
    /// read, or whose id does not start with the prefix, is an error (the index is damaged or
    /// forged, and set aside), never a miss.
    fn record_id(&self, file: &File, raw: &RawSlot, prefix: &[u8]) -> Result<[u8; 32], LogError> {
        let RawSlot::Live { offset, origin, .. } = raw else {
            return Err(self.bad("a compact index entry of a delete"));
        };
        let at = offset.saturating_add((record::data_start(origin.is_some(), 32) - 32) as u64);
        let mut id = [0; 32];
        if !matches!(segment::read_full_at(file, &mut id, at), Ok(read) if read == id.len()) {
            return Err(self.bad("an indexed record cannot be read"));
        }
        if id[..PREFIX_LEN] != *prefix {
            return Err(self.bad("an index entry names another record"));
        }
        Ok(id)
    }

    /// Reads one block and checks it; returns its entries' bytes.
    fn read_block(&self, offset: u64, len: u32) -> Result<Vec<u8>, LogError> {
        let mut buf = vec![0; len as usize + CHECKSUM_LEN];
        let read = segment::read_full_at(&self.file, &mut buf, offset).map_err(LogError::io("read", &self.path))?;
        let body = len as usize;
        if read < buf.len() || checksum::of_segment(self.seal.segment, &buf[..body]) != buf[body..] {
            return Err(self.bad("index block fails its checksum"));
        }
        buf.truncate(body);
        Ok(buf)
    }
}

/// An entry's path as a block stores it.
enum Name<'a> {
    /// A fixed-width key, `{prefix}{id[0..2]}/{id}`, by the bytes of `id`.
    Object(&'a [u8]),
    /// A fixed-width key by the first [`PREFIX_LEN`] bytes of its id (a put).
    Prefix(&'a [u8]),
    Plain(&'a str),
}

/// An entry as a block stores it.
enum RawSlot {
    Live { offset: u64, record_len: u64, time_ms: u64, origin: Option<(u64, u64)> },
    Deleted,
}

impl RawSlot {
    fn into_slot(self, segment: u64, path: &str, keys: &FixedKeys) -> Slot {
        match self {
            RawSlot::Live { offset, record_len, time_ms, origin } => {
                let path_len = keys.stored_len(path) as u64;
                Slot::Live(Entry { segment, offset, record_len, time_ms, origin, path_len })
            }
            RawSlot::Deleted => Slot::Deleted,
        }
    }
}

/// A path to look up, with its bloom filter hash computed once for all the segments asked, and
/// only if one with a table is asked.
pub(super) struct Key<'a> {
    path: &'a Path,
    hash: std::cell::OnceCell<(u64, u64)>,
    /// The id bytes of an object path, decoded once for every segment looked in.
    id: std::cell::OnceCell<Option<[u8; 32]>>,
}

impl<'a> Key<'a> {
    /// The hash is XXH3-128 ([`checksum::of_path`]); the probes are double hashing over its two
    /// 64-bit halves. Written here rather than taken from a crate because the bits are stored:
    /// the hash and the probes must never change with a dependency's version.
    pub(super) fn new(path: &'a Path) -> Key<'a> {
        Key { path, hash: Default::default(), id: Default::default() }
    }

    /// For a fixed-width key, its id bytes (what index entries store). `keys` are the log's,
    /// the same for every segment asked.
    fn id(&self, keys: &FixedKeys) -> Option<[u8; 32]> {
        *self.id.get_or_init(|| keys.id(self.path.as_ref()))
    }

    pub(super) fn path(&self) -> &'a Path {
        self.path
    }

    fn probes(&self, bits: u64) -> impl Iterator<Item = u64> {
        let hash = *self.hash.get_or_init(|| checksum::of_path(self.path.as_ref()));
        probes(hash, bits)
    }
}

/// The bits a path with hash `(h1, h2)` sets in a filter of `bits` bits.
fn probes((h1, h2): (u64, u64), bits: u64) -> impl Iterator<Item = u64> {
    let h2 = h2 | 1;
    (0..BLOOM_PROBES).map(move |i| h1.wrapping_add(i.wrapping_mul(h2)) % bits)
}

fn bloom_contains(bloom: &[u64], key: &Key<'_>) -> bool {
    key.probes(bloom.len() as u64 * 64).all(|bit| bloom[(bit / 64) as usize] & (1 << (bit % 64)) != 0)
}

/// Reads entries and directory items; `None` when the bytes end early.
#[derive(Clone)]
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
    /// The time of the previous entry read, which an entry's is relative to.
    last_time: u64,
}

impl<'a> Reader<'a> {
    fn new(b: &'a [u8]) -> Reader<'a> {
        Reader { b, at: 0, last_time: 0 }
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len())?;
        let out = &self.b[self.at..end];
        self.at = end;
        Some(out)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_le_bytes(b.try_into().expect("2 bytes")))
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
    }

    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
    }

    fn str(&mut self) -> Option<&'a str> {
        let len = self.u16()? as usize;
        std::str::from_utf8(self.take(len)?).ok()
    }

    fn varint(&mut self) -> Option<u64> {
        let (n, len) = u64::decode_var(self.b.get(self.at..)?)?;
        self.at += len;
        Some(n)
    }

    /// One block entry: its path, and what it says.
    fn entry(&mut self) -> Option<(Name<'a>, RawSlot)> {
        let tag = self.take(1)?[0];
        let op = tag & !TAG_OBJECT_PATH;
        let name = match (tag & TAG_OBJECT_PATH != 0, op != TAG_DELETE) {
            (true, true) => Name::Prefix(self.take(PREFIX_LEN)?),
            (true, false) => Name::Object(self.take(32)?),
            (false, _) => Name::Plain(self.str()?),
        };
        let origin = match op {
            TAG_DELETE => return Some((name, RawSlot::Deleted)),
            TAG_PUT => false,
            TAG_COMPACTED_PUT => true,
            _ => return None,
        };
        let (offset, record_len) = (self.varint()?, self.varint()?);
        let (delta, len) = i64::decode_var(self.b.get(self.at..)?)?;
        self.at += len;
        let time_ms = self.last_time.wrapping_add(delta as u64);
        self.last_time = time_ms;
        let origin = if origin { Some((self.varint()?, self.varint()?)) } else { None };
        Some((name, RawSlot::Live { offset, record_len, time_ms, origin }))
    }
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(offset: u64) -> Slot {
        Slot::Live(Entry { segment: 3, offset, record_len: 100, time_ms: 7, origin: None, path_len: 0 })
    }

    #[test]
    fn object_paths_round_trip_and_others_stay_strings() {
        let id = "ab".to_owned() + &"0123456789abcdef".repeat(4)[2..];
        let name = format!("objects/ab/{id}");
        assert_eq!(name.len(), 75);
        let keys = FixedKeys::under("objects/");
        let bytes = keys.id(&name).expect("an object path");
        let mut back = String::new();
        keys.spell(&bytes, &mut back);
        assert_eq!(back, name);
        assert_eq!(keys.id(&format!("objects/cd/{id}")), None);
        assert_eq!(keys.id("objects/ab/AB"), None);
        assert_eq!(keys.id("head"), None);
    }

    /// Plain paths: no entry needs its record (object paths are tested through the store,
    /// `tests/store/log_index.rs`).
    #[test]
    fn a_table_finds_every_entry_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let segment = File::create(dir.path().join("segment")).unwrap();
        let names: Vec<Path> = (0..3000).map(|i| Path::from(format!("p/{i:05}"))).collect();
        // Times going up and down: stored as differences.
        let slots: Vec<Slot> = (0..3000u64)
            .map(|i| {
                let time_ms = 1_764_000_000_000 + i * 1_000;
                let e = Entry { segment: 3, offset: i * 300, record_len: 100, time_ms, origin: None, path_len: 0 };
                match i {
                    _ if i % 7 == 0 => Slot::Deleted,
                    _ if i % 5 == 0 => Slot::Live(Entry { time_ms: 1_764_000_000_000 - i, origin: Some((1, i)), ..e }),
                    _ => Slot::Live(e),
                }
            })
            .collect();
        let seal = Seal { segment: 3, covered_len: 1000, last_checksum: [9; 16], dead: 42 };
        let entries = names.iter().zip(&slots).map(|(n, s)| Ok((n.as_ref(), s)));
        let mut table = write(dir.path(), seal, &FixedKeys::default(), names.len(), entries).unwrap().expect("written");
        assert!(table.blocks > 10, "{} blocks", table.blocks);
        for (i, (n, s)) in names.iter().zip(&slots).enumerate() {
            let got = table.get(&Key::new(n), &segment, Confirm::Yes).unwrap();
            let want = match s {
                Slot::Live(e) => Slot::Live(Entry { path_len: n.as_ref().len() as u64, ..e.clone() }),
                Slot::Deleted => Slot::Deleted,
            };
            assert_eq!(got, Some(want), "entry {i}");
        }
        // Between two entries (past one, before the next, in the same block or where the next
        // block starts): a miss, whether the scan stops early or the directory sends it on.
        for n in &names {
            let between = Path::from(format!("{n}x"));
            assert_eq!(table.get(&Key::new(&between), &segment, Confirm::Yes).unwrap(), None, "{between}");
        }
        assert_eq!(table.get(&Key::new(&Path::from("a")), &segment, Confirm::Yes).unwrap(), None);
        let mut seen = Vec::new();
        table
            .scan_from("p/02990", &segment, |n, slot| {
                seen.push((n.to_owned(), slot));
                Ok(true)
            })
            .unwrap();
        let want = names[2990..].iter().zip(&slots[2990..]).map(|(n, s)| match s {
            Slot::Live(e) => (n.to_string(), Slot::Live(Entry { path_len: n.as_ref().len() as u64, ..e.clone() })),
            Slot::Deleted => (n.to_string(), Slot::Deleted),
        });
        assert_eq!(seen, want.collect::<Vec<_>>());
        assert_eq!(Table::read(dir.path(), 3, &FixedKeys::default()).map(|t| t.seal), Some(seal));
    }

    #[test]
    fn a_damaged_block_is_an_error_not_an_answer() {
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<Path> = (0..500).map(|i| Path::from(format!("p/{i:05}"))).collect();
        let slot = live(1);
        let seal = Seal { segment: 3, covered_len: 1000, last_checksum: [0; 16], dead: 0 };
        write(dir.path(), seal, &FixedKeys::default(), names.len(), names.iter().map(|n| Ok((n.as_ref(), &slot))))
            .unwrap()
            .unwrap();
        let file = path(dir.path(), 3);
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[TABLE_HEADER_LEN + 10] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        let mut table = Table::read(dir.path(), 3, &FixedKeys::default()).unwrap();
        let segment = File::create(dir.path().join("segment")).unwrap();
        assert!(matches!(table.get(&Key::new(&names[0]), &segment, Confirm::Yes), Err(LogError::BadIndex { .. })));
        // A damaged header: not used at all.
        bytes[20] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        assert!(Table::read(dir.path(), 3, &FixedKeys::default()).is_none());
    }

    /// An index file of another version, however intact, is not used (the segment is read).
    #[test]
    fn an_index_of_another_version_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let slot = live(1);
        let seal = Seal { segment: 3, covered_len: 1000, last_checksum: [0; 16], dead: 0 };
        write(dir.path(), seal, &FixedKeys::default(), 1, [Ok(("p/1", &slot))].into_iter()).unwrap().unwrap();
        let file = path(dir.path(), 3);
        let mut bytes = std::fs::read(&file).unwrap();
        assert_eq!(u32_at(&bytes, 8), VERSION);
        for version in [1, 2, 4] {
            bytes[8..12].copy_from_slice(&u32::to_le_bytes(version));
            let sum = checksum::of_segment(0, &bytes[..TABLE_HEADER_LEN - CHECKSUM_LEN]);
            bytes[TABLE_HEADER_LEN - CHECKSUM_LEN..TABLE_HEADER_LEN].copy_from_slice(&sum);
            std::fs::write(&file, &bytes).unwrap();
            assert!(Table::read(dir.path(), 3, &FixedKeys::default()).is_none(), "version {version}");
        }
    }
}
