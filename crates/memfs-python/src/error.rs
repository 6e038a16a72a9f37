//! The exceptions the native module raises, one per thing a caller may want to catch:
//!
//! - `MemfsError`: the base of all;
//! - `NoStoreError`: no store at that location (create one with `Store.init`);
//! - `CredentialError`: the store is encrypted and the credential given does not open it (none
//!   given, a wrong passphrase or key file, no key slot of the keys kept outside memfs opens);
//! - `StoreError`: the store could not be read or written (unreachable, damaged, refused);
//! - `OutcomeUnknownError`, a `StoreError`: a change whose answer was lost may have landed, and
//!   the store could not be read long enough to know; it must not be made again blindly (the
//!   message says how to find out).
//!
//! The message is memfs's own: it names the store (credentials in its URL redacted) and never
//! holds a key or passphrase.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(memfs._memfs, MemfsError, PyException, "An error of memfs.");
create_exception!(memfs._memfs, NoStoreError, MemfsError, "No memfs store at this location.");
create_exception!(memfs._memfs, CredentialError, MemfsError, "The credential given does not open the store.");
create_exception!(memfs._memfs, StoreError, MemfsError, "The store could not be read or written.");
create_exception!(
    memfs._memfs,
    OutcomeUnknownError,
    StoreError,
    "A change whose answer was lost may have landed: do not make it again blindly."
);

/// Adds the exceptions to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("MemfsError", py.get_type::<MemfsError>())?;
    m.add("NoStoreError", py.get_type::<NoStoreError>())?;
    m.add("CredentialError", py.get_type::<CredentialError>())?;
    m.add("StoreError", py.get_type::<StoreError>())?;
    m.add("OutcomeUnknownError", py.get_type::<OutcomeUnknownError>())?;
    Ok(())
}

/// A memfs error as the exception of its kind.
pub(crate) fn raise(e: memfs::Error) -> PyErr {
    let message = memfs::error_chain(&e);
    match e.kind() {
        memfs::ErrorKind::NoStore => NoStoreError::new_err(message),
        memfs::ErrorKind::Credential => CredentialError::new_err(message),
        memfs::ErrorKind::Store => StoreError::new_err(message),
        memfs::ErrorKind::OutcomeUnknown => OutcomeUnknownError::new_err(message),
        _ => MemfsError::new_err(message),
    }
}
