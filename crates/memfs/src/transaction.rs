//! The transaction driver: the one place that commits by compare-and-swap.
//!
//! Every mutation (a tool command, restore, undo, import, expiration, the flush of last-access
//! days, a policy change, purge's commit) is a plan handed to [`Transactions::run`]: a function
//! from a head to the [`Decision`] to take. The driver reads the head, runs the plan, commits the
//! step by compare-and-swap on that head, and on a lost race ([`StoreError::Conflict`]) waits
//! (`crate::contention`) and runs the plan again on the new head, so the answer is the one the
//! mutation would have had, had it come second. This is object_store's "Conditional Put" loop:
//! read, compute, put if unchanged, retry on a failed precondition.
//!
//! The driver also owns what every mutation shares: re-running a plan that found an object
//! missing (a `gc` that lost a race with a writer puts back what it deleted within moments),
//! adding the last-access days of reads not yet recorded into the commit, and the
//! statistics of [`Stats`].

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memfs_core::{Access, Day, Mutation, Policy, touch};
use memfs_store::{CommitInfo, Error as StoreError, Fetched, Head, Record, WithHistory};

use crate::contention::Rounds;
use crate::error::Error;
use crate::pending::Pending;

/// How many times a mutation runs before giving up under contention.
///
/// Generous on purpose: a command only loses when another one won, so the store as a whole
/// always makes progress, and a writer in a busy fleet must not give up while its peers commit.
/// With 16 writers racing for every commit, each wins a round with a chance of about 1/16:
/// 64 attempts left about 1 command in 60 giving up (measured: 5 of 3,200 on S3), 256 leave
/// (15/16)^256, about 1 in 15 million. With the backoff between attempts (`crate::contention`:
/// at most a second each), 256 attempts span minutes of sustained contention.
pub(crate) const MAX_ATTEMPTS: u32 = 256;

/// How many times a plan is run again after finding an object missing. A `gc` that lost a
/// race with a writer puts back what it deleted within moments (see `memfs_store::GcOptions`),
/// so a missing object is read again before it is reported.
const MISSING_RETRIES: u32 = 3;

/// What a [`Memfs`](crate::Memfs) handle did since it was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Commands executed (`execute`, `call`), answered or not.
    pub commands: u64,
    /// Commits this handle made (mutations, recorded last-access days, expirations).
    pub commits: u64,
    /// Times a command lost the race for the head and ran again on the new one.
    pub conflicts: u64,
}

/// One handle's transactions: its backoff, its statistics and its reads not yet recorded.
#[derive(Default)]
pub(crate) struct Transactions {
    commands: AtomicU64,
    commits: AtomicU64,
    conflicts: AtomicU64,
    /// How long this handle's commit rounds take: the unit of its backoff.
    rounds: Rounds,
    /// Reads whose last-access days are not recorded yet (see [`Memfs::flush`](crate::Memfs::flush)).
    pending: Mutex<Pending>,
}

/// The store a transaction writes to, and as whom.
pub(crate) struct Writer<'a> {
    /// Where heads are read, objects fetched and trees committed.
    /// Policy changes need the history it keeps ([`WithHistory::history`]).
    pub(crate) repo: &'a dyn WithHistory,
    /// The actor recorded with each commit.
    pub(crate) actor: &'a str,
    /// Today, for last-access days.
    pub(crate) today: Day,
}

/// What a plan decided, against one head.
pub(crate) enum Decision<T> {
    /// Nothing to commit: the answer.
    Done(T),
    /// Commit a new tree.
    Commit(Commit<T>),
    /// Commit a new policy (the tree stays).
    SetPolicy {
        /// The policy.
        policy: Policy,
        /// What the commit records.
        record: Record,
        /// The answer once committed.
        then: T,
    },
}

/// A new tree to commit, and the answer once it is.
pub(crate) struct Commit<T> {
    /// The tree, its changes and its new contents.
    pub(crate) mutation: Mutation,
    /// What the commit records.
    pub(crate) record: Record,
    /// Files to count as used today (a file brought back, lest expiration take it again).
    pub(crate) touch: Vec<Access>,
    /// Whether the reads not yet recorded ride along with this commit.
    pub(crate) with_reads: bool,
    /// The answer once committed.
    pub(crate) then: T,
}

/// One run of a plan against a head. Boxed, and given the head by value: the future of an
/// async closure that borrows its arguments is not yet `Send` for every lifetime, and tool
/// commands run in spawned tasks.
pub(crate) type Attempt<'a, T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send + 'a>>;

/// The answer of a transaction, and the commit it made (`None`: nothing to commit).
pub(crate) struct Committed<T> {
    pub(crate) generation: Option<u64>,
    pub(crate) value: T,
}

/// Why one attempt did not settle.
pub(crate) enum Failure {
    /// Another writer moved the head first: run again on the new one.
    LostRace,
    /// Anything else (a missing object is retried, the rest is the answer).
    Failed(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Failed(e)
    }
}

impl Transactions {
    /// What the handle did so far.
    pub(crate) fn stats(&self) -> Stats {
        Stats {
            commands: self.commands.load(Ordering::Relaxed),
            commits: self.commits.load(Ordering::Relaxed),
            conflicts: self.conflicts.load(Ordering::Relaxed),
        }
    }

    /// Counts a command executed.
    pub(crate) fn command(&self) {
        self.commands.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a read whose last-access day is to be recorded; true when the oldest note is
    /// `due` old.
    pub(crate) fn note(&self, access: Access, due: Duration) -> bool {
        self.pending.lock().expect("pending accesses").note(access, due)
    }

    /// The reads noted and not yet recorded.
    pub(crate) fn pending(&self) -> Vec<Access> {
        self.pending.lock().expect("pending accesses").accesses()
    }

    /// Forgets the notes a commit recorded.
    pub(crate) fn recorded(&self, accesses: &[Access]) {
        self.pending.lock().expect("pending accesses").recorded(accesses);
    }

    /// Runs `plan` against the newest head (`first`, when the caller just read it; else, for
    /// the first attempt, the head this handle last read or wrote, which the commit's
    /// compare-and-swap checks) and commits its step by compare-and-swap; on a lost race, runs
    /// it again on the new head.
    /// The plan gets the head to plan against and a [`Fetched`] to read the objects it needs.
    pub(crate) async fn run<'x, T: Send + 'x>(
        &self,
        writer: &Writer<'x>,
        mut first: Option<Head>,
        mut plan: impl FnMut(Arc<Head>, Fetched<'x>) -> Attempt<'x, Decision<T>, Error>,
    ) -> Result<Committed<T>, Error> {
        let mut missing = 0;
        // The first attempt starts from the head this handle last knew (no request): only a
        // race lost against it reads the head again.
        let mut known = first.is_none();
        for round in 1..=MAX_ATTEMPTS {
            let began = Instant::now();
            let from_known = std::mem::take(&mut known);
            let head = match from_known {
                true => writer
                    .repo
                    .head_to_write()
                    .await
                    .map(Arc::new)
                    .map_err(|source| Error::Store { store: writer.repo.to_string(), source }),
                false => self.head(writer, first.take()).await,
            };
            let failure = match head {
                Ok(head) => match plan(head.clone(), Fetched::new(writer.repo)).await {
                    // An answer that commits nothing (an error, a no-op) has no compare-and-swap
                    // to vouch for the head it read: it must come from the newest.
                    Ok(Decision::Done(_)) | Err(_) if from_known => continue,
                    Ok(step) => match self.commit(writer, &head, step).await {
                        Ok(done) => return Ok(done),
                        Err(failure) => failure,
                    },
                    Err(e) => Failure::Failed(e),
                },
                Err(e) => Failure::Failed(e),
            };
            if matches!(failure, Failure::LostRace) {
                // A lost compare-and-swap leaves the handle's head stale, and the store reads the
                // newest one to see whether the swap landed after all: the next attempt starts
                // from that (no request more; its own swap vouches for it, and a step that
                // commits nothing reads the newest again, above).
                known = true;
                if from_known && round == 1 {
                    // The head it knew had moved on: no rival to wait out yet, try again.
                    self.conflicts.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
            }
            self.settle(failure, round, began, &mut missing).await?;
        }
        Err(Error::Contention { store: writer.repo.to_string(), attempts: MAX_ATTEMPTS })
    }

    /// The head to start an attempt from: `known`, or the newest.
    async fn head(&self, writer: &Writer<'_>, known: Option<Head>) -> Result<Arc<Head>, Error> {
        match known {
            Some(head) => Ok(Arc::new(head)),
            None => match writer.repo.head().await {
                Ok(head) => Ok(Arc::new(head)),
                Err(source) => Err(Error::Store { store: writer.repo.to_string(), source }),
            },
        }
    }

    /// After an attempt that did not settle: waits to run it again (a lost race, or an object
    /// missing at most [`MISSING_RETRIES`] times), or gives the error up.
    async fn settle(&self, failure: Failure, round: u32, began: Instant, missing: &mut u32) -> Result<(), Error> {
        match failure {
            Failure::LostRace => {
                self.conflicts.fetch_add(1, Ordering::Relaxed);
                self.rounds.record(began.elapsed());
                self.rounds.backoff(round).await;
            }
            Failure::Failed(Error::Store { source: StoreError::MissingObject { .. }, .. })
                if *missing < MISSING_RETRIES =>
            {
                *missing += 1;
                self.rounds.backoff(round).await;
            }
            Failure::Failed(e) => return Err(e),
        }
        Ok(())
    }

    /// Settles one step against `head`.
    async fn commit<T>(
        &self,
        writer: &Writer<'_>,
        head: &Head,
        decision: Decision<T>,
    ) -> Result<Committed<T>, Failure> {
        let store_error = |source| Error::Store { store: writer.repo.to_string(), source };
        let (generation, value, pending) = match decision {
            Decision::Done(value) => return Ok(Committed { generation: None, value }),
            Decision::SetPolicy { policy, record, then } => {
                let repo = writer.repo.history().ok_or_else(|| Error::NoHistory { store: writer.repo.to_string() })?;
                let info = CommitInfo { actor: writer.actor.to_owned(), command: record, changes: Vec::new() };
                (repo.set_policy(head, &policy, info).await, then, Vec::new())
            }
            Decision::Commit(Commit { mut mutation, record, touch: mut accesses, with_reads, then }) => {
                let pending = if with_reads { self.pending() } else { Vec::new() };
                accesses.extend(pending.iter().cloned());
                if !accesses.is_empty() {
                    let mut fetched = Fetched::new(writer.repo);
                    let touched = fetched.resolve(|f| touch(&mutation.tree, &accesses, writer.today, f)).await;
                    if let Some((tree, _)) = touched.map_err(store_error)? {
                        mutation.tree = tree;
                    }
                }
                let info =
                    CommitInfo { actor: writer.actor.to_owned(), command: record, changes: mutation.changes.clone() };
                (writer.repo.commit(head, &mutation, info).await, then, pending)
            }
        };
        match generation {
            Ok(generation) => {
                self.commits.fetch_add(1, Ordering::Relaxed);
                self.recorded(&pending);
                Ok(Committed { generation: Some(generation), value })
            }
            Err(StoreError::Conflict) => Err(Failure::LostRace),
            Err(e) => Err(Failure::Failed(store_error(e))),
        }
    }

    /// The loop of [`Transactions::run`] for a step the store commits itself (purge's): runs
    /// `attempt` on the newest head until it settles; `attempt` makes its own compare-and-swap
    /// on the head it is given and says when it lost. Its future need not be `Send` (purge's
    /// is not provably so: it runs in the binary's own task).
    pub(crate) async fn drive<'x, T: 'x>(
        &self,
        writer: &Writer<'_>,
        mut attempt: impl FnMut(Arc<Head>) -> Pin<Box<dyn Future<Output = Result<T, Failure>> + 'x>>,
    ) -> Result<T, Error> {
        let mut missing = 0;
        for round in 1..=MAX_ATTEMPTS {
            let began = Instant::now();
            let failure = match self.head(writer, None).await {
                Ok(head) => match attempt(head).await {
                    Ok(done) => return Ok(done),
                    Err(failure) => failure,
                },
                Err(e) => Failure::Failed(e),
            };
            self.settle(failure, round, began, &mut missing).await?;
        }
        Err(Error::Contention { store: writer.repo.to_string(), attempts: MAX_ATTEMPTS })
    }
}
