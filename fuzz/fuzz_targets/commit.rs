//! A commit's plaintext decoded as a read decodes it; what decodes encodes to a commit that
//! decodes and encodes again to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs_store::fuzzing::reencode_commit;

fuzz_target!(|data: &[u8]| {
    let Ok(commit) = reencode_commit(data) else { return };
    assert_eq!(reencode_commit(&commit).expect("an encoded commit decodes"), commit);
});
