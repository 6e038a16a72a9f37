//! Integration tests of the `memfs` library through its public API: every command, both
//! dialects, against the references they follow.
//!
//! - `sdk_python`: the Python SDK suite (`anthropic==2.10.0`, `test_filesystem.py`), `python-sdk`
//!   dialect, with the exact strings the 2.10.0 source produces;
//! - `sdk_typescript`: the TypeScript SDK suite's cases that apply, `spec` dialect;
//! - `spec_page`: the documentation page's examples and strings, `spec` dialect;
//! - `safety`: refused paths, root guards, malformed input, both dialects, tree unchanged;
//! - `names`: format characters refused and one name per Unicode normal form, both dialects;
//! - `protocol`: the `memfs exec` line protocol;
//! - `outcome`: a command whose commit's answer was lost on an unreadable store: outcome unknown;
//! - `tenants`: namespaces are separate stores with separate keys, checked on the raw bytes;
//! - `import_export`: `Memfs::import` and `Memfs::export`, one commit, exact round trip;
//! - `memory_bound`: 100,000 commands in one process stay under 256 MB.
//!
//! `MEMFS_TEST_BACKEND` (memory, local, s3, azure) picks the backend of the command suites.
//!
//! Every comparison is exact and prints both sides in full, with escapes, on a mismatch.

#[macro_use]
#[path = "integration/support.rs"]
mod support;

#[path = "integration/expiration.rs"]
mod expiration;
#[path = "integration/import_export.rs"]
mod import_export;
#[path = "integration/memory_bound.rs"]
mod memory_bound;
#[path = "integration/names.rs"]
mod names;
#[path = "integration/outcome.rs"]
mod outcome;
#[path = "integration/pagination.rs"]
mod pagination;
#[path = "integration/protocol.rs"]
mod protocol;
#[path = "integration/race.rs"]
mod race;
#[path = "integration/safeguards.rs"]
mod safeguards;
#[path = "integration/safety.rs"]
mod safety;
#[path = "integration/sdk_python.rs"]
mod sdk_python;
#[path = "integration/sdk_typescript.rs"]
mod sdk_typescript;
#[path = "integration/sensitive_filter.rs"]
mod sensitive_filter;
#[path = "integration/spec_page.rs"]
mod spec_page;
#[path = "integration/tenants.rs"]
mod tenants;
