//! Validated memory paths.
//!
//! Every path the model sends goes through [`MemoryPath::parse`] before anything looks at the
//! tree, and the tree is keyed only by the [`Name`]s a successful parse yields. So no path
//! outside `/memories` can reach storage: there is no other way in.
//!
//! The rules, each stricter than the official SDKs (see `docs/COMPAT.md`):
//! - the path is `/memories` itself or starts with `/memories/` (`/memoriesfoo` is refused,
//!   where the Python SDK maps it to `/memories/foo`);
//! - `.` and empty components are dropped and `..` pops one component, lexically; a `..` that
//!   would climb above `/memories` is refused, even if later components come back down;
//! - no control character (NUL included), no backslash, and no component that still spells
//!   traversal once percent-decoded, at any depth (`%2e%2e`, `%2f`, `%5c`, `%252e`);
//! - no invisible format character (Unicode general category Cf: the bidi controls U+202A–U+202E
//!   and U+2066–U+2069, zero-width spaces and joiners, U+FEFF…), which make a name display as
//!   another (`txt.exe` shown as `exe.txt`) or two names look the same;
//! - a component is at most [`MAX_NAME_BYTES`] bytes and the whole path at most
//!   [`MAX_PATH_BYTES`] bytes.
//!
//! Every component is put in Unicode Normalization Form C (NFC), so `café` typed with a
//! precomposed `é` (U+00E9) and with `e` plus a combining acute (U+0301) is one name, and twins
//! that differ only in their normal form cannot exist in the tree.
//!
//! The string the model sent is kept verbatim for echoing in answers, as the SDK does:
//! `/memories/` lists children as `/memories//a.txt`.

use std::fmt;

use thiserror::Error;
use unicode_normalization::UnicodeNormalization;
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// The virtual root every memory path lives under.
pub const ROOT: &str = "/memories";

/// Longest accepted component, in bytes (ext4's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;

/// Longest accepted path as sent, in bytes (Linux's `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// Why a path was refused. Rendered by [`crate::render`]; the variants carry the path as sent.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum PathError {
    /// The path does not start with `/memories`.
    #[error("path {path:?} does not start with /memories")]
    NotUnderRoot {
        /// The path as sent.
        path: String,
    },
    /// The path starts with `/memories` but continues with something other than `/`.
    #[error("path {path:?} is outside the /memories directory")]
    SiblingOfRoot {
        /// The path as sent.
        path: String,
    },
    /// A `..` component climbs above `/memories`.
    #[error("path {path:?} would escape /memories")]
    Escapes {
        /// The path as sent.
        path: String,
    },
    /// The path holds a control character (NUL included).
    #[error("path {path:?} contains a control character")]
    ControlCharacter {
        /// The path as sent.
        path: String,
    },
    /// The path holds an invisible format character (general category Cf, such as U+202E).
    #[error("path {path:?} contains an invisible format character")]
    FormatCharacter {
        /// The path as sent.
        path: String,
    },
    /// The path holds a backslash, a Windows separator and a traversal vector.
    #[error("path {path:?} contains a backslash")]
    Backslash {
        /// The path as sent.
        path: String,
    },
    /// A component percent-decodes to traversal, a separator or a control character.
    #[error("path {path:?} contains an encoded traversal sequence")]
    EncodedTraversal {
        /// The path as sent.
        path: String,
    },
    /// A component is longer than [`MAX_NAME_BYTES`].
    #[error("path {path:?} has a name longer than {MAX_NAME_BYTES} bytes")]
    NameTooLong {
        /// The path as sent.
        path: String,
    },
    /// The path is longer than [`MAX_PATH_BYTES`]; not echoed back.
    #[error("path is longer than {MAX_PATH_BYTES} bytes")]
    PathTooLong {
        /// Its length in bytes.
        len: usize,
    },
}

/// One validated path component: never empty, `.` or `..`, no `/`, `\`, control or format
/// character, in NFC, at most [`MAX_NAME_BYTES`] bytes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Name(String);

impl Name {
    /// Checks one component with the same rules as [`MemoryPath::parse`].
    ///
    /// ```
    /// use memfs_core::Name;
    /// assert!(Name::parse("notes.md").is_ok());
    /// assert!(Name::parse("..").is_err());
    /// assert!(Name::parse("a/b").is_err());
    /// assert!(Name::parse("txt\u{202e}.exe").is_err());
    /// assert_eq!(Name::parse("cafe\u{301}")?, Name::parse("caf\u{e9}")?);
    /// # Ok::<(), memfs_core::PathError>(())
    /// ```
    pub fn parse(name: &str) -> Result<Self, PathError> {
        let err_path = || format!("{ROOT}/{name}");
        check_format(name, &err_path)?;
        let nfc = nfc(name);
        Self::check(&nfc, &err_path)?;
        Ok(Name(nfc))
    }

    /// A name read from the store, kept exactly as stored: the rules of [`parse`](Self::parse)
    /// but format characters and NFC, so that a directory written before those rules still
    /// reads, in its stored order (pages check that their names are strictly increasing, and
    /// normalising here could reorder them). Its names are listed; no path names one that is
    /// not in NFC or holds a format character (COMPAT.md D20, D21 say how to fix them).
    fn stored(name: &str) -> Result<Self, PathError> {
        Self::check(name, &|| format!("{ROOT}/{name}"))?;
        Ok(Name(name.to_owned()))
    }

    /// `err_path` spells the path an error names: only on failure, as a store's reads check
    /// every name they decode.
    fn check(name: &str, err_path: &dyn Fn() -> String) -> Result<(), PathError> {
        if name.is_empty() || name == "." || name == ".." || name.contains('/') {
            return Err(PathError::Escapes { path: err_path() });
        }
        check_chars(name, err_path)?;
        check_component(name, err_path)
    }

    /// The component as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether the name is hidden (starts with `.`), as the listing filter understands it.
    pub fn is_hidden(&self) -> bool {
        self.0.starts_with('.')
    }
}

impl<'de> serde::Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Name::stored(&s).map_err(serde::de::Error::custom)
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A path inside `/memories`, validated and normalised, with the string the model sent kept
/// for echoing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPath {
    raw: String,
    components: Vec<Name>,
}

impl MemoryPath {
    /// Validates a path as sent by the model.
    ///
    /// ```
    /// use memfs_core::MemoryPath;
    /// let p = MemoryPath::parse("/memories//notes/./a.txt").unwrap();
    /// assert_eq!(p.normalized(), "/memories/notes/a.txt");
    /// assert_eq!(p.as_sent(), "/memories//notes/./a.txt");
    /// assert!(MemoryPath::parse("/memories/../etc/passwd").is_err());
    /// assert!(MemoryPath::parse("/memoriesfoo/x").is_err());
    /// assert!(MemoryPath::parse("/memories/%2e%2e/x").is_err());
    /// assert!(MemoryPath::parse("/memories/a\\b").is_err());
    /// assert!(MemoryPath::parse("/memories/").unwrap().is_root());
    /// assert!(MemoryPath::parse("/memories/a\u{202e}b").is_err());
    /// // One name whatever its normal form; the answer echoes the path as sent.
    /// let nfd = MemoryPath::parse("/memories/cafe\u{301}.md").unwrap();
    /// assert_eq!(nfd.normalized(), "/memories/caf\u{e9}.md");
    /// assert_eq!(nfd.as_sent(), "/memories/cafe\u{301}.md");
    /// ```
    pub fn parse(path: &str) -> Result<Self, PathError> {
        if path.len() > MAX_PATH_BYTES {
            return Err(PathError::PathTooLong { len: path.len() });
        }
        let Some(rest) = path.strip_prefix(ROOT) else {
            return Err(PathError::NotUnderRoot { path: path.to_owned() });
        };
        let err_path = || path.to_owned();
        check_chars(path, &err_path)?;
        check_format(path, &err_path)?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return Err(PathError::SiblingOfRoot { path: path.to_owned() });
        }
        let mut components: Vec<Name> = Vec::new();
        for part in rest.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    if components.pop().is_none() {
                        return Err(PathError::Escapes { path: path.to_owned() });
                    }
                }
                name => {
                    let name = nfc(name);
                    check_component(&name, &err_path)?;
                    components.push(Name(name));
                }
            }
        }
        Ok(MemoryPath { raw: path.to_owned(), components })
    }

    /// The path exactly as the model sent it.
    pub fn as_sent(&self) -> &str {
        &self.raw
    }

    /// The components below `/memories`; empty for the root.
    pub fn components(&self) -> &[Name] {
        &self.components
    }

    /// Whether the path names `/memories` itself, in any spelling.
    pub fn is_root(&self) -> bool {
        self.components.is_empty()
    }

    /// The canonical spelling: `/memories` plus `/name` per component.
    pub fn normalized(&self) -> String {
        normalized(&self.components)
    }

    /// Whether `self` is `other` or lies below it.
    pub fn starts_with(&self, other: &MemoryPath) -> bool {
        self.components.starts_with(&other.components)
    }
}

/// The canonical spelling of a list of components.
pub fn normalized(components: &[Name]) -> String {
    let mut s = String::from(ROOT);
    for c in components {
        s.push('/');
        s.push_str(c.as_str());
    }
    s
}

fn check_chars(s: &str, path: &dyn Fn() -> String) -> Result<(), PathError> {
    if s.chars().any(char::is_control) {
        return Err(PathError::ControlCharacter { path: path() });
    }
    if s.contains('\\') {
        return Err(PathError::Backslash { path: path() });
    }
    Ok(())
}

/// [`PathError::FormatCharacter`] if `s` holds a character of general category Cf.
fn check_format(s: &str, path: &dyn Fn() -> String) -> Result<(), PathError> {
    // No ASCII character is of category Cf: most names skip the table lookups.
    if !s.is_ascii() && s.chars().any(|c| c.general_category() == GeneralCategory::Format) {
        return Err(PathError::FormatCharacter { path: path() });
    }
    Ok(())
}

/// `name` in NFC (UAX #15). NFC, not NFD, because it is what keyboards and most systems
/// produce, so most names are unchanged; not NFKC, which would merge names that look
/// different (`ﬁ` and `fi`).
fn nfc(name: &str) -> String {
    if unicode_normalization::is_nfc(name) { name.to_owned() } else { name.nfc().collect() }
}

fn check_component(name: &str, path: &dyn Fn() -> String) -> Result<(), PathError> {
    if name.len() > MAX_NAME_BYTES {
        return Err(PathError::NameTooLong { path: path() });
    }
    // Without a `%`, a name decodes to itself (most names; every name a store read decodes).
    if !name.contains('%') {
        return Ok(());
    }
    // Decode until nothing changes, so that any depth of encoding (`%252e%252e`, and deeper)
    // is caught; every round that changes the name shortens it, so this ends within
    // MAX_NAME_BYTES / 2 rounds. A name that merely contains `%` (`100%.md`) decodes to itself.
    let mut current = name.to_owned();
    loop {
        let decoded = percent_encoding::percent_decode_str(&current).decode_utf8_lossy().into_owned();
        if decoded == current {
            break;
        }
        let dangerous = decoded == "."
            || decoded == ".."
            || decoded.contains(['/', '\\'])
            || decoded.chars().any(char::is_control)
            || decoded.split(['/', '\\']).any(|p| p == "..");
        if dangerous {
            return Err(PathError::EncodedTraversal { path: path() });
        }
        current = decoded;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(p: &str) -> String {
        MemoryPath::parse(p).unwrap().normalized()
    }

    #[test]
    fn normalises_like_the_sdk_inside_the_root() {
        assert_eq!(norm("/memories"), "/memories");
        assert_eq!(norm("/memories/"), "/memories");
        assert_eq!(norm("/memories//a.txt"), "/memories/a.txt");
        assert_eq!(norm("/memories/./a.txt"), "/memories/a.txt");
        assert_eq!(norm("/memories/sub/../a.txt"), "/memories/a.txt");
        assert_eq!(norm("/memories/a.txt/"), "/memories/a.txt");
        assert_eq!(norm("/memories/ "), "/memories/ ");
        assert_eq!(norm("/memories/100%.md"), "/memories/100%.md");
        assert_eq!(norm("/memories/.hidden"), "/memories/.hidden");
    }

    #[test]
    fn refuses_everything_outside() {
        let cases = [
            ("", "NotUnderRoot"),
            ("/etc/passwd", "NotUnderRoot"),
            ("memories/a", "NotUnderRoot"),
            ("/Memories/a", "NotUnderRoot"),
            ("/memoriesfoo/x.txt", "SiblingOfRoot"),
            ("/memories..", "SiblingOfRoot"),
            ("/memories/..", "Escapes"),
            ("/memories/../x", "Escapes"),
            ("/memories/a/../../x", "Escapes"),
            ("/memories/../memories/a.txt", "Escapes"),
            ("/memories/../../../etc/passwd", "Escapes"),
            ("/memories/a\0b", "ControlCharacter"),
            ("/memories/a\nb", "ControlCharacter"),
            ("/memories/a\u{85}b", "ControlCharacter"),
            ("/memories/..\\x.txt", "Backslash"),
            ("/memories\\..\\x", "Backslash"),
            ("/memories/%2e%2e/x", "EncodedTraversal"),
            ("/memories/%2E%2E%2Fetc", "EncodedTraversal"),
            ("/memories/a%2fb", "EncodedTraversal"),
            ("/memories/a%5cb", "EncodedTraversal"),
            ("/memories/%252e%252e", "EncodedTraversal"),
            ("/memories/%2525252e%2525252e", "EncodedTraversal"),
            ("/memories/%00", "EncodedTraversal"),
            ("/memories/txt\u{202e}.exe", "FormatCharacter"),
            ("/memories/a\u{200b}b", "FormatCharacter"),
            ("/memories/\u{feff}a", "FormatCharacter"),
            ("/memories/d\u{2066}/a", "FormatCharacter"),
            ("/memories/a\u{ad}b", "FormatCharacter"),
        ];
        for (path, kind) in cases {
            let err = MemoryPath::parse(path).unwrap_err();
            let got = format!("{err:?}");
            assert!(got.starts_with(kind), "{path:?}: expected {kind}, got {got}");
        }
    }

    #[test]
    fn one_name_per_normal_form() {
        let nfc = MemoryPath::parse("/memories/caf\u{e9}/x.md").unwrap();
        let nfd = MemoryPath::parse("/memories/cafe\u{301}/x.md").unwrap();
        assert_eq!(nfc.components(), nfd.components());
        assert_eq!(nfd.normalized(), "/memories/caf\u{e9}/x.md");
        // Compatibility forms stay distinct: NFC, not NFKC.
        assert_ne!(norm("/memories/\u{fb01}"), norm("/memories/fi"));
        // A stored name is read as stored (an earlier memfs may have written it), and one with a
        // format character still reads.
        let stored: Name = serde_json::from_str(r#""cafe\u0301""#).unwrap();
        assert_eq!(stored.as_str(), "cafe\u{301}");
        assert!(serde_json::from_str::<Name>(r#""a\u202eb""#).is_ok());
        assert!(Name::parse("a\u{202e}b").is_err());
    }

    #[test]
    fn length_limits() {
        let ok = format!("/memories/{}", "n".repeat(MAX_NAME_BYTES));
        assert!(MemoryPath::parse(&ok).is_ok());
        let long = format!("/memories/{}", "n".repeat(MAX_NAME_BYTES + 1));
        assert!(matches!(MemoryPath::parse(&long), Err(PathError::NameTooLong { .. })));
        let deep = format!("/memories{}", "/abcdefg".repeat(600));
        assert!(matches!(MemoryPath::parse(&deep), Err(PathError::PathTooLong { .. })));
    }

    #[test]
    fn root_in_any_spelling() {
        for p in ["/memories", "/memories/", "/memories/.", "/memories//", "/memories/a/.."] {
            assert!(MemoryPath::parse(p).unwrap().is_root(), "{p}");
        }
    }
}
