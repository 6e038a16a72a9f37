//! Key files on disk.

use std::fs;
use std::io::ErrorKind;

use memfs_crypt::{Credential, Error, KeyFile, KeySlots, RootKey};

use super::{fingerprint, store};

/// Writes `content` to `path` as a key file should be: readable by its owner alone.
fn write_private(path: &std::path::Path, content: impl AsRef<[u8]>) {
    fs::write(path, content).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600)).unwrap();
    }
}

fn kind_of(err: Error) -> ErrorKind {
    match err {
        Error::KeyFile { source, .. } => source.kind(),
        other => panic!("{other}"),
    }
}

#[test]
fn written_key_files_unlock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("memfs.key");
    let master = RootKey::generate().unwrap();
    let file = KeyFile::generate().unwrap();
    file.write_new(&path).unwrap();
    let slots = KeySlots::with_key_file(&master, &store(), &file).unwrap();
    assert_eq!(fs::read(&path).unwrap().len(), 32);
    let read = KeyFile::read(&path).unwrap();
    assert_eq!(fingerprint(&slots.unlock(&Credential::KeyFile(read), &store()).unwrap()), fingerprint(&master));

    // The same key as 64 hex digits and a newline works too.
    let hex: String = fs::read(&path).unwrap().iter().map(|b| format!("{b:02x}")).collect();
    let hex_path = dir.path().join("memfs.hex");
    write_private(&hex_path, format!("{hex}\n"));
    let read = KeyFile::read(&hex_path).unwrap();
    assert!(slots.unlock(&Credential::KeyFile(read), &store()).is_ok());
}

#[cfg(unix)]
#[test]
fn key_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k");
    KeyFile::generate().unwrap().write_new(&path).unwrap();
    assert_eq!(fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
}

/// A key file that group or others may read or write is refused before it is read, naming
/// the fix.
#[cfg(unix)]
#[test]
fn key_files_others_may_read_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k");
    KeyFile::generate().unwrap().write_new(&path).unwrap();
    for mode in [0o644, 0o640, 0o604, 0o620, 0o602, 0o700 | 0o004] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        let err = KeyFile::read(&path).unwrap_err();
        assert!(matches!(err, Error::KeyFilePermissions { mode: m, .. } if m == mode), "{err}");
        let p = path.display();
        assert_eq!(
            err.to_string(),
            format!(
                "key file {p} can be read or written by others (mode {mode:04o}): it holds a key; run chmod 600 {p}"
            )
        );
    }
    for mode in [0o600, 0o400] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        assert!(KeyFile::read(&path).is_ok(), "mode {mode:o}");
    }
}

#[test]
fn never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k");
    fs::write(&path, b"precious").unwrap();
    let err = KeyFile::generate().unwrap().write_new(&path).unwrap_err();
    assert!(err.to_string().starts_with(&format!("key file {}: ", path.display())), "{err}");
    assert_eq!(kind_of(err), ErrorKind::AlreadyExists);
    assert_eq!(fs::read(&path).unwrap(), b"precious");
}

#[test]
fn refuses_what_is_not_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("k");
    for content in [&[0u8; 31][..], &[0; 33], &[0; 64], &[0; 1 << 20], b"", &[b'a'; 63], &[b'a'; 65]] {
        write_private(&path, content);
        let err = KeyFile::read(&path).unwrap_err();
        assert!(err.to_string().contains("not a key file"), "{err}");
        assert_eq!(kind_of(err), ErrorKind::InvalidData, "{}", content.len());
    }
    assert_eq!(kind_of(KeyFile::read(&dir.path().join("missing")).unwrap_err()), ErrorKind::NotFound);
}
