//! The JSON endpoint for fleets in other languages: tool input or `tool_use` in, `tool_result`
//! out, behind bearer tokens bound to namespaces.
//!
//! Not built yet (issue 6, criterion 3).
