//! `memfs info`: a store at a glance, on one screen.

use clap::Args;
use memfs::{Info, Memfs, Policy, SlotKind};

use crate::store::StoreArgs;
use crate::words::{format_time, one_line, plural};

#[derive(Debug, Args)]
pub(crate) struct InfoArgs {}

pub(crate) async fn run(store: &StoreArgs, _args: InfoArgs) -> anyhow::Result<()> {
    let (url, _) = crate::store::url(store)?;
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let info = memfs.info().await?;
    // A persistent store has key slots (reading them needs no key); `memory://` has none.
    let persistent = info.format.is_some() && !url.is_memory();
    let slots = if persistent { Some(Memfs::key_slots(&url).await?) } else { None };
    let text = render(&memfs::redact(url.url()), &info, slots.as_deref());
    crate::output::stdout(text.as_bytes())?;
    Ok(())
}

/// One `NAME  VALUE` line per fact:
///
/// ```text
/// store      file:///home/me/.local/share/memfs/default
/// format     9, store id 4f0c…
/// files      4 (11 bytes)
/// commits    4, the newest @4 2025-06-01T12:00:00Z by claude: create /memories/z.md
/// key slots  2: 1 passphrase, 1 key file
/// policy     the defaults
/// ```
fn render(url: &str, info: &Info, slots: Option<&[(memfs::SlotId, SlotKind, memfs::SlotNote)]>) -> String {
    let mut lines = vec![("store", url.to_owned())];
    if let Some((format, id)) = &info.format {
        // An ephemeral store (`memory://`) has no id.
        let id = if id.is_empty() { String::new() } else { format!(", store id {id}") };
        lines.push(("format", format!("{format}{id}")));
    }
    lines.push(("files", format!("{} ({})", info.totals.files, plural(info.totals.bytes, "byte", "bytes"))));
    let commits = match &info.newest {
        Some(c) => {
            let actor = if c.actor.is_empty() { "-".to_owned() } else { one_line(&c.actor) };
            let summary = one_line(&crate::log::summary(&c.record()));
            format!(
                "{}, the newest @{} {} by {actor}: {summary}",
                info.generation,
                c.generation,
                format_time(c.time_ms)
            )
        }
        None => info.generation.to_string(),
    };
    lines.push(("commits", commits));
    if let Some(slots) = slots {
        let count = |kind: SlotKind| slots.iter().filter(|(_, k, _)| *k == kind).count() as u64;
        let words = [
            (SlotKind::Passphrase, "passphrase", "passphrases"),
            (SlotKind::KeyFile, "key file", "key files"),
            (SlotKind::Keychain, "keychain entry", "keychain entries"),
            (SlotKind::AwsKms, "AWS KMS key", "AWS KMS keys"),
            (SlotKind::GcpKms, "Google Cloud KMS key", "Google Cloud KMS keys"),
            (SlotKind::AzureKeyVault, "Azure Key Vault key", "Azure Key Vault keys"),
            (SlotKind::Age, "age recipient", "age recipients"),
        ];
        let kinds: Vec<String> = words
            .into_iter()
            .map(|(kind, one, many)| (count(kind), one, many))
            .filter(|(n, ..)| *n > 0)
            .map(|(n, one, many)| plural(n, one, many))
            .collect();
        lines.push(("key slots", format!("{}: {}", slots.len(), kinds.join(", "))));
    }
    lines.push(("policy", policy(&info.policy)));
    lines.iter().map(|(name, value)| format!("{name:<9}  {value}\n")).collect()
}

/// The settings that differ from the defaults, or "the defaults" (`memfs policy show` lists
/// every one).
fn policy(policy: &Policy) -> String {
    let defaults = Policy::default().settings();
    let changed: Vec<String> = policy
        .settings()
        .into_iter()
        .filter(|setting| !defaults.contains(setting))
        .map(|(k, v)| format!("{k} {}", one_line(&v)))
        .collect();
    if changed.is_empty() { "the defaults".to_owned() } else { changed.join(", ") }
}
