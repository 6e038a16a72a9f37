//! The store's policy: read at every head, changed by a commit of its own.

use std::sync::Arc;
use std::time::Instant;

use memfs_core::Policy;
use memfs_store::{CommitInfo, Error as StoreError, Repository};

use crate::engine::{MAX_ATTEMPTS, Memfs};
use crate::error::Error;

/// The result of a policy change.
#[derive(Debug, Clone)]
pub struct PolicyChanged {
    /// The policy now in force.
    pub policy: Arc<Policy>,
    /// The commit that changed it; `None` when it already had that value.
    pub generation: Option<u64>,
}

impl Memfs {
    /// The policy at the head.
    pub async fn policy(&self) -> Result<Arc<Policy>, Error> {
        Ok(self.repository().head().await.map_err(|e| self.store_error(e))?.policy)
    }

    /// Sets one policy key (see [`Policy::set`]) as a commit.
    pub async fn set_policy(&self, key: &str, value: &str) -> Result<PolicyChanged, Error> {
        // History records the value as it reads back (`64KiB` is recorded as `65536`).
        let mut probe = Policy::default();
        probe.set(key, value)?;
        let value = probe.get(key)?;
        let command = serde_json::json!({"command": "policy", "set": key, "value": value}).to_string();
        self.change_policy(command, |p| p.set(key, &value)).await
    }

    /// Puts one policy key back to its default, or removes a custom rule, as a commit.
    pub async fn unset_policy(&self, key: &str) -> Result<PolicyChanged, Error> {
        let command = serde_json::json!({"command": "policy", "unset": key}).to_string();
        self.change_policy(command, |p| p.unset(key)).await
    }

    async fn change_policy(
        &self,
        command: String,
        change: impl Fn(&mut Policy) -> Result<(), memfs_core::PolicyError>,
    ) -> Result<PolicyChanged, Error> {
        let repo = self.history.as_ref().ok_or_else(|| Error::NoHistory { store: self.repository().to_string() })?;
        for attempt in 1..=MAX_ATTEMPTS {
            let began = Instant::now();
            let head = repo.head().await.map_err(|e| self.store_error(e))?;
            let mut policy = Policy::clone(&head.policy);
            change(&mut policy)?;
            if policy == *head.policy {
                return Ok(PolicyChanged { policy: head.policy, generation: None });
            }
            let info = CommitInfo { actor: self.actor().to_owned(), command: command.clone(), changes: Vec::new() };
            match repo.set_policy(&head, &policy, info).await {
                Ok(generation) => {
                    self.committed();
                    return Ok(PolicyChanged { policy: Arc::new(policy), generation: Some(generation) });
                }
                Err(StoreError::Conflict) => self.lost_race(attempt, began).await,
                Err(e) => return Err(self.store_error(e)),
            }
        }
        Err(Error::Contention { store: self.repository().to_string(), attempts: MAX_ATTEMPTS })
    }
}
