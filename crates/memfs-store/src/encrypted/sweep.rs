//! Leftovers of killed writers in a local folder, which `object_store` cannot list.
//!
//! `LocalFileSystem` stages every put as `objects/xx/<id>#<n>` and links it into place; the
//! local head and gc state are staged as `.head.<hex>.tmp` and `.gc.state.<hex>.tmp` and
//! renamed. A process killed in between leaves the staging file behind. Nothing ever reads one,
//! and `object_store`'s listing skips them, so `gc` removes them here, by name, once they are
//! older than the grace period (a live writer's staging file is seconds old).

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::EncryptedRepository;
use crate::error::Error;

/// What the sweep removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Swept {
    pub(super) files: u64,
    pub(super) bytes: u64,
}

impl EncryptedRepository {
    /// Removes staging leftovers older than `grace_ms` (local folders only).
    pub(super) async fn sweep_leftovers(&self, grace_ms: u64) -> Result<Swept, Error> {
        let Some(dir) = self.local_dir.clone() else { return Ok(Swept::default()) };
        let grace = Duration::from_millis(grace_ms);
        tokio::task::spawn_blocking(move || sweep(&dir, grace))
            .await
            .map_err(|e| Error::io(Path::new("objects"), std::io::Error::other(e)))?
    }
}

fn sweep(dir: &Path, grace: Duration) -> Result<Swept, Error> {
    let mut swept = Swept::default();
    let now = SystemTime::now();
    let mut consider = |path: &Path| -> Result<(), Error> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(Error::io(path, e)),
        };
        let age = meta.modified().ok().and_then(|m| now.duration_since(m).ok()).unwrap_or_default();
        if !meta.is_file() || age < grace {
            return Ok(());
        }
        match std::fs::remove_file(path) {
            Ok(()) => {
                swept.files += 1;
                swept.bytes += meta.len();
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(path, e)),
        }
    };
    for entry in read_dir(dir)? {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') && name.ends_with(".tmp") {
            consider(&entry.path())?;
        }
    }
    let objects = dir.join("objects");
    for shard in read_dir(&objects)? {
        if !shard.path().is_dir() {
            continue;
        }
        for entry in read_dir(&shard.path())? {
            if is_staging_name(&entry.file_name().to_string_lossy()) {
                consider(&entry.path())?;
            }
        }
    }
    Ok(swept)
}

/// `<64 hex>#<digits>`: `object_store`'s staging name for an object.
fn is_staging_name(name: &str) -> bool {
    match name.split_once('#') {
        Some((id, n)) => {
            id.len() == 64
                && id.bytes().all(|b| b.is_ascii_hexdigit())
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

fn read_dir(dir: &Path) -> Result<Vec<std::fs::DirEntry>, Error> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.collect::<Result<_, _>>().map_err(|e| Error::io(dir, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io(dir, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_names() {
        let id = "ab".repeat(32);
        assert!(is_staging_name(&format!("{id}#1")));
        assert!(is_staging_name(&format!("{id}#123")));
        assert!(!is_staging_name(&id));
        assert!(!is_staging_name(&format!("{id}#")));
        assert!(!is_staging_name(&format!("{id}#x")));
        assert!(!is_staging_name("short#1"));
    }

    #[test]
    fn sweeps_only_old_leftovers() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let shard = dir.join("objects").join("ab");
        std::fs::create_dir_all(&shard).unwrap();
        let id = "ab".repeat(32);
        let object = shard.join(&id);
        let staging = shard.join(format!("{id}#7"));
        let head_tmp = dir.join(".head.deadbeef.tmp");
        for f in [&object, &staging, &head_tmp] {
            std::fs::write(f, b"12345").unwrap();
        }
        // Younger than the grace period: kept.
        assert_eq!(sweep(dir, Duration::from_secs(3600)).unwrap(), Swept::default());
        // Older: the two leftovers go, the object and the head stay.
        assert_eq!(sweep(dir, Duration::ZERO).unwrap(), Swept { files: 2, bytes: 10 });
        assert!(object.exists() && !staging.exists() && !head_tmp.exists());
    }
}
