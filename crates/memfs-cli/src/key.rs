//! `memfs key`: list, add and remove key slots; rotate the keys.

use std::path::PathBuf;

use clap::{Args, Subcommand};
use memfs::{Credential, Memfs, RemoveKey, RotateKeys, Rotation, SlotId, SlotKind, SlotNote};

use crate::credential::{KdfArgs, KeptArgs, LabelArgs, new_key_file, prompt_twice};
use crate::store::{self, StoreArgs};

#[derive(Debug, Subcommand)]
pub(crate) enum KeyCommand {
    /// Print each slot as `ID KIND` (passphrase, key-file, keychain, aws-kms, gcp-kms,
    /// azure-key-vault or age), its label, when and where it was added, and for a key kept
    /// outside memfs where (`kept by` the keychain entry, KMS key or age recipient); the slot
    /// that the credential given (or the default store's key) opens is marked `(in use)`.
    List,
    /// Add a slot: a new key file (--new-key-file), a new passphrase (--new-passphrase-file,
    /// or asked for twice on the terminal), or a key kept outside memfs (--keychain, --aws-kms,
    /// --gcp-kms, --azure-key-vault, --age-recipient).
    Add(KeyAddArgs),
    /// Remove the slot with this id (the last slot is never removed).
    Remove(KeyRemoveArgs),
    /// Change a passphrase slot's passphrase (the slot you unlock with, or --slot ID); the
    /// data is not touched. The new passphrase comes from --new-passphrase-file or is asked
    /// for twice on the terminal.
    Passwd(KeyPasswdArgs),
    /// Rotate the keys: a new root key and key epoch, wrapped to every slot. Everything written
    /// from now on is sealed under keys that no removed slot ever held; what was written
    /// before stays readable (under the older epochs) to whoever holds the store's keys.
    Rotate(KeyRotateArgs),
    /// Seal again, under the newest key epoch, every object still sealed under an older one,
    /// in place (objects keep their names). Safe while others write; run it again to finish
    /// one that was interrupted.
    Reseal(ResealArgs),
    /// Crypto-erasure: destroy the keys of everything the store no longer holds (after `memfs
    /// purge` or `gc`), so that copies kept elsewhere (bucket versions, backups, caches) cannot
    /// be read with the store's credentials, nor searched for a guessed content. Names and
    /// seals every live object again under new address keys and a new key epoch, destroys every
    /// older key epoch and the old address keys, and leaves one slot, opened by a new key file
    /// or passphrase: the old credential, with the old copies of memfs.keys, would still reach
    /// the destroyed keys. Safe while others write; run it again to finish one that stopped.
    Shred(KeyShredArgs),
}

/// The credential the store opens with after a shred.
#[derive(Debug, Args)]
#[command(
    mut_arg("kdf_memory_kib", |a| a.help("Argon2id memory cost of the new passphrase slot, in KiB (default 65536 = 64 MiB)")),
    mut_arg("kdf_iterations", |a| a.help("Argon2id iterations of the new passphrase slot")),
    mut_arg("kdf_parallelism", |a| a.help("Argon2id parallelism of the new passphrase slot")),
)]
pub(crate) struct KeyShredArgs {
    /// Create a new random key file here (mode 0600; it must not exist): the only way in
    /// afterwards.
    #[arg(
        long,
        value_name = "PATH",
        conflicts_with = "new_passphrase_file",
        required_unless_present = "new_passphrase_file"
    )]
    new_key_file: Option<PathBuf>,

    /// The new passphrase, the first line of this file: the only way in afterwards.
    #[arg(long, value_name = "PATH")]
    new_passphrase_file: Option<PathBuf>,

    /// Remove every other key slot (their credentials would still reach the destroyed keys
    /// through old copies of memfs.keys); without it, a store with other slots is refused.
    #[arg(long)]
    remove_other_slots: bool,

    /// Say what would be destroyed and removed; change nothing (and write no key file).
    #[arg(long)]
    dry_run: bool,

    /// Do not ask first (without a terminal, key shred does not ask).
    #[arg(long, short = 'y')]
    yes: bool,

    #[command(flatten)]
    kdf: KdfArgs,
}

/// How to rotate.
#[derive(Debug, Args)]
pub(crate) struct KeyRotateArgs {
    /// Check that the keys can be rotated and say what would change; change nothing.
    #[arg(long, conflicts_with = "reseal")]
    dry_run: bool,

    /// Then seal again, under the new epoch, everything the current tree holds (see `memfs
    /// key reseal`).
    #[arg(long)]
    reseal: bool,

    /// With --reseal: every stored object, so every kept commit too.
    #[arg(long, requires = "reseal")]
    history: bool,

    /// Also name and seal every live object again under new address keys and the new epoch, as
    /// `memfs key shred` does but keeping the key slots: a removed credential can then not tell
    /// whether a content it guesses is stored from now on (without it, it can, by computing
    /// the name). Objects under the old keys are deleted; clients open with the old names stop
    /// and must open the store again. Safe while others write; run it again after a failure.
    #[arg(long, conflicts_with = "reseal")]
    readdress: bool,
}

/// What to reseal.
#[derive(Debug, Args)]
pub(crate) struct ResealArgs {
    /// Every stored object, so every kept commit too (default: what the current tree holds).
    #[arg(long)]
    history: bool,
}

/// The passphrase to change, and the Argon2id cost of the slot re-wrapped under it.
#[derive(Debug, Args)]
pub(crate) struct KeyPasswdArgs {
    /// The passphrase slot to change (default: the one your passphrase opens).
    #[arg(long, value_name = "ID")]
    slot: Option<u32>,

    /// The new passphrase: the first line of this file.
    #[arg(long, value_name = "PATH")]
    new_passphrase_file: Option<PathBuf>,

    #[command(flatten)]
    kdf: KdfArgs,
}

/// The slot to remove.
#[derive(Debug, Args)]
pub(crate) struct KeyRemoveArgs {
    /// The slot's id, as `memfs key list` prints it.
    id: u32,

    /// Check that the slot can be removed and say so; change nothing.
    #[arg(long)]
    dry_run: bool,

    /// Do not ask before removing (without a terminal, key remove does not ask).
    #[arg(long, short = 'y')]
    yes: bool,

    /// Remove the slot even if it is the one the credential given opens: whoever holds only
    /// that credential is locked out.
    #[arg(long)]
    force: bool,

    /// Also rotate the keys (see `memfs key rotate`): whoever holds the removed slot's
    /// passphrase or key file, and kept a copy of the store's keys, can read nothing written
    /// from now on. Without it, removing a slot revokes nobody who already copied the keys.
    #[arg(long)]
    rotate: bool,

    /// With --rotate: also name and seal every live object again under new address keys (see
    /// `memfs key rotate --readdress`), so that the removed slot's holder cannot tell whether a
    /// content it guesses is stored from now on.
    #[arg(long, requires = "rotate")]
    readdress: bool,
}

/// The slot to add. The cost flags are `init`'s, said of "a new passphrase slot".
#[derive(Debug, Args)]
#[command(
    mut_arg("kdf_memory_kib", |a| a.help("Argon2id memory cost of a new passphrase slot, in KiB (default 65536 = 64 MiB)")),
    mut_arg("kdf_iterations", |a| a.help("Argon2id iterations of a new passphrase slot")),
    mut_arg("kdf_parallelism", |a| a.help("Argon2id parallelism of a new passphrase slot")),
)]
pub(crate) struct KeyAddArgs {
    /// Create a new random key file here (mode 0600; it must not exist) and add a slot for it.
    #[arg(long, value_name = "PATH", conflicts_with = "new_passphrase_file")]
    new_key_file: Option<PathBuf>,

    /// Add a passphrase slot for the first line of this file.
    #[arg(long, value_name = "PATH")]
    new_passphrase_file: Option<PathBuf>,

    #[command(flatten)]
    kdf: KdfArgs,

    #[command(flatten)]
    label: LabelArgs,

    #[command(flatten)]
    kept: KeptArgs,
}

pub(crate) async fn run(args: &StoreArgs, command: KeyCommand) -> anyhow::Result<()> {
    let (url, is_default) = store::url(args)?;
    // A passphrase or key file given, else the keys kept outside memfs (a store with no slot
    // of theirs then says it needs a passphrase or a key file).
    let unlock = || store::credential(args, is_default);
    // The change is recorded in a commit: opened as every command opens the store.
    let open = |unlock: Credential| store::options(args, memfs::Dialect::default(), Some(unlock));
    match command {
        KeyCommand::List => list(args, &url, is_default).await?,
        KeyCommand::Add(add) => add_slot(&url, open(unlock()?)?, &add).await?,
        KeyCommand::Passwd(passwd) => change_passphrase(&url, unlock()?, open, &passwd).await?,
        KeyCommand::Remove(remove) => remove_slot(&url, open(unlock()?)?, &remove).await?,
        KeyCommand::Rotate(rotate) => {
            let unlock = open(unlock()?)?;
            let plan = RotateKeys { remove: None, own: false, dry_run: rotate.dry_run, readdress: rotate.readdress };
            let done = Memfs::rotate_keys(&url, &unlock, plan).await?;
            crate::output::stdout(rotated(&done, rotate.dry_run, rotate.readdress).as_bytes())?;
            if rotate.reseal {
                reseal(args, rotate.history).await?;
            }
        }
        KeyCommand::Reseal(reseal_args) => reseal(args, reseal_args.history).await?,
        KeyCommand::Shred(shred_args) => shred(&url, open(unlock()?)?, shred_args).await?,
    }
    Ok(())
}

/// `memfs key list`: one line per slot, `ID KIND`, its note, who keeps it, and the one in use.
async fn list(args: &StoreArgs, url: &memfs::Location, is_default: bool) -> anyhow::Result<()> {
    let slots = Memfs::key_slots(url).await?;
    let kept: std::collections::HashMap<SlotId, String> = Memfs::custody_keys(url).await?.into_iter().collect();
    // Listing needs no key; one that is there marks its slot (a wrong one marks none).
    let in_use = Memfs::key_slot_of(url, &store::credential(args, is_default)?).await.ok();
    let mut out = String::new();
    for (id, kind, note) in slots {
        // One word per kind, as `memfs.keys` spells it, so the list splits on spaces.
        let mark = if Some(id) == in_use { " (in use)" } else { "" };
        let kind = kind.name();
        let keeper = kept.get(&id).map(|key| format!(" kept by {key}")).unwrap_or_default();
        out.push_str(&format!("{} {kind}{}{keeper}{mark}\n", id.get(), note_words(&note)));
    }
    crate::output::stdout(out.as_bytes())?;
    Ok(())
}

/// `memfs key add`: a slot for a new credential; a key file made for it is removed if the
/// store refuses the slot.
async fn add_slot(url: &memfs::Location, unlock: memfs::OpenOptions, add: &KeyAddArgs) -> anyhow::Result<()> {
    // Everything refusable before a new key file is written.
    let kdf = add.kdf.params()?;
    let note = add.label.note()?;
    let (new, what) = new_credential(add)?;
    let id = match Memfs::add_key(url, &unlock, &new, kdf, note).await {
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
    Ok(())
}

/// `memfs key passwd`: a new passphrase for the slot named, or for the one unlocked with.
async fn change_passphrase(
    url: &memfs::Location,
    unlock: Credential,
    open: impl FnOnce(Credential) -> anyhow::Result<memfs::OpenOptions>,
    passwd: &KeyPasswdArgs,
) -> anyhow::Result<()> {
    let slot = match (passwd.slot, &unlock) {
        (Some(id), _) => SlotId::new(id),
        (None, Credential::Passphrase(_)) => Memfs::key_slot_of(url, &unlock).await?,
        (None, Credential::KeyFile(_)) => anyhow::bail!(
            "you unlocked with a key file: name the passphrase slot to change with --slot ID (see memfs key list)"
        ),
        (None, _) => anyhow::bail!(
            "you unlocked with a key kept outside memfs: name the passphrase slot to change with --slot ID (see memfs key list)"
        ),
    };
    let new = match &passwd.new_passphrase_file {
        Some(path) => store::passphrase_file(path)?,
        None => prompt_twice()?,
    };
    let Credential::Passphrase(new) = new else { unreachable!("a passphrase was read") };
    Memfs::change_passphrase(url, &open(unlock)?, slot, &new, passwd.kdf.params()?).await?;
    crate::output::stdout(format!("changed the passphrase of key slot {}\n", slot.get()).as_bytes())?;
    Ok(())
}

/// `memfs key remove`: the slot removed (with `--rotate`, and the keys rotated) after the
/// question, or only previewed with `--dry-run`.
async fn remove_slot(url: &memfs::Location, unlock: memfs::OpenOptions, remove: &KeyRemoveArgs) -> anyhow::Result<()> {
    let slot = SlotId::new(remove.id);
    // What a removal checks (the slot exists, it is not the last, it is not the caller's
    // own unless --force; with --rotate, that the keys can be rotated): the dry run
    // refuses as the removal would, in one unlock.
    if remove.rotate {
        let question = "Remove it and rotate the keys? Its passphrase or key file will no longer unlock the store.";
        let plan = RotateKeys { remove: Some(slot), own: remove.force, dry_run: true, readdress: remove.readdress };
        let preview = async || Ok(Memfs::rotate_keys(url, &unlock, plan).await?);
        let render = |r: &Rotation| {
            (format!("would remove key slot {}\n{}", remove.id, rotated(r, true, remove.readdress)), true)
        };
        if crate::confirm::preview(("key remove", question), remove.yes, remove.dry_run, preview, render).await? {
            let done = Memfs::rotate_keys(url, &unlock, RotateKeys { dry_run: false, ..plan }).await?;
            crate::output::stdout(
                format!("removed key slot {}\n{}", remove.id, rotated(&done, false, remove.readdress)).as_bytes(),
            )?;
        }
        return Ok(());
    }
    let question = "Remove it? Its passphrase or key file will no longer unlock the store.";
    let options = RemoveKey { own: remove.force, dry_run: true };
    let plan = async || Ok(Memfs::remove_key(url, &unlock, slot, options).await?);
    let render = |kind: &SlotKind| (format!("would remove key slot {} ({kind})\n", remove.id), true);
    if crate::confirm::preview(("key remove", question), remove.yes, remove.dry_run, plan, render).await? {
        Memfs::remove_key(url, &unlock, slot, RemoveKey { dry_run: false, ..options }).await?;
        crate::output::stdout(format!("removed key slot {}\n", remove.id).as_bytes())?;
    }
    Ok(())
}

/// `memfs key reseal`: opens the store as every command does, reseals with a progress bar,
/// and says what it did: `resealed 12 of 40 stored objects (3120 bytes) under key epoch 1`.
async fn reseal(args: &StoreArgs, history: bool) -> anyhow::Result<()> {
    let memfs = store::open(args, memfs::Dialect::Spec, false).await?;
    let report = {
        let bar = crate::output::Bar::new();
        memfs.reseal(memfs::history::ResealOptions { history }, &bar).await?
    };
    let what = if history { "stored objects" } else { "objects of the current tree" };
    crate::output::stdout(
        format!(
            "resealed {} of {} {what} ({} bytes) under key epoch {}\n",
            report.resealed, report.objects, report.bytes, report.epoch
        )
        .as_bytes(),
    )?;
    Ok(())
}

/// `memfs key shred`: the plan (a dry run with a throwaway credential), the question, then
/// the new credential made and the shred run with a progress bar. A key file made for a shred
/// that failed before the store took it is removed again.
async fn shred(url: &memfs::Location, unlock: memfs::OpenOptions, args: KeyShredArgs) -> anyhow::Result<()> {
    let params = args.kdf.params()?;
    if let Some(path) = &args.new_key_file
        && std::fs::symlink_metadata(path).is_ok()
    {
        anyhow::bail!("{} already exists: name a new file for the new key", path.display());
    }
    let placeholder = Credential::KeyFile(memfs::KeyFile::generate()?);
    let plan = |new| memfs::ShredKeys { new, params, remove_others: args.remove_other_slots, dry_run: true };
    let preview = async || Ok(Memfs::shred_keys(url, &unlock, plan(&placeholder), &()).await?);
    let render = |s: &memfs::Shred| (shred_plan(s), true);
    let question =
        "Shred? Copies of what the store no longer holds become unreadable; the old credential stops working.";
    if !crate::confirm::preview(("key shred", question), args.yes, args.dry_run, preview, render).await? {
        return Ok(());
    }
    let (new, what) = match (&args.new_key_file, &args.new_passphrase_file) {
        (Some(path), _) => (Credential::KeyFile(new_key_file(path)?), format!("the key file {}", path.display())),
        (None, Some(path)) => (store::passphrase_file(path)?, "the new passphrase".to_owned()),
        (None, None) => unreachable!("clap requires one"),
    };
    let done = {
        let bar = crate::output::Bar::new();
        let plan = memfs::ShredKeys { new: &new, params, remove_others: args.remove_other_slots, dry_run: false };
        Memfs::shred_keys(url, &unlock, plan, &bar).await
    };
    let done = match done {
        Ok(done) => done,
        Err(e) => {
            // Keep a key file the store took (the shred stopped after its last step began).
            if let Some(path) = &args.new_key_file
                && Memfs::key_slot_of(url, &new).await.is_err()
            {
                let _ = std::fs::remove_file(path);
            }
            return Err(e.into());
        }
    };
    let mut out = format!(
        "shredded: destroyed {} and the old address keys; {} live objects named and sealed again under key epoch {}\n",
        epochs(&done.retired),
        done.resealed.objects,
        done.epoch
    );
    if !done.removed.is_empty() {
        out.push_str(&format!("removed {}\n", slot_list(&done.removed)));
    }
    out.push_str(&format!("the store now opens with {what} only (key slot 1)\n"));
    crate::output::stdout(out.as_bytes())?;
    Ok(())
}

/// What `memfs key shred --dry-run` prints (and the question before a shred shows).
fn shred_plan(s: &memfs::Shred) -> String {
    let mut out = format!(
        "would name and seal every live object again under new address keys and a new key epoch ({}), and destroy {} and the old address keys\n",
        s.epoch,
        epochs(&s.retired)
    );
    if !s.removed.is_empty() {
        out.push_str(&format!("would remove {}\n", slot_list(&s.removed)));
    }
    out.push_str("the store would then open with the new credential only\n");
    out
}

/// `key epoch 0`, `key epochs 0, 1 and 2`.
fn epochs(list: &[u32]) -> String {
    let noun = if list.len() == 1 { "key epoch" } else { "key epochs" };
    format!("{noun} {}", memfs::join_ids(list))
}

/// `key slot 2`, `key slots 2 and 3`.
fn slot_list(list: &[SlotId]) -> String {
    let noun = if list.len() == 1 { "key slot" } else { "key slots" };
    format!("{noun} {}", memfs::join_ids(list))
}

/// What a rotation did (or would do): `rotated the keys: key epoch 1, wrapped to key slots 1
/// and 3`, then with `readdress` what it named again.
fn rotated(rotation: &Rotation, dry_run: bool, readdress: bool) -> String {
    let slots = slot_list(&rotation.slots);
    let verb = if dry_run { "would rotate" } else { "rotated" };
    let mut out = format!("{verb} the keys: key epoch {}, wrapped to {slots}\n", rotation.epoch);
    if dry_run && readdress {
        out.push_str("would name and seal every live object again under new address keys\n");
    }
    if let Some(done) = &rotation.readdressed {
        out.push_str(&format!(
            "{} live objects named and sealed again under new address keys and key epoch {}\n",
            done.objects, done.epoch
        ));
    }
    out
}

/// A slot's note as `key list` shows it: ` "LABEL" added TIME on HOST`, each part only when
/// known. The label is quoted with its quotes and backslashes escaped (it holds no control
/// character: the library refuses those).
fn note_words(note: &SlotNote) -> String {
    let mut out = String::new();
    if let Some(label) = &note.label {
        out.push_str(&format!(" {label:?}"));
    }
    if let Some(ms) = note.created_ms {
        out.push_str(&format!(" added {}", crate::words::format_time(ms)));
    }
    if let Some(host) = &note.host {
        out.push_str(&format!(" on {host}"));
    }
    out
}

/// The credential a new slot is for, and how to describe it.
fn new_credential(add: &KeyAddArgs) -> anyhow::Result<(Credential, String)> {
    if let Some(kept) = add.kept.custodian()? {
        if add.new_key_file.is_some() || add.new_passphrase_file.is_some() {
            anyhow::bail!("give one way in to the new slot: a key file, a passphrase, or a key kept outside memfs");
        }
        return Ok(kept);
    }
    if let Some(path) = &add.new_key_file {
        let key = new_key_file(path)?;
        return Ok((Credential::KeyFile(key), format!("key file {}", path.display())));
    }
    let passphrase = match &add.new_passphrase_file {
        Some(path) => store::passphrase_file(path)?,
        None => prompt_twice()?,
    };
    Ok((passphrase, "passphrase".to_owned()))
}
