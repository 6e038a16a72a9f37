//! What a log store reports about its segments: a compaction's result and the bytes stored.
//!
//! A leaf: the state that computes them (`state.rs`) and the store that returns them
//! (`store.rs`) both name these.

/// What [`LogStore::compact`](super::LogStore::compact) did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompactReport {
    /// Segment files removed (all those the new one supersedes).
    pub segments_removed: u64,
    /// Bytes of all segment files before.
    pub bytes_before: u64,
    /// Bytes of the new segment.
    pub bytes_after: u64,
}

/// What [`LogStore::stored_bytes`](super::LogStore::stored_bytes) counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoredBytes {
    /// Bytes of the records of live paths: about what a compaction would keep.
    pub live: u64,
    /// Bytes of the segments in use.
    pub total: u64,
}
