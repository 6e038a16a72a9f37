//! `memfs serve`: Serve the memory tool as a JSON endpoint over HTTP, behind bearer tokens.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use memfs::http::{Namespaces, Server, Tokens};
use memfs::{Dialect, KdfParams, Memfs, OpenOptions};

use crate::cli::StoreArgs;

/// The environment variable that can hold tokens, in the tokens file's format.
const TOKENS_ENV: &str = "MEMFS_SERVE_TOKENS";

/// The default address: loopback only.
const DEFAULT_ADDR: &str = "127.0.0.1:8787";

/// Shown at the end of `memfs serve --help`.
const HELP: &str = "\
Protocol:
  POST /v1/memory   Authorization: Bearer TOKEN, Content-Type: application/json
      The body is one tool input ({\"command\":\"view\",\"path\":\"/memories\"}) or one whole
      tool_use block ({\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"memory\",\"input\":{…}}).
      It runs on the store of the token's namespace; the answer (200) is exactly the line
      `memfs exec` writes: {\"content\":\"…\",\"is_error\":false}, or
      {\"type\":\"tool_result\",\"tool_use_id\":\"toolu_1\",\"content\":\"…\",\"is_error\":false}.
      Tool errors (a missing file, a bad path) are answers with \"is_error\":true.
  GET /v1/health    no token needed: {\"status\":\"ok\"}
  Refused, with {\"error\":\"…\"} and nothing changed: 401 no or unknown token (with
  WWW-Authenticate: Bearer), 415 not application/json, 413 body over --max-body, 400 not
  JSON, 404 unknown path, 405 wrong method, 503 the namespace's store cannot be opened.

Tokens (--tokens FILE and/or MEMFS_SERVE_TOKENS, same format):
  One `NAMESPACE TOKEN` pair a line; `#` starts a comment; blank lines are ignored.
      # NAMESPACE  TOKEN
      alice        memfs_3f2a…
  A token is at least 32 characters of A-Z a-z 0-9 - . _ ~ + / (then = padding) and binds to
  exactly one namespace (a namespace may have several tokens); a token given twice is refused.
  The file must not be readable or writable by group or others (chmod 600). Make a token with
  `memfs serve --new-token NAMESPACE` (the only time memfs prints a token). The server keeps
  only hashes of tokens and never logs them.

Namespaces:
  Each namespace is its own store under the --store URL (PREFIX/ns/NAME), with its own random
  master key. The server unlocks every namespace with its one credential (MEMFS_PASSPHRASE,
  --passphrase-file or --key-file): create the stores with `memfs --store URL --namespace
  NAME init` and that passphrase, or let --create-namespaces create the missing ones at start
  (needed to share one key file). Under --store memory:// each namespace gets its own
  ephemeral store.
  A store is opened on its first request and shared by all requests on it; concurrent writes
  commit safely. On Ctrl-C or SIGTERM the server stops taking requests, lets those in flight
  finish (for at most 10 seconds) and records the stores' pending last-access days.

Security:
  The endpoint speaks plain HTTP: a token and the memories cross the network in clear. It
  listens on loopback unless --allow-remote is given; outside loopback, put it behind a
  TLS-terminating proxy.";

/// Arguments of `memfs serve`.
#[derive(Debug, Args)]
#[command(after_long_help = HELP)]
pub(crate) struct ServeArgs {
    /// Listen on this address (IP:PORT or HOST:PORT; port 0 picks a free port). Loopback only
    /// unless --allow-remote. The address actually bound is printed on stderr as
    /// `memfs: serving on http://ADDR`.
    #[arg(long = "http", value_name = "ADDR", default_value = DEFAULT_ADDR)]
    pub(crate) addr: String,

    /// Allow an address that is not loopback. The endpoint has no TLS: tokens and memories
    /// would cross the network in clear, so put it behind a TLS-terminating proxy.
    #[arg(long)]
    pub(crate) allow_remote: bool,

    /// Read tokens from this file (`NAMESPACE TOKEN` lines; mode 0600 or stricter). Tokens in
    /// MEMFS_SERVE_TOKENS (same format) are added.
    #[arg(long, value_name = "FILE")]
    pub(crate) tokens: Option<PathBuf>,

    /// Refuse request bodies larger than this many bytes (413).
    #[arg(long, value_name = "BYTES", default_value_t = memfs::http::DEFAULT_MAX_BODY, value_parser = parse_max_body)]
    pub(crate) max_body: usize,

    /// At start, create the store of each namespace in the tokens that has none, unlocked by
    /// the server's credential (the passphrase or the key file, which must exist).
    #[arg(long)]
    pub(crate) create_namespaces: bool,

    /// Which answer strings to use: `spec` (the documentation page) or `python-sdk`
    /// (byte-identical to anthropic==2.10.0's BetaLocalFilesystemMemoryTool).
    #[arg(long, default_value = "spec", env = "MEMFS_DIALECT")]
    pub(crate) dialect: Dialect,

    /// Print a new random token line `NAMESPACE TOKEN` on stdout and exit (append it to the
    /// tokens file, and give the token to that namespace's client).
    #[arg(long, value_name = "NAMESPACE")]
    pub(crate) new_token: Option<String>,
}

fn parse_max_body(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err("expected a number of bytes greater than 0, such as 1048576".to_owned()),
    }
}

pub(crate) async fn run(store: &StoreArgs, args: ServeArgs) -> anyhow::Result<()> {
    if let Some(namespace) = &args.new_token {
        return new_token(namespace);
    }
    if store.namespace.is_some() {
        bail!("memfs serve takes its namespaces from the tokens, not from --namespace or MEMFS_NAMESPACE");
    }
    let tokens = tokens(&args)?;
    let addrs = addresses(&args.addr, args.allow_remote).await?;

    let (location, is_default) = crate::store::url(store)?;
    let credential = crate::store::credential(store, is_default)?;
    let memory = location.url().starts_with("memory://");
    if credential.is_none() && !memory {
        bail!(
            "the namespaces of {location} are encrypted: give the passphrase (MEMFS_PASSPHRASE, --passphrase-file) or the key file (--key-file) that unlocks them"
        );
    }
    if let Some(credential) = credential.as_ref().filter(|_| !memory) {
        for namespace in tokens.namespaces() {
            let at = location.clone().namespace(namespace);
            if Memfs::exists(&at).await? {
                continue;
            }
            if args.create_namespaces {
                Memfs::init(&at, credential, KdfParams::DEFAULT).await?;
                eprintln!("memfs: created a new encrypted store at {at}");
            } else {
                eprintln!(
                    "memfs: warning: namespace {namespace} has no store; its requests get 503 until `memfs --namespace {namespace} init` (or serve --create-namespaces) creates it"
                );
            }
        }
    }
    let options = OpenOptions {
        dialect: args.dialect,
        credential,
        state_dir: crate::store::state_dir(),
        trust_head: store.trust_head.clone(),
        actor: store.actor.clone(),
        today: crate::store::today()?,
        max_staleness: store.max_staleness,
        cache_dir: store.cache_dir.clone(),
    };
    let server = Arc::new(Server::new(tokens, Namespaces::new(location, options)).with_max_body(args.max_body));

    let listener = tokio::net::TcpListener::bind(addrs.as_slice())
        .await
        .with_context(|| format!("cannot listen on {}", args.addr))?;
    let bound = listener.local_addr().context("reading the bound address")?;
    eprintln!("memfs: serving on http://{bound}");
    server.serve(listener, crate::signal::shutdown()).await?;
    Ok(())
}

/// `--new-token`: a fresh token line for the tokens file, on stdout.
fn new_token(namespace: &str) -> anyhow::Result<()> {
    let line = memfs::http::new_token_line(namespace).map_err(|e| anyhow::anyhow!("--new-token: {e}"))?;
    crate::output::stdout(format!("{line}\n").as_bytes())?;
    Ok(())
}

/// The tokens from `--tokens` and `MEMFS_SERVE_TOKENS`; at least one.
fn tokens(args: &ServeArgs) -> anyhow::Result<Tokens> {
    let mut tokens = match &args.tokens {
        Some(path) => Tokens::read_file(path)?,
        None => Tokens::new(),
    };
    if let Ok(text) = std::env::var(TOKENS_ENV) {
        tokens.extend(Tokens::parse(&text, TOKENS_ENV)?)?;
    }
    if tokens.is_empty() {
        bail!(
            "memfs serve needs at least one token: --tokens FILE or {TOKENS_ENV}, with `NAMESPACE TOKEN` lines (make one with `memfs serve --new-token NAMESPACE`)"
        );
    }
    Ok(tokens)
}

/// The addresses `addr` names; all must be loopback unless `allow_remote`.
async fn addresses(addr: &str, allow_remote: bool) -> anyhow::Result<Vec<SocketAddr>> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(addr)
        .await
        .with_context(|| {
            format!("invalid --http address {addr:?}: expected IP:PORT or HOST:PORT, as in {DEFAULT_ADDR}")
        })?
        .collect();
    if addrs.is_empty() {
        bail!("--http {addr} names no address");
    }
    if !allow_remote && let Some(remote) = addrs.iter().find(|a| !a.ip().is_loopback()) {
        bail!(
            "--http {addr}: {} is not a loopback address. The endpoint has no TLS, so tokens and memories would cross the network in clear; put it behind a TLS-terminating proxy and pass --allow-remote",
            remote.ip()
        );
    }
    Ok(addrs)
}
