//! The memory tool as an MCP server (rmcp): one tool, `memory`, over stdio or streamable HTTP.
//!
//! Not built yet (issue 6, criterion 2).
