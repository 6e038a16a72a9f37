//! One instance's view of the log: the index of live paths, the open segments, how far they
//! have been read, and the operations that move it forward, one concern a file: catching up
//! (`catch_up`), answering (`lookup`), appending (`append`), and the upkeep of dead bytes,
//! index files and compaction (`upkeep`); `segment_view` is one segment as read so far.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use object_store::path::Path;

use super::error::LogError;
use super::fixed_keys::FixedKeys;
use super::record::{HEADER_LEN, MAX_TIME_MS};
use super::segment;
pub(super) use super::table::{Entry, Slot};
use segment_view::Segment;

mod append;
mod catch_up;
mod lookup;
mod segment_view;
mod upkeep;

/// The options of the log ([`crate::LogOptions`] and [`crate::LogStore`]'s setters).
#[derive(Debug, Clone)]
pub(super) struct Config {
    pub(super) segment_limit: u64,
    /// Which paths records and index entries store as 32 bytes: read with these, written so.
    pub(super) fixed_keys: FixedKeys,
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

    fn open_next(&mut self, n: u64, file: File) {
        self.segments.insert(n, Segment::new(file, self.config.fixed_keys.clone()));
        self.current = n;
        self.end = HEADER_LEN;
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
}

fn now_ms() -> u64 {
    let ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    u64::try_from(ms).unwrap_or(MAX_TIME_MS).min(MAX_TIME_MS)
}
