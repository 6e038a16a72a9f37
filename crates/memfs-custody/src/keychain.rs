//! Slots whose key is kept in the operating system's credential store: the macOS Keychain,
//! the Windows Credential Manager, or the Secret Service on Linux (GNOME Keyring, KWallet),
//! through the `keyring` crate.
//!
//! The slot's key-encryption key itself is the keychain entry's secret (32 bytes), under the
//! service `memfs` and an account named after the store and a random suffix
//! (`<store id>-<8 hex>`), which the slot records. So a stolen disk or a home-folder backup
//! holds the store but not its key: that sits in the keychain, behind the user's login.
//!
//! The `keyring` crate's calls block (D-Bus round trips on Linux), so they run on tokio's
//! blocking pool.

use async_trait::async_trait;
use memfs_crypt::{Custodian, Custody, CustodyError, CustodyKek, SlotKind};
use zeroize::Zeroizing;

use crate::kek;

/// The keychain service every memfs entry is filed under.
pub(crate) const SERVICE: &str = "memfs";

/// The OS keychain, making a new slot's key there.
#[derive(Debug, Default, Clone, Copy)]
pub struct Keychain;

impl Keychain {
    /// Why no keychain can be used here (no Secret Service on a headless Linux, say), or
    /// `None` when one answers.
    pub fn unavailable() -> Option<String> {
        keyring::Entry::store_status().as_ref().err().map(describe)
    }

    /// The KEK kept in the entry `account`.
    pub(crate) async fn open(custody: &Custody) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        let account = custody.key.clone();
        blocking(move || {
            let entry = entry(&account)?;
            let secret = Zeroizing::new(entry.get_secret().map_err(|e| match e {
                keyring::Error::NoEntry => CustodyError(format!(
                    "no keychain entry {SERVICE}/{account} here (made on another machine or user, or deleted)"
                )),
                e => CustodyError(format!("reading the keychain entry {SERVICE}/{account}: {}", describe(&e))),
            })?);
            kek::from_slice(&secret).ok_or_else(|| {
                CustodyError(format!("the keychain entry {SERVICE}/{account} does not hold a 32-byte key"))
            })
        })
        .await
    }
}

#[async_trait]
impl Custodian for Keychain {
    fn opens(&self, _: SlotKind) -> bool {
        false
    }

    async fn open(&self, _: SlotKind, custody: &Custody, _: &[u8; 16]) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        Keychain::open(custody).await
    }

    async fn seal(&self, store_id: &[u8; 16]) -> Result<CustodyKek, CustodyError> {
        let key = kek::random()?;
        let mut suffix = [0u8; 4];
        getrandom::fill(&mut suffix).map_err(|_| CustodyError("the system random number generator failed".into()))?;
        let account = format!("{}-{}", hex(store_id), hex(&suffix));
        let (name, secret) = (account.clone(), key.clone());
        blocking(move || {
            entry(&name)?
                .set_secret(&secret[..])
                .map_err(|e| CustodyError(format!("writing the keychain entry {SERVICE}/{name}: {}", describe(&e))))
        })
        .await?;
        let custody = Custody { key: account, region: None, wrapped: Vec::new() };
        Ok(CustodyKek { kind: SlotKind::Keychain, custody, kek: key })
    }
}

/// The entry `account` of the memfs service.
fn entry(account: &str) -> Result<keyring::Entry, CustodyError> {
    keyring::Entry::new(SERVICE, account).map_err(|e| match keyring::Entry::store_status() {
        Err(cause) => CustodyError(format!("no OS keychain here: {}", describe(cause))),
        Ok(()) => CustodyError(format!("the keychain entry {SERVICE}/{account}: {}", describe(&e))),
    })
}

/// A keyring error in words that never hold the entry's content (two of its variants carry
/// the secret's bytes).
fn describe(e: &keyring::Error) -> String {
    match e {
        keyring::Error::PlatformFailure(cause) => cause.to_string(),
        keyring::Error::NoStorageAccess(cause) => format!("the keychain is locked or refused access ({cause})"),
        keyring::Error::NoEntry => "no such entry".into(),
        keyring::Error::NoDefaultStore => "no keychain service is reachable".into(),
        keyring::Error::BadEncoding(_) | keyring::Error::BadDataFormat(..) => "the entry holds something else".into(),
        _ => "the keychain refused".into(),
    }
}

/// Runs `f` on tokio's blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CustodyError> + Send + 'static,
) -> Result<T, CustodyError> {
    tokio::task::spawn_blocking(f).await.unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// Lower-case hex of public bytes (a store id is public).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
