//! Catching up: reading what other instances appended since this one last looked, from the
//! base when a compaction replaced the segments, and checking the zeros a writer filled ahead.

use std::fs::File;
use std::os::unix::fs::MetadataExt;

use super::segment_view::{location_of, slot_of};
use super::{Mode, State};
use crate::error::LogError;
use crate::record::{HEADER_LEN, Kind};
use crate::segment::{self, ScanEnd};
use crate::table::{Confirm, Key, Slot, Table};

/// How often one catch-up may start over because of compactions elsewhere.
const MAX_REBUILDS: u32 = 8;

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

impl State {
    /// Reads what other instances appended since the last call. In `Write` mode (under the
    /// lock) a torn tail is truncated, and sealed segments without an index get one; in `Read`
    /// mode a tail is left as not yet written.
    pub(crate) fn catch_up(&mut self, mode: Mode) -> Result<(), LogError> {
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
            let table = Table::open(&self.log_dir, n, &self.config.fixed_keys, &file, &file_path, len);
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
    pub(super) fn check_zeros(&mut self, at: u64, checked: u64, len: u64) -> Result<(), LogError> {
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
    pub(super) fn seal_current(&mut self) -> Result<(), LogError> {
        self.settle_dead()?;
        let n = self.current;
        let log_dir = self.log_dir.clone();
        let Some(seg) = self.segments.get_mut(&n) else { return Ok(()) };
        if seg.fully_indexed() {
            return Ok(());
        }
        let file_path = segment::path(&log_dir, n);
        if let Some(table) = Table::open(&log_dir, n, &self.config.fixed_keys, &seg.file, &file_path, seg.len)
            && table.seal.covered_len == seg.len
        {
            seg.table = Some(table);
            seg.map.clear();
        }
        Ok(())
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
        let stop = segment::scan(&seg.file, &file_path, self.end, len, &self.config.fixed_keys, |offset, r, _| {
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
}
