//! Key custody for memfs: key slots whose key is kept outside memfs (issue 19).
//!
//! A store's key slots each wrap its root (see `memfs-crypt`, "Keys"). A passphrase or a key
//! file gives a slot's key-encryption key (KEK) directly; the slots here get theirs from a
//! keeper, a [`Custodian`](memfs_crypt::Custodian):
//!
//! - age ([`AgeRecipient`], [`AgeIdentities`]): the KEK encrypted to an age recipient, so each
//!   agent of a fleet holds its own identity file and can be revoked alone;
//! - [`AwsKms`]: the KEK from AWS KMS (envelope encryption, bound to the store by an
//!   encryption context);
//! - [`GcpKms`]: the KEK wrapped by a Google Cloud KMS key (bound to the store by additional
//!   authenticated data);
//! - [`AzureKeyVault`]: the KEK wrapped by an Azure Key Vault or Managed HSM RSA key;
//! - [`Keychain`]: the KEK in the OS credential store (macOS Keychain, Windows Credential
//!   Manager, the Secret Service on Linux).
//!
//! [`Unlock`] is the custodian that opens a store: it tries every custody slot of a kind it
//! holds a way into. A slot is read from the store before anything can vouch for it, so what
//! it names never chooses where a request goes: only the cloud's official hosts, or an endpoint
//! the local configuration gives, are reached; a slot naming another is refused
//! ([`SlotRefused`]) before any credential leaves the process.

//! # Modules
//! The workspace's module map: `crates/README.md`.
//!
//! - `age`: slots encrypted to age recipients, opened with identity files;
//! - `aws_kms`: slots wrapped by AWS KMS keys;
//! - `azure_key_vault`: slots wrapped by Azure Key Vault keys;
//! - `endpoint`: where a slot read from a store may send a request, and [`SlotRefused`];
//! - `gcp_kms`: slots wrapped by Google Cloud KMS keys;
//! - `kek`: a KEK as custodians hand it over;
//! - `keychain`: slots kept in the OS keychain;
//! - `rest`: one POST to a REST custodian, and the words of its errors;
//! - `unlock`: [`Unlock`], every custodian that can open a store at once.

#![forbid(unsafe_code)]
#![warn(missing_docs, unreachable_pub)]

mod age;
mod aws_kms;
mod azure_key_vault;
mod endpoint;
mod gcp_kms;
mod kek;
mod keychain;
mod rest;
mod unlock;

pub use age::{AgeError, AgeIdentities, AgeRecipient};
pub use aws_kms::AwsKms;
pub use azure_key_vault::AzureKeyVault;
pub use endpoint::SlotRefused;
pub use gcp_kms::GcpKms;
pub use keychain::Keychain;
pub use unlock::Unlock;
