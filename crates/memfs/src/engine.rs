//! The engine: runs commands against a repository.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use memfs_core::{Command, Context, Day, Dialect, ToolError, ToolResult, execute_in};
use memfs_crypt::{Credential, KdfParams, KeySlots, SlotNote};
use memfs_store::{
    Backend, Confirmed, EncryptedRepository, Error as StoreError, OpenOptions as StoreOpenOptions, Record, StateDir,
    WithHistory,
};
use serde_json::Value;

use crate::error::Error;
use crate::transaction::{Commit, Decision, Stats, Transactions, Writer};
use crate::url::{Location, Target};

/// How to open a store.
#[derive(Default)]
pub struct OpenOptions {
    /// The default dialect of answers.
    pub dialect: Dialect,
    /// Passphrase or key file; required for a persistent store.
    pub credential: Option<Credential>,
    /// Where to remember the newest commit seen of each store, to detect a rollback or a
    /// fork: by default ([`StateDir::Platform`]) `$XDG_STATE_HOME/memfs` or the platform's
    /// equivalent. Only [`StateDir::Off`] turns detection off.
    pub state_dir: StateDir,
    /// Accept this head (a commit id or a prefix of at least 8 hex digits) even if it does not
    /// descend from the commit this client remembers; see
    /// [`memfs_store::OpenOptions::trust_head`].
    pub trust_head: Option<String>,
    /// Agent or user name recorded with every commit.
    pub actor: String,
    /// The day to use as today for last-access days and expiration (`None`: the clock's).
    pub today: Option<Day>,
    /// Answer reads from a head up to this old without asking the store (`None`: every
    /// command checks the head, with a conditional GET). Writes stay safe; see
    /// [`memfs_store::OpenOptions::max_staleness`] for what a reader may miss.
    pub max_staleness: Option<Duration>,
    /// Keep immutable objects, sealed as stored, in this folder too (`None`: memory only); see
    /// [`memfs_store::OpenOptions::cache_dir`].
    pub cache_dir: Option<std::path::PathBuf>,
    /// The byte budget of the in-memory cache (`None`: 64 MiB); see
    /// [`memfs_store::OpenOptions::memory_cache_bytes`].
    pub memory_cache_bytes: Option<usize>,
    /// The bytes of new objects a commit may carry unwritten in the head (`None`: the
    /// default); see [`memfs_store::OpenOptions::unwritten_bytes`].
    pub unwritten_bytes: Option<usize>,
}

impl OpenOptions {
    /// What the store layer needs of these options, for the store shown as `display`.
    pub(crate) fn store_options(&self, display: String) -> StoreOpenOptions {
        StoreOpenOptions {
            state_dir: self.state_dir.clone(),
            trust_head: self.trust_head.clone(),
            display,
            max_staleness: self.max_staleness,
            cache_dir: self.cache_dir.clone(),
            memory_cache_bytes: self.memory_cache_bytes,
            unwritten_bytes: self.unwritten_bytes,
            actor: self.actor.clone(),
        }
    }
}

/// An open store. `Send + Sync`; share it (for example in an `Arc`) between tasks.
pub struct Memfs {
    /// The one handle on the store: heads, objects, commits, and the history it keeps, if
    /// any (`log`, `restore`, `check`, `gc`, policy, through [`WithHistory::history`]).
    repo: Arc<dyn WithHistory>,
    dialect: Dialect,
    actor: String,
    /// Today for last-access days, when fixed (tests, `MEMFS_TODAY`); else the clock's.
    today: Option<Day>,
    /// The last day automatic expiration ran in this process.
    pub(crate) auto_expired: Mutex<Option<Day>>,
    /// Its transactions: backoff, statistics, reads not yet recorded.
    pub(crate) tx: Transactions,
}

impl Memfs {
    /// An ephemeral encrypted store in process memory (`memory://`), with a random key.
    pub fn ephemeral(dialect: Dialect) -> Result<Self, Error> {
        let repo =
            EncryptedRepository::ephemeral().map_err(|source| Error::Store { store: "memory://".into(), source })?;
        Ok(Memfs::with_repository(Arc::new(repo), dialect))
    }

    /// Opens the store at `location` (a URL such as `file:///path`, `s3://bucket/prefix` or
    /// `memory://`, or a [`Location`] with options and a namespace). A persistent store needs
    /// `options.credential`; it must exist (see [`Memfs::init`]).
    pub async fn open(location: impl Into<Location>, options: OpenOptions) -> Result<Self, Error> {
        Memfs::open_with(location, &options).await
    }

    /// Opens like [`Memfs::open`], borrowing the options: one set of options (one credential)
    /// can open many stores, such as the namespaces `memfs serve` serves.
    pub async fn open_with(location: impl Into<Location>, options: &OpenOptions) -> Result<Self, Error> {
        let location = location.into();
        let backend = match location.target()? {
            Target::Memory => {
                return Ok(Memfs::ephemeral(options.dialect)?
                    .with_actor(options.actor.clone())
                    .with_today(options.today));
            }
            Target::Persistent(backend) => backend,
        };
        let store = location.to_string();
        let Some(credential) = options.credential.as_ref() else {
            // Asking for a passphrase of a store that does not exist would send the user looking
            // for one that was never made.
            let exists = EncryptedRepository::exists(backend)
                .await
                .map_err(|source| Error::Store { store: store.clone(), source })?;
            return Err(match exists {
                true => Error::CredentialRequired { store },
                false => Error::NoStore { store },
            });
        };
        let repo_options = options.store_options(store.clone());
        let objects = match &backend {
            Backend::ObjectStore(objects) => Some(objects.clone()),
            _ => None,
        };
        let repo = match EncryptedRepository::open(backend, credential, repo_options).await {
            Ok(repo) => repo,
            // A missing bucket reads like a missing store: say which it is.
            Err(StoreError::NotInitialized) => {
                let source = match &objects {
                    Some(objects) => memfs_store::probe::list_top(objects.as_ref()).await.err(),
                    None => None,
                };
                // Nothing there: the same answer with or without a credential.
                return Err(match source {
                    Some(source) => Error::Store { store, source },
                    None => Error::NoStore { store },
                });
            }
            // Only keys kept outside memfs were at hand, and the store has none: it needs a
            // passphrase or key file, as with no credential at all.
            Err(StoreError::Crypt(memfs_crypt::Error::NoCustodySlot)) => {
                return Err(Error::CredentialRequired { store });
            }
            Err(source) => return Err(Error::Store { store, source }),
        };
        Ok(Memfs::with_repository(Arc::new(repo), options.dialect)
            .with_actor(options.actor.clone())
            .with_today(options.today))
    }

    /// Creates a new persistent store at `location`, with new random keys and one key
    /// slot for `credential` (a passphrase slot uses `kdf`). Refuses if a store exists there,
    /// and refuses an object store that does not honour conditional writes
    /// ([`memfs_store::probe`]).
    pub async fn init(location: impl Into<Location>, credential: &Credential, kdf: KdfParams) -> Result<(), Error> {
        Self::init_with_note(location, credential, kdf, SlotNote::default()).await
    }

    /// [`Memfs::init`], the slot carrying `note` (its label, creation time and host).
    pub async fn init_with_note(
        location: impl Into<Location>,
        credential: &Credential,
        kdf: KdfParams,
        note: SlotNote,
    ) -> Result<(), Error> {
        note.check()?;
        let location = location.into();
        let store = location.to_string();
        let backend = match location.target()? {
            Target::Memory => {
                return Err(Error::StoreUrl { url: store, reason: "a memory:// store needs no init".into() });
            }
            Target::Persistent(backend) => backend,
        };
        // A service that ignores preconditions would lose updates silently: refuse it first.
        if let Backend::ObjectStore(objects) = &backend {
            memfs_store::probe::conditional_writes(objects.as_ref())
                .await
                .map_err(|source| Error::Store { store: store.clone(), source })?;
        }
        // Nothing to remember yet: the store has no head until its first commit.
        let options = StoreOpenOptions { state_dir: StateDir::Off, display: store.clone(), ..Default::default() };
        let failed = |source| Error::Store { store: store.clone(), source };
        let id = EncryptedRepository::new_store_id().map_err(failed)?;
        // A custodian keeps a fresh key for this store, bound to its id, before anything is
        // written.
        let sealed = EncryptedRepository::seal_new(credential, &id).await.map_err(failed)?;
        let credential = sealed.as_ref().unwrap_or(credential);
        let slots = |master: &_, id: &_| {
            let mut slots = KeySlots::with_slot(master, id, credential, kdf)?;
            let (first, _) = slots.slots().next().expect("a new set has its one slot");
            slots.set_note(first, note)?;
            Ok(slots)
        };
        EncryptedRepository::init_with_id(backend, id, slots, options)
            .await
            .map_err(|source| Error::Store { store, source })?;
        Ok(())
    }

    /// Whether a persistent store exists at `location` (always `true` for `memory://`).
    pub async fn exists(location: impl Into<Location>) -> Result<bool, Error> {
        let location = location.into();
        match location.target()? {
            Target::Memory => Ok(true),
            Target::Persistent(backend) => EncryptedRepository::exists(backend)
                .await
                .map_err(|source| Error::Store { store: location.to_string(), source }),
        }
    }

    /// Wraps an already open repository, such as an [`EncryptedRepository`]. History
    /// commands need one that keeps history ([`WithHistory::history`] is not `None`).
    pub fn with_repository(repo: Arc<dyn WithHistory>, dialect: Dialect) -> Self {
        Memfs {
            repo,
            dialect,
            actor: String::new(),
            today: None,
            auto_expired: Mutex::new(None),
            tx: Transactions::default(),
        }
    }

    /// Fixes the day used as today (`None`: the system clock's), for last-access days and
    /// expiration.
    pub fn with_today(mut self, today: Option<Day>) -> Self {
        self.today = today;
        self
    }

    /// Today, as a day number (days since 1970-01-01, UTC).
    pub fn today(&self) -> Day {
        self.today.unwrap_or_else(|| {
            let secs = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
            Day::try_from(secs / 86_400).unwrap_or(Day::MAX)
        })
    }

    /// Records `actor` (an agent or user name) with every commit.
    pub fn with_actor(mut self, actor: impl Into<String>) -> Self {
        self.actor = actor.into();
        self
    }

    /// The actor recorded with every commit.
    pub fn actor(&self) -> &str {
        &self.actor
    }

    /// The confirmation opening this store made in its keys (the key slot used confirmed the
    /// root of another holder's `memfs key rotate`), and the commit that records it; `None`
    /// if there was none.
    pub fn confirmed(&self) -> Option<&Confirmed> {
        self.repo.history().and_then(EncryptedRepository::confirmed)
    }

    /// What this handle did since it was opened: commands, commits, conflicts retried.
    pub fn stats(&self) -> Stats {
        self.tx.stats()
    }

    /// The store as a transaction writes to it.
    pub(crate) fn writer(&self) -> Writer<'_> {
        Writer { repo: self.repo.as_ref(), actor: &self.actor, today: self.today() }
    }

    /// The default dialect.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// The repository underneath, with the history it keeps, if any.
    pub fn repository(&self) -> &Arc<dyn WithHistory> {
        &self.repo
    }

    /// Executes a tool `input` object in the default dialect. Never fails: malformed input and
    /// store failures come back as error results the model can read.
    pub async fn call(&self, input: &Value) -> ToolResult {
        self.call_with(input, self.dialect).await
    }

    /// Executes a tool `input` object in `dialect`.
    pub async fn call_with(&self, input: &Value, dialect: Dialect) -> ToolResult {
        self.call_reporting(input, dialect, |e| format!("memfs: {}", crate::error::error_chain(e))).await
    }

    /// [`Memfs::call_with`], with the text of the answer to a store error chosen by
    /// `store_error` (the HTTP endpoint keeps the detail in its log and tells the tenant less).
    pub(crate) async fn call_reporting(
        &self,
        input: &Value,
        dialect: Dialect,
        store_error: impl FnOnce(&Error) -> String,
    ) -> ToolResult {
        match Command::from_input(input) {
            Err(e) => ToolResult::error(ToolError::from(e).render(dialect)),
            Ok(cmd) => match self.execute_with(&cmd, dialect).await {
                Ok(result) => result,
                Err(e) => ToolResult::error(store_error(&e)),
            },
        }
    }

    /// Executes a typed command in the default dialect.
    pub async fn execute(&self, command: &Command) -> Result<ToolResult, Error> {
        self.execute_with(command, self.dialect).await
    }

    /// Executes a typed command in `dialect`. A mutation is committed whole or not at all; on
    /// a lost race it runs again against the new head, so its answer is the one it would have
    /// had, had it come second.
    pub async fn execute_with(&self, command: &Command, dialect: Dialect) -> Result<ToolResult, Error> {
        self.tx.command();
        // The head the daily expiration check read, if it changed nothing: the first attempt
        // starts from it. A view reads the newest head; a mutation may start from the one this
        // handle last knew (`Transactions::run`), which its commit checks.
        let first = match self.expire_automatically().await? {
            None if matches!(command, Command::View { .. }) => {
                Some(self.repo.head().await.map_err(|e| self.store_error(e))?)
            }
            first => first,
        };
        let writer = self.writer();
        let today = writer.today;
        let answered = self
            .tx
            .run(&writer, first, move |head, mut fetched| {
                Box::pin(async move {
                    let (head, fetched) = (&*head, &mut fetched);
                    let context = Context { dialect, policy: &head.policy, today };
                    let outcome = fetched.resolve(|f| execute_in(command, &head.tree, &context, f)).await;
                    let outcome = outcome.map_err(|e| self.store_error(e))?;
                    let Some(mutation) = outcome.mutation else {
                        return Ok(Decision::Done((outcome.result, outcome.accessed)));
                    };
                    // Redaction applies to history too: record the command as applied.
                    let record = Record::Tool(mutation.applied.clone().unwrap_or_else(|| command.clone()));
                    Ok(Decision::Commit(Commit {
                        mutation,
                        record,
                        touch: Vec::new(),
                        with_reads: true,
                        then: (outcome.result, None),
                    }))
                })
            })
            .await?;
        let (result, accessed) = answered.value;
        if let Some(access) = accessed {
            self.record_access(access).await?;
        }
        Ok(result)
    }

    pub(crate) fn store_error(&self, source: StoreError) -> Error {
        Error::Store { store: self.repo.to_string(), source }
    }
}

// A compile-time promise of the public API: one handle, shared by many tasks and threads.
const _: () = {
    const fn send_sync<T: Send + Sync + 'static>() {}
    send_sync::<Memfs>();
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Rollback and fork detection is on unless the caller turns it off (issue 14): both the
    /// library's options and the store's default to the platform's state folder.
    #[test]
    fn rollback_detection_is_on_by_default() {
        assert_eq!(OpenOptions::default().state_dir, StateDir::Platform);
        assert_eq!(StoreOpenOptions::default().state_dir, StateDir::Platform);
    }
}
