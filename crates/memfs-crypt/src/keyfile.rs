//! Key files: 32 random bytes that unlock a key-file slot instead of a passphrase.
//!
//! On disk a key file is the 32 raw bytes. [`KeyFile::read`] also accepts 64 hex digits (either
//! case) followed by at most one `\n` or `\r\n`, so a key can be written down or pasted; any
//! other content is refused, without reading more than 66 bytes of it.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::Path;

use zeroize::{ZeroizeOnDrop, Zeroizing};

use crate::derive;
use crate::error::Error;
use crate::hex;
use crate::secret::Secret32;

/// A key file's 32 bytes. Zeroized on drop; `Debug` is redacted; no `Clone`, no `AsRef<[u8]>`.
///
/// ```
/// use memfs_crypt::KeyFile;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("memfs.key");
/// KeyFile::generate()?.write_new(&path)?;
/// let key = KeyFile::read(&path)?;
/// assert!(KeyFile::generate()?.write_new(&path).is_err()); // never overwrites
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct KeyFile(Secret32);

impl KeyFile {
    /// A fresh key from the operating system's RNG.
    pub fn generate() -> Result<Self, Error> {
        Secret32::random().map(KeyFile)
    }

    /// Creates a new key file at `path` holding the 32 raw bytes.
    ///
    /// Never replaces an existing file (`create_new`, i.e. `O_CREAT | O_EXCL`); on Unix the file
    /// is created with mode `0600` (before the umask), so it is never readable by others, not
    /// even for a moment. The content and then the directory entry are flushed to disk before
    /// this returns. If writing fails the partial file is removed.
    pub fn write_new(&self, path: &Path) -> Result<(), Error> {
        let err = |source| Error::KeyFile { path: path.to_owned(), source };
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(path).map_err(err)?;
        if let Err(e) = file.write_all(self.0.expose()).and_then(|()| file.sync_all()) {
            drop(file);
            let _ = std::fs::remove_file(path);
            return Err(err(e));
        }
        sync_parent(path).map_err(err)
    }

    /// Takes ownership of key bytes; the caller should zeroize its own copy.
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        KeyFile(Secret32::new(bytes))
    }

    /// Reads a key file: exactly 32 raw bytes, or 64 hex digits with an optional final
    /// newline. Anything else is [`Error::KeyFile`] with an `InvalidData` source. On Unix, a
    /// key file that group or others may read or write (any of the bits `0o077`) is refused
    /// with [`Error::KeyFilePermissions`], as `ssh` refuses such a private key and memfs a
    /// tokens file: whoever can read it holds the store.
    pub fn read(path: &Path) -> Result<Self, Error> {
        let err = |source| Error::KeyFile { path: path.to_owned(), source };
        let file = File::open(path).map_err(err)?;
        // The open file's own mode (not the path's again), so a swap in between changes nothing.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = file.metadata().map_err(err)?.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(Error::KeyFilePermissions { path: path.to_owned(), mode });
            }
        }
        // One byte more than the longest accepted form, so a longer file is detected without
        // reading it all; the capacity is fixed so the buffer never reallocates (and leaves no
        // unzeroized copy behind).
        let mut content = Zeroizing::new(Vec::with_capacity(MAX_LEN + 1));
        file.take(MAX_LEN as u64 + 1).read_to_end(&mut content).map_err(err)?;
        Self::parse(&content).ok_or_else(|| {
            err(io::Error::new(
                io::ErrorKind::InvalidData,
                "not a key file: expected exactly 32 bytes, or 64 hex digits and an optional newline",
            ))
        })
    }

    /// The accepted contents (see the module docs).
    fn parse(content: &[u8]) -> Option<Self> {
        let mut key = KeyFile(Secret32::zeroed());
        if let Ok(raw) = <&[u8; 32]>::try_from(content) {
            *key.0.expose_mut() = *raw;
            return Some(key);
        }
        let digits = content.strip_suffix(b"\n").map_or(content, |c| c.strip_suffix(b"\r").unwrap_or(c));
        hex::decode_into(digits, key.0.expose_mut()).then_some(key)
    }

    /// The key-encryption key of this file's slots.
    pub(crate) fn kek(&self) -> Zeroizing<[u8; 32]> {
        derive::key_file_kek(self.0.expose())
    }
}

// Its one field zeroizes itself on drop.
impl ZeroizeOnDrop for KeyFile {}

/// The longest accepted content: 64 hex digits and `\r\n`.
const MAX_LEN: usize = 66;

impl fmt::Debug for KeyFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let KeyFile(_) = self;
        f.write_str("KeyFile(..)")
    }
}

/// Flushes the directory entry of a new file (POSIX: `fsync` on the file does not persist
/// its name). Windows has no equivalent and needs none.
#[cfg(unix)]
fn sync_parent(path: &Path) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    File::open(parent)?.sync_all()
}

#[cfg(not(unix))]
fn sync_parent(_: &Path) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(k: &KeyFile) -> [u8; 32] {
        *k.0.expose()
    }

    #[test]
    fn parses_raw_and_hex() {
        let raw: [u8; 32] = std::array::from_fn(|i| i as u8 * 7);
        let hex = hex::encode(&raw);
        assert_eq!(bytes(&KeyFile::parse(&raw).unwrap()), raw);
        for content in [hex.clone(), hex.to_uppercase(), format!("{hex}\n"), format!("{hex}\r\n")] {
            assert_eq!(bytes(&KeyFile::parse(content.as_bytes()).unwrap()), raw, "{content:?}");
        }
        for content in [
            &raw[..31],
            &[0; 33][..],
            format!("{hex}\n\n").as_bytes(),
            format!(" {hex}").as_bytes(),
            format!("{hex}\r").as_bytes(),
            &hex.as_bytes()[..63],
            format!("{}g", &hex[..63]).as_bytes(),
            b"",
        ] {
            assert!(KeyFile::parse(content).is_none(), "{content:?}");
        }
    }

    #[test]
    fn debug_is_redacted() {
        let k = KeyFile::from_bytes([0xab; 32]);
        let s = format!("{k:?}");
        assert_eq!(s, "KeyFile(..)");
    }

    #[test]
    fn generated_keys_differ() {
        assert_ne!(bytes(&KeyFile::generate().unwrap()), bytes(&KeyFile::generate().unwrap()));
    }
}
