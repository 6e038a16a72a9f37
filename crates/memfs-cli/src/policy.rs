//! `memfs policy`: show or change the store's policy.

use crate::cli::{PolicyCommand, StoreArgs};

pub(crate) async fn run(store: &StoreArgs, command: PolicyCommand) -> anyhow::Result<()> {
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?;
    let out = match command {
        PolicyCommand::Show => memfs.policy().await?.to_string(),
        PolicyCommand::Set { key, value } => changed(&memfs.set_policy(&key, &value).await?, &key),
        PolicyCommand::Unset { key } => changed(&memfs.unset_policy(&key).await?, &key),
    };
    crate::output::stdout(out.as_bytes())?;
    Ok(())
}

fn changed(c: &memfs::PolicyChanged, key: &str) -> String {
    let value = c.policy.get(key).unwrap_or_else(|_| "(removed)".to_owned());
    match c.generation {
        Some(g) => format!("{key} = {value} (commit @{g})\n"),
        None => format!("{key} = {value} (unchanged, nothing committed)\n"),
    }
}
