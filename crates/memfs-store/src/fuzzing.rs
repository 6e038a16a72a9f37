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
pub use crate::log_store::fuzzing::{LogParsed, LogRecord, encode_log_record, parse_log_record};
