//! `memfs serve`: Serve the memory tool as a JSON endpoint over HTTP, behind bearer tokens.

use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use memfs::http::{Namespaces, Observer, Served, Server, StoreFailure, Tokens};
use memfs::{Credential, Dialect, KdfParams, Location, Memfs, OpenOptions};

use crate::store::StoreArgs;

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
  JSON, 404 unknown path, 405 wrong method, 503 the namespace's store cannot be opened or the
  request took longer than --request-timeout. Every answer has an x-request-id header.

Log (stderr): one line per request, and one per store failure (the tenant's answer names only
the request id; the detail, which may name the store's location, is in the log):
  memfs: access TIME request=ID namespace=NS command=CMD status=STATUS duration=SECONDS
  memfs: store error TIME request=ID namespace=NS: DETAIL
  TIME is RFC 3339 UTC with milliseconds; NS and CMD are - when unknown (no valid token, no
  tool command); CMD is one of the six tool commands. No content, path or token is logged.

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
  keys. The server unlocks every namespace with its one credential (MEMFS_PASSPHRASE,
  --passphrase-file or --key-file): create the stores with `memfs --store URL --namespace
  NAME init` and that passphrase, or let --create-namespaces create the missing ones at start
  (needed to share one key file). Under --store memory:// each namespace gets its own
  ephemeral store.
  The stores that exist at start are unlocked before the server listens: a credential that
  does not unlock one stops the server with its error (status 1). A store created later is
  opened on its first request. Each is shared by all requests on it; concurrent writes
  commit safely. On Ctrl-C or SIGTERM the server stops taking requests, lets those in flight
  finish (for at most 10 seconds) and records the stores' pending last-access days.

Security:
  The endpoint speaks plain HTTP: a token and the memories cross the network in clear. It
  listens on loopback unless --allow-remote is given; outside loopback, put it behind a
  TLS-terminating proxy.";

/// Arguments of `memfs serve`.
#[derive(Debug, Args)]
#[command(after_long_help = format!("{HELP}\n\n{}", crate::limits::HELP))]
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

    #[command(flatten)]
    pub(crate) limits: crate::limits::LimitArgs,

    /// At start, create the store of each namespace in the tokens that has none, unlocked by
    /// the server's credential (the passphrase or the key file, which must exist).
    #[arg(long)]
    pub(crate) create_namespaces: bool,

    /// Which answer strings to use: `spec` (the documentation page), `python-sdk`
    /// (byte-identical to anthropic==2.10.0's BetaLocalFilesystemMemoryTool) or
    /// `typescript-sdk` (byte-identical to @anthropic-ai/sdk@1.12.0's).
    #[arg(long, default_value = "spec", env = "MEMFS_DIALECT")]
    pub(crate) dialect: Dialect,

    /// Print a new random token line `NAMESPACE TOKEN` on stdout and exit (append it to the
    /// tokens file, and give the token to that namespace's client).
    #[arg(long, value_name = "NAMESPACE")]
    pub(crate) new_token: Option<String>,
}

fn parse_max_body(s: &str) -> Result<usize, crate::parse_error::Refused> {
    match s.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(crate::parse_error::Refused("expected a number of bytes greater than 0, such as 1048576")),
    }
}

/// The server's log: one line per request and per store failure, on stderr.
struct Stderr;

/// `2026-11-24T22:30:00.123Z`.
fn time(t: jiff::Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

impl Observer for Stderr {
    // `writeln!`, not `eprintln!`: a closed stderr must not stop the server (no panic).
    fn served(&self, r: &Served) {
        let _ = writeln!(
            std::io::stderr(),
            "memfs: access {} request={} namespace={} command={} status={} duration={:.3}s",
            time(r.time),
            r.request_id,
            r.namespace.as_deref().unwrap_or("-"),
            r.command.unwrap_or("-"),
            r.status,
            r.duration.as_secs_f64()
        );
    }

    fn store_failure(&self, f: &StoreFailure<'_>) {
        let _ = writeln!(
            std::io::stderr(),
            "memfs: store error {} request={} namespace={}: {}",
            time(jiff::Timestamp::now()),
            f.request_id,
            f.namespace,
            crate::advice::message(f.error)
        );
    }
}

pub(crate) async fn run(store: &StoreArgs, args: ServeArgs) -> anyhow::Result<()> {
    if let Some(namespace) = &args.new_token {
        return new_token(namespace);
    }
    // Before any store is unlocked: the keys must never reach a core file.
    crate::core_dump::disable()?;
    if store.namespace.is_some() {
        bail!("memfs serve takes its namespaces from the tokens, not from --namespace or MEMFS_NAMESPACE");
    }
    let tokens = tokens(&args)?;
    let addrs = addresses(&args.addr, args.allow_remote).await?;

    let (location, is_default) = crate::store::url(store)?;
    let given = crate::store::given_credential(store, is_default)?.is_some();
    let credential = Some(crate::store::credential(store, is_default)?);
    let memory = location.url().starts_with("memory://");
    let refuse = || {
        anyhow::anyhow!(
            "the namespaces of {location} are encrypted: give the passphrase (MEMFS_PASSPHRASE, --passphrase-file) or the key file (--key-file) that unlocks them"
        )
    };
    // Keys kept outside memfs (keychain, KMS, age) make no new store.
    if !given && !memory && args.create_namespaces {
        return Err(refuse());
    }
    // The namespaces whose stores exist (or were created) at start: each is unlocked before the
    // server listens, so a wrong credential stops it here rather than answering 503 forever.
    let (present, missing) = match credential.as_ref().filter(|_| !memory) {
        Some(credential) => stores_at_start(&location, credential, &tokens, args.create_namespaces).await?,
        None => (Vec::new(), Vec::new()),
    };
    // With no passphrase or key file, the keys kept outside memfs unlock the namespaces that
    // exist; with none of them, nothing would ever open.
    if !given && !memory && present.is_empty() {
        return Err(refuse());
    }
    for namespace in missing {
        eprintln!(
            "memfs: warning: namespace {namespace} has no store; its requests get 503 until `memfs --namespace {namespace} init` (or serve --create-namespaces) creates it"
        );
    }
    let options = open_options(store, args.dialect, credential)?;
    let limits = args.limits.limits();
    let namespaces = Namespaces::new(location, options);
    for namespace in &present {
        // Opened once, here, and kept: the first requests do not pay for the unlock again.
        namespaces.get(namespace).await.with_context(|| format!("cannot serve namespace {namespace}"))?;
    }
    let server = Arc::new(
        Server::new(tokens, namespaces)
            .with_max_body(args.max_body)
            .with_limits(limits)
            .with_observer(Arc::new(Stderr)),
    );

    let listener = tokio::net::TcpListener::bind(addrs.as_slice())
        .await
        .with_context(|| format!("cannot listen on {}", args.addr))?;
    let bound = listener.local_addr().context("reading the bound address")?;
    let stop = crate::signal::shutdown();
    eprintln!("memfs: serving on http://{bound}");
    server.serve(listener, stop).await?;
    Ok(())
}

/// The namespaces of the tokens whose stores exist, and those that do not; with
/// `--create-namespaces`, a missing store is created and counts as present.
async fn stores_at_start<'t>(
    location: &Location,
    credential: &Credential,
    tokens: &'t Tokens,
    create: bool,
) -> anyhow::Result<(Vec<String>, Vec<&'t str>)> {
    let (mut present, mut missing) = (Vec::new(), Vec::new());
    for namespace in tokens.namespaces() {
        let at = location.clone().namespace(namespace);
        if Memfs::exists(&at).await? {
            present.push(namespace.to_owned());
            continue;
        }
        if create {
            Memfs::init(&at, credential, KdfParams::DEFAULT).await?;
            eprintln!("memfs: created a new encrypted store at {at}");
            present.push(namespace.to_owned());
        } else {
            missing.push(namespace);
        }
    }
    Ok((present, missing))
}

/// How every namespace's store is opened: the global options, the dialect, the credential.
fn open_options(store: &StoreArgs, dialect: Dialect, credential: Option<Credential>) -> anyhow::Result<OpenOptions> {
    Ok(OpenOptions {
        dialect,
        credential,
        state_dir: crate::store::state_dir(),
        trust_head: store.trust_head.clone(),
        actor: store.actor.clone(),
        today: crate::store::today()?,
        max_staleness: store.max_staleness,
        cache_dir: store.cache_dir.clone(),
        memory_cache_bytes: store.cache_memory,
        unwritten_bytes: None,
    })
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
