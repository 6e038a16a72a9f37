//! memfs's local folder: [`LogStore`], an [`ObjectStore`] over an append-only log.
//!
//! The module map is in `crates/README.md`; the design in `docs/ARCHITECTURE.md`, the bytes
//! below and in `docs/FORMAT.md` ("The local folder: an append-only log").
//!
//! A commit to the encrypted store writes a few immutable objects and then swaps the head.
//! With one file per object, every object costs a temporary file, fsyncs and a rename. Here
//! every write is a record appended to a segment file: writes of paths under a *lazy prefix*
//! the caller names (memfs: `objects/`) are appended without a sync, and any other put (memfs:
//! `head`, `gc.state`, `memfs.keys`) is appended and then `fdatasync`ed. The segment is
//! append-only, so that one sync makes every earlier record in it durable too: a commit costs
//! one sync. The log knows nothing of what the paths mean: the caller names the prefixes, and
//! the one under which paths are fixed-width keys ([`LogOptions::fixed_width_keys`]).
//!
//! Modules: `store` ([`LogStore`]: opening, locking, the `ObjectStore` operations),
//! `options` ([`LogOptions`]), `state` (one instance's index of live paths and the operations
//! that move it), `segment` (segment files), `record` (a segment's header and records),
//! `fixed_keys` (paths stored as 32 bytes), `table` (a sealed segment's index file),
//! `checksum`, `report` ([`CompactReport`], [`StoredBytes`]), `error` (its internal errors),
//! [`local_fs`] (files opened without following links, [`UnsafePath`]) and `fuzzing` (the
//! record parser for `fuzz/`: test scaffolding, built only for this crate's tests and with the
//! `testing` feature, which memfs-store's `testing` turns on).
//!
//! Many instances (processes) share one folder. Writers append holding an exclusive lock on
//! `log.lock`; readers take no lock. Each instance keeps the last segment's records by path in
//! memory, and uses the index files of the sealed ones; before every read, list or write, it
//! catches up: it reads the records appended since it last looked, and starts over from a
//! compacted segment when one appears.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build()?.block_on(async {
//! use memfs_log::{LogOptions, LogStore};
//! use object_store::{ObjectStore, ObjectStoreExt, PutMode, path::Path};
//!
//! let dir = tempfile::tempdir()?;
//! let store = LogOptions::default().lazy_prefixes(vec!["objects/".into()]).open(dir.path().join("store"))?;
//! // An immutable object: appended, not synced.
//! store.put_opts(&Path::from("objects/ab/cd"), "sealed".into(), PutMode::Create.into()).await?;
//! // The head: appended and synced, which makes the object above durable too.
//! let first = store.put_opts(&Path::from("head"), "v1".into(), PutMode::Create.into()).await?;
//! store.put_opts(&Path::from("head"), "v2".into(), PutMode::Update(first.into()).into()).await?;
//! // Another instance (another process) on the folder sees both.
//! let other = LogStore::open(dir.path().join("store"))?;
//! assert_eq!(other.get(&Path::from("head")).await?.bytes().await?, "v2");
//! assert_eq!(other.head(&Path::from("objects/ab/cd")).await?.size, 6);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Folder layout
//!
//! The folder and `log/` must belong to the user memfs runs as and be writable by no one else
//! (new ones are made 0700); no file in them is opened through a link, and a file memfs
//! creates is created exclusively ([`local_fs`]). Opening refuses anything else.
//!
//! - `log.lock`: empty; writers hold an exclusive `flock` on it while they append.
//! - `log/<n>`: segment `n`, named by 16 lowercase hex digits, numbered upward from 1 without
//!   gaps. The log is the segments from the *base* (the highest-numbered compacted segment,
//!   or segment 1) upward. Segments below the base are superseded (a compaction removes them,
//!   or the next one does if it crashed first). A new segment is written as `log/<n>.tmp`, synced and renamed, so it is never seen
//!   without its header, nor a compacted one without all its records.
//! - `log/<n>.index`: sealed segment `n`'s index file (below), written the same way.
//!
//! All integers are little-endian. A record is at least 37 bytes (a delete of the empty path)
//! and less than 4 GiB.
//!
//! ## Segment header (16 bytes)
//!
//! | offset | size | field                                                                |
//! |-------:|-----:|----------------------------------------------------------------------|
//! |      0 |    8 | magic, ASCII `memfslog`                                              |
//! |      8 |    4 | format version, u32: 2; a segment of any other version is refused    |
//! |     12 |    4 | flags, u32: bit 0 = compacted (supersedes every lower-numbered segment); other bits must be 0 |
//!
//! ## Record (follows the header, then each other)
//!
//! | offset | size       | field                                                          |
//! |-------:|-----------:|----------------------------------------------------------------|
//! |      0 |          4 | `len`, u32: the record's length, this field through the checksum |
//! |      4 |          4 | `len_check`, u32: `!len` (bitwise not), so a damaged or zero-filled length is recognised |
//! |      8 |          1 | op: 1 = put, 2 = delete, 3 = put copied by compaction; bit 7 set when the path is a fixed-width key stored as its id |
//! |      9 |          8 | time, u64: the write time in ms since the Unix epoch (at most 9999-12-31) |
//! |     17 |          4 | `path_len`, u32                                                |
//! |     21 |         16 | op 3 only: origin, u64 segment + u64 offset of the original put (its e_tag) |
//! |      … | `path_len` | path, UTF-8: the `object_store::path::Path` string; a fixed-width key `{prefix}{id[0..2]}/{id}` ([`LogOptions::fixed_width_keys`]) is stored as the 32 bytes of `id` (op bit 7, `path_len` 32), and only so |
//! |      … |          … | data: the object (op 1 and 3); nothing (op 2)                  |
//! | `len`−16 |       16 | checksum over bytes `0..len-16`: XXH3-128 (seed 0), little-endian |
//!
//! The data is whatever the caller put: here, sealed objects, so the checksum only detects torn
//! writes; tampering is the layer above's to detect.
//!
//! ## Index file (`log/<n>.index`, one per sealed segment)
//!
//! Written by the writer that seals segment `n` (before it starts `n + 1`) or compacts into it,
//! as `log/<n>.index.tmp`, synced and renamed; by any writer that finds a sealed segment
//! without a usable one. Never needed: without it the segment's records are read.
//!
//! | offset | size | field                                                                 |
//! |-------:|-----:|-----------------------------------------------------------------------|
//! |      0 |    8 | magic, ASCII `memfsidx`                                               |
//! |      8 |    4 | format version, u32: 3; an index of any other version is not used     |
//! |     12 |    4 | flags, u32: 0                                                         |
//! |     16 |    8 | segment number                                                        |
//! |     24 |    8 | the segment's length, which the index covers exactly                  |
//! |     32 |   16 | the segment's last 16 bytes (its last record's checksum), or zeros     |
//! |     48 |    8 | entries                                                               |
//! |     56 |    8 | the log's dead bytes (replaced and deleted puts, tombstones) from its base through this segment |
//! |     64 |    8 | offset of the metadata (after the blocks)                             |
//! |     72 |    8 | its length                                                            |
//! |     80 |    8 | bloom filter length, in 64-bit words                                  |
//! |     88 |    8 | number of blocks                                                      |
//! |     96 |   16 | checksum of the metadata                                              |
//! |    112 |   16 | checksum of bytes 0..112                                              |
//!
//! Blocks follow from offset 128: entries sorted by path, at most 1 KiB with the block's
//! checksum after them (unless one entry is larger; a reader takes any length). An entry is a
//! tag (bits 0–1: the record's op, 1 put, 2 delete, 3 compacted put; bit 7: the path is
//! a fixed-width key `{prefix}{id[0..2]}/{id}`, else it is stored as a u16 length and UTF-8), the key of
//! a put (op 1 or 3) as the first 16 bytes of `id` and of a delete as the 32 bytes of `id`,
//! then for a put the record's offset, length and time and for a compacted put its origin
//! (segment, offset), as varints (unsigned LEB128), the time as the zigzag varint of its
//! difference from the previous entry's in the block (the first's from 0). An entry found by
//! its 16 bytes is confirmed by its record (the whole id is there); a record whose id does not
//! start with them fails the index. The metadata is the bloom filter (little-endian u64 words,
//! 10 bits per entry, 7 probes at `(h1 + i·h2) mod bits`, `h1` and `h2 | 1` the two u64 halves
//! of XXH3-128 of the path) and then, per block, its offset (u64), length without checksum
//! (u32) and first path (u16 length, UTF-8): the shortest start of the block's first path that
//! sorts after the previous block's last path (the first block's: its whole first path).
//! Checksums are XXH3-128 seeded with the segment number, little-endian, except the header's,
//! seeded with 0.
//!
//! # Semantics
//!
//! - A path's e_tag is `<segment>:<offset>` (decimal) of the put that wrote its current
//!   version; compaction keeps it (op 3), so a compaction never fails a `PutMode::Update`.
//!   `Create` fails with `AlreadyExists` if the path exists, `Update` with `Precondition`
//!   unless the e_tag matches; `last_modified` is the record time, `version` is `None`.
//! - A delete appends a tombstone; deleting a missing path is `Ok` and appends nothing.
//!   Deletes follow the same durability rule as puts (lazy under a lazy prefix).
//! - `put_multipart` buffers the parts in memory and appends one put (`Overwrite`) on
//!   `complete`. `copy` reads and appends under one lock. Attributes are not stored:
//!   a put with attributes is `NotImplemented` (as for `LocalFileSystem`).
//! - When a segment would grow past the segment limit (4 MiB by default; a reader takes
//!   segments of any length), the writer syncs it, writes its index file, creates the next
//!   one (header synced, folder synced) and appends there.
//! - The last segment can have an index file covering its start (its header names how much):
//!   a compacted segment appended to since, or one a writer indexed so far after a synced put
//!   once half a segment of its records (2 MiB by default) were past what its index covered.
//!   Sealing writes the index of the whole segment over it.
//! - Opening reads the header of each segment's index file, and the records of the last
//!   segment past its index (at most about half a segment, and the zeros filled ahead of
//!   them), and of any sealed one without a usable index. A lookup asks the newest segment
//!   first; a put's lookup of a new path is usually answered by the bloom filters.
//! - After a synced put (looked at every 64), a writer compacts the log by itself once the dead
//!   records (replaced or deleted) reach a threshold (64 MiB by default,
//!   [`LogStore::with_auto_compact`]) and at least the live ones: the log stays within about
//!   twice what it holds, and so does the time to open it. The dead bytes of records an open
//!   read (whose older versions may be in older segments) are counted a few hundred paths a
//!   look, and all of them whenever the last segment is indexed: the count lags by at most
//!   half a segment.
//!
//! # Torn writes and corruption
//!
//! A record is *torn* if it is the last thing in the last segment and is incomplete, or fails
//! its checksum, or has a damaged `len`/`len_check` but verifies as a record ending exactly at
//! the end of the file; a zero-filled end of the file (a power loss after the size grew) is
//! torn too. A reader stops before a torn record (a writer may be appending it); a writer,
//! which holds the lock and so knows no one is, truncates it before appending.
//!
//! # Filled ahead
//!
//! A writer fills the last segment with zeros ahead of its records (1 MiB, never past the
//! segment limit) and writes its records over them, so that a commit's `fdatasync` writes its
//! data and not also the file's new size (`State::fill_ahead` has the measurements). Eight
//! zero bytes where a record would start end the segment's records. Each instance reads the
//! rest once per segment length it sees, to check it is all zeros: anything else there (a
//! crash's unsynced pages written back out of order, damage) is corruption, refused like a
//! damaged record followed by more data. A full segment is truncated to its last record
//! before it is sealed.
//!
//! A damaged record followed by more data, or an incomplete record followed by another
//! segment, is *corruption*: a crashed append leaves neither, and skipping the record would
//! silently drop everything after it. Opening the folder and every catch-up over it fail with
//! an error naming the file and offset (a reader looks once more holding the lock first, as
//! it may have seen a writer's truncation half-way). Recovery is by hand: truncating the
//! segment at that offset keeps everything before it. (A power loss with pages written back
//! out of order could in theory leave a damaged unsynced record followed by an intact one;
//! that is refused too. Only records after the last completed sync are at stake then, and
//! none of them was acknowledged as durable.)
//!
//! [`ObjectStore`]: object_store::ObjectStore

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod checksum;
mod error;
mod fixed_keys;
#[cfg(any(test, feature = "testing"))]
#[doc(hidden)]
pub mod fuzzing;
pub mod local_fs;
mod options;
mod record;
mod report;
mod segment;
mod state;
mod store;
mod table;

pub use local_fs::UnsafePath;
pub use options::LogOptions;
pub use report::{CompactReport, StoredBytes};
pub use store::LogStore;

/// The refusal inside an error of [`LogStore`] (a folder others may write, a link where a file
/// belongs), if that is what the error is; else the error as it was.
pub fn unsafe_path(e: object_store::Error) -> Result<UnsafePath, object_store::Error> {
    error::LogError::unsafe_path(e)
}
