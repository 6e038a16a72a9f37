//! A key slot's name: its number and its kind.
//!
//! A leaf: errors and credentials name slots without depending on the slot set (`slot.rs`),
//! which uses both.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A slot's number within its set, shown to users ("key slot 2"); ids are never reused while
/// a higher one exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SlotId(u32);

impl SlotId {
    /// Wraps a number.
    pub const fn new(n: u32) -> Self {
        SlotId(n)
    }

    /// The number.
    pub const fn get(self) -> u32 {
        self.0
    }
}

impl fmt::Display for SlotId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// What unlocks a slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SlotKind {
    /// A passphrase, through Argon2id.
    Passphrase,
    /// A key file's 32 random bytes.
    KeyFile,
    /// A key kept in the operating system's credential store (macOS Keychain, Windows
    /// Credential Manager, the Secret Service on Linux).
    Keychain,
    /// A key wrapped by an AWS KMS key.
    AwsKms,
    /// A key wrapped by a Google Cloud KMS key.
    GcpKms,
    /// A key wrapped by an Azure Key Vault key.
    AzureKeyVault,
    /// A key encrypted to an age recipient (X25519, SSH or a plugin's).
    Age,
}

impl SlotKind {
    /// The byte that stands for this kind in the associated data.
    pub(crate) fn to_u8(self) -> u8 {
        match self {
            SlotKind::Passphrase => 1,
            SlotKind::KeyFile => 2,
            SlotKind::Keychain => 3,
            SlotKind::AwsKms => 4,
            SlotKind::GcpKms => 5,
            SlotKind::AzureKeyVault => 6,
            SlotKind::Age => 7,
        }
    }

    /// The kind as `memfs.keys` spells it: `passphrase`, `key-file`, `keychain`, `aws-kms`,
    /// `gcp-kms`, `azure-key-vault`, `age`.
    pub fn name(self) -> &'static str {
        match self {
            SlotKind::Passphrase => "passphrase",
            SlotKind::KeyFile => "key-file",
            SlotKind::Keychain => "keychain",
            SlotKind::AwsKms => "aws-kms",
            SlotKind::GcpKms => "gcp-kms",
            SlotKind::AzureKeyVault => "azure-key-vault",
            SlotKind::Age => "age",
        }
    }

    /// Whether a slot of this kind has its key kept outside memfs (see `custody.rs`), so
    /// that a [`Custodian`](crate::Custodian) opens it rather than a passphrase or key file.
    pub fn is_custody(self) -> bool {
        !matches!(self, SlotKind::Passphrase | SlotKind::KeyFile)
    }
}

impl fmt::Display for SlotKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SlotKind::Passphrase => "passphrase",
            SlotKind::KeyFile => "key file",
            SlotKind::Keychain => "keychain",
            SlotKind::AwsKms => "AWS KMS",
            SlotKind::GcpKms => "Google Cloud KMS",
            SlotKind::AzureKeyVault => "Azure Key Vault",
            SlotKind::Age => "age",
        })
    }
}

/// `1, 2 and 3`: ids (of slots, epochs) for a message.
pub fn join<T: fmt::Display>(ids: &[T]) -> String {
    let names: Vec<String> = ids.iter().map(ToString::to_string).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => names.concat(),
    }
}
