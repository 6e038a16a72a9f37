//! [`SlotNote`]: what a person is told about a key slot (a label, when and on which host it
//! was added), so that `memfs key list` can say which slot is whose.
//!
//! A note is stored beside the slot's wrapped key in `memfs.keys`, as optional fields that
//! readers before it ignore. It is not authenticated (the slot set carries no MAC yet): whoever
//! can write the store can change a note, as they can delete a slot. So a note is shown, never
//! trusted: which slot a credential opens is found by unlocking, not by its label. What a
//! terminal would act on is refused: a label or host of more than [`SlotNote::MAX_BYTES`] bytes,
//! or with a control character, is refused when written and when read.

use serde::{Deserialize, Serialize};

use crate::error::Error;

/// A key slot's label, creation time and host; each may be absent (slots made before notes,
/// or by a caller that gives none).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlotNote {
    /// What the person who added the slot called it (`work laptop`, `recovery key`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// When it was added, in milliseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_ms: Option<u64>,
    /// The host name of the machine it was added on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
}

impl SlotNote {
    /// The longest label or host accepted, in bytes.
    pub const MAX_BYTES: usize = 64;

    /// Refuses a label or host that is too long or holds a control character
    /// ([`Error::BadSlotNote`]).
    pub fn check(&self) -> Result<(), Error> {
        for (what, text) in [("label", &self.label), ("host", &self.host)] {
            let Some(text) = text else { continue };
            if text.len() > Self::MAX_BYTES {
                return Err(Error::BadSlotNote { what, reason: "it is over 64 bytes" });
            }
            if text.chars().any(char::is_control) {
                return Err(Error::BadSlotNote { what, reason: "it holds a control character" });
            }
        }
        Ok(())
    }

    /// Whether there is nothing to say.
    pub fn is_empty(&self) -> bool {
        self.label.is_none() && self.created_ms.is_none() && self.host.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_or_control_text_is_refused() {
        let ok = SlotNote { label: Some("work laptop".into()), created_ms: Some(1), host: Some("h".repeat(64)) };
        assert!(ok.check().is_ok());
        let long = SlotNote { label: Some("l".repeat(65)), ..SlotNote::default() };
        assert_eq!(long.check().unwrap_err().to_string(), "a key slot's label is refused: it is over 64 bytes");
        for bad in ["a\u{1b}[2J", "tab\there", "new\nline", "\u{7f}"] {
            let note = SlotNote { host: Some(bad.into()), ..SlotNote::default() };
            assert_eq!(
                note.check().unwrap_err().to_string(),
                "a key slot's host is refused: it holds a control character",
                "{bad:?}"
            );
        }
        assert!(SlotNote::default().is_empty() && SlotNote::default().check().is_ok());
    }
}
