//! Cloud object stores from a URL and options: `s3://`, `gs://` and `az://`.
//!
//! Options come from two places, in this order (later wins): the usual environment variables
//! (`AWS_…`, `GOOGLE_…`, `AZURE_…`, read as `object_store` reads them), then options given
//! explicitly (`--store-option key=value`). Keys are `object_store`'s configuration keys for
//! the scheme (`aws_endpoint`, `aws_region`, `google_service_account`,
//! `azure_storage_account_name`, the client keys `timeout`, `connect_timeout`, `allow_http`, …)
//! plus memfs's own retry keys ([`RETRY_KEYS`]).
//!
//! `object_store` ignores a key it does not know; here an explicit option with an unknown key
//! is refused, naming the key (an environment variable that is not a key is ignored, as the
//! environment holds many unrelated variables). No message here ever contains an option's
//! value: values may be credentials.
//!
//! ```
//! use memfs_store::cloud::{CloudUrl, Scheme};
//!
//! let url = CloudUrl::parse("s3://my-bucket/team/memories")?;
//! assert_eq!((url.scheme, url.bucket.as_str(), url.prefix.as_str()), (Scheme::S3, "my-bucket", "team/memories"));
//!
//! let options = [("aws_region".to_owned(), "eu-west-1".to_owned()), ("aws_regoin".to_owned(), "x".to_owned())];
//! let err = memfs_store::cloud::build(&url, &options, std::iter::empty()).err().unwrap();
//! assert!(err.to_string().starts_with("unknown store option `aws_regoin` for s3:// stores"));
//! # Ok::<(), memfs_store::cloud::ConfigError>(())
//! ```

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::prefix::PrefixStore;
use object_store::{BackoffConfig, ObjectStore, RetryConfig};
use thiserror::Error;

pub use crate::redact::scrub;

/// memfs's own option keys, for retries of transient failures (timeouts, 5xx, throttling).
///
/// - `max_retries`: how many times a failed request is retried (default 4);
/// - `retry_timeout`: how long retries of one request may take in all (default 2m, so that a
///   request that timed out, after `timeout`, is still retried);
/// - `retry_backoff`: the first wait between retries, doubling up to 5s (default 100ms).
///
/// Durations are written `30s`, `500ms`, `2m`.
pub const RETRY_KEYS: [&str; 3] = ["max_retries", "retry_timeout", "retry_backoff"];

/// The default timeout of one request, unless `timeout` is given.
const DEFAULT_TIMEOUT: &str = "30s";
/// The default connect timeout, unless `connect_timeout` is given: an unreachable endpoint is
/// reported in seconds, not minutes.
const DEFAULT_CONNECT_TIMEOUT: &str = "5s";

/// Which cloud.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Amazon S3 and S3-compatible services (`s3://`).
    S3,
    /// Google Cloud Storage (`gs://`).
    Gcs,
    /// Azure Blob Storage (`az://`).
    Azure,
}

impl Scheme {
    /// Every cloud.
    const ALL: [Scheme; 3] = [Scheme::S3, Scheme::Gcs, Scheme::Azure];

    /// The cloud whose URL scheme is `scheme` (as in `s3`), if any.
    pub fn named(scheme: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|s| s.as_str() == scheme)
    }

    /// The URL scheme, as in `s3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scheme::S3 => "s3",
            Scheme::Gcs => "gs",
            Scheme::Azure => "az",
        }
    }

    /// The prefix of this cloud's environment variables.
    fn env_prefix(self) -> &'static str {
        match self {
            Scheme::S3 => "AWS_",
            Scheme::Gcs => "GOOGLE_",
            Scheme::Azure => "AZURE_",
        }
    }

    /// Example keys for messages.
    fn example_keys(self) -> &'static str {
        match self {
            Scheme::S3 => "aws_endpoint, aws_region, aws_access_key_id, aws_allow_http",
            Scheme::Gcs => "google_service_account, google_service_account_key, google_base_url",
            Scheme::Azure => "azure_storage_account_name, azure_storage_account_key, azure_storage_use_emulator",
        }
    }
}

/// A parsed cloud store URL: `SCHEME://BUCKET[/PREFIX]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudUrl {
    /// The cloud.
    pub scheme: Scheme,
    /// The bucket (S3, GCS) or container (Azure).
    pub bucket: String,
    /// The prefix inside it, without leading or trailing `/` (may be empty).
    pub prefix: String,
}

impl CloudUrl {
    /// Parses `s3://bucket/prefix`, `gs://bucket/prefix` or `az://container/prefix`.
    ///
    /// Credentials do not belong in the URL (`user:password@`) and a query string is not
    /// used: both are refused, so that no secret rides along in a URL that gets logged.
    pub fn parse(url: &str) -> Result<Self, ConfigError> {
        let bad = |reason: &str| ConfigError::BadUrl { reason: reason.to_owned() };
        let (scheme, rest) = url.split_once("://").ok_or_else(|| bad("expected SCHEME://BUCKET/PREFIX"))?;
        let scheme = Scheme::named(scheme).ok_or_else(|| bad("expected s3://, gs:// or az://"))?;
        if rest.contains(['?', '#']) {
            return Err(ConfigError::QueryInUrl);
        }
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.contains('@') {
            return Err(ConfigError::CredentialsInUrl);
        }
        if bucket.is_empty() {
            return Err(bad("the URL names no bucket"));
        }
        if !bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-._".contains(&b)) {
            return Err(bad("a bucket or container name holds lowercase letters, digits, `-`, `.` and `_` only"));
        }
        let prefix = prefix.trim_matches('/');
        if prefix.split('/').any(|s| s.is_empty() && !prefix.is_empty() || s == "." || s == "..") {
            return Err(bad("the prefix has an empty, `.` or `..` segment"));
        }
        Ok(CloudUrl { scheme, bucket: bucket.to_owned(), prefix: prefix.to_owned() })
    }
}

/// A cloud store URL or its options are wrong. No variant carries an option's value.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The URL is malformed.
    #[error("{reason}")]
    BadUrl {
        /// What is wrong.
        reason: String,
    },
    /// A URL with a query string or fragment (where a SAS token would ride along, logged).
    #[error("a store URL takes no query string or fragment; give its options as store options")]
    QueryInUrl,
    /// A URL with credentials in it (`user:password@`).
    #[error(
        "credentials do not belong in the URL; give them in the environment or as store options (they are never printed)"
    )]
    CredentialsInUrl,
    /// An option key that neither `object_store` nor memfs knows for this scheme.
    #[error(
        "unknown store option `{key}` for {scheme}:// stores (object_store ignores unknown keys; memfs refuses them). Keys look like {examples}, plus memfs's max_retries, retry_timeout and retry_backoff"
    )]
    UnknownOption {
        /// The key as given.
        key: String,
        /// The URL scheme.
        scheme: &'static str,
        /// Some valid keys.
        examples: &'static str,
    },
    /// An option whose value is invalid (the value is not repeated: it may be a secret).
    #[error("store option `{key}` has an invalid value: {reason}")]
    BadValue {
        /// The key.
        key: String,
        /// What is expected.
        reason: String,
    },
    /// `object_store` refused the configuration.
    #[error("cannot configure the {scheme}:// store: {message}")]
    Build {
        /// The URL scheme.
        scheme: &'static str,
        /// `object_store`'s message, with option values scrubbed.
        message: String,
    },
}

/// Builds the object store a cloud URL names, rooted at its prefix.
///
/// `env` is the process environment (`std::env::vars()`) or, in tests, a fixed one; only the
/// variables of the URL's cloud are read. `options` are explicit and win over the environment.
pub fn build(
    url: &CloudUrl,
    options: &[(String, String)],
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Arc<dyn ObjectStore>, ConfigError> {
    let prefix = url.scheme.env_prefix();
    let env: Vec<(String, String)> =
        env.into_iter().filter(|(k, _)| k.starts_with(prefix)).map(|(k, v)| (k.to_ascii_lowercase(), v)).collect();
    let mut retry = RetrySettings::default();
    // The environment first, silently skipping what is not a key; then the explicit options.
    let mut settings: Vec<(String, String)> = Vec::new();
    for (key, value) in &env {
        if retry.apply(key, value).is_ok_and(|used| !used) && key_known(url.scheme, key) {
            settings.push((key.clone(), value.clone()));
        }
    }
    for (key, value) in options {
        if retry.apply(key, value)? {
            continue;
        }
        if !key_known(url.scheme, key) {
            return Err(ConfigError::UnknownOption {
                key: key.clone(),
                scheme: url.scheme.as_str(),
                examples: url.scheme.example_keys(),
            });
        }
        settings.push((key.clone(), value.clone()));
    }
    let secrets: Vec<&str> = settings.iter().chain(&env).map(|(_, v)| v.as_str()).collect();
    let fail = |e: object_store::Error| ConfigError::Build {
        scheme: url.scheme.as_str(),
        message: scrub(&crate::error::chain(&e), &secrets),
    };
    let retry = retry.config();
    let store: Arc<dyn ObjectStore> = match url.scheme {
        Scheme::S3 => {
            let b = configured(AmazonS3Builder::new().with_bucket_name(&url.bucket), &settings, |b, k, v| {
                b.with_config(k, v)
            });
            Arc::new(b.with_retry(retry).build().map_err(fail)?)
        }
        Scheme::Gcs => {
            let b = configured(GoogleCloudStorageBuilder::new().with_bucket_name(&url.bucket), &settings, |b, k, v| {
                b.with_config(k, v)
            });
            Arc::new(b.with_retry(retry).build().map_err(fail)?)
        }
        Scheme::Azure => {
            let b = configured(MicrosoftAzureBuilder::new().with_container_name(&url.bucket), &settings, |b, k, v| {
                b.with_config(k, v)
            });
            Arc::new(b.with_retry(retry).build().map_err(fail)?)
        }
    };
    Ok(if url.prefix.is_empty() { store } else { Arc::new(PrefixStore::new(store, url.prefix.as_str())) })
}

/// `builder` with memfs's timeouts, then `settings` (keys already checked by [`key_known`]),
/// each set by `with` under the builder's own config-key type `K`.
fn configured<B, K>(builder: B, settings: &[(String, String)], with: impl Fn(B, K, &str) -> B) -> B
where
    K: FromStr,
    K::Err: std::fmt::Debug,
{
    let key = |k: &str| K::from_str(k).expect("a known key");
    let b = with(builder, key("timeout"), DEFAULT_TIMEOUT);
    let mut b = with(b, key("connect_timeout"), DEFAULT_CONNECT_TIMEOUT);
    for (k, v) in settings {
        b = with(b, key(k), v);
    }
    b
}

/// Whether `key` configures a store of `scheme` (the bucket is the URL's, not an option).
fn key_known(scheme: Scheme, key: &str) -> bool {
    match scheme {
        Scheme::S3 => AmazonS3ConfigKey::from_str(key).is_ok_and(|k| k != AmazonS3ConfigKey::Bucket),
        Scheme::Gcs => GoogleConfigKey::from_str(key).is_ok_and(|k| k != GoogleConfigKey::Bucket),
        Scheme::Azure => AzureConfigKey::from_str(key).is_ok_and(|k| k != AzureConfigKey::ContainerName),
    }
}

/// memfs's retry options, with their defaults.
struct RetrySettings {
    max_retries: usize,
    retry_timeout: Duration,
    backoff: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings { max_retries: 4, retry_timeout: Duration::from_secs(120), backoff: Duration::from_millis(100) }
    }
}

impl RetrySettings {
    /// Takes `key` if it is a retry key: `Ok(true)` if taken, `Ok(false)` if not a retry key.
    fn apply(&mut self, key: &str, value: &str) -> Result<bool, ConfigError> {
        let bad = |reason: &str| ConfigError::BadValue { key: key.to_owned(), reason: reason.to_owned() };
        match key {
            "max_retries" => {
                self.max_retries = value.parse().map_err(|_| bad("expected a whole number, such as 4"))?;
            }
            "retry_timeout" => self.retry_timeout = parse_duration(value).ok_or_else(|| bad(DURATION))?,
            "retry_backoff" => self.backoff = parse_duration(value).ok_or_else(|| bad(DURATION))?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn config(&self) -> RetryConfig {
        RetryConfig {
            backoff: BackoffConfig {
                init_backoff: self.backoff,
                max_backoff: Duration::from_secs(5).max(self.backoff),
                base: 2.0,
            },
            max_retries: self.max_retries,
            retry_timeout: self.retry_timeout,
        }
    }
}

const DURATION: &str = "expected a duration such as 30s, 500ms or 2m";

/// Parses a duration written `30s`, `500ms` or `2m` (a whole number and a unit).
///
/// ```
/// use std::time::Duration;
/// assert_eq!(memfs_store::cloud::parse_duration("2m"), Some(Duration::from_secs(120)));
/// assert_eq!(memfs_store::cloud::parse_duration("2"), None);
/// ```
pub fn parse_duration(s: &str) -> Option<Duration> {
    let split = s.find(|c: char| !c.is_ascii_digit())?;
    let (n, unit) = s.split_at(split);
    let n: u64 = n.parse().ok()?;
    match unit {
        "ms" => Some(Duration::from_millis(n)),
        "s" => Some(Duration::from_secs(n)),
        "m" => n.checked_mul(60).map(Duration::from_secs),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn parses_urls() {
        let u = CloudUrl::parse("gs://b-1/a/b/").unwrap();
        assert_eq!(u, CloudUrl { scheme: Scheme::Gcs, bucket: "b-1".into(), prefix: "a/b".into() });
        let u = CloudUrl::parse("az://container").unwrap();
        assert_eq!(u, CloudUrl { scheme: Scheme::Azure, bucket: "container".into(), prefix: "".into() });
        let err = |u: &str| CloudUrl::parse(u).unwrap_err().to_string();
        assert_eq!(
            err("s3://AKIA:secret@bucket/p"),
            "credentials do not belong in the URL; give them in the environment or as store options (they are never printed)"
        );
        assert_eq!(
            err("s3://b/p?x-amz-signature=1"),
            "a store URL takes no query string or fragment; give its options as store options"
        );
        assert_eq!(err("s3:///p"), "the URL names no bucket");
        assert_eq!(err("s3://b/a//c"), "the prefix has an empty, `.` or `..` segment");
        assert_eq!(err("s3://b/a/../c"), "the prefix has an empty, `.` or `..` segment");
        assert_eq!(
            err("s3://Bucket/p"),
            "a bucket or container name holds lowercase letters, digits, `-`, `.` and `_` only"
        );
    }

    #[test]
    fn unknown_options_are_refused_and_env_noise_ignored() {
        let url = CloudUrl::parse("s3://b/p").unwrap();
        let env = opts(&[("AWS_PROFILE_X", "ignored"), ("AWS_REGION", "us-east-1"), ("HOME", "/root")]);
        let env = env.into_iter();
        assert!(build(&url, &opts(&[("aws_endpoint", "http://127.0.0.1:1"), ("allow_http", "true")]), env).is_ok());
        let err = build(&url, &opts(&[("azure_storage_account_name", "x")]), std::iter::empty()).err().unwrap();
        assert_eq!(
            err.to_string(),
            "unknown store option `azure_storage_account_name` for s3:// stores (object_store ignores unknown keys; memfs refuses them). Keys look like aws_endpoint, aws_region, aws_access_key_id, aws_allow_http, plus memfs's max_retries, retry_timeout and retry_backoff"
        );
        // The bucket is the URL's.
        assert!(matches!(
            build(&url, &opts(&[("aws_bucket", "other")]), std::iter::empty()),
            Err(ConfigError::UnknownOption { .. })
        ));
        let gs = CloudUrl::parse("gs://b").unwrap();
        assert!(matches!(
            build(&gs, &opts(&[("aws_region", "x")]), std::iter::empty()),
            Err(ConfigError::UnknownOption { .. })
        ));
    }

    #[test]
    fn retry_options_are_checked_and_values_never_shown() {
        let url = CloudUrl::parse("az://c").unwrap();
        let err = build(&url, &opts(&[("retry_timeout", "SECRETVALUE")]), std::iter::empty()).err().unwrap();
        assert_eq!(
            err.to_string(),
            "store option `retry_timeout` has an invalid value: expected a duration such as 30s, 500ms or 2m"
        );
        assert_eq!(parse_duration("2m"), Some(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Some(Duration::from_millis(500)));
        assert_eq!(parse_duration("5"), None);
    }
}
