//! A policy object decoded as a read decodes it (its custom rules' patterns compiled); what
//! decodes encodes to a policy that decodes and encodes again to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs_core::Policy;

fuzz_target!(|data: &[u8]| {
    let Ok(policy) = serde_json::from_slice::<Policy>(data) else { return };
    let json = serde_json::to_vec(&policy).expect("a policy encodes");
    let again = serde_json::from_slice::<Policy>(&json).expect("an encoded policy decodes");
    assert_eq!(serde_json::to_vec(&again).unwrap(), json);
});
