//! The Messages API loop: send the conversation with the memory tool, execute each `tool_use`
//! on the store, return `tool_result` blocks, until the model stops.
//!
//! Not built yet (issue 6, criterion 4).
