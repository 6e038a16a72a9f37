//! What the fuzz targets share: the fixture store's keys (`tests/fixtures/format-1`), which
//! open the seeds' sealed objects and head, and one runtime for the async entry points.
//!
//! Everything here is read or built once per process, never per input (but the cheap opening
//! of the keyring, which gives keys that are not `Clone`).

use std::sync::OnceLock;

use memfs_crypt::{Credential, KeyFile, KeySlots, Keyring, RootKey, StoreKeys};

/// The fixture store's key file (32 raw bytes).
const KEY_FILE: [u8; 32] = *include_bytes!("../../tests/fixtures/format-1/store.key");

/// The fixture store's `memfs.keys`, as `examples/make_seeds.rs` copied it out of its log.
pub const FIXTURE_KEYS: &[u8] = include_bytes!("../seeds/keys/format-1");

/// The fixture store's key file as a credential.
pub fn key_file() -> Credential {
    Credential::KeyFile(KeyFile::from_bytes(KEY_FILE))
}

/// The keyring, store id and root of `memfs.keys` (`json`), unlocked with the fixture's key
/// file through memfs-crypt alone (its tag is not checked: the keys target does that).
fn unlock(json: &[u8]) -> (Keyring, [u8; 16], RootKey) {
    let keys: serde_json::Value = serde_json::from_slice(json).expect("the fixture's memfs.keys is JSON");
    let slots: KeySlots = serde_json::from_value(keys["slots"].clone()).expect("the fixture's key slots");
    let keyring: Keyring = serde_json::from_value(keys["keyring"].clone()).expect("the fixture's keyring");
    let hex = keys["store_id"].as_str().expect("the fixture's store id");
    let mut id = [0u8; 16];
    for (i, byte) in id.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("the fixture's store id is hex");
    }
    let root = slots.unlock(&key_file(), &id).expect("the fixture's key file opens its key slots").into_root();
    (keyring, id, root)
}

/// The keys the fixture store works with: its address keys and epoch keys.
pub fn store_keys() -> StoreKeys {
    static UNLOCKED: OnceLock<(Keyring, [u8; 16], RootKey)> = OnceLock::new();
    let (keyring, id, root) = UNLOCKED.get_or_init(|| unlock(FIXTURE_KEYS));
    keyring.open(root, id).expect("the fixture's keyring opens under its root")
}

/// The keys of the store whose `memfs.keys` is `json`, opened with the fixture's key file:
/// for `make_seeds`, which writes [`FIXTURE_KEYS`] itself.
pub fn store_keys_of(json: &[u8]) -> StoreKeys {
    let (keyring, id, root) = unlock(json);
    keyring.open(&root, &id).expect("the keyring opens under its root")
}

/// A current-thread runtime with timers (`memfs serve` bounds each request in time), built once.
pub fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_time().build().expect("a runtime"))
}
