//! An object id (32 bytes) and sealed bytes, read as each kind with the fixture store's key:
//! the AEAD, the id check, then the kind's decoder (id zero as kind Head is the head, with its
//! snapshot). A sealed object opens as one kind at most.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memfs_core::ObjectId;
use memfs_crypt::ObjectKind;
use memfs_store::fuzzing::Keys;

fuzz_target!(|data: &[u8]| {
    let Some((id, sealed)) = data.split_first_chunk::<32>() else { return };
    let keys = Keys::new(memfs_fuzz::store_keys());
    let kinds = [ObjectKind::Blob, ObjectKind::Dir, ObjectKind::Commit, ObjectKind::Head, ObjectKind::Policy];
    let opened = kinds.iter().filter(|&&k| keys.open_sealed(k, &ObjectId::from_bytes(*id), sealed).is_ok()).count();
    assert!(opened <= 1, "opened as {opened} kinds");
});
