//! What the user offers to unlock a store.

use std::fmt;
use std::sync::Arc;

use secrecy::SecretString;
use zeroize::Zeroize;

use crate::custody::{Custodian, CustodyKek};
use crate::keyfile::KeyFile;
use crate::slot_id::SlotKind;

/// Something that unlocks a store. `Debug` prints only the kind.
///
/// A passphrase is used as its exact UTF-8 bytes: strip a trailing newline before wrapping it.
pub enum Credential {
    /// A passphrase.
    Passphrase(SecretString),
    /// A key file's content.
    KeyFile(KeyFile),
    /// Keys kept outside memfs: the store asks the custodian for the KEK of each custody
    /// slot it opens (`memfs-store` does, since that takes I/O), and a new slot is sealed by
    /// it for the store first. [`KeySlots`](crate::KeySlots) takes only the result, a
    /// [`Credential::Kek`].
    Custodian(Arc<dyn Custodian>),
    /// A custody slot's KEK in hand.
    Kek(CustodyKek),
}

impl Credential {
    /// A passphrase credential. Takes the `String` and wipes it, so the only copy left is the
    /// zeroized-on-drop one inside.
    pub fn passphrase(mut passphrase: String) -> Self {
        // `SecretString::from(String)` would shrink the buffer, possibly reallocating and
        // leaving an unwiped copy behind; copying from `&str` allocates exactly once.
        let secret = SecretString::from(passphrase.as_str());
        passphrase.zeroize();
        Credential::Passphrase(secret)
    }

    /// The kind of slot this credential can unlock; `None` for a custodian, which may open
    /// several.
    pub fn kind(&self) -> Option<SlotKind> {
        match self {
            Credential::Passphrase(_) => Some(SlotKind::Passphrase),
            Credential::KeyFile(_) => Some(SlotKind::KeyFile),
            Credential::Custodian(_) => None,
            Credential::Kek(kek) => Some(kek.kind),
        }
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Credential::Passphrase(_) => "Credential::Passphrase(..)",
            Credential::KeyFile(_) => "Credential::KeyFile(..)",
            Credential::Custodian(_) => "Credential::Custodian(..)",
            Credential::Kek(_) => "Credential::Kek(..)",
        })
    }
}
