//! A directory page's plaintext decoded as a read decodes it; what decodes encodes to a page
//! that decodes and encodes again to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs_store::fuzzing::reencode_page;

fuzz_target!(|data: &[u8]| {
    let Ok(page) = reencode_page(data) else { return };
    assert_eq!(reencode_page(&page).expect("an encoded page decodes"), page);
});
