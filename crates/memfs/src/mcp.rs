//! The memory tool as an MCP server (on the official `rmcp` SDK): one tool, `memory`, over
//! stdio or streamable HTTP.
//!
//! [`MemoryServer`] answers `tools/list` with the one tool, `memory`, whose input schema holds
//! the six commands' fields, and `tools/call` with the exact strings of the store's dialect, as
//! one text content block. A failed command (a missing file, a text that does not occur, a
//! malformed input) is a tool result with `isError: true`, which the model reads; only a call
//! of another tool is a JSON-RPC error (`-32602`, as the MCP specification says for unknown
//! tools).
//!
//! This is not the Messages API's `memory_20250818` client tool: to an MCP client, `memory` is
//! an ordinary tool (Claude Code names it `mcp__memfs__memory`), described by the schema and
//! description here rather than by the API's built-in definition.
//!
//! A store that cannot be opened still gets a server, [`MemoryServer::unavailable`]: it
//! completes the handshake and lists the tool, and answers every `tools/call` with
//! `isError: true` and the reason, so that the client (and the model) read why, where a server
//! that exits before answering `initialize` shows only a closed connection.
//!
//! Serve it over any byte stream with [`MemoryServer::serve`] (stdio:
//! [`MemoryServer::serve_stdio`]), or over streamable HTTP with [`serve_http`] (bearer tokens
//! with a [`BearerAuth`], or none), [`router`] or [`http_service`].
//! Last-access days noted by views are committed by the next write; call [`Memfs::flush`] when
//! serving ends to commit the rest.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use memfs::{Dialect, Memfs, mcp::MemoryServer};
//! use rmcp::{ServiceExt, model::CallToolRequestParams};
//!
//! let memfs = Arc::new(Memfs::ephemeral(Dialect::Spec)?);
//! let (server_end, client_end) = tokio::io::duplex(64 * 1024);
//! let (read, write) = tokio::io::split(server_end);
//! let server = tokio::spawn(MemoryServer::new(memfs.clone()).serve(read, write));
//!
//! // Any MCP client; here rmcp's own.
//! let client = ().serve(client_end).await?;
//! assert_eq!(client.list_all_tools().await?[0].name, "memory");
//! let input = serde_json::json!({"command": "create", "path": "/memories/a.md", "file_text": "hi"});
//! let params = CallToolRequestParams::new("memory").with_arguments(input.as_object().unwrap().clone());
//! let result = client.call_tool(params).await?;
//! assert_eq!(result.content[0].as_text().unwrap().text, "File created successfully at: /memories/a.md");
//! assert_eq!(result.is_error, Some(false));
//!
//! client.cancel().await?; // the server sees the end of its input and stops
//! server.await??;
//! memfs.flush().await?;
//! # Ok(()) }
//! ```

mod http;
mod tool;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer, ServerInitializeError};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use serde_json::Value;
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite};

use crate::engine::Memfs;
use crate::protocol::TOOL_NAME;

pub use http::{BearerAuth, ENDPOINT_PATH, http_service, loopback_config, remote_config, router, serve_http};

/// The name the server gives itself in `initialize` (`serverInfo.name`).
pub const SERVER_NAME: &str = "memfs";

/// Serving MCP failed.
///
/// A command that fails is not an error here: it is a tool result with `isError: true`.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The client went away, or sent something else, before initialization completed.
    #[error("MCP initialization failed")]
    Initialize(#[source] Box<ServerInitializeError>),
    /// The task serving the connection panicked or was aborted.
    #[error("the MCP service task failed")]
    Task(#[source] tokio::task::JoinError),
    /// The HTTP server failed (accepting connections).
    #[error("serving MCP over HTTP failed")]
    Http(#[source] std::io::Error),
}

/// The MCP server of one store: the `memory` tool over a shared [`Memfs`].
///
/// Cheap to clone (one `Arc`); every connection or HTTP session gets a clone, and all of them
/// execute on the same store, whose commits are compare-and-swap.
#[derive(Clone)]
pub struct MemoryServer {
    backend: Backend,
}

/// What `tools/call` runs on.
#[derive(Clone)]
enum Backend {
    /// An open store.
    Store(Arc<Memfs>),
    /// No store: the text every call answers, as an error result.
    Unavailable(Arc<str>),
}

impl std::fmt::Debug for MemoryServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.backend {
            Backend::Store(memfs) => {
                f.debug_struct("MemoryServer").field("dialect", &memfs.dialect()).finish_non_exhaustive()
            }
            Backend::Unavailable(_) => f.debug_struct("MemoryServer").field("store", &"unavailable").finish(),
        }
    }
}

impl MemoryServer {
    /// A server executing on `memfs`, in its dialect.
    pub fn new(memfs: Arc<Memfs>) -> Self {
        MemoryServer { backend: Backend::Store(memfs) }
    }

    /// A server without a store (it could not be opened): `initialize` and `tools/list` answer
    /// as usual, and every `tools/call` of `memory` answers `isError: true` with `message`
    /// (the caller's words: it says why the store cannot be used).
    pub fn unavailable(message: impl Into<Arc<str>>) -> Self {
        MemoryServer { backend: Backend::Unavailable(message.into()) }
    }

    /// The store it executes on; `None` for an [unavailable](Self::unavailable) server.
    pub fn memfs(&self) -> Option<&Arc<Memfs>> {
        match &self.backend {
            Backend::Store(memfs) => Some(memfs),
            Backend::Unavailable(_) => None,
        }
    }

    /// The `memory` tool as `tools/list` describes it.
    pub fn tool() -> Tool {
        tool::definition()
    }

    /// Serves one client over a byte stream (newline-delimited JSON-RPC, as MCP's stdio
    /// transport) until the end of `reader`. Writes nothing but protocol messages to `writer`.
    pub async fn serve<R, W>(self, reader: R, writer: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let running =
            ServiceExt::serve(self, (reader, writer)).await.map_err(|e| ServeError::Initialize(Box::new(e)))?;
        running.waiting().await.map_err(ServeError::Task)?;
        Ok(())
    }

    /// Serves one client over this process's stdin and stdout until the end of stdin (MCP's
    /// stdio transport). On Linux, when both are pipes, as MCP clients start servers, they are
    /// read and written without blocking threads.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let (reader, writer) = rmcp::transport::stdio_pipes();
        self.serve(reader, writer).await
    }
}

impl ServerHandler for MemoryServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")))
            .with_instructions(tool::INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![tool::definition()]))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        (name == TOOL_NAME).then(tool::definition)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // MCP specification, server/tools "Error Handling": an unknown tool is a protocol
        // error; everything that goes wrong running the tool is a result with isError.
        if request.name != TOOL_NAME {
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {}. This server has one tool: {TOOL_NAME}", request.name),
                None,
            ));
        }
        let memfs = match &self.backend {
            Backend::Store(memfs) => memfs,
            Backend::Unavailable(message) => {
                return Ok(CallToolResult::error(vec![ContentBlock::text(message.to_string())]).into());
            }
        };
        let input = Value::Object(request.arguments.unwrap_or_default());
        let result = memfs.call(&input).await;
        let content = vec![ContentBlock::text(result.content)];
        let result = if result.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
        Ok(result.into())
    }
}
