//! Slots whose key is encrypted to an age recipient: an X25519 recipient (`age1…`, from
//! `age-keygen` or `rage-keygen`), an SSH public key (`ssh-ed25519 …`, `ssh-rsa …`), or a
//! plugin's recipient (`age1yubikey1…`, with its `age-plugin-…` binary on `PATH`).
//!
//! Each agent of a fleet gets its own identity: the store holds one slot per agent, the slot's
//! key-encryption key encrypted to that agent's recipient (an age file of 32 bytes, in the
//! slot's `wrapped_kek`). Removing an agent's slot and rotating the keys (`memfs key rotate
//! --remove N`) revokes that agent alone: its identity still opens its copy of the old slot,
//! which never receives the new root.
//!
//! Encrypting and decrypting run inline: microseconds for X25519 and SSH keys. A plugin is a
//! subprocess that may wait for a touch of a hardware key; that happens once, when a store is
//! opened, and its messages go to standard error (see [`Prompts`]).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use memfs_crypt::{Custodian, Custody, CustodyError, CustodyKek, SlotKind};
use zeroize::Zeroizing;

use crate::kek;

/// An age recipient a new slot's key is encrypted to.
pub struct AgeRecipient {
    /// As the user wrote it (trimmed): stored as the slot's outside key, shown by `key list`.
    text: String,
    recipient: Box<dyn age::Recipient + Send + Sync>,
}

impl AgeRecipient {
    /// Parses `text`: `age1…` (X25519), `ssh-ed25519 …` or `ssh-rsa …`, or a plugin's
    /// recipient (whose plugin binary must be on `PATH`).
    pub fn parse(text: &str) -> Result<Self, AgeError> {
        let text = text.trim();
        let bad = |reason: &str| AgeError::BadRecipient { recipient: text.to_owned(), reason: reason.to_owned() };
        let recipient: Box<dyn age::Recipient + Send + Sync> = if text.starts_with("ssh-") {
            match text.parse::<age::ssh::Recipient>() {
                Ok(r) => Box::new(r),
                Err(age::ssh::ParseRecipientKeyError::Invalid(why)) => return Err(bad(why)),
                Err(age::ssh::ParseRecipientKeyError::RsaModulusTooSmall) => {
                    return Err(bad("an RSA key shorter than 2048 bits"));
                }
                Err(age::ssh::ParseRecipientKeyError::RsaModulusTooLarge) => {
                    return Err(bad("an RSA key longer than age supports"));
                }
                Err(_) => return Err(bad("an SSH key type age does not support (ssh-ed25519 and ssh-rsa are)")),
            }
        } else if let Ok(r) = text.parse::<age::x25519::Recipient>() {
            Box::new(r)
        } else {
            let plugin = text.parse::<age::plugin::Recipient>().map_err(|_| {
                bad("not an age recipient (age1…), an SSH public key (ssh-ed25519 …, ssh-rsa …) or a plugin's recipient")
            })?;
            let name = plugin.plugin().to_owned();
            let v1 = age::plugin::RecipientPluginV1::new(&name, &[plugin], &[], Prompts)
                .map_err(|e| AgeError::Plugin { plugin: name, reason: e.to_string() })?;
            Box::new(v1)
        };
        Ok(AgeRecipient { text: text.to_owned(), recipient })
    }

    /// The recipient, as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

#[async_trait]
impl Custodian for AgeRecipient {
    fn opens(&self, _: SlotKind) -> bool {
        false
    }

    async fn open(&self, _: SlotKind, _: &Custody, _: &[u8; 16]) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        Err(CustodyError("a recipient cannot decrypt: give the identity (--age-identity)".into()))
    }

    async fn seal(&self, _store_id: &[u8; 16]) -> Result<CustodyKek, CustodyError> {
        let key = kek::random()?;
        let fail =
            |e: &dyn std::fmt::Display| CustodyError(format!("encrypting to the age recipient {}: {e}", self.text));
        let encryptor =
            age::Encryptor::with_recipients(std::iter::once(self.recipient.as_ref() as &dyn age::Recipient))
                .map_err(|e| fail(&e))?;
        let mut wrapped = Vec::with_capacity(256);
        let mut writer = encryptor.wrap_output(&mut wrapped).map_err(|e| fail(&e))?;
        std::io::Write::write_all(&mut writer, &key[..]).map_err(|e| fail(&e))?;
        writer.finish().map_err(|e| fail(&e))?;
        let custody = Custody { key: self.text.clone(), region: None, wrapped };
        Ok(CustodyKek { kind: SlotKind::Age, custody, kek: key })
    }
}

/// The age identities that open slots: identity files (`AGE-SECRET-KEY-1…` lines, plugin
/// identities `AGE-PLUGIN-…`) or unencrypted SSH private keys.
#[derive(Default)]
pub struct AgeIdentities {
    identities: Vec<Box<dyn age::Identity + Send + Sync>>,
}

impl AgeIdentities {
    /// Reads each file in `paths`. An SSH key encrypted with a passphrase is refused (memfs
    /// asks for no SSH passphrase): give an unencrypted key or an age identity file.
    pub fn read(paths: &[PathBuf]) -> Result<Self, AgeError> {
        let mut identities = Vec::new();
        for path in paths {
            identities.extend(read_identity_file(path)?);
        }
        Ok(AgeIdentities { identities })
    }

    /// Whether no identity was given.
    pub fn is_empty(&self) -> bool {
        self.identities.is_empty()
    }

    /// The KEK in an age slot's `wrapped_kek`, decrypted with the first identity that can.
    pub fn open(&self, custody: &Custody) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        if self.identities.is_empty() {
            return Err(CustodyError("no age identity given (--age-identity or MEMFS_AGE_IDENTITY)".into()));
        }
        let identities = self.identities.iter().map(|i| i.as_ref() as &dyn age::Identity);
        let decryptor = age::Decryptor::new_buffered(&custody.wrapped[..])
            .map_err(|e| CustodyError(format!("the slot's age file is unreadable: {e}")))?;
        let mut reader = decryptor.decrypt(identities).map_err(|e| match e {
            age::DecryptError::NoMatchingKeys => {
                CustodyError(format!("none of the age identities given is the one for {}", custody.key))
            }
            e => CustodyError(format!("decrypting the slot's age file: {e}")),
        })?;
        // A KEK is 32 bytes; 33 tell a longer plaintext apart without reading all of it.
        let mut plain = Zeroizing::new(Vec::with_capacity(33));
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut reader, 33), &mut plain)
            .map_err(|e| CustodyError(format!("decrypting the slot's age file: {e}")))?;
        kek::from_slice(&plain).ok_or_else(|| CustodyError("the slot's age file does not hold a 32-byte key".into()))
    }
}

/// The identities in the file at `path`: an age identity file, else an SSH private key.
fn read_identity_file(path: &Path) -> Result<Vec<Box<dyn age::Identity + Send + Sync>>, AgeError> {
    let read = |source| AgeError::ReadIdentity { path: path.to_owned(), source };
    let bytes = Zeroizing::new(std::fs::read(path).map_err(read)?);
    if let Ok(file) = age::IdentityFile::from_buffer(&bytes[..]) {
        let identities = file
            .with_callbacks(Prompts)
            .into_identities()
            .map_err(|e| AgeError::BadIdentity { path: path.to_owned(), reason: e.to_string() })?;
        if !identities.is_empty() {
            return Ok(identities);
        }
    }
    let name = path.display().to_string();
    match age::ssh::Identity::from_buffer(&bytes[..], Some(name)) {
        Ok(age::ssh::Identity::Unencrypted(key)) => Ok(vec![Box::new(age::ssh::Identity::Unencrypted(key))]),
        Ok(age::ssh::Identity::Encrypted(_)) => Err(AgeError::BadIdentity {
            path: path.to_owned(),
            reason: "an SSH key encrypted with a passphrase; memfs reads unencrypted SSH keys and age identity files"
                .into(),
        }),
        Ok(age::ssh::Identity::Unsupported(_)) => Err(AgeError::BadIdentity {
            path: path.to_owned(),
            reason: "an SSH key type age does not support (ssh-ed25519 and ssh-rsa are)".into(),
        }),
        Err(_) => Err(AgeError::BadIdentity {
            path: path.to_owned(),
            reason: "neither an age identity file (AGE-SECRET-KEY-1…) nor an SSH private key".into(),
        }),
    }
}

/// What a plugin may ask of the user: its messages ("touch your key") go to standard error;
/// it gets no answer to a question or a passphrase prompt (memfs runs unattended).
#[derive(Clone, Copy)]
struct Prompts;

impl age::Callbacks for Prompts {
    fn display_message(&self, message: &str) {
        eprintln!("memfs: age plugin: {message}");
    }

    fn confirm(&self, _: &str, _: &str, _: Option<&str>) -> Option<bool> {
        None
    }

    fn request_public_string(&self, _: &str) -> Option<String> {
        None
    }

    fn request_passphrase(&self, _: &str) -> Option<age::secrecy::SecretString> {
        None
    }
}

/// An age recipient or identity that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgeError {
    /// Not a recipient memfs can encrypt to.
    #[error("age recipient {recipient}: {reason}")]
    BadRecipient {
        /// The recipient given.
        recipient: String,
        /// Why it is refused.
        reason: String,
    },
    /// A plugin recipient whose plugin could not be started.
    #[error("age plugin {plugin}: {reason}")]
    Plugin {
        /// The plugin's name (`age-plugin-NAME`).
        plugin: String,
        /// Why.
        reason: String,
    },
    /// An identity file that could not be read.
    #[error("age identity {}: {source}", path.display())]
    ReadIdentity {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file that holds no identity memfs can use.
    #[error("age identity {}: {reason}", path.display())]
    BadIdentity {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}
