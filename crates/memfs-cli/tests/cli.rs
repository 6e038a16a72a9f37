//! The `memfs` binary end to end: one integration-test binary, a module per area.

#[path = "cli/agent.rs"]
mod agent;
#[path = "cli/attacks_integrity.rs"]
mod attacks_integrity;
#[path = "cli/attacks_local.rs"]
mod attacks_local;
#[path = "cli/bounded_answers.rs"]
mod bounded_answers;
#[path = "cli/browse.rs"]
mod browse;
#[path = "cli/cloud.rs"]
mod cloud;
#[path = "cli/concurrency.rs"]
mod concurrency;
#[cfg(target_os = "linux")]
#[path = "cli/core_dump.rs"]
mod core_dump;
#[path = "cli/crash.rs"]
mod crash;
#[path = "cli/custody.rs"]
mod custody;
#[path = "cli/exec.rs"]
mod exec;
#[path = "cli/expire.rs"]
mod expire;
#[path = "cli/fixture_store.rs"]
mod fixture_store;
#[path = "cli/fleet.rs"]
mod fleet;
#[path = "cli/flood.rs"]
mod flood;
#[path = "cli/help.rs"]
mod help;
#[path = "cli/history.rs"]
mod history;
#[path = "cli/hostile_custody.rs"]
mod hostile_custody;
#[path = "cli/hostile_slots.rs"]
mod hostile_slots;
#[path = "cli/import_export.rs"]
mod import_export;
#[path = "cli/keys.rs"]
mod keys;
#[path = "cli/leak.rs"]
mod leak;
#[path = "cli/mcp.rs"]
mod mcp;
#[path = "cli/missed_rotation.rs"]
mod missed_rotation;
#[path = "cli/policy.rs"]
mod policy;
#[path = "cli/policy_exec.rs"]
mod policy_exec;
#[path = "cli/purge.rs"]
mod purge;
#[path = "cli/rotation.rs"]
mod rotation;
#[path = "cli/serve.rs"]
mod serve;
#[path = "cli/shred.rs"]
mod shred;
#[path = "cli/store_args.rs"]
mod store_args;
#[path = "cli/support.rs"]
mod support;
#[path = "cli/ui.rs"]
mod ui;
#[path = "cli/versioned.rs"]
mod versioned;
