//! Where a custody slot read from a store may send a request, checked before anything is sent.
//!
//! A slot is read from `memfs.keys` before the key set's tag can be checked (the tag needs the
//! root the slot gives), so whoever can write the store can plant one: what a slot names must
//! not choose where a credential goes. A slot reaches only the cloud's official hosts, or an
//! endpoint the local configuration gives:
//!
//! - AWS KMS: the SDK's endpoint for the slot's region, `kms.REGION.amazonaws.com` (or the
//!   official suffix of the region's partition: `amazonaws.com.cn`, `c2s.ic.gov`…), or the
//!   endpoint the AWS configuration gives (`AWS_ENDPOINT_URL_KMS`, `AWS_ENDPOINT_URL`, a
//!   profile's `endpoint_url`). The region becomes a DNS label of the host, so it must be a
//!   region's name ([`aws_region`]); the key must be a key id, key ARN, alias name or alias ARN
//!   ([`aws_key`]), whose region is one too.
//! - Google Cloud KMS: `https://cloudkms.googleapis.com` or `MEMFS_GCP_KMS_ENDPOINT`; a slot
//!   names only its CryptoKey, a resource name checked before it goes into the URL's path.
//! - Azure Key Vault: a slot names its key's URL, so its host must be an official one
//!   (`https://NAME.vault.azure.net`, `https://NAME.managedhsm.azure.net`) or the origin given
//!   by [`AZURE_ENDPOINT_VAR`] (an emulator or a stub on a loopback host), or the one of the
//!   key a custodian was made with.
//!
//! A slot that names anything else is refused ([`SlotRefused`]), before a token is read or a
//! connection opened.

/// The variable that gives the origin of an Azure Key Vault that is not one of Azure's (an
/// emulator or a test stub on a loopback host), whose keys slots may name.
pub(crate) const AZURE_ENDPOINT_VAR: &str = "MEMFS_AZURE_KEY_VAULT_ENDPOINT";

/// A custody slot read from a store that names what it may not, refused before anything is
/// sent. Shown after the slot's id and kind ("key slot 3 (azure-key-vault): …").
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SlotRefused {
    /// An Azure Key Vault key on a host that is neither Azure's nor one the local
    /// configuration gives.
    #[error(
        "names the endpoint {endpoint}: not an official Azure Key Vault host (https://NAME.vault.azure.net, \
         https://NAME.managedhsm.azure.net) nor one given by {AZURE_ENDPOINT_VAR}; nothing was sent"
    )]
    AzureEndpoint {
        /// The endpoint named (the key URL's origin).
        endpoint: String,
    },

    /// An AWS region that is not a region's name (it would become part of a host name).
    #[error("names the AWS region {region:?}: not a region's name (as eu-west-1); nothing was sent")]
    AwsRegion {
        /// The region named.
        region: String,
    },

    /// An AWS KMS key that is not a key id, key ARN, alias name or alias ARN.
    #[error("names the AWS KMS key {key:?}: not a key id, key ARN, alias name or alias ARN; nothing was sent")]
    AwsKey {
        /// The key named.
        key: String,
    },
}

impl From<SlotRefused> for memfs_crypt::CustodyError {
    fn from(refused: SlotRefused) -> Self {
        memfs_crypt::CustodyError(refused.to_string())
    }
}

/// The AWS partitions whose ARNs are accepted: each has official KMS hosts
/// (`aws-sdk-kms`'s partition table).
const AWS_PARTITIONS: [&str; 8] =
    ["aws", "aws-cn", "aws-us-gov", "aws-iso", "aws-iso-b", "aws-iso-e", "aws-iso-f", "aws-eusc"];

/// Whether `region` is an AWS region's name: two to four letters, words of letters, and a
/// number, joined by dashes (`eu-west-1`, `us-gov-west-1`, `us-isob-east-1`, `eusc-de-east-1`),
/// at most 32 characters. So it is one DNS label, and the host the SDK makes of it,
/// `kms.REGION.SUFFIX`, is the partition's.
pub(crate) fn aws_region(region: &str) -> bool {
    let parts: Vec<&str> = region.split('-').collect();
    let Some((number, words)) = parts.split_last() else { return false };
    let lower = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_lowercase());
    region.len() <= 32
        && words.len() >= 2
        && (2..=4).contains(&words[0].len())
        && words.iter().all(|word| lower(word))
        && (1..=2).contains(&number.len())
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// Whether `key` names an AWS KMS key: a key id (a UUID, or `mrk-` and 32 hex digits for a
/// multi-Region key), an alias name (`alias/` and letters, digits, `/`, `_`, `-`, at most 256
/// characters in all), or the ARN of either (`arn:PARTITION:kms:REGION:ACCOUNT:key/ID` or
/// `…:alias/NAME`) in an official partition and region, with a 12-digit account.
pub(crate) fn aws_key(key: &str) -> bool {
    if let Some(rest) = key.strip_prefix("arn:") {
        let parts: Vec<&str> = rest.splitn(5, ':').collect();
        return match parts[..] {
            [partition, "kms", region, account, resource] => {
                AWS_PARTITIONS.contains(&partition)
                    && aws_region(region)
                    && account.len() == 12
                    && account.bytes().all(|b| b.is_ascii_digit())
                    && (resource.strip_prefix("key/").is_some_and(key_id) || alias(resource))
            }
            _ => false,
        };
    }
    key_id(key) || alias(key)
}

/// Whether `id` is a KMS key id: a UUID in lower-case hex, or `mrk-` and 32 hex digits.
fn key_id(id: &str) -> bool {
    let hex = |s: &str| s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if let Some(multi) = id.strip_prefix("mrk-") {
        return multi.len() == 32 && hex(multi);
    }
    let groups: Vec<&str> = id.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12]) && groups.iter().all(|g| hex(g))
}

/// Whether `name` is a KMS alias name: `alias/` and 1 to 250 letters, digits, `/`, `_`, `-`.
fn alias(name: &str) -> bool {
    name.strip_prefix("alias/").is_some_and(|rest| {
        (1..=250).contains(&rest.len())
            && rest.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'_' | b'-'))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aws_regions() {
        for ok in ["us-east-1", "eu-west-3", "ap-southeast-7", "cn-northwest-1", "us-gov-west-1", "us-isob-east-1"] {
            assert!(aws_region(ok), "{ok}");
        }
        assert!(aws_region("eusc-de-east-1") && aws_region("eu-isoe-west-1") && aws_region("il-central-1"));
        for bad in [
            "",
            "x.evil.example/",
            "x.evil.example",
            "us-east-1.evil.example",
            "us-east-1#",
            "us-east",
            "us-east-123",
            "US-EAST-1",
            "u-east-1",
            "useast-east-1",
            "us--1",
            "us-east-1 ",
            "127.0.0.1",
        ] {
            assert!(!aws_region(bad), "{bad:?}");
        }
    }

    #[test]
    fn aws_keys() {
        for ok in [
            "1234abcd-12ab-34cd-56ef-1234567890ab",
            "mrk-1234abcd12ab34cd56ef1234567890ab",
            "alias/memfs",
            "alias/team/memfs_key-1",
            "arn:aws:kms:us-east-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
            "arn:aws-cn:kms:cn-north-1:111122223333:alias/memfs",
            "arn:aws-us-gov:kms:us-gov-west-1:111122223333:key/mrk-1234abcd12ab34cd56ef1234567890ab",
        ] {
            assert!(aws_key(ok), "{ok}");
        }
        for bad in [
            "",
            "memfs",
            "alias/",
            "alias/a b",
            "alias/../x",
            "1234ABCD-12ab-34cd-56ef-1234567890ab",
            "1234abcd-12ab-34cd-56ef-1234567890ab-",
            "mrk-1234",
            "arn:aws:kms:x.evil.example:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab",
            "arn:evil:kms:us-east-1:111122223333:alias/memfs",
            "arn:aws:s3:us-east-1:111122223333:alias/memfs",
            "arn:aws:kms:us-east-1:1111:alias/memfs",
            "arn:aws:kms:us-east-1:111122223333:alias/memfs:x",
        ] {
            assert!(!aws_key(bad), "{bad:?}");
        }
    }
}
