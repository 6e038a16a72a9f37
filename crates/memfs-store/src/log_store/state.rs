//! One instance's view of the log: the index of live paths, the open segments, how far they
//! have been read, and the operations that move it forward (catching up, appending,
//! compacting).

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use object_store::path::Path;

use super::error::LogError;
use super::record::{self, HEADER_LEN, Kind, MAX_TIME_MS, Parsed};
use super::report::{CompactReport, StoredBytes};
use super::segment::{self, ScanEnd};
use super::table::{self, Confirm, Key, Seal, Table};
pub(super) use super::table::{Entry, Slot};

/// How often one catch-up may start over because of compactions elsewhere.
const MAX_REBUILDS: u32 = 8;

/// Synced puts between two looks at whether the log needs an automatic compaction (each look
/// is one `fstat` per segment in use).
const AUTO_COMPACT_EVERY: u32 = 64;

/// Paths of the last segment's records resolved at each of those looks (see
/// [`State::auto_compact`]).
const RESOLVED_PER_LOOK: usize = 256;

/// The builder knobs.
#[derive(Debug, Clone)]
pub(super) struct Config {
    pub(super) segment_limit: u64,
    pub(super) lazy_prefixes: Vec<String>,
    /// Paths whose content, once written, never changes to another plaintext (it may be
    /// rewritten sealed differently, or deleted): a read that finds one in what this instance
    /// already knows needs no catch-up (see [`LogStore::with_settled_prefixes`]).
    ///
    /// [`LogStore::with_settled_prefixes`]: super::LogStore::with_settled_prefixes
    pub(super) settled_prefixes: Vec<String>,
    /// Compact automatically once the dead bytes (replaced and deleted records) reach this
    /// many and at least the live ones; `None`: only when asked.
    pub(super) auto_compact: Option<u64>,
}

impl Config {
    /// Whether a write of `location` is appended without a sync.
    pub(super) fn is_lazy(&self, location: &Path) -> bool {
        self.lazy_prefixes.iter().any(|p| location.as_ref().starts_with(p.as_str()))
    }

    /// Whether a read of `location` may be answered without a catch-up when it is found.
    pub(super) fn is_settled(&self, location: &Path) -> bool {
        self.settled_prefixes.iter().any(|p| location.as_ref().starts_with(p.as_str()))
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

/// One segment read so far, kept open: reads never reopen, and a removed segment stays
/// readable.
struct Segment {
    file: File,
    /// Its index file: what its records say up to `table.seal.covered_len` (a sealed segment's
    /// whole length, or a compacted segment's records before anything appended to it).
    table: Option<Table>,
    /// What its records after the table's cover say (all of them without a table), by path.
    map: BTreeMap<Path, Slot>,
    /// How far it has been read: the end of its last good record.
    len: u64,
    /// For a sealed segment: the log's dead bytes from the base through its end; for the
    /// current one, through what its index covers, when this instance wrote it.
    dead_through: u64,
    /// Writing its index failed once in this instance: not tried again.
    index_failed: bool,
}

impl Segment {
    fn new(file: File) -> Segment {
        Segment { file, table: None, map: BTreeMap::new(), len: HEADER_LEN, dead_through: 0, index_failed: false }
    }

    /// Whether its index covers all of it that was read.
    fn fully_indexed(&self) -> bool {
        self.map.is_empty() && self.table.as_ref().is_some_and(|t| t.seal.covered_len == self.len)
    }

    /// What this segment says of `location`. A table that fails is dropped for the segment's
    /// own records, and asked no more.
    fn get(
        &mut self,
        log_dir: &std::path::Path,
        n: u64,
        location: &Key<'_>,
        confirm: Confirm,
    ) -> Result<Option<Slot>, LogError> {
        if let Some(slot) = self.map.get(location.path()) {
            return Ok(Some(slot.clone()));
        }
        let Some(t) = &mut self.table else { return Ok(None) };
        match t.get(location, &self.file, confirm) {
            Ok(found) => Ok(found),
            Err(_) => {
                self.distrust(log_dir, n)?;
                Ok(self.map.get(location.path()).cloned())
            }
        }
    }

    /// Calls `visit` with every path of this segment from `prefix` on that starts with it, in
    /// order: what the table says, then what the records after it say (which replaces it).
    fn scan_prefix(
        &mut self,
        log_dir: &std::path::Path,
        n: u64,
        prefix: &Path,
        visit: &mut dyn FnMut(Path, Slot),
    ) -> Result<(), LogError> {
        let start = prefix.as_ref();
        if let Some(t) = &mut self.table {
            let mut found = Vec::new();
            let scanned = t.scan_from(start, &self.file, |name, slot| {
                if !name.starts_with(start) {
                    return Ok(false);
                }
                let path = Path::parse(name).map_err(|_| LogError::BadIndex {
                    file: table::path(log_dir, n),
                    reason: "not an object_store path",
                })?;
                found.push((path, slot));
                Ok(true)
            });
            match scanned {
                Ok(()) => found.into_iter().for_each(|(p, s)| visit(p, s)),
                Err(_) => self.distrust(log_dir, n)?,
            }
        }
        for (path, slot) in self.map.range(prefix.clone()..) {
            if !path.as_ref().starts_with(start) {
                break;
            }
            visit(path.clone(), slot.clone());
        }
        Ok(())
    }

    /// Replaces the segment's table by the records it covers, read afresh; what the map holds
    /// (the records after them) stays on top. Not the records up to `len`: a catch-up that
    /// distrusts the table halfway through the records after it has put some of them in the
    /// map already, and not yet moved `len` past them.
    fn distrust(&mut self, log_dir: &std::path::Path, n: u64) -> Result<(), LogError> {
        let Some(table) = &self.table else { return Ok(()) };
        let covered = table.seal.covered_len;
        let file_path = segment::path(log_dir, n);
        let mut map = BTreeMap::new();
        let stop = segment::scan(&self.file, &file_path, HEADER_LEN, covered, |offset, r, _| {
            let location = location_of(&file_path, offset, &r.path)?;
            map.insert(location, slot_of(n, offset, r.kind, r.time_ms, r.path_len, r.len));
            Ok(())
        })?;
        if let ScanEnd::Tail(offset) = stop {
            return Err(LogError::TornNotLast { file: file_path, offset });
        }
        map.append(&mut self.map);
        self.table = None;
        self.map = map;
        Ok(())
    }

    /// Everything the segment says, in path order: the table's entries with the later
    /// records' on top. Bounded by what one segment holds. Paths as strings: what an index
    /// is written from (an `object_store` path costs a parse each, and a segment has some
    /// 20,000 records).
    fn everything(&mut self, log_dir: &std::path::Path, n: u64) -> Result<Vec<(String, Slot)>, LogError> {
        let mut indexed = Vec::new();
        if let Some(t) = &mut self.table {
            let scanned = t.scan_from("", &self.file, |name, slot| {
                indexed.push((name.to_owned(), slot));
                Ok(true)
            });
            if scanned.is_err() {
                indexed.clear();
                self.distrust(log_dir, n)?;
            }
        }
        // Two runs in path order (a path's order is its string's), the map's on top.
        let mut all = Vec::with_capacity(indexed.len() + self.map.len());
        let mut later = self.map.iter().peekable();
        for (name, slot) in indexed {
            while let Some((path, newer)) = later.next_if(|(path, _)| path.as_ref() < name.as_str()) {
                all.push((path.to_string(), newer.clone()));
            }
            match later.next_if(|(path, _)| path.as_ref() == name) {
                Some((_, newer)) => all.push((name, newer.clone())),
                None => all.push((name, slot)),
            }
        }
        all.extend(later.map(|(path, slot)| (path.to_string(), slot.clone())));
        Ok(all)
    }
}

/// A record's path, as an `object_store` path; a record whose path is not one is corrupt.
fn location_of(file: &std::path::Path, offset: u64, path: &str) -> Result<Path, LogError> {
    Path::parse(path).map_err(|_| LogError::Corrupt {
        file: file.to_path_buf(),
        offset,
        reason: "not an object_store path",
    })
}

/// What one record says of its path (`path_len`: the bytes the path takes in the record).
fn slot_of(segment: u64, offset: u64, kind: Kind, time_ms: u64, path_len: usize, len: usize) -> Slot {
    match kind {
        Kind::Put { origin } => {
            Slot::Live(Entry { segment, offset, record_len: len as u64, time_ms, origin, path_len: path_len as u64 })
        }
        Kind::Delete => Slot::Deleted,
    }
}

pub(super) struct State {
    log_dir: PathBuf,
    pub(super) config: Config,
    /// From the base (segment 1 or the newest compacted one) to `current`.
    segments: BTreeMap<u64, Segment>,
    /// The last segment read; 0 before any.
    current: u64,
    /// How far `current` has been read: the end of its last good record.
    end: u64,
    /// Bytes of records that no longer count (replaced or deleted puts, and tombstones), from
    /// the base to `end`.
    dead: u64,
    /// Paths the last scan found in the current segment with no earlier record there: the
    /// records they replace in older segments are not yet in `dead`. Looked up only when the
    /// dead bytes are needed (a segment sealed, the bytes stored asked), so that an open does
    /// not ask the older segments about every record it reads.
    unresolved: Vec<Path>,
    /// `(segment, length)`: this instance knows the current segment is zero-filled from `end`
    /// to its end, as long as it is still that segment and of that length (see
    /// [`State::append`]).
    zeroed: Option<(u64, u64)>,
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
            segments: BTreeMap::new(),
            current: 0,
            end: 0,
            dead: 0,
            unresolved: Vec::new(),
            zeroed: None,
            buf: Vec::new(),
            since_look: 0,
        }
    }

    /// Forgets everything read: the next catch-up reads the log from the start.
    pub(super) fn reset(&mut self) {
        self.segments.clear();
        self.unresolved.clear();
        self.zeroed = None;
        (self.current, self.end, self.dead) = (0, 0, 0);
    }

    /// Reads what other instances appended since the last call. In `Write` mode (under the
    /// lock) a torn tail is truncated, and sealed segments without an index get one; in `Read`
    /// mode a tail is left as not yet written.
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
            let finished = if header.compacted { None } else { self.current_len()? };
            let Some(len) = finished else {
                // A compaction, or the current segment removed or changed by hand: from the
                // start.
                rebuilds += 1;
                if rebuilds > MAX_REBUILDS {
                    return Err(LogError::Unstable { dir: self.log_dir.clone(), attempts: rebuilds });
                }
                tail = self.rebuild()?;
                continue;
            };
            // A writer starts the next segment only once this one is complete: read what it
            // appended since the last look.
            if len != self.end {
                tail = self.scan_current(len)?;
            }
            if let Some(offset) = tail {
                // A writer completes (or truncates) the last record before it starts a segment.
                return Err(LogError::TornNotLast { file: self.current_path(), offset });
            }
            self.seal_current()?;
            self.open_next(next, file);
            let len = self.current_len()?.unwrap_or(HEADER_LEN);
            tail = self.scan_current(len)?;
        }
        if mode == Mode::Write {
            if let Some(offset) = tail {
                // A crashed writer's partial record: nothing indexed it, no one can be
                // appending it (the caller holds the lock), and no later segment exists.
                let file = self.current_file()?;
                file.set_len(offset).map_err(LogError::io("truncate", self.current_path()))?;
            }
            self.write_missing_tables();
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
        while let Some((n, file)) = opened.pop() {
            if let Some(offset) = tail {
                return Err(LogError::TornNotLast { file: self.current_path(), offset });
            }
            // Its index covers it, or a part from the start (a compacted segment appended to):
            // only the rest is read.
            let file_path = segment::path(&self.log_dir, n);
            let len = file.metadata().map_err(LogError::io("stat", &file_path))?.len();
            let table = Table::open(&self.log_dir, n, &file, &file_path, len);
            self.open_next(n, file);
            if let Some(table) = table {
                self.dead = table.seal.dead;
                self.end = table.seal.covered_len;
                if let Some(seg) = self.segments.get_mut(&n) {
                    seg.len = self.end;
                    seg.table = Some(table);
                }
            }
            let len = self.current_len()?.unwrap_or(HEADER_LEN);
            tail = self.scan_current(len)?;
            if !opened.is_empty() {
                self.seal_current()?;
            }
        }
        Ok(tail)
    }

    /// The current segment holds zeros from `at` (where its records end) to `len`, its
    /// length: filled ahead by a writer. Read once per segment and length (later records are
    /// written over them, and only a writer filling ahead changes the length); anything but
    /// zeros there is an error. A crash can leave data after zeros (pages of unsynced records
    /// written back out of order), as can damage or tampering: like a damaged record followed
    /// by more data, it is refused, never skipped and never truncated, as it may hold
    /// acknowledged records. A reader that sees it checks again holding the lock (a writer
    /// may have been appending at `at`).
    /// `checked`: how far past `at` the caller has seen zeros already.
    fn check_zeros(&mut self, at: u64, checked: u64, len: u64) -> Result<(), LogError> {
        if at >= len || self.zeroed == Some((self.current, len)) {
            return Ok(());
        }
        let path = self.current_path();
        if zeros_between(self.current_file()?, checked.max(at), len).map_err(LogError::io("read", &path))? {
            self.zeroed = Some((self.current, len));
            return Ok(());
        }
        Err(LogError::Corrupt { file: path, offset: at, reason: "zeros followed by more data" })
    }

    /// The current segment is complete (a later one exists): notes the dead bytes through it,
    /// and uses its index file if the writer that sealed it wrote one.
    fn seal_current(&mut self) -> Result<(), LogError> {
        self.settle_dead()?;
        let n = self.current;
        let log_dir = self.log_dir.clone();
        let Some(seg) = self.segments.get_mut(&n) else { return Ok(()) };
        if seg.fully_indexed() {
            return Ok(());
        }
        let file_path = segment::path(&log_dir, n);
        if let Some(table) = Table::open(&log_dir, n, &seg.file, &file_path, seg.len)
            && table.seal.covered_len == seg.len
        {
            seg.table = Some(table);
            seg.map.clear();
        }
        Ok(())
    }

    /// Counts every dead byte so far ([`State::resolve_dead`]) and notes them as the log's
    /// dead bytes through the current segment: what the header of an index of it holds
    /// (written when it is sealed, and so far at its half).
    fn settle_dead(&mut self) -> Result<(), LogError> {
        self.resolve_dead()?;
        let dead = self.dead;
        if let Some(seg) = self.segments.get_mut(&self.current) {
            seg.dead_through = dead;
        }
        Ok(())
    }

    /// Counts in `dead` the records in older segments that the current segment's `unresolved`
    /// paths replaced.
    fn resolve_dead(&mut self) -> Result<(), LogError> {
        self.resolve_some_dead(usize::MAX)
    }

    /// As [`State::resolve_dead`], for at most `most` of the paths (the newest are left).
    fn resolve_some_dead(&mut self, most: usize) -> Result<(), LogError> {
        let take = most.min(self.unresolved.len());
        let rest = self.unresolved.split_off(take);
        for path in std::mem::replace(&mut self.unresolved, rest) {
            if let Some(old) = self.lookup_below(&path, self.current, Confirm::Yes)? {
                self.dead += old.record_len;
            }
        }
        Ok(())
    }

    /// Writes the index of every sealed segment that lacks a whole one (under the lock): after
    /// a crash between sealing and indexing, or an index damaged, removed or unusable.
    /// Best effort: a segment without an index is read instead, so a failure here only costs
    /// time.
    fn write_missing_tables(&mut self) {
        let numbers: Vec<u64> = self
            .segments
            .iter()
            .filter(|&(&n, seg)| n != self.current && !seg.index_failed && !seg.fully_indexed())
            .map(|(&n, _)| n)
            .collect();
        for n in numbers {
            let _ = self.write_table(n);
        }
    }

    /// Writes segment `n`'s index from what it says so far (up to its `len`, with its
    /// `dead_through`), and uses it from now on.
    fn write_table(&mut self, n: u64) -> Result<(), LogError> {
        let log_dir = self.log_dir.clone();
        let Some(seg) = self.segments.get_mut(&n) else { return Ok(()) };
        if seg.fully_indexed() {
            return Ok(());
        }
        let written = seg.everything(&log_dir, n).and_then(|all| {
            let seal = Seal::of(&seg.file, &segment::path(&log_dir, n), n, seg.len, seg.dead_through)?;
            table::write(&log_dir, seal, all.len(), all.iter().map(|(name, slot)| Ok((name.as_str(), slot))))
        });
        match written {
            Ok(Some(t)) => {
                seg.table = Some(t);
                seg.map.clear();
            }
            Ok(None) => seg.index_failed = true,
            Err(e) => {
                seg.index_failed = true;
                return Err(e);
            }
        }
        Ok(())
    }

    fn open_next(&mut self, n: u64, file: File) {
        self.segments.insert(n, Segment::new(file));
        self.current = n;
        self.end = HEADER_LEN;
    }

    /// Reads the current segment's records from `end` to `len`; returns where a tail starts.
    fn scan_current(&mut self, len: u64) -> Result<Option<u64>, LogError> {
        let n = self.current;
        let file_path = self.current_path();
        let seg = self.segments.get(&n).ok_or_else(|| LogError::NotOpen { dir: self.log_dir.clone(), segment: n })?;
        // Zeros where the next record would start: nothing new (the usual catch-up of a
        // segment a writer filled ahead), known with one small read.
        let mut next = [0u8; 8];
        if len >= self.end + 8
            && segment::read_full_at(&seg.file, &mut next, self.end).map_err(LogError::io("read", &file_path))? == 8
            && segment::starts_with_zeros(&next)
        {
            self.check_zeros(self.end, self.end + 8, len)?;
            return Ok(None);
        }
        let mut records = Vec::new();
        let stop = segment::scan(&seg.file, &file_path, self.end, len, |offset, r, _| {
            let location = location_of(&file_path, offset, &r.path)?;
            records.push((offset, r.kind, r.time_ms, location, r.path_len, r.len));
            Ok(())
        })?;
        let log_dir = &self.log_dir;
        let seg = self.segments.get_mut(&n).ok_or_else(|| LogError::NotOpen { dir: log_dir.clone(), segment: n })?;
        for (offset, kind, time_ms, location, path_len, len) in records {
            let slot = slot_of(n, offset, kind, time_ms, path_len, len);
            // What this segment said of the path before: its earlier records, or its table
            // (a compacted segment appended to). Older segments are asked later, if needed.
            // Without a table, the map's own answer comes back from the insert: one walk of
            // the map a record, not two (this is most of what opening a store costs).
            let before = match seg.table {
                Some(_) => {
                    let before = seg.get(log_dir, n, &Key::new(&location), Confirm::Yes)?;
                    seg.map.insert(location.clone(), slot);
                    before
                }
                None => seg.map.insert(location.clone(), slot),
            };
            match before {
                Some(Slot::Live(old)) => self.dead += old.record_len,
                Some(Slot::Deleted) => {}
                None => self.unresolved.push(location),
            }
            if kind == Kind::Delete {
                self.dead += len as u64;
            }
            self.end = offset + len as u64;
        }
        let scanned = stop;
        let stop = match scanned {
            ScanEnd::Clean(at) => {
                self.end = at;
                None
            }
            ScanEnd::Tail(at) => {
                self.end = at;
                Some(at)
            }
            // Filled ahead by a writer: the end, not a tail to take back.
            ScanEnd::Zeros { at, .. } => {
                self.end = at;
                None
            }
        };
        if let Some(seg) = self.segments.get_mut(&n) {
            seg.len = self.end;
        }
        if let ScanEnd::Zeros { at, checked } = scanned {
            self.check_zeros(at, checked, len)?;
        }
        Ok(stop)
    }

    /// The current segment's records, by path.
    fn current_map(&mut self) -> Result<&mut BTreeMap<Path, Slot>, LogError> {
        let (n, log_dir) = (self.current, &self.log_dir);
        let seg = self.segments.get_mut(&n).ok_or_else(|| LogError::NotOpen { dir: log_dir.clone(), segment: n })?;
        Ok(&mut seg.map)
    }

    fn current_path(&self) -> PathBuf {
        segment::path(&self.log_dir, self.current)
    }

    fn current_file(&self) -> Result<&File, LogError> {
        self.file(self.current)
    }

    fn file(&self, n: u64) -> Result<&File, LogError> {
        self.segments
            .get(&n)
            .map(|s| &s.file)
            .ok_or_else(|| LogError::NotOpen { dir: self.log_dir.clone(), segment: n })
    }

    /// Where `location`'s data is, if it is live: the newest segment that has a record of it
    /// says.
    pub(super) fn lookup(&mut self, location: &Path) -> Result<Option<Entry>, LogError> {
        self.lookup_below(location, u64::MAX, Confirm::Yes)
    }

    /// As [`State::lookup`], asking only the segments numbered below `below`.
    fn lookup_below(&mut self, location: &Path, below: u64, confirm: Confirm) -> Result<Option<Entry>, LogError> {
        let key = Key::new(location);
        let log_dir = &self.log_dir;
        for (&n, seg) in self.segments.range_mut(..below).rev() {
            match seg.get(log_dir, n, &key, confirm)? {
                Some(Slot::Live(entry)) => return Ok(Some(entry)),
                Some(Slot::Deleted) => return Ok(None),
                None => {}
            }
        }
        Ok(None)
    }

    /// The live paths under `prefix` (as a string prefix), in order.
    pub(super) fn list(&mut self, prefix: &Path) -> Result<Vec<(Path, Entry)>, LogError> {
        let mut found: BTreeMap<Path, Slot> = BTreeMap::new();
        let log_dir = &self.log_dir;
        // Oldest first: a newer segment's record replaces an older one's.
        for (&n, seg) in self.segments.iter_mut() {
            seg.scan_prefix(log_dir, n, prefix, &mut |path, slot| {
                found.insert(path, slot);
            })?;
        }
        Ok(found
            .into_iter()
            .filter_map(|(path, slot)| match slot {
                Slot::Live(entry) => Some((path, entry)),
                Slot::Deleted => None,
            })
            .collect())
    }

    /// `location`'s entry and data, if it is live. The whole record is read and checked again
    /// (checksum, path, length): the file may have changed since it was indexed, and a damaged
    /// record is an error, never data. An entry from an index file that its record does not
    /// bear out sets that index aside, and the segment's records answer.
    pub(super) fn get(&mut self, location: &Path) -> Result<Option<(Entry, Bytes)>, LogError> {
        loop {
            // The record read next is checked against the path: an index hit on an id
            // prefix needs no read of its own to confirm it.
            let Some(entry) = self.lookup_below(location, u64::MAX, Confirm::ByCaller)? else { return Ok(None) };
            match self.read(location, &entry) {
                Ok(data) => return Ok(Some((entry, data))),
                Err(e) => {
                    let log_dir = &self.log_dir;
                    match self.segments.get_mut(&entry.segment) {
                        Some(seg) if seg.table.is_some() => seg.distrust(log_dir, entry.segment)?,
                        _ => return Err(e),
                    }
                }
            }
        }
    }

    /// Reads an entry's data.
    fn read(&self, location: &Path, entry: &Entry) -> Result<Bytes, LogError> {
        let file_path = || segment::path(&self.log_dir, entry.segment);
        let corrupt = |reason| LogError::Corrupt { file: file_path(), offset: entry.offset, reason };
        let seg = self
            .segments
            .get(&entry.segment)
            .ok_or_else(|| LogError::NotOpen { dir: self.log_dir.clone(), segment: entry.segment })?;
        let mut buf = vec![0; usize::try_from(entry.record_len).unwrap_or(usize::MAX)];
        let read = segment::read_full_at(&seg.file, &mut buf, entry.offset)
            .map_err(|e| LogError::io("read", file_path())(e))?;
        if read < buf.len() {
            return Err(corrupt("the file ends inside an indexed record"));
        }
        let start = entry.data_start() as usize;
        match record::parse(&buf, true) {
            Parsed::Record(r)
                if r.data_start == start
                    && r.data_len as u64 == entry.size()
                    && r.path == location.as_ref()
                    && matches!(r.kind, Kind::Put { origin } if origin == entry.origin) => {}
            _ => return Err(corrupt("a damaged record (changed since it was read)")),
        }
        let bytes = Bytes::from(buf);
        Ok(bytes.slice(start..start + entry.size() as usize))
    }

    /// Appends a put of `location` and indexes it; returns its e_tag. `replaced`: the version
    /// it replaces, as the caller looked it up (under the lock, caught up). `sync`: make it
    /// (and everything before it in the segment) durable before returning.
    pub(super) fn put(
        &mut self,
        location: &Path,
        data: &[&[u8]],
        replaced: Option<Entry>,
        sync: bool,
    ) -> Result<String, LogError> {
        let time_ms = now_ms();
        let size = data.iter().map(|d| d.len() as u64).sum();
        let mut buf = std::mem::take(&mut self.buf);
        let encoded = record::encode(&mut buf, Kind::Put { origin: None }, time_ms, location.as_ref(), data);
        let result = match encoded {
            None => Err(LogError::TooLarge { path: location.to_string(), size }),
            Some(_) => self.append(&buf).and_then(|(segment, offset)| {
                let entry = Entry {
                    segment,
                    offset,
                    record_len: buf.len() as u64,
                    time_ms,
                    origin: None,
                    path_len: record::stored_path_len(location.as_ref()) as u64,
                };
                let e_tag = entry.e_tag();
                self.dead += replaced.map_or(0, |e| e.record_len);
                self.current_map()?.insert(location.clone(), Slot::Live(entry));
                Ok(e_tag)
            }),
        };
        self.buf = buf;
        let e_tag = result?;
        if sync {
            self.sync()?;
            self.after_sync();
        }
        Ok(e_tag)
    }

    /// Puts each of `items` whose path holds nothing yet (under the lock, caught up), without a
    /// sync: the records go out in one write when they fit the current segment, else one by
    /// one. A path given twice is put once. What already exists is left as it is (a create
    /// that finds its object stored: same path, same content, for content-addressed objects).
    pub(super) fn put_new(&mut self, items: &[(Path, impl AsRef<[u8]>)]) -> Result<(), LogError> {
        let mut fresh: Vec<(&Path, &[u8])> = Vec::with_capacity(items.len());
        for (location, data) in items {
            if !fresh.iter().any(|(l, _)| *l == location) && self.lookup(location)?.is_none() {
                fresh.push((location, data.as_ref()));
            }
        }
        let time_ms = now_ms();
        let mut batch = Vec::new();
        let mut record = std::mem::take(&mut self.buf);
        let mut lens = Vec::with_capacity(fresh.len());
        for (location, data) in &fresh {
            if record::encode(&mut record, Kind::Put { origin: None }, time_ms, location.as_ref(), &[data]).is_none() {
                self.buf = record;
                return Err(LogError::TooLarge { path: location.to_string(), size: data.len() as u64 });
            }
            lens.push(record.len() as u64);
            batch.extend_from_slice(&record);
        }
        self.buf = record;
        if fresh.is_empty() {
            return Ok(());
        }
        let fits = self.current != 0 && self.end.saturating_add(batch.len() as u64) <= self.config.segment_limit;
        if !fits {
            // At a segment's end: one by one, so that each may start the next segment.
            for (location, data) in fresh {
                self.put(location, &[data], None, false)?;
            }
            return Ok(());
        }
        let (segment, mut offset) = self.append(&batch)?;
        for ((location, _), record_len) in fresh.into_iter().zip(lens) {
            let path_len = record::stored_path_len(location.as_ref()) as u64;
            let entry = Entry { segment, offset, record_len, time_ms, origin: None, path_len };
            self.current_map()?.insert(location.clone(), Slot::Live(entry));
            offset += record_len;
        }
        Ok(())
    }

    /// Makes every record so far durable, as a synced put does (under the lock, caught up).
    pub(super) fn sync_puts(&mut self) -> Result<(), LogError> {
        self.sync()?;
        self.after_sync();
        Ok(())
    }

    /// What follows a sync (under the lock, caught up): an automatic compaction, or an index
    /// of the current segment so far.
    fn after_sync(&mut self) {
        self.auto_compact();
        self.checkpoint();
    }

    /// Indexes the current segment up to its end once its records past what its index covers
    /// reach half a segment (under the lock, caught up, just synced: the index never covers a
    /// record that is not durable). An open reads the records its index does not cover, so
    /// this halves what an open of a large store reads (at most half a segment, 2 MiB, where
    /// it read up to 4), for about half an index more written per segment (the index of the
    /// first half; the one written at sealing covers the whole). Best effort, as sealing's: a
    /// failure only costs time.
    fn checkpoint(&mut self) {
        let n = self.current;
        let Some(seg) = self.segments.get(&n) else { return };
        let covered = seg.table.as_ref().map_or(HEADER_LEN, |t| t.seal.covered_len);
        if seg.index_failed || self.end.saturating_sub(covered) < self.config.segment_limit / 2 {
            return;
        }
        if self.settle_dead().is_err() {
            return;
        }
        let _ = self.write_table(n);
    }

    /// After a synced put (under the lock, caught up): compacts the log if the dead bytes have
    /// reached the threshold and at least the live bytes, so the log stays within about twice
    /// what it holds. The put is durable already, and its e_tag survives a compaction, so a
    /// compaction that fails changes nothing for the caller: the state is read afresh, and the
    /// next look tries again.
    fn auto_compact(&mut self) {
        let Some(threshold) = self.config.auto_compact else { return };
        self.since_look += 1;
        if self.since_look < AUTO_COMPACT_EVERY {
            return;
        }
        self.since_look = 0;
        // The paths an open read in the last segment, whose older versions (if any) are dead
        // now, a few at a time: each costs a lookup in every older segment, and a process that
        // makes a handful of commits would otherwise pay for all of them (up to half a segment
        // of records, some 10,000 lookups). Indexing the segment (at its half, when sealed)
        // counts them all, so the count lags by at most half a segment.
        if self.resolve_some_dead(RESOLVED_PER_LOOK).is_err() {
            return;
        }
        let Ok(StoredBytes { live, total }) = self.counted_bytes() else { return };
        let dead = total.saturating_sub(live);
        if dead >= threshold && dead >= live && self.compact().is_err() {
            self.reset();
        }
    }

    /// Appends a tombstone of live `location`, whose current version is `old` (as the caller
    /// looked it up, under the lock), and drops it from the index.
    pub(super) fn delete(&mut self, location: &Path, old: Entry, sync: bool) -> Result<(), LogError> {
        let mut buf = std::mem::take(&mut self.buf);
        let encoded = record::encode(&mut buf, Kind::Delete, now_ms(), location.as_ref(), &[]);
        let result = match encoded {
            None => Err(LogError::TooLarge { path: location.to_string(), size: 0 }),
            Some(_) => self.append(&buf),
        };
        let len = buf.len() as u64;
        self.buf = buf;
        result?;
        self.dead += old.record_len + len;
        self.current_map()?.insert(location.clone(), Slot::Deleted);
        if sync {
            self.sync()?;
        }
        Ok(())
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
            // depend on unsynced ones in this one. Its index goes before the next segment, so
            // that whoever sees the next one finds it. The zeros written ahead go first: a
            // sealed segment ends with its last record.
            let end = self.end;
            self.current_file()?.set_len(end).map_err(LogError::io("truncate", self.current_path()))?;
            self.sync()?;
            self.seal_current()?;
            let _ = self.write_table(self.current);
            let next = self.current + 1;
            let file = segment::create(&self.log_dir, next, false, |_, _| Ok(()))?;
            self.open_next(next, file);
        }
        let (n, at) = (self.current, self.end);
        let filled = self.fill_ahead(at + len)?;
        let file = self.current_file()?;
        if let Err(e) = file.write_all_at(bytes, at) {
            // Take back a partial record; should that fail too, the next writer truncates it
            // as a torn tail.
            let _ = file.set_len(at);
            self.zeroed = None;
            return Err(LogError::io("write", self.current_path())(e));
        }
        self.zeroed = filled.map(|len| (n, len));
        self.end = at + len;
        if let Some(seg) = self.segments.get_mut(&n) {
            seg.len = self.end;
        }
        Ok((n, at))
    }

    /// Makes sure the current segment holds zeros from `end` to at least `need` (under the
    /// lock, caught up, before a record up to `need` is written at `end`); returns the
    /// segment's length then, if past `need`.
    ///
    /// Why: `fdatasync` of a file that grew must also write its inode (its size), a second
    /// synchronous write on every commit; a record written over zeros already there does not
    /// change the size, and its sync writes the data alone (measured on ext4: 158 µs per
    /// append and sync against 110 µs over zeros; a file preallocated with `fallocate` saves
    /// less, as writing its unwritten extents changes them). So the segment is filled with
    /// zeros [`FILL_AHEAD`] bytes ahead of its records, up to the segment limit, and the next
    /// record's sync makes them durable. A reader stops at zeros where a record would start
    /// (`ScanEnd::Zeros`), and reads the rest once to check it is zeros ([`State::check_zeros`]).
    fn fill_ahead(&mut self, need: u64) -> Result<Option<u64>, LogError> {
        let (end, limit) = (self.end, self.config.segment_limit);
        let path = self.current_path();
        let len = self.current_file()?.metadata().map_err(LogError::io("stat", &path))?.len();
        // The catch-up before this write read what follows `end`, unless the file changed
        // length since (by hand: writers hold the lock).
        self.check_zeros(end, end, len)?;
        let file = self.current_file()?;
        if len >= need {
            return Ok(Some(len));
        }
        let target = need.max((need + FILL_AHEAD).min(limit));
        if target == need {
            return Ok(None);
        }
        // Zeros from the current length; a failure (a full disk) only costs the saving.
        let from = len.max(end);
        match write_zeros(file, from, target) {
            Ok(()) => Ok(Some(target)),
            Err(_) => {
                let _ = file.set_len(from);
                Ok(None)
            }
        }
    }

    /// `fdatasync` of the current segment: the segment is append-only, so this makes every
    /// record in it durable, whoever wrote it.
    fn sync(&self) -> Result<(), LogError> {
        self.current_file()?.sync_data().map_err(LogError::io("sync", self.current_path()))
    }

    /// Writes every live path into a new compacted segment, with its index, then removes the
    /// segments it supersedes (under the lock, caught up).
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
        let live = self.list(&Path::default())?;
        let new = last + 1;
        let mut moved: Vec<Slot> = Vec::with_capacity(live.len());
        let mut rec = Vec::new();
        let file = segment::create(&self.log_dir, new, true, |w, tmp| {
            let mut offset = HEADER_LEN;
            for (location, e) in &live {
                let data = self.read(location, e)?;
                let origin = Some(e.origin.unwrap_or((e.segment, e.offset)));
                let kind = Kind::Put { origin };
                record::encode(&mut rec, kind, e.time_ms, location.as_ref(), &[&data])
                    .ok_or_else(|| LogError::TooLarge { path: location.to_string(), size: data.len() as u64 })?;
                std::io::Write::write_all(w, &rec).map_err(LogError::io("write", tmp))?;
                moved.push(Slot::Live(Entry {
                    segment: new,
                    offset,
                    record_len: rec.len() as u64,
                    origin,
                    path_len: record::stored_path_len(location.as_ref()) as u64,
                    ..e.clone()
                }));
                offset += rec.len() as u64;
            }
            Ok(())
        })?;
        let new_path = segment::path(&self.log_dir, new);
        let bytes_after = file.metadata().map_err(LogError::io("stat", &new_path))?.len();
        // The new segment is durable and supersedes the rest: switch to it, then remove them.
        // Other instances holding them open keep reading them until they see the new one.
        self.reset();
        let map: BTreeMap<Path, Slot> = live.into_iter().map(|(p, _)| p).zip(moved).collect();
        self.open_next(new, file);
        self.end = bytes_after;
        if let Some(seg) = self.segments.get_mut(&new) {
            (seg.map, seg.len) = (map, bytes_after);
        }
        // Its index, so that an open does not read it whole; later puts are appended after it
        // (until the segment is full), and read as the last segment's records.
        let _ = self.write_table(new);
        let mut segments_removed = 0;
        for n in numbers {
            let file_path = segment::path(&self.log_dir, n);
            match std::fs::remove_file(&file_path) {
                Ok(()) => segments_removed += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(LogError::io("remove", file_path)(e)),
            }
        }
        segment::remove_leftovers(&self.log_dir, new)?;
        segment::sync_dir(&self.log_dir)?;
        Ok(CompactReport { segments_removed, bytes_before, bytes_after })
    }

    /// Bytes of the live records, and of every segment read.
    pub(super) fn stored_bytes(&mut self) -> Result<StoredBytes, LogError> {
        self.resolve_dead()?;
        self.counted_bytes()
    }

    /// As [`State::stored_bytes`], with the dead bytes counted so far.
    fn counted_bytes(&self) -> Result<StoredBytes, LogError> {
        let mut total = 0;
        let mut records = 0;
        for (&n, seg) in &self.segments {
            let len = seg.file.metadata().map_err(LogError::io("stat", segment::path(&self.log_dir, n)))?.len();
            total += len;
            // Up to its last record: not the zeros written ahead of them.
            records += seg.len.min(len).saturating_sub(HEADER_LEN);
        }
        Ok(StoredBytes { live: records.saturating_sub(self.dead), total })
    }
}

/// How far ahead of its records a writer fills the current segment with zeros (see
/// [`State::fill_ahead`]): one sync in this many bytes of records writes the inode too.
const FILL_AHEAD: u64 = 1 << 20;

/// Whether `file` holds only zeros from `from` to `to`.
fn zeros_between(file: &File, from: u64, to: u64) -> std::io::Result<bool> {
    let mut buf = vec![0u8; 64 << 10];
    let mut at = from;
    while at < to {
        let want = usize::try_from(to - at).unwrap_or(usize::MAX).min(buf.len());
        let read = segment::read_full_at(file, &mut buf[..want], at)?;
        if segment::zeros_prefix(&buf[..read]) < read {
            return Ok(false);
        }
        if read < want {
            break;
        }
        at += read as u64;
    }
    Ok(true)
}

/// Writes zeros into `file` from `from` to `to`.
fn write_zeros(file: &File, from: u64, to: u64) -> std::io::Result<()> {
    let zeros = vec![0u8; 64 << 10];
    let mut at = from;
    while at < to {
        let n = usize::try_from(to - at).unwrap_or(usize::MAX).min(zeros.len());
        file.write_all_at(&zeros[..n], at)?;
        at += n as u64;
    }
    Ok(())
}

fn now_ms() -> u64 {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    u64::try_from(ms).unwrap_or(MAX_TIME_MS).min(MAX_TIME_MS)
}
