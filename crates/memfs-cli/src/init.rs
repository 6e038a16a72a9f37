//! `memfs init`: create a new encrypted store.

use anyhow::bail;
use clap::Args;
use memfs::{Credential, Memfs};

use crate::credential::{KdfArgs, KeptArgs, LabelArgs, new_key_file, prompt_twice};
use crate::store::{self, StoreArgs};

#[derive(Debug, Args)]
pub(crate) struct InitArgs {
    #[command(flatten)]
    kdf: KdfArgs,

    #[command(flatten)]
    label: LabelArgs,

    #[command(flatten)]
    kept: KeptArgs,
}

pub(crate) async fn run(args: &StoreArgs, init: InitArgs) -> anyhow::Result<()> {
    let (url, _) = store::url(args)?;
    if Memfs::exists(&url).await? {
        bail!("a memfs store already exists at {url}");
    }
    let kdf = init.kdf.params()?;
    let note = init.label.note()?;
    let kept = init.kept.custodian()?;
    if kept.is_some() && (args.key_file.is_some() || args.passphrase_file.is_some()) {
        bail!("give one way in to a new store: a key file, a passphrase, or a key kept outside memfs");
    }
    let (credential, kept) = match (kept, &args.key_file) {
        (Some((custodian, what)), _) => (custodian, Some(what)),
        (None, Some(path)) => (Credential::KeyFile(new_key_file(path)?), None),
        (None, None) => match store::passphrase(args)? {
            Some(p) => (p, None),
            None => (prompt_twice()?, None),
        },
    };
    if let Err(e) = Memfs::init_with_note(&url, &credential, kdf, note).await {
        // A key file for a store that was never created would only mislead.
        if let (Some(path), None) = (&args.key_file, &kept) {
            let _ = std::fs::remove_file(path);
        }
        return Err(e.into());
    }
    eprintln!("memfs: created a new encrypted store at {url}");
    if let Some(what) = &kept {
        eprintln!("memfs: its key slot is kept by the {what}");
    } else if let Some(path) = &args.key_file {
        eprintln!("memfs: its key file is {} (keep it safe: without it the store cannot be read)", path.display());
    }
    Ok(())
}
