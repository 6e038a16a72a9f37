//! What the user offers to unlock a store.

use std::fmt;

use secrecy::SecretString;
use zeroize::Zeroize;

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

    /// The kind of slot this credential can unlock.
    pub fn kind(&self) -> SlotKind {
        match self {
            Credential::Passphrase(_) => SlotKind::Passphrase,
            Credential::KeyFile(_) => SlotKind::KeyFile,
        }
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Credential::Passphrase(_) => "Credential::Passphrase(..)",
            Credential::KeyFile(_) => "Credential::KeyFile(..)",
        })
    }
}
