//! Fault injection for crash-safety tests: an [`ObjectStore`] wrapper that counts operations
//! and fails one of them, or kills the process there.
//!
//! [`FaultStore`] wraps any store and reports every operation to a shared [`FaultPlan`]. The
//! plan counts operations by [`OpClass`] (and the bytes put), and, once armed with
//! [`FaultPlan::arm`], turns the Nth operation of a class (or of any class) into a [`Fault`]:
//! an error before the operation runs, an error after it ran (the write happened but the
//! caller is told it failed, as after a timeout), or `std::process::abort()` before it runs
//! (used from a child process, to leave the storage exactly as a crash would). Each arming
//! fires once.
//!
//! A test first runs its commands with the plan disarmed to learn how many operations each
//! takes (the fault points), then, for every N, runs them again on a fresh store with the
//! fault at N.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use object_store::{ObjectStoreExt, memory::InMemory, path::Path};
//! use memfs_store::fault::{Fault, FaultStore, OpClass, Target};
//!
//! let store = FaultStore::new(InMemory::new());
//! let plan = store.plan().clone();
//! plan.arm(Target::Class(OpClass::Put), 2, Fault::Fail);
//! store.put(&Path::from("a"), "1".into()).await?;
//! assert!(store.put(&Path::from("b"), "2".into()).await.is_err());
//! store.put(&Path::from("c"), "3".into()).await?; // a plan fires once
//! assert_eq!(plan.count(OpClass::Put), 3);
//! assert_eq!(plan.injected(), 1);
//! assert_eq!(store.to_string(), "FaultStore(InMemory)");
//! # Ok(()) }
//! ```

use std::fmt;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use async_trait::async_trait;
use bytes::Bytes;
use futures::stream::{self, BoxStream, StreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore, PutMultipartOptions,
    PutOptions, PutPayload, PutResult, RenameOptions, Result,
};

/// A class of storage operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpClass {
    /// Writes: `put_opts`, `put_multipart_opts` (counted once, when the upload starts),
    /// `copy_opts` and `rename_opts`.
    Put,
    /// Reads: `get_opts` (also `get`, `head`, `get_range`) and `get_ranges`.
    Get,
    /// Listings: `list`, `list_with_offset`, `list_with_delimiter`.
    List,
    /// Deletions: each location passed to `delete_stream` (also `delete`).
    Delete,
}

impl OpClass {
    /// Every class.
    pub const ALL: [OpClass; 4] = [OpClass::Put, OpClass::Get, OpClass::List, OpClass::Delete];

    fn index(self) -> usize {
        self as usize
    }

    fn name(self) -> &'static str {
        match self {
            OpClass::Put => "put",
            OpClass::Get => "get",
            OpClass::List => "list",
            OpClass::Delete => "delete",
        }
    }
}

impl fmt::Display for OpClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which operations an armed plan counts towards its Nth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// Operations of one class.
    Class(OpClass),
    /// Operations of every class.
    Any,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Class(c) => c.fmt(f),
            Target::Any => f.write_str("any"),
        }
    }
}

/// What happens at the chosen operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Return an error without running the operation.
    Fail,
    /// Run the operation, then return an error (its effect stays: the caller cannot tell).
    FailAfter,
    /// Abort the process before the operation runs.
    Abort,
}

impl Fault {
    fn code(self) -> u8 {
        match self {
            Fault::Fail => 1,
            Fault::FailAfter => 2,
            Fault::Abort => 3,
        }
    }

    fn from_code(code: u8) -> Option<Fault> {
        match code {
            1 => Some(Fault::Fail),
            2 => Some(Fault::FailAfter),
            3 => Some(Fault::Abort),
            _ => None,
        }
    }
}

/// The error a [`FaultStore`] returns at an injected fault, as the `source` of
/// `object_store::Error::Generic`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectedFault {
    /// The operation's class.
    pub class: OpClass,
    /// Its ordinal among all operations of the store's plan (1-based).
    pub op: u64,
}

impl fmt::Display for InjectedFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "injected fault at {} (operation {})", self.class, self.op)
    }
}

impl std::error::Error for InjectedFault {}

/// Operation counts, as read at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCounts {
    /// Writes.
    pub put: u64,
    /// Reads.
    pub get: u64,
    /// Listings.
    pub list: u64,
    /// Deletions.
    pub delete: u64,
    /// Payload bytes of `put_opts` calls.
    pub bytes_put: u64,
}

impl OpCounts {
    /// Operations of one class.
    pub fn get(&self, class: OpClass) -> u64 {
        match class {
            OpClass::Put => self.put,
            OpClass::Get => self.get,
            OpClass::List => self.list,
            OpClass::Delete => self.delete,
        }
    }

    /// Operations of every class.
    pub fn total(&self) -> u64 {
        self.put + self.get + self.list + self.delete
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &OpCounts) -> OpCounts {
        OpCounts {
            put: self.put - earlier.put,
            get: self.get - earlier.get,
            list: self.list - earlier.list,
            delete: self.delete - earlier.delete,
            bytes_put: self.bytes_put - earlier.bytes_put,
        }
    }
}

/// No target armed.
const TARGET_NONE: u8 = 0;
/// `Target::Any`; a class is `TARGET_CLASS + index`.
const TARGET_ANY: u8 = 1;
const TARGET_CLASS: u8 = 2;

/// Counters and the armed fault, shared by every [`FaultStore`] built with it.
///
/// Lock-free: concurrent operations each take a distinct ordinal, so exactly one of them is
/// the Nth.
#[derive(Debug, Default)]
pub struct FaultPlan {
    counts: [AtomicU64; 4],
    any: AtomicU64,
    bytes_put: AtomicU64,
    /// `TARGET_*`.
    target: AtomicU8,
    /// The absolute ordinal (in the target's counter) that faults.
    at: AtomicU64,
    /// `Fault::code`.
    fault: AtomicU8,
    injected: AtomicU64,
    /// Faults to arm one after the other, each once the one before it has fired
    /// ([`FaultPlan::then`]).
    queued: std::sync::Mutex<std::collections::VecDeque<(Target, u64, Fault)>>,
    /// Puts and gets started and not finished, and the most there were at once.
    in_flight: AtomicU64,
    peak_in_flight: AtomicU64,
}

/// A put or get in flight, counted by its [`FaultPlan`] until dropped.
struct InFlight<'a>(&'a FaultPlan);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

impl FaultPlan {
    /// A plan that only counts.
    pub fn new() -> Arc<Self> {
        Arc::new(FaultPlan::default())
    }

    /// Makes the `nth` operation (1-based) of `target` from now on fault with `fault`, once.
    /// Replaces any armed fault.
    pub fn arm(&self, target: Target, nth: u64, fault: Fault) {
        assert!(nth >= 1, "operations are counted from 1");
        // Disarm first, so no operation sees a half-written plan as armed.
        self.target.store(TARGET_NONE, Ordering::SeqCst);
        let (code, counter) = match target {
            Target::Any => (TARGET_ANY, &self.any),
            Target::Class(c) => (TARGET_CLASS + c as u8, &self.counts[c.index()]),
        };
        self.at.store(counter.load(Ordering::SeqCst) + nth, Ordering::SeqCst);
        self.fault.store(fault.code(), Ordering::SeqCst);
        self.target.store(code, Ordering::SeqCst);
    }

    /// Makes the `nth` operation of `target` fault with `fault` once, counted from when the
    /// fault armed before it has fired (from now if none is armed): a sequence of faults, as
    /// a lost answer followed by a failed read.
    pub fn then(&self, target: Target, nth: u64, fault: Fault) {
        let mut queued = self.queued.lock().unwrap_or_else(|p| p.into_inner());
        match self.is_armed() || !queued.is_empty() {
            true => queued.push_back((target, nth, fault)),
            false => self.arm(target, nth, fault),
        }
    }

    /// Cancels the armed fault, if it has not fired, and those queued after it.
    pub fn disarm(&self) {
        self.queued.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.target.store(TARGET_NONE, Ordering::SeqCst);
    }

    /// Whether a fault is armed and has not fired yet.
    pub fn is_armed(&self) -> bool {
        self.target.load(Ordering::SeqCst) != TARGET_NONE
    }

    /// Operations of `class` so far.
    pub fn count(&self, class: OpClass) -> u64 {
        self.counts[class.index()].load(Ordering::SeqCst)
    }

    /// Operations of every class so far.
    pub fn total(&self) -> u64 {
        self.any.load(Ordering::SeqCst)
    }

    /// All counters.
    pub fn counts(&self) -> OpCounts {
        OpCounts {
            put: self.count(OpClass::Put),
            get: self.count(OpClass::Get),
            list: self.count(OpClass::List),
            delete: self.count(OpClass::Delete),
            bytes_put: self.bytes_put.load(Ordering::SeqCst),
        }
    }

    /// The most puts and gets that were in flight at once so far.
    pub fn peak_in_flight(&self) -> u64 {
        self.peak_in_flight.load(Ordering::SeqCst)
    }

    fn start(&self) -> InFlight<'_> {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.peak_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(self)
    }

    /// How many faults have fired.
    pub fn injected(&self) -> u64 {
        self.injected.load(Ordering::SeqCst)
    }

    /// Counts one operation; returns the fault to apply to it, if it is the chosen one.
    /// Aborts the process here for [`Fault::Abort`].
    fn hit(&self, class: OpClass) -> Option<(Fault, InjectedFault)> {
        let nth_of_class = self.counts[class.index()].fetch_add(1, Ordering::SeqCst) + 1;
        let nth_of_any = self.any.fetch_add(1, Ordering::SeqCst) + 1;
        let target = self.target.load(Ordering::SeqCst);
        let ordinal = match target {
            TARGET_NONE => return None,
            TARGET_ANY => nth_of_any,
            t if t == TARGET_CLASS + class as u8 => nth_of_class,
            _ => return None,
        };
        if ordinal != self.at.load(Ordering::SeqCst) {
            return None;
        }
        // Fire once: only the operation that disarms the plan applies the fault.
        if self.target.compare_exchange(target, TARGET_NONE, Ordering::SeqCst, Ordering::SeqCst).is_err() {
            return None;
        }
        let fault = Fault::from_code(self.fault.load(Ordering::SeqCst))?;
        self.injected.fetch_add(1, Ordering::SeqCst);
        if let Some((target, nth, next)) = self.queued.lock().unwrap_or_else(|p| p.into_inner()).pop_front() {
            self.arm(target, nth, next);
        }
        if fault == Fault::Abort {
            std::process::abort();
        }
        Some((fault, InjectedFault { class, op: nth_of_any }))
    }
}

fn injected_error(fault: InjectedFault) -> object_store::Error {
    object_store::Error::Generic { store: "FaultStore", source: Box::new(fault) }
}

/// Runs `op` under `fault`: not at all ([`Fault::Fail`]), or discarding its result
/// ([`Fault::FailAfter`]).
async fn apply<T, F>(fault: Option<(Fault, InjectedFault)>, op: F) -> Result<T>
where
    F: Future<Output = Result<T>>,
{
    match fault {
        None => op.await,
        Some((Fault::FailAfter, e)) => {
            let _ = op.await;
            Err(injected_error(e))
        }
        Some((_, e)) => Err(injected_error(e)),
    }
}

/// A failed listing: a stream holding one error.
fn failed_stream<T: Send + 'static>(e: InjectedFault) -> BoxStream<'static, Result<T>> {
    stream::once(async move { Err(injected_error(e)) }).boxed()
}

/// An object store that counts its operations and injects the faults its [`FaultPlan`] holds.
#[derive(Debug)]
pub struct FaultStore<T: ObjectStore> {
    inner: Arc<T>,
    plan: Arc<FaultPlan>,
}

impl<T: ObjectStore> FaultStore<T> {
    /// Wraps `inner` with a new plan that only counts.
    pub fn new(inner: T) -> Self {
        FaultStore::with_plan(inner, FaultPlan::new())
    }

    /// Wraps `inner`, reporting to `plan` (which other stores may share).
    pub fn with_plan(inner: T, plan: Arc<FaultPlan>) -> Self {
        FaultStore { inner: Arc::new(inner), plan }
    }

    /// The plan this store reports to.
    pub fn plan(&self) -> &Arc<FaultPlan> {
        &self.plan
    }

    /// The wrapped store.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

impl<T: ObjectStore> fmt::Display for FaultStore<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FaultStore({})", self.inner)
    }
}

#[async_trait]
#[deny(clippy::missing_trait_methods)]
impl<T: ObjectStore> ObjectStore for FaultStore<T> {
    async fn put_opts(&self, location: &Path, payload: PutPayload, opts: PutOptions) -> Result<PutResult> {
        let fault = self.plan.hit(OpClass::Put);
        if fault.as_ref().is_none_or(|(f, _)| *f == Fault::FailAfter) {
            self.plan.bytes_put.fetch_add(payload.content_length() as u64, Ordering::SeqCst);
        }
        let _flight = self.plan.start();
        apply(fault, self.inner.put_opts(location, payload, opts)).await
    }

    async fn put_multipart_opts(&self, location: &Path, opts: PutMultipartOptions) -> Result<Box<dyn MultipartUpload>> {
        let fault = self.plan.hit(OpClass::Put);
        apply(fault, self.inner.put_multipart_opts(location, opts)).await
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let fault = self.plan.hit(OpClass::Get);
        let _flight = self.plan.start();
        apply(fault, self.inner.get_opts(location, options)).await
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let fault = self.plan.hit(OpClass::Get);
        let _flight = self.plan.start();
        apply(fault, self.inner.get_ranges(location, ranges)).await
    }

    fn delete_stream(&self, locations: BoxStream<'static, Result<Path>>) -> BoxStream<'static, Result<Path>> {
        // One location, one operation: each is deleted through the inner store on its own, so
        // that a fault lands on exactly one of them.
        let inner = Arc::clone(&self.inner);
        let plan = Arc::clone(&self.plan);
        locations
            .then(move |location| {
                let inner = Arc::clone(&inner);
                let plan = Arc::clone(&plan);
                async move {
                    let location = location?;
                    let fault = plan.hit(OpClass::Delete);
                    let delete = async move {
                        let one = stream::once(async move { Ok(location) }).boxed();
                        let mut results = inner.delete_stream(one);
                        results.next().await.unwrap_or_else(|| {
                            Err(object_store::Error::Generic {
                                store: "FaultStore",
                                source: "the inner store's delete_stream yielded nothing".into(),
                            })
                        })
                    };
                    apply(fault, delete).await
                }
            })
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        match self.plan.hit(OpClass::List) {
            None | Some((Fault::Abort, _)) => self.inner.list(prefix),
            Some((_, e)) => failed_stream(e),
        }
    }

    fn list_with_offset(&self, prefix: Option<&Path>, offset: &Path) -> BoxStream<'static, Result<ObjectMeta>> {
        match self.plan.hit(OpClass::List) {
            None | Some((Fault::Abort, _)) => self.inner.list_with_offset(prefix, offset),
            Some((_, e)) => failed_stream(e),
        }
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let fault = self.plan.hit(OpClass::List);
        apply(fault, self.inner.list_with_delimiter(prefix)).await
    }

    async fn copy_opts(&self, from: &Path, to: &Path, options: CopyOptions) -> Result<()> {
        let fault = self.plan.hit(OpClass::Put);
        apply(fault, self.inner.copy_opts(from, to, options)).await
    }

    async fn rename_opts(&self, from: &Path, to: &Path, options: RenameOptions) -> Result<()> {
        let fault = self.plan.hit(OpClass::Put);
        apply(fault, self.inner.rename_opts(from, to, options)).await
    }
}

#[cfg(test)]
mod tests {
    use futures::TryStreamExt;
    use object_store::memory::InMemory;
    use object_store::{ObjectStoreExt, PutMode};

    use super::*;

    fn injected(e: &object_store::Error) -> &InjectedFault {
        match e {
            object_store::Error::Generic { store: "FaultStore", source } => {
                source.downcast_ref::<InjectedFault>().expect("an injected fault")
            }
            other => panic!("expected an injected fault, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn counts_every_class_without_faults() {
        let store = FaultStore::new(InMemory::new());
        let plan = store.plan().clone();
        let a = Path::from("d/a");
        store.put(&a, "hello".into()).await.unwrap();
        store.put_opts(&Path::from("d/b"), "xy".into(), PutMode::Create.into()).await.unwrap();
        assert_eq!(store.get(&a).await.unwrap().bytes().await.unwrap(), "hello");
        store.head(&a).await.unwrap();
        store.get_range(&a, 1..3).await.unwrap();
        store.get_ranges(&a, &[0..1, 2..4]).await.unwrap();
        assert_eq!(store.list(None).try_collect::<Vec<_>>().await.unwrap().len(), 2);
        assert_eq!(store.list_with_offset(None, &a).try_collect::<Vec<_>>().await.unwrap().len(), 1);
        store.list_with_delimiter(Some(&Path::from("d"))).await.unwrap();
        store.copy(&a, &Path::from("d/c")).await.unwrap();
        store.rename(&Path::from("d/c"), &Path::from("d/e")).await.unwrap();
        store.delete(&a).await.unwrap();
        let many = stream::iter([Ok(Path::from("d/b")), Ok(Path::from("d/e"))]).boxed();
        assert_eq!(store.delete_stream(many).try_collect::<Vec<_>>().await.unwrap().len(), 2);

        let counts = plan.counts();
        assert_eq!(counts, OpCounts { put: 4, get: 4, list: 3, delete: 3, bytes_put: 7 });
        assert_eq!(plan.total(), 14);
        assert_eq!(counts.total(), 14);
        assert_eq!(plan.injected(), 0);
        assert!(store.list(None).try_collect::<Vec<_>>().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn fails_the_nth_operation_of_a_class_once() {
        let store = FaultStore::new(InMemory::new());
        let plan = store.plan().clone();
        store.put(&Path::from("a"), "1".into()).await.unwrap();
        // Counted from arming: the 2nd get from now.
        plan.arm(Target::Class(OpClass::Get), 2, Fault::Fail);
        assert!(plan.is_armed());
        store.put(&Path::from("b"), "2".into()).await.unwrap();
        store.get(&Path::from("a")).await.unwrap();
        let e = store.get(&Path::from("a")).await.unwrap_err();
        assert_eq!(injected(&e), &InjectedFault { class: OpClass::Get, op: 4 });
        assert_eq!(e.to_string(), "Generic FaultStore error: injected fault at get (operation 4)");
        assert!(!plan.is_armed());
        store.get(&Path::from("a")).await.unwrap();
        assert_eq!(plan.injected(), 1);
    }

    #[tokio::test]
    async fn fails_the_nth_operation_of_any_class() {
        let store = FaultStore::new(InMemory::new());
        let plan = store.plan().clone();
        plan.arm(Target::Any, 3, Fault::Fail);
        store.put(&Path::from("a"), "1".into()).await.unwrap();
        store.get(&Path::from("a")).await.unwrap();
        let e = store.list(None).try_collect::<Vec<_>>().await.unwrap_err();
        assert_eq!(injected(&e).class, OpClass::List);
        store.list(None).try_collect::<Vec<_>>().await.unwrap();

        plan.arm(Target::Any, 1, Fault::Fail);
        let e = store.delete(&Path::from("a")).await.unwrap_err();
        assert_eq!(injected(&e).class, OpClass::Delete);
        // Not deleted.
        store.head(&Path::from("a")).await.unwrap();
        assert_eq!(plan.injected(), 2);
    }

    #[tokio::test]
    async fn fail_runs_nothing_and_fail_after_keeps_the_effect() {
        let store = FaultStore::new(InMemory::new());
        let plan = store.plan().clone();
        plan.arm(Target::Class(OpClass::Put), 1, Fault::Fail);
        store.put(&Path::from("a"), "1".into()).await.unwrap_err();
        assert!(matches!(store.head(&Path::from("a")).await, Err(object_store::Error::NotFound { .. })));
        assert_eq!(plan.counts().bytes_put, 0);

        plan.arm(Target::Class(OpClass::Put), 1, Fault::FailAfter);
        store.put(&Path::from("a"), "22".into()).await.unwrap_err();
        assert_eq!(store.get(&Path::from("a")).await.unwrap().bytes().await.unwrap(), "22");
        assert_eq!(plan.counts().bytes_put, 2);

        store.put(&Path::from("b"), "3".into()).await.unwrap();
        plan.arm(Target::Class(OpClass::Delete), 2, Fault::FailAfter);
        let both = stream::iter([Ok(Path::from("a")), Ok(Path::from("b"))]).boxed();
        let results: Vec<_> = store.delete_stream(both).collect().await;
        assert!(results[0].is_ok());
        assert_eq!(injected(results[1].as_ref().unwrap_err()).class, OpClass::Delete);
        assert!(store.list(None).try_collect::<Vec<_>>().await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn disarm_cancels() {
        let store = FaultStore::new(InMemory::new());
        let plan = store.plan().clone();
        plan.arm(Target::Any, 1, Fault::Abort);
        plan.disarm();
        store.put(&Path::from("a"), "1".into()).await.unwrap();
        assert_eq!(plan.injected(), 0);
    }

    #[tokio::test]
    async fn a_shared_plan_counts_across_stores_and_names_the_layer() {
        let plan = FaultPlan::new();
        let one = FaultStore::with_plan(InMemory::new(), plan.clone());
        let two = FaultStore::with_plan(InMemory::new(), plan.clone());
        one.put(&Path::from("a"), "1".into()).await.unwrap();
        two.put(&Path::from("a"), "1".into()).await.unwrap();
        assert_eq!(plan.count(OpClass::Put), 2);
        assert_eq!(one.to_string(), "FaultStore(InMemory)");
        let nested = FaultStore::new(FaultStore::new(InMemory::new()));
        assert_eq!(nested.to_string(), "FaultStore(FaultStore(InMemory))");
    }

    /// Set in the child process of `abort_kills_the_process`.
    const ABORT_CHILD: &str = "MEMFS_FAULT_ABORT_CHILD";

    /// Runs itself again as a child process (the same test, selected by name), which arms an
    /// abort and puts; the parent checks that the child died of SIGABRT at that put.
    #[test]
    fn abort_kills_the_process() {
        if std::env::var_os(ABORT_CHILD).is_some() {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            runtime.block_on(async {
                let store = FaultStore::new(InMemory::new());
                store.put(&Path::from("a"), "1".into()).await.unwrap();
                store.plan().arm(Target::Class(OpClass::Put), 1, Fault::Abort);
                let _ = store.put(&Path::from("b"), "2".into()).await;
            });
            unreachable!("the fault aborts the process");
        }
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args(["--exact", "fault::tests::abort_kills_the_process", "--nocapture", "--test-threads=1"])
            .env(ABORT_CHILD, "1")
            .output()
            .unwrap();
        assert!(!out.status.success(), "the child survived: {out:?}");
        #[cfg(unix)]
        assert_eq!(std::os::unix::process::ExitStatusExt::signal(&out.status), Some(6), "SIGABRT: {out:?}");
        assert!(!String::from_utf8_lossy(&out.stderr).contains("unreachable"), "{out:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_operations_fault_exactly_once() {
        let store = Arc::new(FaultStore::new(InMemory::new()));
        store.plan().arm(Target::Class(OpClass::Put), 17, Fault::Fail);
        let puts = (0..64).map(|i| {
            let store = Arc::clone(&store);
            tokio::spawn(async move { store.put(&Path::from(format!("o/{i}")), "x".into()).await.is_err() })
        });
        let failed = futures::future::join_all(puts).await.into_iter().filter(|r| *r.as_ref().unwrap()).count();
        assert_eq!(failed, 1);
        assert_eq!(store.plan().count(OpClass::Put), 64);
    }
}
