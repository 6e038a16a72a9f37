//! `memfs agent`: Talk to Claude with this store as its memory: the Messages API loop.

use std::io::Write;

use clap::Args;
use memfs::Dialect;
use memfs::agent::{AgentConfig, Event};

use crate::store::StoreArgs;

/// Arguments of `memfs agent`.
#[derive(Debug, Args)]
#[command(after_long_help = AGENT_HELP)]
pub(crate) struct AgentArgs {
    /// The task for Claude: the first user message.
    #[arg(value_name = "PROMPT")]
    pub(crate) prompt: String,

    /// The Claude model to talk to, for example claude-opus-4-7 (required: no default, so that
    /// no run picks a model, and its price, for you).
    #[arg(long, env = "MEMFS_AGENT_MODEL", value_name = "MODEL")]
    pub(crate) model: String,

    /// The most tokens each answer may have (the request's max_tokens).
    #[arg(long, value_name = "N", default_value_t = AgentConfig::DEFAULT_MAX_TOKENS)]
    pub(crate) max_tokens: u32,

    /// Turn on context editing: the API clears old tool results as the conversation grows
    /// (clear_tool_uses_20250919), keeping the memory tool's.
    #[arg(long)]
    pub(crate) context_editing: bool,

    /// The most requests one run makes; a model still asking for tools at the limit is an
    /// error (its last tool calls are not run).
    #[arg(long, value_name = "N", default_value_t = AgentConfig::DEFAULT_MAX_TURNS,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_turns: u32,

    /// A system prompt.
    #[arg(long, value_name = "TEXT")]
    pub(crate) system: Option<String>,

    /// How many more times a request is sent after a network failure or an HTTP 408, 409,
    /// 429 or 5xx (such as 529 overloaded), as the official SDKs do, waiting what the server
    /// asks (retry-after) or 0.5 s doubling up to 8 s.
    #[arg(long, value_name = "N", default_value_t = AgentConfig::DEFAULT_MAX_RETRIES)]
    pub(crate) max_retries: u32,

    /// Print each tool call and its result on stderr as the loop runs.
    #[arg(long, short)]
    pub(crate) verbose: bool,

    /// Which answer strings the memory tool uses: `spec` (the documentation page), `python-sdk`
    /// (byte-identical to anthropic==2.10.0's BetaLocalFilesystemMemoryTool) or
    /// `typescript-sdk` (byte-identical to @anthropic-ai/sdk@1.12.0's).
    #[arg(long, default_value = "spec", env = "MEMFS_DIALECT")]
    pub(crate) dialect: Dialect,
}

const AGENT_HELP: &str = "\
Environment:
  ANTHROPIC_API_KEY   the API key (required; never printed)
  ANTHROPIC_BASE_URL  where the API is (default https://api.anthropic.com; requests go to
                      $ANTHROPIC_BASE_URL/v1/messages)
  MEMFS_AGENT_MODEL   the model, when --model is not given

Each request carries the memory tool {\"type\": \"memory_20250818\", \"name\": \"memory\"} and
the header anthropic-beta: context-management-2025-06-27. The model's final text is printed on
stdout; with --verbose, each tool call and result is printed on stderr:
  [tool_use ID] NAME INPUT-JSON
  [tool_result ID] CONTENT          ([tool_result ID error] for an error)";

pub(crate) async fn run(store: &StoreArgs, args: AgentArgs) -> anyhow::Result<()> {
    // The key first: a missing key is reported before the store is touched.
    let mut config = AgentConfig::from_env(args.model)?;
    config.max_tokens = args.max_tokens;
    config.context_editing = args.context_editing;
    config.max_turns = args.max_turns;
    config.system = args.system;
    config.max_retries = args.max_retries;
    let memfs = crate::store::open(store, args.dialect, true).await?;
    let verbose = args.verbose;
    let outcome = memfs::agent::run_observed(&memfs, &config, &args.prompt, |step| {
        if verbose {
            report(step);
        }
    })
    .await;
    // Last-access days of the session's reads that no commit carried yet, whatever the end.
    let flushed = memfs.flush().await;
    let transcript = outcome?;
    flushed?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(transcript.text.as_bytes())?;
    if !transcript.text.ends_with('\n') {
        stdout.write_all(b"\n")?;
    }
    stdout.flush()?;
    match transcript.stop_reason.as_str() {
        "end_turn" | "stop_sequence" => {}
        "max_tokens" => eprintln!("memfs: the answer was cut at {} tokens (--max-tokens)", config.max_tokens),
        other => eprintln!("memfs: the model stopped with stop_reason {other}"),
    }
    Ok(())
}

/// One step on stderr, as `--help` describes it.
fn report(event: Event<'_>) {
    match event {
        Event::ToolUse { id, name, input } => eprintln!("[tool_use {id}] {name} {input}"),
        Event::ToolResult { id, content, is_error } => {
            let error = if is_error { " error" } else { "" };
            eprintln!("[tool_result {id}{error}] {content}");
        }
        _ => {}
    }
}
