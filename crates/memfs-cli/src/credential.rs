//! New credentials: a key file written once, a passphrase asked for twice, the Argon2id cost
//! of a new passphrase slot and the note it carries (`memfs init`, `memfs key add`).

use std::path::Path;

use anyhow::{Context, bail};
use clap::Args;
use memfs::{Credential, KdfParams, KeyFile, SlotNote};

/// The Argon2id cost of a new passphrase slot. The help speaks of "a passphrase slot", as
/// `memfs init --help` says it; `memfs key add` rewords it (`KeyAddArgs`).
#[derive(Debug, Args)]
pub(crate) struct KdfArgs {
    /// Argon2id memory cost of a passphrase slot, in KiB (default 65536 = 64 MiB).
    #[arg(long, value_name = "KIB", default_value_t = 65536)]
    kdf_memory_kib: u32,

    /// Argon2id iterations of a passphrase slot.
    #[arg(long, value_name = "N", default_value_t = 3)]
    kdf_iterations: u32,

    /// Argon2id parallelism of a passphrase slot.
    #[arg(long, value_name = "N", default_value_t = 4)]
    kdf_parallelism: u32,
}

impl KdfArgs {
    /// The parameters, refused when out of the library's bounds.
    pub(crate) fn params(&self) -> anyhow::Result<KdfParams> {
        Ok(KdfParams::new(self.kdf_memory_kib, self.kdf_iterations, self.kdf_parallelism)?)
    }
}

/// Where a new slot's key is kept outside memfs (`memfs init`, `memfs key add`): at most one.
#[derive(Debug, Args)]
#[group(multiple = false)]
pub(crate) struct KeptArgs {
    /// Keep the slot's key in the OS keychain: the macOS Keychain, the Windows Credential
    /// Manager, or the Secret Service on Linux (GNOME Keyring, KWallet). It unlocks with
    /// nothing to give, for this user on this machine.
    #[arg(long)]
    keychain: bool,

    /// Wrap the slot's key with this AWS KMS key: a key id, key ARN, alias (alias/NAME) or
    /// alias ARN. Region and credentials come from the usual AWS environment (AWS_REGION,
    /// AWS_PROFILE, roles, SSO); the slot remembers the region. Unlocking needs only IAM
    /// permission to decrypt with the key (kms:Decrypt), under the encryption context
    /// memfs-store=STORE-ID.
    #[arg(long, value_name = "KEY")]
    aws_kms: Option<String>,

    /// Encrypt the slot's key with this Google Cloud KMS key
    /// (projects/P/locations/L/keyRings/R/cryptoKeys/K), bound to the store by associated
    /// data. Credentials: Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS,
    /// `gcloud auth application-default login`, the metadata server) or
    /// GOOGLE_OAUTH_ACCESS_TOKEN; unlocking needs permission to decrypt with the key.
    #[arg(long, value_name = "KEY")]
    gcp_kms: Option<String>,

    /// Wrap the slot's key with this Azure Key Vault (or Managed HSM) RSA key, given by its URL.
    #[arg(
        long,
        value_name = "KEY",
        long_help = "Wrap the slot's key with this Azure Key Vault (or Managed HSM) RSA key, \
                     https://VAULT.vault.azure.net/keys/NAME[/VERSION]; the slot remembers the version. \
                     Credentials: AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET (or a federated \
                     token), the Azure CLI's login, a managed identity, or AZURE_ACCESS_TOKEN; unlocking needs \
                     the unwrapKey permission on the key. A key on another host (an emulator on \
                     http://127.0.0.1:PORT) opens the store only where MEMFS_AZURE_KEY_VAULT_ENDPOINT names \
                     its origin."
    )]
    azure_key_vault: Option<String>,

    /// Encrypt the slot's key to this age recipient: an X25519 recipient (age1…, from
    /// age-keygen), an SSH public key ("ssh-ed25519 AAAA…", "ssh-rsa AAAA…"), or a plugin's
    /// recipient (its age-plugin-NAME on PATH). Whoever holds the matching identity unlocks
    /// with --age-identity; give each agent of a fleet its own, and revoke one with `memfs key
    /// rotate --remove ID`.
    #[arg(long, value_name = "RECIPIENT")]
    age_recipient: Option<String>,
}

impl KeptArgs {
    /// The custodian of the new slot, and how to name it, if one was asked for.
    pub(crate) fn custodian(&self) -> anyhow::Result<Option<(Credential, String)>> {
        if self.keychain {
            return Ok(Some((
                Credential::Custodian(std::sync::Arc::new(memfs_custody::Keychain)),
                "OS keychain".into(),
            )));
        }
        if let Some(key) = &self.aws_kms {
            let kms = memfs_custody::AwsKms::new(key)?;
            return Ok(Some((Credential::Custodian(std::sync::Arc::new(kms)), format!("AWS KMS key {}", key.trim()))));
        }
        if let Some(key) = &self.gcp_kms {
            let kms = memfs_custody::GcpKms::new(key)?;
            let what = format!("Google Cloud KMS key {}", key.trim());
            return Ok(Some((Credential::Custodian(std::sync::Arc::new(kms)), what)));
        }
        if let Some(key) = &self.azure_key_vault {
            let vault = memfs_custody::AzureKeyVault::new(key)?;
            let what = format!("Azure Key Vault key {}", key.trim());
            return Ok(Some((Credential::Custodian(std::sync::Arc::new(vault)), what)));
        }
        if let Some(recipient) = &self.age_recipient {
            let recipient = memfs_custody::AgeRecipient::parse(recipient)?;
            let what = format!("age recipient {}", recipient.as_str());
            return Ok(Some((Credential::Custodian(std::sync::Arc::new(recipient)), what)));
        }
        Ok(None)
    }
}

/// What a new key slot is called, for `memfs key list`.
#[derive(Debug, Args)]
pub(crate) struct LabelArgs {
    /// A label for the new key slot, shown by `memfs key list` with the time and host it was
    /// added on ("work laptop", "recovery key"; at most 64 bytes, no control characters).
    #[arg(long, value_name = "TEXT")]
    label: Option<String>,
}

impl LabelArgs {
    /// The new slot's note: the label, now, and this host.
    pub(crate) fn note(&self) -> anyhow::Result<SlotNote> {
        let note = slot_note(self.label.clone());
        note.check()?;
        Ok(note)
    }
}

/// A new slot's note: `label`, now, and this machine's host name (left out if it is one a
/// note cannot hold).
pub(crate) fn slot_note(label: Option<String>) -> SlotNote {
    let created_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .and_then(|d| u64::try_from(d.as_millis()).ok());
    let host = gethostname::gethostname().into_string().ok().filter(|h| !h.is_empty());
    let host = host.filter(|h| SlotNote { host: Some(h.clone()), ..SlotNote::default() }.check().is_ok());
    SlotNote { label, created_ms, host }
}

/// Writes a new random key file (0600, must not exist).
pub(crate) fn new_key_file(path: &Path) -> anyhow::Result<KeyFile> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let key = KeyFile::generate()?;
    key.write_new(path).with_context(|| format!("writing key file {}", path.display()))?;
    Ok(key)
}

/// A new passphrase, typed twice on the terminal.
pub(crate) fn prompt_twice() -> anyhow::Result<Credential> {
    let first = prompt("New passphrase: ")?;
    if first.is_empty() {
        bail!("the passphrase is empty");
    }
    let second = prompt("Repeat passphrase: ")?;
    if first != second {
        bail!("the passphrases do not match");
    }
    Ok(Credential::passphrase(first))
}

/// The passphrase for an existing store, typed once on the terminal.
pub(crate) fn prompt_once(store: &str) -> anyhow::Result<Credential> {
    Ok(Credential::passphrase(prompt(&format!("Passphrase for {store}: "))?))
}

/// One line typed on the terminal, not echoed. Without a terminal (a service, a pipe, CI) the
/// error says where else a passphrase comes from, not "No such device or address".
fn prompt(label: &str) -> anyhow::Result<String> {
    rpassword::prompt_password(label).map_err(|e| match e.raw_os_error() {
        // ENXIO: no controlling terminal to open.
        Some(6) => anyhow::anyhow!(
            "no terminal to ask for the passphrase on: give it with --passphrase-file or MEMFS_PASSPHRASE, or use a key file (--key-file)"
        ),
        _ => anyhow::Error::new(e).context("reading the passphrase"),
    })
}
