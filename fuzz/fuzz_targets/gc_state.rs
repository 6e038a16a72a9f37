//! gc's state (`gc.state`) decoded as gc decodes it; what decodes encodes to a state that
//! decodes and encodes again to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs_store::fuzzing::reencode_gc_state;

fuzz_target!(|data: &[u8]| {
    let Ok(state) = reencode_gc_state(data) else { return };
    assert_eq!(reencode_gc_state(&state).expect("an encoded gc state decodes"), state);
});
