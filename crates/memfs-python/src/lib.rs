//! memfs for Python (issue 20): the native module `memfs._memfs`, which the Python package
//! `memfs` (in `python/memfs`) wraps with typed classes and the Anthropic SDK's memory tools.
//!
//! Built into one abi3 wheel per platform (CPython 3.9 and later) by maturin
//! (`pyproject.toml`); `scripts/test-packages.sh` builds it, installs it into a fresh
//! virtualenv and runs it with the real SDK's tool runners.
//!
//! The workspace's module map: `crates/README.md`.
//! # Modules
//!
//! - `error`: the exceptions (`MemfsError` and its kinds) and how a memfs error maps to one;
//! - `runtime`: the one tokio runtime of the process, entered with the GIL released;
//! - `store`: `NativeStore`, an open store: open, init, call, log, undo, restore, flush.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

use pyo3::prelude::*;

mod error;
mod runtime;
mod store;

/// The native module: `NativeStore` and the exceptions.
#[pymodule]
fn _memfs(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<store::NativeStore>()?;
    error::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
