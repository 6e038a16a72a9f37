//! No core dumps from the long-running servers (`memfs serve`, `memfs mcp`, `memfs ui`).
//!
//! A server holds a store's keys for as long as it runs; a crash that wrote its memory to a
//! core file (or handed it to a crash reporter such as systemd-coredump or apport) would put
//! them on disk, readable by whoever reads crash reports. So, at start, before any key is
//! unlocked: the core file size limit is set to 0, hard and soft (a child cannot raise it
//! again), and on Linux the process is made not dumpable (`PR_SET_DUMPABLE` 0), which also
//! stops the kernel's core pipe to a crash reporter, which ignores `RLIMIT_CORE`, and keeps
//! other processes of the same user from reading its memory through `/proc/PID/mem` or
//! attaching `ptrace` without `CAP_SYS_PTRACE`. Both through `rustix`'s safe wrappers: no
//! `unsafe` here.

/// Turns core dumps off for this process; an error names the call that failed.
#[cfg(unix)]
pub(crate) fn disable() -> anyhow::Result<()> {
    use anyhow::Context;
    use rustix::process::{Resource, Rlimit, setrlimit};

    let none = Rlimit { current: Some(0), maximum: Some(0) };
    setrlimit(Resource::Core, none).context("cannot turn core dumps off (setrlimit RLIMIT_CORE 0)")?;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable)
        .context("cannot turn core dumps off (prctl PR_SET_DUMPABLE 0)")?;
    Ok(())
}

/// Windows writes no core file of a process unless asked (Windows Error Reporting's
/// LocalDumps is off by default): nothing to turn off.
#[cfg(not(unix))]
pub(crate) fn disable() -> anyhow::Result<()> {
    Ok(())
}
