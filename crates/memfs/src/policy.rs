//! The store's policy: read at every head, changed by a commit of its own.

use std::sync::Arc;

use memfs_core::Policy;
use memfs_store::{Operation, PolicyChange, Record};

use crate::engine::Memfs;
use crate::error::Error;
use crate::transaction::Decision;

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
        let record = Record::from(Operation::Policy(PolicyChange::Set { set: key.to_owned(), value: value.clone() }));
        self.change_policy(record, |p| p.set(key, &value)).await
    }

    /// Puts one policy key back to its default, or removes a custom rule, as a commit.
    pub async fn unset_policy(&self, key: &str) -> Result<PolicyChanged, Error> {
        let record = Record::from(Operation::Policy(PolicyChange::Unset { unset: key.to_owned() }));
        self.change_policy(record, |p| p.unset(key)).await
    }

    async fn change_policy(
        &self,
        record: Record,
        change: impl Fn(&mut Policy) -> Result<(), memfs_core::PolicyError> + Sync,
    ) -> Result<PolicyChanged, Error> {
        let (record, change) = (&record, &change);
        self.repository().history().ok_or_else(|| Error::NoHistory { store: self.repository().to_string() })?;
        let changed = self
            .tx
            .run(&self.writer(), None, move |head, _| {
                Box::pin(async move {
                    let mut policy = Policy::clone(&head.policy);
                    change(&mut policy)?;
                    if policy == *head.policy {
                        return Ok(Decision::Done(head.policy.clone()));
                    }
                    let then = Arc::new(policy.clone());
                    Ok(Decision::SetPolicy { policy, record: record.clone(), then })
                })
            })
            .await?;
        Ok(PolicyChanged { policy: changed.value, generation: changed.generation })
    }
}
