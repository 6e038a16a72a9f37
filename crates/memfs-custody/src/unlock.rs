//! The custodian that opens a store: each way in the user has at hand.

use async_trait::async_trait;
use memfs_crypt::{Custodian, Custody, CustodyError, CustodyKek, SlotKind};
use zeroize::Zeroizing;

use crate::age::AgeIdentities;
use crate::aws_kms::AwsKms;
use crate::azure_key_vault::AzureKeyVault;
use crate::gcp_kms::GcpKms;
use crate::keychain::Keychain;

/// Opens the custody slots of a store with what is at hand: the OS keychain, AWS KMS, Google
/// Cloud KMS and Azure Key Vault (each with its cloud's usual credentials), and the age
/// identities given.
#[derive(Default)]
pub struct Unlock {
    age: AgeIdentities,
}

impl Unlock {
    /// A custodian with these age identities.
    pub fn new(age: AgeIdentities) -> Self {
        Unlock { age }
    }
}

#[async_trait]
impl Custodian for Unlock {
    fn opens(&self, kind: SlotKind) -> bool {
        matches!(
            kind,
            SlotKind::Age | SlotKind::Keychain | SlotKind::AwsKms | SlotKind::GcpKms | SlotKind::AzureKeyVault
        )
    }

    fn refuses(&self, kind: SlotKind, custody: &Custody) -> Option<CustodyError> {
        match kind {
            SlotKind::AwsKms => AwsKms::allowed(custody).err().map(CustodyError::from),
            SlotKind::AzureKeyVault => crate::azure_key_vault::allowed(custody).err(),
            _ => None,
        }
    }

    async fn open(
        &self,
        kind: SlotKind,
        custody: &Custody,
        store_id: &[u8; 16],
    ) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        match kind {
            SlotKind::Age => self.age.open(custody),
            SlotKind::Keychain => Keychain::open(custody).await,
            SlotKind::AwsKms => AwsKms::open(custody, store_id).await,
            SlotKind::GcpKms => GcpKms::open(custody, store_id).await,
            SlotKind::AzureKeyVault => AzureKeyVault::open(custody, store_id).await,
            kind => Err(CustodyError(format!("memfs cannot open {kind} slots here"))),
        }
    }

    async fn seal(&self, _: &[u8; 16]) -> Result<CustodyKek, CustodyError> {
        Err(CustodyError("unlocking makes no key slot".into()))
    }
}
