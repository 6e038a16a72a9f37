//! What the loop talks to and how: the API key, base URL, model and limits.

use std::fmt;

use super::AgentError;

/// The environment variable holding the API key.
pub(crate) const API_KEY_ENV: &str = "ANTHROPIC_API_KEY";

/// The environment variable holding another base URL (a proxy, a gateway, a test server).
pub(crate) const BASE_URL_ENV: &str = "ANTHROPIC_BASE_URL";

/// An Anthropic API key. Never printed: `Debug` shows `ApiKey(****)` and there is no
/// `Display`; wiped from memory when dropped.
///
/// ```
/// use memfs::agent::ApiKey;
/// let key = ApiKey::new("sk-ant-example")?;
/// assert_eq!(format!("{key:?}"), "ApiKey(****)");
/// assert!(ApiKey::new("").is_err());
/// assert!(ApiKey::new("two\nlines").is_err());
/// # Ok::<(), memfs::agent::AgentError>(())
/// ```
#[derive(Clone)]
pub struct ApiKey(zeroize::Zeroizing<String>);

impl ApiKey {
    /// Wraps a key. Refuses an empty key and one with characters an HTTP header cannot carry
    /// (only visible ASCII is allowed), without repeating the key in the error.
    pub fn new(key: impl Into<String>) -> Result<Self, AgentError> {
        let key = key.into();
        if key.is_empty() {
            return Err(AgentError::InvalidApiKey { reason: "it is empty" });
        }
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(AgentError::InvalidApiKey {
                reason: "it holds characters other than visible ASCII (a space or a line break?)",
            });
        }
        Ok(ApiKey(zeroize::Zeroizing::new(key)))
    }

    /// The key itself, for the `x-api-key` header and for cleaning error messages.
    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(****)")
    }
}

/// How [`run`](super::run) talks to the Messages API. Build it with [`AgentConfig::new`] or
/// [`AgentConfig::from_env`], then change the fields you need.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AgentConfig {
    /// The API key, sent as `x-api-key`.
    pub api_key: ApiKey,
    /// Where the API is: requests go to `{base_url}/v1/messages` (default
    /// [`AgentConfig::DEFAULT_BASE_URL`]; a trailing `/` is ignored).
    pub base_url: String,
    /// The model, such as `claude-opus-4-7`.
    pub model: String,
    /// `max_tokens` of each request.
    pub max_tokens: u32,
    /// Context editing: when on, each request asks the API to clear old tool results as the
    /// conversation grows (`clear_tool_uses_20250919`), except the memory tool's.
    pub context_editing: bool,
    /// The most requests one [`run`](super::run) makes; an answer that still asks for tools at
    /// the limit is an [`AgentError::TurnLimit`].
    pub max_turns: u32,
    /// A system prompt, sent as `system` when given.
    pub system: Option<String>,
    /// How many more times a request is sent after a network failure or an HTTP 408, 409, 429
    /// or 5xx (such as 529 overloaded), as the official SDKs do; the waits follow the
    /// server's `retry-after-ms` or `retry-after`, else 0.5 s doubling up to 8 s.
    pub max_retries: u32,
}

impl AgentConfig {
    /// The Messages API's address.
    pub const DEFAULT_BASE_URL: &'static str = "https://api.anthropic.com";
    /// The default `max_tokens`.
    pub const DEFAULT_MAX_TOKENS: u32 = 4096;
    /// The default request limit of one run.
    pub const DEFAULT_MAX_TURNS: u32 = 20;
    /// The default number of retries of a failed request (as the official SDKs).
    pub const DEFAULT_MAX_RETRIES: u32 = 2;

    /// A configuration for `model` with `api_key` and the defaults: the public API, 4096
    /// `max_tokens`, no context editing, at most 20 requests, no system prompt, 2 retries.
    pub fn new(api_key: ApiKey, model: impl Into<String>) -> Self {
        AgentConfig {
            api_key,
            base_url: Self::DEFAULT_BASE_URL.to_owned(),
            model: model.into(),
            max_tokens: Self::DEFAULT_MAX_TOKENS,
            context_editing: false,
            max_turns: Self::DEFAULT_MAX_TURNS,
            system: None,
            max_retries: Self::DEFAULT_MAX_RETRIES,
        }
    }

    /// [`AgentConfig::new`] with the key from `ANTHROPIC_API_KEY` (required) and the base URL
    /// from `ANTHROPIC_BASE_URL` when it is set and not empty, as the official SDKs read them.
    pub fn from_env(model: impl Into<String>) -> Result<Self, AgentError> {
        let key = match std::env::var(API_KEY_ENV) {
            Ok(key) if !key.is_empty() => key,
            _ => return Err(AgentError::MissingApiKey),
        };
        let mut config = AgentConfig::new(ApiKey::new(key)?, model);
        if let Ok(url) = std::env::var(BASE_URL_ENV)
            && !url.is_empty()
        {
            config.base_url = url;
        }
        Ok(config)
    }
}
