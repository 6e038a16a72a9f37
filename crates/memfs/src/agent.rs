//! The Messages API loop: Claude with this store as its memory.
//!
//! [`run`] sends the prompt to the Messages API (`POST {base_url}/v1/messages`) with the memory
//! tool `{"type": "memory_20250818", "name": "memory"}` and the beta header
//! `anthropic-beta: context-management-2025-06-27`, executes each `tool_use` block of the
//! answer on the store ([`Memfs::call`](crate::Memfs::call)), sends the results back as one user
//! message of `tool_result` blocks, and loops until the model stops asking for tools.
//!
//! The client is a small one of its own on `reqwest` (non-streaming requests only). The
//! conversation it keeps is sent back verbatim: each assistant message carries the content
//! blocks exactly as the API sent them; each `tool_result` is shaped as the Python SDK's tool
//! runner shapes it (`content` is the tool's text, `is_error: true` appears only on errors, and
//! a `tool_use` for another tool than `memory` gets `Error: Tool '{name}' not found`).
//!
//! ```no_run
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use memfs::agent::{self, AgentConfig};
//! use memfs::{Dialect, Memfs};
//!
//! let memfs = Memfs::ephemeral(Dialect::Spec)?;
//! // ANTHROPIC_API_KEY (required) and ANTHROPIC_BASE_URL (optional) from the environment.
//! let mut config = AgentConfig::from_env("claude-opus-4-7")?;
//! config.context_editing = true;
//! let transcript = agent::run(&memfs, &config, "Remember that I prefer tabs to spaces.").await?;
//! println!("{}", transcript.text);
//! for call in &transcript.tool_calls {
//!     eprintln!("{} {} -> {}", call.name, call.input, call.content);
//! }
//! # Ok(()) }
//! ```
//!
//! The key is never printed: [`ApiKey`]'s `Debug` hides it, it has no `Display`, it is sent
//! as a header marked sensitive, and an error message the server sends back is cleaned of it.

mod client;
mod config;
mod conversation;
mod error;

pub use config::{AgentConfig, ApiKey};
pub use conversation::{Event, ToolCall, Transcript, Usage, run, run_observed};
pub use error::AgentError;

/// The memory tool's `type`, sent in `tools` with the name `memory`.
pub const MEMORY_TOOL_TYPE: &str = "memory_20250818";

/// The beta header value sent with every request: the memory tool and context editing.
pub const BETA: &str = "context-management-2025-06-27";

/// The `anthropic-version` header value sent with every request.
pub const API_VERSION: &str = "2023-06-01";

/// The context-editing strategy sent when [`AgentConfig::context_editing`] is on, with the
/// memory tool excluded so that Claude keeps seeing its recent memory operations.
pub const CLEAR_TOOL_USES: &str = "clear_tool_uses_20250919";
