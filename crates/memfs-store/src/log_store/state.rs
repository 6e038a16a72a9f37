//! One instance's view of the log: the index of live paths, the open segments, how far they
//! have been read, and the operations that move it forward (catching up, appending,
//! compacting).

use std::collections::BTreeMap;
use std::fs::File;
use std::ops::Range;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use object_store::ObjectMeta;
use object_store::path::Path;

use super::error::LogError;
use super::record::{self, HEADER_LEN, Kind, MAX_TIME_MS, Parsed, Record};
use super::report::{CompactReport, StoredBytes};
use super::segment::{self, ScanEnd};

/// How often one catch-up may start over because of compactions elsewhere.
const MAX_REBUILDS: u32 = 8;

/// Synced puts between two looks at whether the log needs an automatic compaction (each look
/// is one `fstat` per segment in use).
const AUTO_COMPACT_EVERY: u32 = 64;

/// Where a live path's data is.
#[derive(Debug, Clone)]
pub(super) struct Entry {
    pub(super) segment: u64,
    /// Of the record, in the segment file.
    offset: u64,
    /// Of the data, in the segment file.
    data_offset: u64,
    pub(super) size: u64,
    time_ms: u64,
    /// The position of the put that wrote this version: its e_tag, kept by compaction.
    origin: (u64, u64),
    record_len: u64,
}

impl Entry {
    pub(super) fn e_tag(&self) -> String {
        format!("{}:{}", self.origin.0, self.origin.1)
    }

    pub(super) fn meta(&self, location: &Path) -> ObjectMeta {
        ObjectMeta {
            location: location.clone(),
            // In range: record times are at most MAX_TIME_MS. The conversion needs chrono's
            // `std` feature, which object_store turns on (`clock`).
            last_modified: (UNIX_EPOCH + Duration::from_millis(self.time_ms)).into(),
            size: self.size,
            e_tag: Some(self.e_tag()),
            version: None,
        }
    }
}

/// The builder knobs.
#[derive(Debug, Clone)]
pub(super) struct Config {
    pub(super) segment_limit: u64,
    pub(super) lazy_prefixes: Vec<String>,
    /// Compact automatically once the dead bytes (replaced and deleted records) reach this
    /// many and at least the live ones; `None`: only when asked.
    pub(super) auto_compact: Option<u64>,
}

impl Config {
    /// Whether a write of `location` is appended without a sync.
    pub(super) fn is_lazy(&self, location: &Path) -> bool {
        self.lazy_prefixes.iter().any(|p| location.as_ref().starts_with(p.as_str()))
    }
}

/// How a catch-up treats an incomplete or torn record at the end of the last segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// Stop before it: a writer may be appending it right now.
    Read,
    /// Truncate it: only the lock holder may, and it knows no one is appending.
    Write,
}

pub(super) struct State {
    log_dir: PathBuf,
    pub(super) config: Config,
    pub(super) index: BTreeMap<Path, Entry>,
    /// The segments read so far, from the base (segment 1 or the newest compacted one) to
    /// `current`, kept open: reads never reopen, and a removed segment stays readable.
    segments: BTreeMap<u64, File>,
    /// The last segment read; 0 before any.
    current: u64,
    /// How far `current` has been read: the end of its last good record.
    end: u64,
    /// The bytes of the records behind `index`.
    live: u64,
    /// Reused to encode records.
    buf: Vec<u8>,
    /// Synced puts since the last look at the dead bytes.
    since_look: u32,
}

impl State {
    pub(super) fn new(log_dir: PathBuf, config: Config) -> State {
        State {
            log_dir,
            config,
            index: BTreeMap::new(),
            segments: BTreeMap::new(),
            current: 0,
            end: 0,
            live: 0,
            buf: Vec::new(),
            since_look: 0,
        }
    }

    /// Forgets everything read: the next catch-up reads the log from the start.
    pub(super) fn reset(&mut self) {
        self.index.clear();
        self.segments.clear();
        (self.current, self.end, self.live) = (0, 0, 0);
    }

    /// Reads what other instances appended since the last call. In `Write` mode (under the
    /// lock) a torn tail is truncated; in `Read` mode it is left as not yet written.
    pub(super) fn catch_up(&mut self, mode: Mode) -> Result<(), LogError> {
        match self.advance(mode) {
            // A segment was removed between listing and opening: a compaction ran. Once more.
            Err(e) if e.is_vanished() => {
                self.reset();
                self.advance(mode)
            }
            r => r,
        }
    }

    fn advance(&mut self, mode: Mode) -> Result<(), LogError> {
        let mut rebuilds = 0;
        let mut tail = match self.current_len()? {
            Some(len) if len == self.end => None,
            Some(len) => self.scan_current(len)?,
            None => {
                rebuilds += 1;
                self.rebuild()?
            }
        };
        // Segments are numbered upward without gaps (a writer adds `current + 1`, a
        // compaction the highest + 1), so a new one is always `current + 1`.
        while self.current != 0 {
            let next = self.current + 1;
            let Some((file, header)) = segment::open(&self.log_dir, next)? else { break };
            if header.compacted {
                rebuilds += 1;
                if rebuilds > MAX_REBUILDS {
                    return Err(LogError::Unstable { dir: self.log_dir.clone(), attempts: rebuilds });
                }
                tail = self.rebuild()?;
                continue;
            }
            if let Some(offset) = tail {
                // A writer completes (or truncates) the last record before it starts a segment.
                return Err(LogError::TornNotLast { file: self.current_path(), offset });
            }
            self.open_next(next, file);
            let len = self.current_len()?.unwrap_or(HEADER_LEN);
            tail = self.scan_current(len)?;
        }
        if let Some(offset) = tail
            && mode == Mode::Write
        {
            // A crashed writer's partial record: nothing indexed it, no one can be appending
            // it (the caller holds the lock), and no later segment exists.
            let file = self.current_file()?;
            file.set_len(offset).map_err(LogError::io("truncate", self.current_path()))?;
        }
        Ok(())
    }

    /// The current segment's length, or `None` if there is none or it must be read afresh:
    /// removed (a compaction elsewhere) or shorter than what was read (changed by hand).
    fn current_len(&self) -> Result<Option<u64>, LogError> {
        if self.current == 0 {
            return Ok(None);
        }
        let md = self.current_file()?.metadata().map_err(LogError::io("stat", self.current_path()))?;
        Ok((md.nlink() > 0 && md.len() >= self.end).then_some(md.len()))
    }

    /// Reads the log from its base: the newest compacted segment, or segment 1. Returns the
    /// offset of a tail left in the last segment.
    fn rebuild(&mut self) -> Result<Option<u64>, LogError> {
        self.reset();
        let r = self.rebuild_from_scratch();
        if r.is_err() {
            self.reset();
        }
        r
    }

    fn rebuild_from_scratch(&mut self) -> Result<Option<u64>, LogError> {
        let numbers = segment::list(&self.log_dir)?;
        let Some(&last) = numbers.last() else { return Ok(None) };
        // Open from the top down to the base, checking that none is missing on the way.
        let mut opened = Vec::new();
        for expected in (1..=last).rev() {
            let listed = numbers.binary_search(&expected).is_ok();
            let found = if listed { segment::open(&self.log_dir, expected)? } else { None };
            let Some((file, header)) = found else {
                if listed {
                    return Err(LogError::Vanished { file: segment::path(&self.log_dir, expected) });
                }
                return Err(LogError::Missing { dir: self.log_dir.clone(), missing: expected });
            };
            opened.push((expected, file));
            if header.compacted || expected == 1 {
                break;
            }
        }
        let mut tail = None;
        for (n, file) in opened.into_iter().rev() {
            if let Some(offset) = tail {
                return Err(LogError::TornNotLast { file: self.current_path(), offset });
            }
            self.open_next(n, file);
            let len = self.current_len()?.unwrap_or(HEADER_LEN);
            tail = self.scan_current(len)?;
        }
        Ok(tail)
    }

    fn open_next(&mut self, n: u64, file: File) {
        self.segments.insert(n, file);
        self.current = n;
        self.end = HEADER_LEN;
    }

    /// Reads the current segment's records from `end` to `len`; returns where a tail starts.
    fn scan_current(&mut self, len: u64) -> Result<Option<u64>, LogError> {
        let n = self.current;
        let file_path = self.current_path();
        let Self { segments, index, live, end, .. } = self;
        let file = segments.get(&n).ok_or_else(|| LogError::NotOpen { dir: file_path.clone(), segment: n })?;
        let stop = segment::scan(file, &file_path, *end, len, |offset, r, _| {
            apply(index, live, n, offset, r).map_err(|reason| LogError::Corrupt {
                file: file_path.clone(),
                offset,
                reason,
            })?;
            *end = offset + r.len as u64;
            Ok(())
        })?;
        Ok(match stop {
            ScanEnd::Clean(at) => {
                *end = at;
                None
            }
            ScanEnd::Tail(at) => {
                *end = at;
                Some(at)
            }
        })
    }

    fn current_path(&self) -> PathBuf {
        segment::path(&self.log_dir, self.current)
    }

    fn current_file(&self) -> Result<&File, LogError> {
        self.file(self.current)
    }

    fn file(&self, n: u64) -> Result<&File, LogError> {
        self.segments.get(&n).ok_or_else(|| LogError::NotOpen { dir: self.log_dir.clone(), segment: n })
    }

    /// Reads `range` of an entry's data. The whole record is read and its checksum verified
    /// again: the file may have been changed since it was indexed, and a damaged record is
    /// an error, never data.
    pub(super) fn read(&self, entry: &Entry, range: Range<u64>) -> Result<Bytes, LogError> {
        let file_path = || segment::path(&self.log_dir, entry.segment);
        let corrupt = |reason| LogError::Corrupt { file: file_path(), offset: entry.offset, reason };
        let mut buf = vec![0; usize::try_from(entry.record_len).unwrap_or(usize::MAX)];
        let read = segment::read_full_at(self.file(entry.segment)?, &mut buf, entry.offset)
            .map_err(|e| LogError::io("read", file_path())(e))?;
        if read < buf.len() {
            return Err(corrupt("the file ends inside an indexed record"));
        }
        let start = entry.data_offset - entry.offset;
        match record::parse(&buf, true) {
            Parsed::Record(r) if r.data_start as u64 == start && r.data_len as u64 == entry.size => {}
            _ => return Err(corrupt("a damaged record (changed since it was read)")),
        }
        let bytes = Bytes::from(buf);
        Ok(bytes.slice((start + range.start) as usize..(start + range.end) as usize))
    }

    /// Appends a put of `location` and indexes it; returns its e_tag. `sync`: make it (and
    /// everything before it in the segment) durable before returning.
    pub(super) fn put(&mut self, location: &Path, data: &[&[u8]], sync: bool) -> Result<String, LogError> {
        let time_ms = now_ms();
        let size = data.iter().map(|d| d.len() as u64).sum();
        let mut buf = std::mem::take(&mut self.buf);
        let encoded = record::encode(&mut buf, Kind::Put { origin: None }, time_ms, location.as_ref(), data);
        let result = match encoded {
            None => Err(LogError::TooLarge { path: location.to_string(), size }),
            Some(data_start) => self.append(&buf).map(|(segment, offset)| {
                let entry = Entry {
                    segment,
                    offset,
                    data_offset: offset + data_start as u64,
                    size,
                    time_ms,
                    origin: (segment, offset),
                    record_len: buf.len() as u64,
                };
                let e_tag = entry.e_tag();
                self.index_put(location.clone(), entry);
                e_tag
            }),
        };
        self.buf = buf;
        let e_tag = result?;
        if sync {
            self.sync()?;
            self.auto_compact();
        }
        Ok(e_tag)
    }

    /// After a synced put (under the lock, caught up): compacts the log if the dead bytes have
    /// reached the threshold and at least the live bytes, so the log stays within about twice
    /// what it holds and an open reads no more than that. The put is durable already, and its
    /// e_tag survives a compaction, so a compaction that fails changes nothing for the caller:
    /// the state is read afresh, and the next look tries again.
    fn auto_compact(&mut self) {
        let Some(threshold) = self.config.auto_compact else { return };
        self.since_look += 1;
        if self.since_look < AUTO_COMPACT_EVERY {
            return;
        }
        self.since_look = 0;
        let Ok(StoredBytes { live, total }) = self.stored_bytes() else { return };
        let dead = total.saturating_sub(live);
        if dead >= threshold && dead >= live && self.compact().is_err() {
            self.reset();
        }
    }

    /// Appends a tombstone of `location` and drops it from the index.
    pub(super) fn delete(&mut self, location: &Path, sync: bool) -> Result<(), LogError> {
        let mut buf = std::mem::take(&mut self.buf);
        let encoded = record::encode(&mut buf, Kind::Delete, now_ms(), location.as_ref(), &[]);
        let result = match encoded {
            None => Err(LogError::TooLarge { path: location.to_string(), size: 0 }),
            Some(_) => self.append(&buf),
        };
        self.buf = buf;
        result?;
        if let Some(old) = self.index.remove(location) {
            self.live -= old.record_len;
        }
        if sync {
            self.sync()?;
        }
        Ok(())
    }

    fn index_put(&mut self, location: Path, entry: Entry) {
        self.live += entry.record_len;
        if let Some(old) = self.index.insert(location, entry) {
            self.live -= old.record_len;
        }
    }

    /// Writes one encoded record at the end of the log (under the lock, caught up); returns its
    /// segment and offset. Starts segment 1, or the next segment when this one is full.
    fn append(&mut self, bytes: &[u8]) -> Result<(u64, u64), LogError> {
        let len = bytes.len() as u64;
        if self.current == 0 {
            let file = segment::create(&self.log_dir, 1, false, |_, _| Ok(()))?;
            self.open_next(1, file);
        } else if self.end > HEADER_LEN && self.end.saturating_add(len) > self.config.segment_limit {
            // Seal the full segment first: a synced record in the next segment must not
            // depend on unsynced ones in this one.
            self.sync()?;
            let next = self.current + 1;
            let file = segment::create(&self.log_dir, next, false, |_, _| Ok(()))?;
            self.open_next(next, file);
        }
        let (n, at) = (self.current, self.end);
        let file = self.current_file()?;
        if let Err(e) = file.write_all_at(bytes, at) {
            // Take back a partial record; should that fail too, the next writer truncates it
            // as a torn tail.
            let _ = file.set_len(at);
            return Err(LogError::io("write", self.current_path())(e));
        }
        self.end = at + len;
        Ok((n, at))
    }

    /// `fdatasync` of the current segment: the segment is append-only, so this makes every
    /// record in it durable, whoever wrote it.
    fn sync(&self) -> Result<(), LogError> {
        self.current_file()?.sync_data().map_err(LogError::io("sync", self.current_path()))
    }

    /// Writes every live path into a new compacted segment, then removes the segments it
    /// supersedes (under the lock, caught up).
    pub(super) fn compact(&mut self) -> Result<CompactReport, LogError> {
        let numbers = segment::list(&self.log_dir)?;
        let Some(&last) = numbers.last() else { return Ok(CompactReport::default()) };
        let mut bytes_before = 0;
        for &n in &numbers {
            let file_path = segment::path(&self.log_dir, n);
            // Of the entry itself: a link planted in the folder is not followed.
            match std::fs::symlink_metadata(&file_path) {
                Ok(md) => bytes_before += md.len(),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(LogError::io("stat", file_path)(e)),
            }
        }
        let new = last + 1;
        let mut index = BTreeMap::new();
        let mut rec = Vec::new();
        let file = segment::create(&self.log_dir, new, true, |w, tmp| {
            let mut offset = HEADER_LEN;
            for (location, e) in &self.index {
                let data = self.read(e, 0..e.size)?;
                let kind = Kind::Put { origin: Some(e.origin) };
                let data_start = record::encode(&mut rec, kind, e.time_ms, location.as_ref(), &[&data])
                    .ok_or_else(|| LogError::TooLarge { path: location.to_string(), size: data.len() as u64 })?;
                std::io::Write::write_all(w, &rec).map_err(LogError::io("write", tmp))?;
                let entry = Entry {
                    segment: new,
                    offset,
                    data_offset: offset + data_start as u64,
                    record_len: rec.len() as u64,
                    ..e.clone()
                };
                index.insert(location.clone(), entry);
                offset += rec.len() as u64;
            }
            Ok(())
        })?;
        let new_path = segment::path(&self.log_dir, new);
        let bytes_after = file.metadata().map_err(LogError::io("stat", &new_path))?.len();
        // The new segment is durable and supersedes the rest: switch to it, then remove them.
        // Other instances holding them open keep reading them until they see the new one.
        self.reset();
        self.open_next(new, file);
        self.end = bytes_after;
        for (location, entry) in index {
            self.index_put(location, entry);
        }
        let mut segments_removed = 0;
        for n in numbers {
            let file_path = segment::path(&self.log_dir, n);
            match std::fs::remove_file(&file_path) {
                Ok(()) => segments_removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(LogError::io("remove", file_path)(e)),
            }
        }
        segment::remove_leftovers(&self.log_dir)?;
        segment::sync_dir(&self.log_dir)?;
        Ok(CompactReport { segments_removed, bytes_before, bytes_after })
    }

    /// Bytes of the live records, and of every segment read.
    pub(super) fn stored_bytes(&self) -> Result<StoredBytes, LogError> {
        let mut total = 0;
        for (&n, file) in &self.segments {
            total += file.metadata().map_err(LogError::io("stat", segment::path(&self.log_dir, n)))?.len();
        }
        Ok(StoredBytes { live: self.live, total })
    }
}

/// Applies one record to the index.
fn apply(
    index: &mut BTreeMap<Path, Entry>,
    live: &mut u64,
    segment: u64,
    offset: u64,
    r: &Record<'_>,
) -> Result<(), &'static str> {
    let location = Path::parse(r.path).map_err(|_| "not an object_store path")?;
    match r.kind {
        Kind::Put { origin } => {
            let entry = Entry {
                segment,
                offset,
                data_offset: offset + r.data_start as u64,
                size: r.data_len as u64,
                time_ms: r.time_ms,
                origin: origin.unwrap_or((segment, offset)),
                record_len: r.len as u64,
            };
            *live += entry.record_len;
            if let Some(old) = index.insert(location, entry) {
                *live -= old.record_len;
            }
        }
        Kind::Delete => {
            if let Some(old) = index.remove(&location) {
                *live -= old.record_len;
            }
        }
    }
    Ok(())
}

fn now_ms() -> u64 {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    u64::try_from(ms).unwrap_or(MAX_TIME_MS).min(MAX_TIME_MS)
}
