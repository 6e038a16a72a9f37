//! What the fuzz targets share: the fixture store's key (`tests/fixtures/format-5`), which
//! opens the seeds' sealed objects and head, and one runtime for the async entry points.
//!
//! Everything here is read or built once per process, never per input.

use std::sync::OnceLock;

use memfs_crypt::{Credential, KeyFile, KeySlots, MasterKey, Unlocked};

/// The fixture store's key file (32 raw bytes).
const KEY_FILE: [u8; 32] = *include_bytes!("../../tests/fixtures/format-5/store.key");

/// The fixture store's `memfs.keys`, as `examples/make_seeds.rs` copied it out of its log.
pub const FIXTURE_KEYS: &[u8] = include_bytes!("../seeds/keys/format-5");

/// The fixture store's key file as a credential.
pub fn key_file() -> Credential {
    Credential::KeyFile(KeyFile::from_bytes(KEY_FILE))
}

/// The fixture store's master key, unlocked from [`FIXTURE_KEYS`] with its key file through
/// memfs-crypt alone, so that it does not depend on the store's format version.
pub fn master() -> &'static MasterKey {
    static MASTER: OnceLock<MasterKey> = OnceLock::new();
    MASTER.get_or_init(|| {
        let keys: serde_json::Value = serde_json::from_slice(FIXTURE_KEYS).expect("the fixture's memfs.keys is JSON");
        let slots: KeySlots = serde_json::from_value(keys["slots"].clone()).expect("the fixture's key slots");
        let hex = keys["store_id"].as_str().expect("the fixture's store id");
        let mut id = [0u8; 16];
        for (i, byte) in id.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("the fixture's store id is hex");
        }
        // A format-5 slot set: its slots wrap the master key itself.
        match slots.unlock(&key_file(), &id).expect("the fixture's key file opens its key slots").into_parts().1 {
            Unlocked::Master(master) => master,
            Unlocked::Root(_) => panic!("the fixture is a format-5 store"),
        }
    })
}

/// A current-thread runtime with timers (`memfs serve` bounds each request in time), built once.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime"))
}
