//! Slots whose key is wrapped by a Google Cloud KMS key (envelope encryption over Cloud KMS's
//! REST API).
//!
//! Cloud KMS has no `GenerateDataKey`: a new slot's key-encryption key is 32 random bytes from
//! the system, as Google's envelope-encryption guide has it, and `encrypt` under the CryptoKey
//! given wraps it; the slot keeps the ciphertext, and `decrypt` gives the KEK back. Both calls
//! carry additional authenticated data naming the store, the bytes `memfs-store:` followed by
//! the store id in lower-case hex: Cloud KMS refuses to decrypt a slot's ciphertext for any
//! other store (`INVALID_ARGUMENT`), as AWS KMS does with an encryption context.
//!
//! The slot names the CryptoKey (`projects/P/locations/L/keyRings/R/cryptoKeys/K`), not the
//! version `encrypt` used (the `name` it answers): `decrypt` takes a CryptoKey and finds the
//! version in the ciphertext, so rotating the key leaves older slots readable for as long as
//! their version is enabled.
//!
//! The access token is `GOOGLE_OAUTH_ACCESS_TOKEN` if set (the variable Terraform's Google
//! provider reads, so CI that holds a token needs nothing else), else one from Application
//! Default Credentials (`GOOGLE_APPLICATION_CREDENTIALS`, `gcloud auth application-default
//! login`, the metadata server) for the Cloud KMS scope only. The service is
//! `https://cloudkms.googleapis.com`, or `MEMFS_GCP_KMS_ENDPOINT` (a Private Service Connect
//! endpoint, or a stub in tests: `http://` only on a loopback host, so a token never crosses a
//! network in the clear). Connecting gives up after 5 seconds, a call after 30, getting a token
//! after 30, without retries: a Cloud KMS that cannot be reached fails the slot instead of
//! hanging, and the next slot is tried.
//!
//! The KEK, its base64 and the request and response bodies that hold it are zeroized when
//! dropped (what the HTTP and TLS layers copy is out of reach). Errors name the key and the
//! service's words, never a token or a KEK.

use std::borrow::Cow;
use std::fmt;

use async_trait::async_trait;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use memfs_crypt::{Custodian, Custody, CustodyError, CustodyKek, SlotKind};
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::kek;
use crate::rest::{TOKEN_TIMEOUT, causes, is_loopback, json, post, shown};

/// Cloud KMS's global REST endpoint.
const DEFAULT_ENDPOINT: &str = "https://cloudkms.googleapis.com";
/// Another endpoint: Private Service Connect, or a stub.
const ENDPOINT_VAR: &str = "MEMFS_GCP_KMS_ENDPOINT";
/// An access token given outright, as Terraform's Google provider reads it.
const TOKEN_VAR: &str = "GOOGLE_OAUTH_ACCESS_TOKEN";
/// The OAuth scope asked of Application Default Credentials: Cloud KMS only, not all of
/// Google Cloud (`cloud-platform`), so a token that leaks opens nothing else.
const SCOPE: &str = "https://www.googleapis.com/auth/cloudkms";
/// The additional authenticated data's prefix: the store id in hex follows.
const AAD_LABEL: &str = "memfs-store:";

/// A Google Cloud KMS key (a symmetric CryptoKey) that wraps a new slot's key.
#[derive(Clone)]
pub struct GcpKms {
    key: String,
    endpoint: Option<Endpoint>,
    token: Option<Zeroizing<String>>,
}

impl fmt::Debug for GcpKms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GcpKms")
            .field("key", &self.key)
            .field("endpoint", &self.endpoint.as_ref().map(|e| &e.url))
            .finish_non_exhaustive()
    }
}

impl GcpKms {
    /// The CryptoKey `key`: its resource name, `projects/P/locations/L/keyRings/R/cryptoKeys/K`.
    pub fn new(key: &str) -> Result<Self, CustodyError> {
        let key = key.trim();
        check_key(key)?;
        Ok(GcpKms { key: key.to_owned(), endpoint: None, token: None })
    }

    /// This custodian with Cloud KMS at `endpoint` rather than `MEMFS_GCP_KMS_ENDPOINT` or
    /// Google's; `http://` only on 127.0.0.1, `[::1]` or localhost. For tests and embedders.
    #[doc(hidden)]
    pub fn with_endpoint(mut self, endpoint: &str) -> Result<Self, CustodyError> {
        let endpoint = Endpoint::parse(endpoint).map_err(|why| CustodyError(format!("Cloud KMS endpoint {why}")))?;
        self.endpoint = Some(endpoint);
        Ok(self)
    }

    /// This custodian with the access token `token` rather than `GOOGLE_OAUTH_ACCESS_TOKEN`'s
    /// or Application Default Credentials'. For tests and embedders.
    #[doc(hidden)]
    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(Zeroizing::new(token.trim().to_owned()));
        self
    }

    /// The KEK of a Google Cloud KMS slot: `decrypt` of its ciphertext under its CryptoKey,
    /// with the environment's endpoint and credentials.
    pub(crate) async fn open(custody: &Custody, store_id: &[u8; 16]) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        decrypt(custody, store_id, None, None).await
    }
}

#[async_trait]
impl Custodian for GcpKms {
    fn opens(&self, _: SlotKind) -> bool {
        false
    }

    async fn open(
        &self,
        _: SlotKind,
        custody: &Custody,
        store_id: &[u8; 16],
    ) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        decrypt(custody, store_id, self.endpoint.as_ref(), self.token.as_ref()).await
    }

    async fn seal(&self, store_id: &[u8; 16]) -> Result<CustodyKek, CustodyError> {
        let kek = kek::random()?;
        let endpoint = endpoint(self.endpoint.as_ref())?;
        let token = access_token(&self.key, self.token.as_ref()).await?;
        let plaintext = Zeroizing::new(STANDARD.encode(&kek[..]));
        let aad = STANDARD.encode(aad(store_id));
        let body = json(&EncryptRequest { plaintext: &plaintext, additional_authenticated_data: &aad }, "Cloud KMS")?;
        let answer = call(&endpoint, &self.key, "encrypt", &token, body).await?;
        let unreadable =
            || CustodyError(format!("Google Cloud KMS key {}: encrypt gave an answer without a ciphertext", self.key));
        let encrypted: EncryptResponse<'_> = serde_json::from_slice(&answer).map_err(|_| unreadable())?;
        let wrapped = STANDARD.decode(encrypted.ciphertext.as_bytes()).map_err(|_| unreadable())?;
        if wrapped.is_empty() {
            return Err(unreadable());
        }
        // `encrypted.name` is the CryptoKeyVersion used; the slot keeps the CryptoKey, which
        // decrypt needs (see the module doc).
        let custody = Custody { key: self.key.clone(), region: None, wrapped };
        Ok(CustodyKek { kind: SlotKind::GcpKms, custody, kek })
    }
}

/// `decrypt` of a slot's ciphertext; `endpoint` and `token` if given, else the environment's.
async fn decrypt(
    custody: &Custody,
    store_id: &[u8; 16],
    endpoint: Option<&Endpoint>,
    token: Option<&Zeroizing<String>>,
) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
    let key = &custody.key;
    // The name comes from the store: checked before it goes into a URL with a token.
    check_key(key)?;
    if custody.wrapped.is_empty() {
        return Err(CustodyError(format!("Google Cloud KMS key {key}: the key slot holds no ciphertext")));
    }
    let endpoint = self::endpoint(endpoint)?;
    let token = access_token(key, token).await?;
    let ciphertext = STANDARD.encode(&custody.wrapped);
    let aad = STANDARD.encode(aad(store_id));
    let body = json(&DecryptRequest { ciphertext: &ciphertext, additional_authenticated_data: &aad }, "Cloud KMS")?;
    let answer = call(&endpoint, key, "decrypt", &token, body).await?;
    let unreadable = || CustodyError(format!("Google Cloud KMS key {key}: decrypt did not return a 32-byte key"));
    let decrypted: DecryptResponse<'_> = serde_json::from_slice(&answer).map_err(|_| unreadable())?;
    let encoded = match decrypted.plaintext {
        Some(Cow::Borrowed(text)) => Zeroizing::new(text.to_owned()),
        Some(Cow::Owned(text)) => Zeroizing::new(text),
        None => return Err(unreadable()),
    };
    // A decoding error would quote a byte of the plaintext: only "not a key" is said.
    let plain = Zeroizing::new(STANDARD.decode(encoded.as_bytes()).map_err(|_| unreadable())?);
    kek::from_slice(&plain).ok_or_else(unreadable)
}

/// `given`, else `MEMFS_GCP_KMS_ENDPOINT`, else Google's endpoint.
fn endpoint(given: Option<&Endpoint>) -> Result<Endpoint, CustodyError> {
    if let Some(endpoint) = given {
        return Ok(endpoint.clone());
    }
    match std::env::var(ENDPOINT_VAR) {
        Ok(value) if !value.trim().is_empty() => {
            Endpoint::parse(&value).map_err(|why| CustodyError(format!("{ENDPOINT_VAR} {why}")))
        }
        _ => Ok(Endpoint { url: DEFAULT_ENDPOINT.to_owned(), loopback: false }),
    }
}

/// Where Cloud KMS is reached: a base URL without a trailing slash.
#[derive(Clone)]
struct Endpoint {
    url: String,
    /// On a loopback host: no proxy between.
    loopback: bool,
}

impl Endpoint {
    /// `value` as an endpoint; the error says why not, after the value.
    fn parse(value: &str) -> Result<Endpoint, String> {
        let value = value.trim();
        let url = reqwest::Url::parse(value).map_err(|e| format!("{value:?} is not a URL: {e}"))?;
        let loopback = is_loopback(&url);
        let refused = |why: &str| Err(format!("{value:?} is refused: {why}"));
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            "http" => return refused("http:// is allowed only for 127.0.0.1, [::1] and localhost; use https://"),
            _ => return refused("not an https:// URL"),
        }
        if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
            return refused("an endpoint has no user, query or fragment");
        }
        Ok(Endpoint { url: url.as_str().trim_end_matches('/').to_owned(), loopback })
    }
}

/// Refuses what is not a CryptoKey's resource name; a key version's name is refused with the
/// CryptoKey's, which decrypt needs.
fn check_key(key: &str) -> Result<(), CustodyError> {
    let parts: Vec<&str> = key.split('/').collect();
    if parts.len() == 10 && parts[8] == "cryptoKeyVersions" && is_crypto_key(&parts[..8]) {
        let crypto_key = parts[..8].join("/");
        return Err(CustodyError(format!(
            "{key:?} is a Google Cloud KMS key version: name its CryptoKey, {crypto_key} (decrypt takes a CryptoKey)"
        )));
    }
    if key.len() > Custody::MAX_NAME || !is_crypto_key(&parts) {
        return Err(CustodyError(format!(
            "not a Google Cloud KMS key name (projects/P/locations/L/keyRings/R/cryptoKeys/K): {key:?}"
        )));
    }
    Ok(())
}

/// Whether `parts` (a name split at `/`) are a CryptoKey's: `projects`, `locations`,
/// `keyRings`, `cryptoKeys`, each followed by an id of letters, digits, `-` and `_` (and for a
/// project, `.` and `:`, as in a domain-scoped `example.com:project`), starting with a letter
/// or digit. So a name put in a URL path has no `..`, `?` or `%`.
fn is_crypto_key(parts: &[&str]) -> bool {
    const COLLECTIONS: [&str; 4] = ["projects", "locations", "keyRings", "cryptoKeys"];
    let id = |id: &str, extra: &[char]| {
        id.len() <= 100
            && id.starts_with(|c: char| c.is_ascii_alphanumeric())
            && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || extra.contains(&c))
    };
    parts.len() == 8
        && parts.iter().step_by(2).copied().eq(COLLECTIONS)
        && id(parts[1], &['.', ':'])
        && [parts[3], parts[5], parts[7]].into_iter().all(|part| id(part, &[]))
}

/// The additional authenticated data of a slot of store `store_id`.
fn aad(store_id: &[u8; 16]) -> Vec<u8> {
    let mut aad = AAD_LABEL.as_bytes().to_vec();
    aad.extend(store_id.iter().flat_map(|b| format!("{b:02x}").into_bytes()));
    aad
}

/// The access token: `given`, else `GOOGLE_OAUTH_ACCESS_TOKEN`, else one from Application
/// Default Credentials.
async fn access_token(key: &str, given: Option<&Zeroizing<String>>) -> Result<Zeroizing<String>, CustodyError> {
    if let Some(token) = given {
        return Ok(token.clone());
    }
    if let Ok(value) = std::env::var(TOKEN_VAR) {
        let value = Zeroizing::new(value);
        if !value.trim().is_empty() {
            return Ok(Zeroizing::new(value.trim().to_owned()));
        }
    }
    let adc = async {
        let credentials = google_cloud_auth::credentials::Builder::default()
            .with_scopes([SCOPE])
            .build_access_token_credentials()
            .map_err(|e| causes(&e))?;
        let token = credentials.access_token().await.map_err(|e| adc_failure(&e))?;
        Ok::<_, String>(Zeroizing::new(token.token))
    };
    let why = match tokio::time::timeout(TOKEN_TIMEOUT, adc).await {
        Ok(Ok(token)) => return Ok(token),
        Ok(Err(why)) => why,
        Err(_) => "Application Default Credentials gave no token in time (30 s)".to_owned(),
    };
    Err(CustodyError(format!(
        "Google Cloud KMS key {key}: no access token: {} (set up Application Default Credentials, \
         e.g. `gcloud auth application-default login`, or set {TOKEN_VAR})",
        shown(&why)
    )))
}

/// Why Application Default Credentials gave no token. Without a credentials file they ask the
/// metadata server, and its failure says so at length ("…you are not running in a Google
/// Cloud Environment…"): shown as that, with the root cause.
fn adc_failure(e: &dyn std::error::Error) -> String {
    let mut root = e.to_string();
    let mut metadata = false;
    let mut source = Some(e);
    while let Some(cause) = source {
        root = cause.to_string();
        metadata |= root.contains("not running in a Google Cloud Environment");
        source = cause.source();
    }
    if metadata { format!("no Application Default Credentials, and no metadata server: {root}") } else { causes(e) }
}

/// `{endpoint}/v1/{key}:{verb}` with `body`: the answer's body if Cloud KMS did it, else an
/// error with its words.
async fn call(
    endpoint: &Endpoint,
    key: &str,
    verb: &str,
    token: &str,
    body: Zeroizing<Vec<u8>>,
) -> Result<Zeroizing<Vec<u8>>, CustodyError> {
    let failed = |why: String| CustodyError(format!("Google Cloud KMS key {key}: {verb} failed: {why}"));
    let url = format!("{}/v1/{key}:{verb}", endpoint.url);
    let (status, answer) = post(&url, &endpoint.url, endpoint.loopback, token, body).await.map_err(failed)?;
    if status.is_success() { Ok(answer) } else { Err(failed(refusal(verb, status, &answer))) }
}

/// A refusal in words: Google's status and message and a hint, or only the HTTP status when
/// the body is not Google's error JSON (a proxy's page, say).
fn refusal(verb: &str, status: StatusCode, body: &[u8]) -> String {
    let Ok(GoogleError { error }) = serde_json::from_slice::<GoogleError>(body) else {
        return format!("HTTP {status}");
    };
    if error.status.is_empty() || error.status.chars().any(|c| !(c.is_ascii_uppercase() || c == '_')) {
        return format!("HTTP {status}");
    }
    let hint = match (error.status.as_str(), verb) {
        ("PERMISSION_DENIED", "encrypt") => {
            " (IAM must grant cloudkms.cryptoKeyVersions.useToEncrypt on this key, as roles/cloudkms.cryptoKeyEncrypter does; or the key does not exist)"
        }
        ("PERMISSION_DENIED", _) => {
            " (IAM must grant cloudkms.cryptoKeyVersions.useToDecrypt on this key, as roles/cloudkms.cryptoKeyDecrypter does; or the key does not exist)"
        }
        ("NOT_FOUND", _) => " (no such key: check the project, location, key ring and key names)",
        ("FAILED_PRECONDITION", _) => " (the key version is disabled or destroyed)",
        ("INVALID_ARGUMENT", "decrypt") => " (the slot's ciphertext is not this store's, or was changed)",
        ("UNAUTHENTICATED", _) => " (the access token was refused: expired, revoked, or not for Google Cloud)",
        _ => "",
    };
    match shown(&error.message) {
        message if message.is_empty() => format!("{}{hint}", error.status),
        message => format!("{}: {message}{hint}", error.status),
    }
}

/// `:encrypt`'s request body.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EncryptRequest<'a> {
    plaintext: &'a str,
    additional_authenticated_data: &'a str,
}

/// `:encrypt`'s answer: the ciphertext (and the version used, `name`, not kept).
#[derive(Deserialize)]
struct EncryptResponse<'a> {
    #[serde(borrow)]
    ciphertext: Cow<'a, str>,
}

/// `:decrypt`'s request body.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DecryptRequest<'a> {
    ciphertext: &'a str,
    additional_authenticated_data: &'a str,
}

/// `:decrypt`'s answer: the plaintext, borrowed from the zeroized answer when it can be.
#[derive(Deserialize)]
struct DecryptResponse<'a> {
    #[serde(borrow, default)]
    plaintext: Option<Cow<'a, str>>,
}

/// Google's error body: `{"error": {"code": 403, "message": "…", "status": "PERMISSION_DENIED"}}`
/// (<https://cloud.google.com/apis/design/errors#http_mapping>).
#[derive(Deserialize)]
struct GoogleError {
    error: GoogleErrorBody,
}

#[derive(Deserialize)]
struct GoogleErrorBody {
    #[serde(default)]
    message: String,
    #[serde(default)]
    status: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "projects/p-1/locations/europe-west1/keyRings/memfs/cryptoKeys/kek";

    #[test]
    fn key_names() {
        assert!(GcpKms::new(KEY).is_ok());
        assert!(GcpKms::new("projects/example.com:p/locations/global/keyRings/r_1/cryptoKeys/k-2").is_ok());
        assert_eq!(
            GcpKms::new(&format!("{KEY}/cryptoKeyVersions/3")).unwrap_err().0,
            format!(
                "\"{KEY}/cryptoKeyVersions/3\" is a Google Cloud KMS key version: name its CryptoKey, {KEY} (decrypt takes a CryptoKey)"
            )
        );
        for bad in [
            "",
            "projects/p/locations/global/keyRings/r",
            "projects/p/locations/global/keyRings/r/cryptoKeys/",
            "projects/p/locations/global/keyRings/../cryptoKeys/k",
            "projects/p/locations/global/keyRings/r/cryptoKeys/k?x",
            "projects/p/locations/global/keyRings/r/cryptoKeys/k:decrypt",
            "projects/p/locations/global/keyRings/r/cryptoKeys/k/extra",
            "project/p/locations/global/keyRings/r/cryptoKeys/k",
        ] {
            assert_eq!(
                GcpKms::new(bad).unwrap_err().0,
                format!("not a Google Cloud KMS key name (projects/P/locations/L/keyRings/R/cryptoKeys/K): {bad:?}")
            );
        }
    }

    #[test]
    fn endpoints() {
        let ok = |v: &str| Endpoint::parse(v).map(|e| (e.url, e.loopback));
        assert_eq!(ok("https://cloudkms.googleapis.com/"), Ok(("https://cloudkms.googleapis.com".into(), false)));
        assert_eq!(ok("https://kms-abc.p.googleapis.com"), Ok(("https://kms-abc.p.googleapis.com".into(), false)));
        assert_eq!(ok("http://127.0.0.1:8080"), Ok(("http://127.0.0.1:8080".into(), true)));
        assert_eq!(ok("http://[::1]:8080/"), Ok(("http://[::1]:8080".into(), true)));
        assert_eq!(ok("http://localhost:1"), Ok(("http://localhost:1".into(), true)));
        assert_eq!(
            ok("http://kms.example.com"),
            Err("\"http://kms.example.com\" is refused: http:// is allowed only for 127.0.0.1, [::1] and localhost; use https://".into())
        );
        assert_eq!(ok("ftp://127.0.0.1"), Err("\"ftp://127.0.0.1\" is refused: not an https:// URL".into()));
        assert_eq!(
            ok("https://u:p@kms.example.com"),
            Err("\"https://u:p@kms.example.com\" is refused: an endpoint has no user, query or fragment".into())
        );
        assert_eq!(ok("kms"), Err("\"kms\" is not a URL: relative URL without a base".into()));
    }

    #[test]
    fn the_aad_names_the_store() {
        assert_eq!(aad(&[0xab; 16]), b"memfs-store:abababababababababababababababab");
    }

    #[test]
    fn refusals() {
        let body = br#"{"error":{"code":404,"message":"CryptoKey x not found.","status":"NOT_FOUND"}}"#;
        assert_eq!(
            refusal("encrypt", StatusCode::NOT_FOUND, body),
            "NOT_FOUND: CryptoKey x not found. (no such key: check the project, location, key ring and key names)"
        );
        assert_eq!(refusal("decrypt", StatusCode::BAD_GATEWAY, b"<html>bad gateway</html>"), "HTTP 502 Bad Gateway");
        assert_eq!(
            refusal("decrypt", StatusCode::BAD_REQUEST, br#"{"error":{"status":"\u001b[31m"}}"#),
            "HTTP 400 Bad Request"
        );
        assert_eq!(shown("a\nb\u{1b}[0m"), "a b [0m");
    }
}
