//! `memfs ui`: see and put right what the store holds, in a browser.

use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use memfs::ui::Ui;

use crate::store::StoreArgs;

/// Shown at the end of `memfs ui --help`.
const HELP: &str = "\
Opening it:
  memfs ui prints one line on stdout: the address to open, with a one-time token
  (http://127.0.0.1:PORT/?token=…). The page opened there trades the token for a session that
  it keeps for its tab alone, and the token stops working: to open it in another tab or
  browser, stop memfs ui and start it again.

What a person can do there:
  Browse the tree and read files with line numbers; search names and contents (in memfs, over
  decrypted content); see the timeline of the store and of a file (time, actor, command,
  changes) and the diff of any two versions; create, edit, rename and delete files, each a
  commit by --actor (default: the OS user) under the store's policy; restore a file or the
  whole tree to a past version, undo, purge (a dry run first, then the path typed again);
  see files, bytes, commits per day and per actor, the policy, the key slots' labels; run
  check. An edit is saved only over the version it started from: if an agent changed the file
  meanwhile, the page says so and offers to reload or merge.

Security:
  Loopback only unless --allow-remote (plain HTTP: the session and the memories would cross
  the network in clear). Requests must name the address it listens on as their Host, come
  from its own origin and carry the session's secret in the x-memfs-session header, which
  the page keeps in its tab's sessionStorage (its origin's alone, port included; no cookie is
  set, since browsers send cookies to every port of a host); anything else is refused and
  changes nothing. The page and its script are compiled into memfs: it loads nothing from
  elsewhere.

Examples:
  memfs ui                                      # the default local store
  memfs --store s3://bucket/team --key-file team.key ui
  memfs --store work ui --http 127.0.0.1:8790   # a named store (see `memfs --help`), fixed port";

/// Arguments of `memfs ui`.
#[derive(Debug, Args)]
#[command(after_long_help = format!("{HELP}\n\n{}", crate::limits::HELP))]
pub(crate) struct UiArgs {
    /// Listen on this address (IP:PORT; port 0, the default, picks a free one). Loopback only
    /// unless --allow-remote.
    #[arg(long = "http", value_name = "ADDR", default_value = "127.0.0.1:0")]
    addr: String,

    /// Allow an address that is not loopback (it must name one interface, not 0.0.0.0). There
    /// is no TLS: put it behind a TLS-terminating proxy.
    #[arg(long)]
    allow_remote: bool,

    #[command(flatten)]
    limits: crate::limits::LimitArgs,
}

pub(crate) async fn run(store: &StoreArgs, args: UiArgs) -> anyhow::Result<()> {
    // Before the store is unlocked: the keys must never reach a core file.
    crate::core_dump::disable()?;
    let addr: std::net::SocketAddr = args
        .addr
        .parse()
        .with_context(|| format!("invalid --http address {:?}: expected IP:PORT, as in 127.0.0.1:8790", args.addr))?;
    if addr.ip().is_unspecified() {
        bail!(
            "--http {addr}: name the one address the browser will use (the page refuses requests that name another host)"
        );
    }
    if !args.allow_remote && !addr.ip().is_loopback() {
        bail!(
            "--http {addr}: {} is not a loopback address. memfs ui has no TLS, so the session and the memories would cross the network in clear; put it behind a TLS-terminating proxy and pass --allow-remote",
            addr.ip()
        );
    }
    let (location, _) = crate::store::url(store)?;
    let actor = match store.actor.is_empty() {
        true => os_user(),
        false => store.actor.clone(),
    };
    let memfs = crate::store::open(store, memfs::Dialect::Spec, false).await?.with_actor(actor.clone());
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
    let bound = listener.local_addr().context("reading the bound address")?;
    let (ui, token) = Ui::new(Arc::new(memfs), location.clone(), bound)?;
    let ui = ui.with_limits(args.limits.limits());
    let stop = crate::signal::shutdown();
    crate::output::stdout(format!("http://{bound}/?token={token}\n").as_bytes())?;
    eprintln!(
        "memfs ui: {location} as {actor}, on http://{bound}: open the address above in a browser (it works once). Ctrl-C stops."
    );
    Arc::new(ui).serve(listener, stop).await?;
    Ok(())
}

/// The OS user's name, the default actor of a person's edits.
fn os_user() -> String {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| "ui".to_owned())
}
