//! Integration tests of `memfs-store`, one binary, one module per concern:
//!
//! - `crash`: criterion 7 — a fixed command sequence with an injected failure at every
//!   operation (each class and any class, failing before or after the operation); afterwards
//!   the store opens, a full walk and `EncryptedRepository::check` pass, and it holds the
//!   state before or after the interrupted command;
//! - `abort`: the same with the process aborted at every operation, over a local folder;
//! - `conformance`: the repository conformance suite on every backend and on the fault wrapper;
//! - `gcs`: Google Cloud Storage through `object_store`'s GCS client against `gcs_stub`, a
//!   loopback XML-API stub: conformance, `gs://` configuration, generation preconditions on the
//!   wire, stale swaps and racing writers;
//! - `object_conformance`: the object-store semantics memfs relies on (conditional create and
//!   update, atomic under 16 racers, conditional GET, listing, delete) and the repository suite,
//!   on memory, the local folder, S3 (moto) and Azure (Azurite) (`backends`);
//! - `parts`: commands on directories of 600 and 3,000 files, read a leaf at a time by new
//!   clients, answer as on the whole tree in memory, and the tree they leave is the one a
//!   whole re-encoding makes (same root id);
//! - `log_store`: `LogStore` answers as `InMemory`, shares a folder between instances, survives
//!   torn tails at every length, refuses corruption, rolls segments over and compacts;
//! - `round_trips`: requests per command (a cold file view reads the head and the content, a
//!   warm one the head only, conditionally, or nothing within a staleness bound), the head's
//!   snapshot (verified, within its budget), the on-disk cache;
//! - `retries`: faults on the wire through a real cloud client and the GCS stub: transient
//!   errors retried, a lost answer to a head swap applied once;
//! - `scale`: criterion 3 — objects and bytes one `create` writes at 100 and 10,000 files.
//!
//! Figures (fault points tried, states checked, objects and bytes per `create`) go to stderr:
//! `cargo nextest run -p memfs-store --no-capture` shows them.

#[path = "store/support.rs"]
mod support;

#[path = "store/abort.rs"]
mod abort;
#[path = "store/backends.rs"]
mod backends;
#[path = "store/conformance.rs"]
mod conformance;
#[path = "store/crash.rs"]
mod crash;
#[path = "store/fixture.rs"]
mod fixture;
#[path = "store/gcs.rs"]
mod gcs;
#[path = "store/gcs_stub.rs"]
mod gcs_stub;
#[path = "store/log_index.rs"]
mod log_index;
#[path = "store/log_store.rs"]
mod log_store;
#[path = "store/object_conformance.rs"]
mod object_conformance;
#[path = "store/parts.rs"]
mod parts;
#[path = "store/retries.rs"]
mod retries;
#[path = "store/round_trips.rs"]
mod round_trips;
#[path = "store/scale.rs"]
mod scale;
