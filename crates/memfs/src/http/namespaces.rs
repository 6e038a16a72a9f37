//! The namespaces' stores, opened on first use and shared by every request.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OnceCell, Semaphore};

use crate::engine::{Memfs, OpenOptions};
use crate::error::Error;
use crate::url::Location;

/// The stores of the namespaces under one location, all unlocked by one set of options.
///
/// Namespace `NAME` is the store at `location` with [`Location::namespace`]`(NAME)`: its own
/// store under `PREFIX/ns/NAME/`, with its own keys, created beforehand with
/// `memfs --namespace NAME init` (or [`Memfs::init`]) using the credential in `options`. Each
/// is opened on its first request, once, and then shared by all requests (an `Arc<Memfs>`);
/// an opening that fails is tried again by the next request. A server can open the stores it
/// knows of before it listens, with [`Namespaces::get`], so that a wrong credential stops it at
/// start rather than answering every request with a failure.
///
/// At most `MAX_OPENINGS` (2) stores are opened at once: opening unlocks a store's keys, which
/// with a passphrase runs Argon2id on the blocking pool (up to
/// [`KeySlots::MAX_UNLOCK_WORK_KIB`](memfs_crypt::KeySlots::MAX_UNLOCK_WORK_KIB) of work, a
/// few seconds of one core and up to 2 GiB of memory per slot). A tenant who rewrites its own
/// `memfs.keys` with costly slots then holds at most one of those permits (the openings of
/// one namespace wait for each other) and never an async worker: stores already open answer as before, and other first
/// openings wait their turn.
///
/// Under `memory://` (which has no namespaces) each namespace gets its own ephemeral store,
/// for tests and trials.
pub struct Namespaces {
    location: Location,
    options: OpenOptions,
    stores: Mutex<HashMap<String, Arc<OnceCell<Arc<Memfs>>>>>,
    openings: Semaphore,
}

/// How many stores may be opened (and so unlocked) at once. Two: one costly unlock cannot take
/// every permit by itself, and with two it is two cores and 4 GiB at most, whatever the
/// tenants' key slots ask for.
const MAX_OPENINGS: usize = 2;

impl Namespaces {
    /// The namespaces under `location`, opened with `options` (dialect, credential, actor…).
    pub fn new(location: impl Into<Location>, options: OpenOptions) -> Self {
        Namespaces {
            location: location.into(),
            options,
            stores: Mutex::default(),
            openings: Semaphore::new(MAX_OPENINGS),
        }
    }

    /// The store of `namespace`, opened on the first call.
    pub async fn get(&self, namespace: &str) -> Result<Arc<Memfs>, Error> {
        let cell = {
            let mut stores = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
            stores.entry(namespace.to_owned()).or_default().clone()
        };
        // Concurrent first requests wait for one opening rather than each opening the store.
        let memfs = cell
            .get_or_try_init(|| async {
                // Never closed, so acquiring only waits.
                let _permit = self.openings.acquire().await.expect("the openings semaphore is never closed");
                Memfs::open_with(self.location_of(namespace), &self.options).await.map(Arc::new)
            })
            .await?;
        Ok(memfs.clone())
    }

    fn location_of(&self, namespace: &str) -> Location {
        if self.location.url().split_once("://").is_some_and(|(scheme, _)| scheme == "memory") {
            self.location.clone()
        } else {
            self.location.clone().namespace(namespace)
        }
    }

    /// The stores opened so far, by namespace.
    pub fn opened(&self) -> BTreeMap<String, Arc<Memfs>> {
        let stores = self.stores.lock().unwrap_or_else(PoisonError::into_inner);
        stores.iter().filter_map(|(ns, cell)| Some((ns.clone(), cell.get()?.clone()))).collect()
    }

    /// Records every opened store's pending last-access days ([`Memfs::flush`]); all are
    /// flushed even if one fails, and the first failure is returned. Returns how many files'
    /// days were recorded, in all.
    pub async fn flush(&self) -> Result<usize, Error> {
        let mut files = 0;
        let mut first_error = None;
        for memfs in self.opened().into_values() {
            match memfs.flush().await {
                Ok(n) => files += n,
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(files),
        }
    }
}

impl fmt::Debug for Namespaces {
    /// The location (redacted) and the namespaces opened; never the credential.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let opened: Vec<String> = self.opened().into_keys().collect();
        f.debug_struct("Namespaces").field("location", &self.location).field("opened", &opened).finish_non_exhaustive()
    }
}
