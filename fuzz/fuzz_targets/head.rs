//! The head's plaintext, as the head is read once the AEAD has opened it: decoded, and its
//! inline objects verified against their ids (the fixture store's keys), decoded and assembled
//! into directories. What decodes encodes to a head that encodes again the same and that
//! verifies exactly when the original did.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs_store::fuzzing::{Keys, reencode_head};

fuzz_target!(|data: &[u8]| {
    let verified = Keys::new(memfs_fuzz::store_keys()).open_head_plain(data).is_ok();
    let Ok(json) = reencode_head(data) else { return };
    assert_eq!(reencode_head(&json).expect("an encoded head decodes"), json);
    assert_eq!(Keys::new(memfs_fuzz::store_keys()).open_head_plain(&json).is_ok(), verified);
});
