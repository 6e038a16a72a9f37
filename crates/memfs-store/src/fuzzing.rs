//! Entry points for the fuzz targets in `fuzz/`: **not part of the API**, hidden from the
//! docs, and free to change with any release.
//!
//! Each is the decoder that a read runs on bytes an attacker who can write the store chooses
//! (log records, `memfs.keys`, sealed objects, directory pages, commits, the head, gc's
//! state), reached with the calls the read makes, minus the I/O. The `reencode_*` functions
//! decode and encode again, so that a target can check that a round trip is stable. Tests
//! read and change a head through [`Keys::decode_head`], [`HeadObject`] and [`encode_head`].

pub use crate::encrypted::fuzzing::{
    Keys, encode_head, open_keys, reencode_commit, reencode_gc_state, reencode_head, reencode_keys, reencode_page,
};
pub use crate::format::{HeadObject, InlineKind, InlineObject};
pub use memfs_log::fuzzing::{LogParsed, LogRecord};

/// [`memfs_log::fuzzing::parse_log_record`] in a store folder's log (object paths stored as
/// their ids).
pub fn parse_log_record(bytes: &[u8], eof: bool) -> LogParsed {
    memfs_log::fuzzing::parse_log_record(bytes, eof, Some("objects/"))
}

/// [`memfs_log::fuzzing::encode_log_record`] in a store folder's log.
pub fn encode_log_record(r: &LogRecord) -> Option<Vec<u8>> {
    memfs_log::fuzzing::encode_log_record(r, Some("objects/"))
}
