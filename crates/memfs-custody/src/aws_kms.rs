//! Slots whose key is wrapped by an AWS KMS key (envelope encryption, through the official AWS
//! SDK for Rust).
//!
//! A new slot's key-encryption key comes from `GenerateDataKey` (AES-256) under the KMS key
//! given (key id, key ARN, alias name `alias/…` or alias ARN); the slot keeps the ciphertext
//! KMS returns, and `Decrypt` gives the KEK back. Both calls carry the encryption context
//! `{"memfs-store": "<store id>"}`: KMS refuses to decrypt a slot's ciphertext for any other
//! store, and CloudTrail logs every use of the key with the store it served. `Decrypt` names
//! the KMS key too, so a ciphertext of another key is refused.
//!
//! Region and credentials come from the usual AWS environment (`AWS_REGION`, `AWS_PROFILE`,
//! `AWS_ACCESS_KEY_ID`…, web identity, ECS and EC2 roles, SSO); the endpoint too
//! (`AWS_ENDPOINT_URL_KMS`, for a VPC endpoint or an emulator). A key given by its ARN is used
//! in the ARN's region, and a slot records the region it was made in, so opening it needs no
//! region setting. Each call gives up after 30 seconds (3 attempts), so a KMS that cannot be
//! reached fails the slot instead of hanging: the next slot is then tried.

use std::time::Duration;

use async_trait::async_trait;
use aws_config::retry::RetryConfig;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region};
use aws_sdk_kms::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_kms::primitives::Blob;
use aws_sdk_kms::types::DataKeySpec;
use memfs_crypt::{Custodian, Custody, CustodyError, CustodyKek, SlotKind};
use zeroize::Zeroizing;

use crate::endpoint::{self, SlotRefused};
use crate::kek;
use crate::rest::causes;

/// The encryption context's key: the value is the store id, in hex.
const CONTEXT_KEY: &str = "memfs-store";

/// An AWS KMS key that wraps a new slot's key.
#[derive(Debug, Clone)]
pub struct AwsKms {
    key: String,
}

impl AwsKms {
    /// The KMS key `key`: a key id, key ARN, alias name (`alias/…`) or alias ARN.
    pub fn new(key: &str) -> Result<Self, CustodyError> {
        let key = key.trim();
        if !endpoint::aws_key(key) {
            return Err(CustodyError(format!("not an AWS KMS key id, ARN or alias: {key:?}")));
        }
        Ok(AwsKms { key: key.to_owned() })
    }

    /// Refuses a slot whose region is not a region's name or whose key is not a key's.
    pub(crate) fn allowed(custody: &Custody) -> Result<(), SlotRefused> {
        if let Some(region) = custody.region.as_deref().filter(|region| !endpoint::aws_region(region)) {
            return Err(SlotRefused::AwsRegion { region: region.to_owned() });
        }
        if !endpoint::aws_key(&custody.key) {
            return Err(SlotRefused::AwsKey { key: custody.key.clone() });
        }
        Ok(())
    }

    /// The KEK of an AWS KMS slot: `Decrypt` of its ciphertext, under its key and context.
    /// The slot's region and key are checked before any request (see the module doc).
    pub(crate) async fn open(custody: &Custody, store_id: &[u8; 16]) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        AwsKms::allowed(custody)?;
        let (client, region) = client(&custody.key, custody.region.as_deref()).await;
        let out = client
            .decrypt()
            .key_id(&custody.key)
            .ciphertext_blob(Blob::new(custody.wrapped.clone()))
            .encryption_context(CONTEXT_KEY, hex(store_id))
            .send()
            .await
            .map_err(|e| failed(&custody.key, &region, "Decrypt", &e))?;
        let plain = out.plaintext.map(|p| Zeroizing::new(p.into_inner())).unwrap_or_default();
        kek::from_slice(&plain).ok_or_else(|| CustodyError("AWS KMS did not return a 32-byte key".into()))
    }
}

#[async_trait]
impl Custodian for AwsKms {
    fn opens(&self, _: SlotKind) -> bool {
        false
    }

    async fn open(
        &self,
        _: SlotKind,
        custody: &Custody,
        store_id: &[u8; 16],
    ) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        AwsKms::open(custody, store_id).await
    }

    async fn seal(&self, store_id: &[u8; 16]) -> Result<CustodyKek, CustodyError> {
        let (client, region) = client(&self.key, None).await;
        let out = client
            .generate_data_key()
            .key_id(&self.key)
            .key_spec(DataKeySpec::Aes256)
            .encryption_context(CONTEXT_KEY, hex(store_id))
            .send()
            .await
            .map_err(|e| failed(&self.key, &region, "GenerateDataKey", &e))?;
        let plain = out.plaintext.map(|p| Zeroizing::new(p.into_inner())).unwrap_or_default();
        let key = kek::from_slice(&plain).ok_or_else(|| CustodyError("AWS KMS did not return a 32-byte key".into()))?;
        let wrapped = out.ciphertext_blob.map(Blob::into_inner).unwrap_or_default();
        if wrapped.is_empty() {
            return Err(CustodyError("AWS KMS returned no ciphertext for the new key".into()));
        }
        let custody = Custody { key: self.key.clone(), region: region.clone(), wrapped };
        Ok(CustodyKek { kind: SlotKind::AwsKms, custody, kek: key })
    }
}

/// A KMS client for `key`: in `region` if given (a slot's), else the ARN's, else the
/// environment's; and the region it uses, if known.
async fn client(key: &str, region: Option<&str>) -> (aws_sdk_kms::Client, Option<String>) {
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_secs(5))
                .operation_attempt_timeout(Duration::from_secs(10))
                .operation_timeout(Duration::from_secs(30))
                .build(),
        )
        .retry_config(RetryConfig::standard().with_max_attempts(3));
    if let Some(region) = region.map(str::to_owned).or_else(|| arn_region(key)) {
        loader = loader.region(Region::new(region));
    }
    let config = loader.load().await;
    let region = config.region().map(ToString::to_string);
    (aws_sdk_kms::Client::new(&config), region)
}

/// The region of a KMS key or alias ARN (`arn:aws:kms:REGION:ACCOUNT:…`).
fn arn_region(key: &str) -> Option<String> {
    let mut parts = key.split(':');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some("arn"), Some(_), Some("kms"), Some(region)) if !region.is_empty() => Some(region.to_owned()),
        _ => None,
    }
}

/// A KMS call's failure in words: the service's code and message (a refusal, a disabled
/// key, an unknown key, a context that does not match), or why it was not reached. Errors
/// carry the response, never the request: no credential or key appears.
fn failed<E, R>(key: &str, region: &Option<String>, call: &str, e: &SdkError<E, R>) -> CustodyError
where
    E: std::error::Error + ProvideErrorMetadata + 'static,
    R: std::fmt::Debug,
{
    let region = region.as_deref().unwrap_or("no region set (AWS_REGION)");
    let why = match e {
        SdkError::ServiceError(service) => {
            let inner = service.err();
            let code = inner.code().unwrap_or("an error");
            let hint = match code {
                "InvalidCiphertextException" => " (the slot's ciphertext is not this store's, or was changed)",
                "DisabledException" => " (the KMS key is disabled)",
                "KMSInvalidStateException" => " (the KMS key is pending deletion or not usable)",
                "AccessDeniedException" => " (IAM does not allow this use of the key)",
                "NotFoundException" => " (no such key or alias in this region and account)",
                "IncorrectKeyException" => " (the slot was wrapped by another KMS key)",
                _ => "",
            };
            match inner.message() {
                Some(message) => format!("{code}: {message}{hint}"),
                None => format!("{code}{hint}"),
            }
        }
        SdkError::TimeoutError(_) => "no answer in time (30 s, 3 attempts)".to_owned(),
        e => causes(e),
    };
    CustodyError(format!("AWS KMS key {key} in {region}: {call} failed: {why}"))
}

/// Lower-case hex of public bytes (a store id is public).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_region_of_an_arn() {
        assert_eq!(arn_region("arn:aws:kms:eu-west-1:123456789012:key/abcd").as_deref(), Some("eu-west-1"));
        assert_eq!(arn_region("arn:aws:kms:us-east-2:123456789012:alias/memfs").as_deref(), Some("us-east-2"));
        assert_eq!(arn_region("alias/memfs"), None);
        assert_eq!(arn_region("1234abcd-12ab-34cd-56ef-1234567890ab"), None);
    }
}
