//! `memfs policy`: show or change the store's policy.

use clap::Subcommand;

use crate::store::StoreArgs;

#[derive(Debug, Subcommand)]
pub(crate) enum PolicyCommand {
    /// Print every setting, one `KEY VALUE` line each.
    Show,
    /// Set KEY to VALUE, as a commit.
    Set {
        /// The setting (see `memfs policy --help`).
        key: String,
        /// Its new value.
        value: String,
    },
    /// Put KEY back to its default, or remove the custom rule rule.NAME, as a commit.
    Unset {
        /// The setting.
        key: String,
    },
}

pub(crate) async fn run(store: &StoreArgs, command: PolicyCommand) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let out = match command {
        PolicyCommand::Show => show(&*memfs.policy().await?),
        PolicyCommand::Set { key, value } => changed(&memfs.set_policy(&key, &value).await?, &key),
        PolicyCommand::Unset { key } => changed(&memfs.unset_policy(&key).await?, &key),
    };
    crate::output::stdout(out.as_bytes())?;
    Ok(())
}

/// One `KEY  VALUE` line per setting, keys aligned; control characters in a value (a custom
/// rule may hold a newline) escaped so each setting stays on its line.
fn show(policy: &memfs::Policy) -> String {
    let settings = policy.settings();
    let width = settings.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    settings.iter().map(|(k, v)| format!("{k:<width$}  {}\n", crate::words::one_line(v))).collect()
}

fn changed(c: &memfs::PolicyChanged, key: &str) -> String {
    let value = c.policy.get(key).map_or_else(|_| "(removed)".to_owned(), |v| crate::words::one_line(&v));
    match c.generation {
        Some(g) => format!("{key} = {value} (commit @{g})\n"),
        None => format!("{key} = {value} (unchanged, nothing committed)\n"),
    }
}
