//! `memfs key`: list, add and remove key slots.

use anyhow::Context;
use memfs::{Credential, KdfParams, Memfs, SlotId};

use crate::cli::{KeyAddArgs, KeyCommand, StoreArgs};
use crate::store;

pub(crate) async fn run(args: &StoreArgs, command: KeyCommand) -> anyhow::Result<()> {
    let (url, is_default) = store::url(args)?;
    let unlock = || -> anyhow::Result<Credential> {
        store::credential(args, is_default)?.context(
            "unlock the store first: give a passphrase (MEMFS_PASSPHRASE, --passphrase-file) or a key file (--key-file)",
        )
    };
    match command {
        KeyCommand::List => {
            let mut out = String::new();
            for (id, kind) in Memfs::key_slots(&url).await? {
                // One word per kind, as `memfs.keys` spells it, so the list splits on spaces.
                out.push_str(&format!("{} {}\n", id.get(), kind.to_string().replace(' ', "-")));
            }
            crate::output::stdout(out.as_bytes())?;
        }
        KeyCommand::Add(add) => {
            let unlock = unlock()?;
            let (new, what) = new_credential(&add)?;
            let kdf = KdfParams::new(add.kdf_memory_kib, add.kdf_iterations, add.kdf_parallelism)?;
            let id = match Memfs::add_key(&url, &unlock, &new, kdf).await {
                Ok(id) => id,
                Err(e) => {
                    // A key file for a slot that was never added would only mislead.
                    if let Some(path) = &add.new_key_file {
                        let _ = std::fs::remove_file(path);
                    }
                    return Err(e.into());
                }
            };
            crate::output::stdout(format!("added key slot {} ({what})\n", id.get()).as_bytes())?;
        }
        KeyCommand::Remove { id } => {
            Memfs::remove_key(&url, &unlock()?, SlotId::new(id)).await?;
            crate::output::stdout(format!("removed key slot {id}\n").as_bytes())?;
        }
    }
    Ok(())
}

/// The credential a new slot is for, and how to describe it.
fn new_credential(add: &KeyAddArgs) -> anyhow::Result<(Credential, String)> {
    if let Some(path) = &add.new_key_file {
        let key = crate::init::new_key_file(path)?;
        return Ok((Credential::KeyFile(key), format!("key file {}", path.display())));
    }
    let passphrase = match &add.new_passphrase_file {
        Some(path) => store::passphrase_file(path)?,
        None => crate::init::prompt_twice()?,
    };
    Ok((passphrase, "passphrase".to_owned()))
}
