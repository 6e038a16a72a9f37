//! The loop: ask, run the memory tool calls, answer with their results, until the model stops.

use serde_json::{Value, json};

use super::AgentConfig;
use super::AgentError;
use super::client::Client;
use crate::engine::Memfs;
use crate::protocol::TOOL_NAME;

/// One memory tool call the model made, and what it got back.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The `tool_use` block's `id`.
    pub id: String,
    /// The tool it named (`memory`, or another name, answered with an error).
    pub name: String,
    /// Its `input`, as the model sent it.
    pub input: Value,
    /// The `tool_result`'s `content`: the text the model read.
    pub content: String,
    /// Whether the result carried `is_error: true`.
    pub is_error: bool,
}

/// Tokens the run used, summed over its requests (from each answer's `usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Usage {
    /// `input_tokens`, summed.
    pub input_tokens: u64,
    /// `output_tokens`, summed.
    pub output_tokens: u64,
}

/// What a run did and how it ended.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Transcript {
    /// The text of the last answer: its `text` blocks, concatenated.
    pub text: String,
    /// The last answer's `stop_reason` (`end_turn`, `max_tokens`, `stop_sequence`, `refusal`,
    /// …: anything but `tool_use`).
    pub stop_reason: String,
    /// The whole conversation as sent, with the last answer appended: the user's prompt, then
    /// each assistant message (its content blocks verbatim) and each user message of
    /// `tool_result` blocks.
    pub messages: Vec<Value>,
    /// How many requests the API answered (retries of failed ones not counted).
    pub requests: u32,
    /// Every tool call, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens used.
    pub usage: Usage,
}

/// What the loop is doing, for a caller that shows progress ([`run_observed`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Event<'a> {
    /// The model asked for a tool call; it runs next.
    ToolUse {
        /// The block's `id`.
        id: &'a str,
        /// The tool it named.
        name: &'a str,
        /// Its `input`.
        input: &'a Value,
    },
    /// A tool call's result, as it will be sent back.
    ToolResult {
        /// The `tool_use` block's `id`.
        id: &'a str,
        /// The text the model reads.
        content: &'a str,
        /// Whether it is an error.
        is_error: bool,
    },
}

/// Runs the conversation that starts with `prompt` (one user message) until the model stops
/// asking for tools, executing every memory tool call on `memfs`. Returns the final text and
/// what happened; see the [module docs](super) for the exact requests.
pub async fn run(memfs: &Memfs, config: &AgentConfig, prompt: &str) -> Result<Transcript, AgentError> {
    run_observed(memfs, config, prompt, |_| {}).await
}

/// [`run`], calling `observe` with each tool call before it runs and with its result after.
pub async fn run_observed(
    memfs: &Memfs,
    config: &AgentConfig,
    prompt: &str,
    mut observe: impl FnMut(Event<'_>),
) -> Result<Transcript, AgentError> {
    let client = Client::new(config)?;
    let mut messages = vec![json!({"role": "user", "content": prompt})];
    let mut tool_calls = Vec::new();
    let mut usage = Usage::default();
    let mut requests = 0;
    loop {
        if requests == config.max_turns {
            return Err(AgentError::TurnLimit { turns: config.max_turns });
        }
        let answer = client.send(&messages).await?;
        requests += 1;
        usage.input_tokens += answer.input_tokens;
        usage.output_tokens += answer.output_tokens;
        let uses: Vec<&Value> =
            answer.content.iter().filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use")).collect();
        if answer.stop_reason != "tool_use" {
            let text = answer
                .content
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            messages.push(json!({"role": "assistant", "content": answer.content}));
            return Ok(Transcript { text, stop_reason: answer.stop_reason, messages, requests, tool_calls, usage });
        }
        if uses.is_empty() {
            return Err(AgentError::BadResponse { reason: "stop_reason is tool_use but no tool_use block".to_owned() });
        }
        // Checked before any call runs, so that a bad answer changes nothing.
        if uses.iter().any(|b| b.get("id").and_then(Value::as_str).is_none()) {
            return Err(AgentError::BadResponse { reason: "a tool_use block has no id".to_owned() });
        }
        if requests == config.max_turns {
            // The results could not be sent back: leave the calls unrun.
            return Err(AgentError::TurnLimit { turns: config.max_turns });
        }
        let mut results = Vec::with_capacity(uses.len());
        for block in uses {
            let call = execute(memfs, block, &mut observe).await?;
            let mut result = json!({"type": "tool_result", "tool_use_id": call.id, "content": call.content});
            if call.is_error {
                result["is_error"] = json!(true);
            }
            results.push(result);
            tool_calls.push(call);
        }
        messages.push(json!({"role": "assistant", "content": answer.content}));
        messages.push(json!({"role": "user", "content": results}));
    }
}

/// Runs one `tool_use` block: the memory tool on the store, an error for any other tool.
async fn execute(memfs: &Memfs, block: &Value, observe: &mut impl FnMut(Event<'_>)) -> Result<ToolCall, AgentError> {
    let Some(id) = block.get("id").and_then(Value::as_str) else {
        return Err(AgentError::BadResponse { reason: "a tool_use block has no id".to_owned() });
    };
    let name = block.get("name").and_then(Value::as_str).unwrap_or_default();
    let input = block.get("input").cloned().unwrap_or(Value::Null);
    observe(Event::ToolUse { id, name, input: &input });
    let result = if name == TOOL_NAME {
        memfs.call(&input).await
    } else {
        // As the Python SDK's tool runner answers a tool it does not have.
        crate::ToolResult::error(format!("Error: Tool '{name}' not found"))
    };
    observe(Event::ToolResult { id, content: &result.content, is_error: result.is_error });
    Ok(ToolCall { id: id.to_owned(), name: name.to_owned(), input, content: result.content, is_error: result.is_error })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Dialect;

    #[tokio::test]
    async fn another_tool_gets_the_python_runners_error() {
        let memfs = Memfs::ephemeral(Dialect::Spec).expect("store");
        let block = json!({"type": "tool_use", "id": "toolu_9", "name": "bash", "input": {"command": "ls"}});
        let mut steps = 0;
        let call = execute(&memfs, &block, &mut |_| steps += 1).await.expect("call");
        assert_eq!(call.content, "Error: Tool 'bash' not found");
        assert!(call.is_error);
        assert_eq!((call.id.as_str(), call.name.as_str(), steps), ("toolu_9", "bash", 2));
        let no_id = json!({"type": "tool_use", "name": "memory", "input": {}});
        assert_eq!(
            execute(&memfs, &no_id, &mut |_| {}).await.expect_err("no id").to_string(),
            "the Messages API sent an answer memfs cannot read: a tool_use block has no id"
        );
    }
}
