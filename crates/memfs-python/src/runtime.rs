//! The process's tokio runtime: every store's I/O runs on it, with the GIL released, so other
//! Python threads (and an asyncio loop that awaits a call in a worker thread) go on meanwhile.

use std::future::Future;
use std::sync::OnceLock;

use pyo3::Python;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// Two workers: a store's commits are short and mostly wait on storage; a process with many
/// stores shares them.
static RUNTIME: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();

/// Runs `future` to completion on the runtime, without holding the GIL.
pub(crate) fn block_on<F>(py: Python<'_>, future: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("memfs")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    });
    let runtime =
        runtime.as_ref().map_err(|e| PyRuntimeError::new_err(format!("memfs cannot start its runtime: {e}")))?;
    Ok(py.detach(|| runtime.block_on(future)))
}
