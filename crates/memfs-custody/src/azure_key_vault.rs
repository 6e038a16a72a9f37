//! Slots whose key is wrapped by an Azure Key Vault or Managed HSM key (RSA-OAEP-256, over Key
//! Vault's REST API).
//!
//! A new slot's key-encryption key is 32 random bytes from the system; `wrapKey` under the RSA
//! key given wraps it, and `unwrapKey` gives it back. The key is named by its identifier,
//! `https://NAME.vault.azure.net/keys/KEY` (or `…managedhsm.azure.net…`), with a version or
//! without (then the current one wraps). The slot keeps the identifier Key Vault answers, `kid`,
//! which names the version that wrapped: unwrapping uses that version, so a new version of the
//! key leaves older slots readable for as long as their version is enabled.
//!
//! RSA-OAEP carries no associated data, so unlike the AWS and Google slots the KMS cannot bind
//! the wrapped KEK to the store. The slot itself does: the KEK seals the slot's X25519 secret
//! under associated data naming the store id, the slot's kind and its id (memfs-crypt's
//! `slot.rs`), so a slot copied into another store unwraps here but does not open there.
//!
//! The access token (for the resource `https://vault.azure.net`, or `https://managedhsm.azure.net`
//! for a Managed HSM key) is `AZURE_ACCESS_TOKEN` if set (CI that holds a token needs nothing
//! else); else, through `azure_identity`: a client secret (`AZURE_TENANT_ID`, `AZURE_CLIENT_ID`,
//! `AZURE_CLIENT_SECRET`), else workload identity (`AZURE_FEDERATED_TOKEN_FILE`, as AKS and CI
//! federation set it), else the Azure CLI or azd login, else the managed identity
//! (user-assigned if `AZURE_CLIENT_ID` names one). The developer tools come before the managed
//! identity, as the AWS chain asks instance metadata last: on a machine off Azure the metadata
//! address often drops packets, and a login at hand should not wait on it.
//!
//! A slot's key URL comes from the store, and a store must not choose where a token goes: a
//! slot is opened only if its key is on an official host (`NAME.vault.azure.net`,
//! `NAME.managedhsm.azure.net`), or on the origin `MEMFS_AZURE_KEY_VAULT_ENDPOINT` gives (an
//! emulator or a test stub), or on the one of the key this custodian was made with; any other
//! is refused before a token is read (`endpoint.rs`). `http://` is accepted for a key only on
//! a loopback host (127.0.0.1, `[::1]`, localhost), and a key on a loopback host never gets a
//! token from an Azure identity, only from `AZURE_ACCESS_TOKEN`. Connecting gives up after 5
//! seconds, a call after 30, getting a token after 30 (10 for the managed identity), without
//! retries: a vault that cannot be reached fails the slot instead of hanging, and the next slot
//! is tried.
//!
//! The KEK, its base64url and the request and response bodies that hold it are zeroized when
//! dropped (what the HTTP and TLS layers copy is out of reach). Errors name the key and the
//! service's words, never a token or a KEK.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use azure_core::credentials::{Secret, TokenCredential};
use azure_identity::{
    AzureCliCredential, AzureDeveloperCliCredential, ClientSecretCredential, ManagedIdentityCredential,
    ManagedIdentityCredentialOptions, UserAssignedId, WorkloadIdentityCredential,
};
use base64::Engine as _;
use base64::alphabet::URL_SAFE;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use memfs_crypt::{Custodian, Custody, CustodyError, CustodyKek, SlotKind};
use reqwest::StatusCode;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::endpoint::{AZURE_ENDPOINT_VAR, SlotRefused};
use crate::kek;
use crate::rest::{TOKEN_TIMEOUT, is_loopback, json, post, shown};

/// The Key Vault REST API version of the calls.
const API_VERSION: &str = "7.4";
/// The wrapping algorithm: RSA-OAEP with SHA-256 (RSA-OAEP's SHA-1 is not offered).
const ALGORITHM: &str = "RSA-OAEP-256";
/// An access token given outright.
const TOKEN_VAR: &str = "AZURE_ACCESS_TOKEN";
/// The token scope of Key Vault keys, and of Managed HSM keys (another resource: a Key Vault
/// token is refused there).
const VAULT_SCOPE: &str = "https://vault.azure.net/.default";
const HSM_SCOPE: &str = "https://managedhsm.azure.net/.default";

/// Asking the managed identity: the metadata endpoint answers at once on Azure.
const MANAGED_IDENTITY_TIMEOUT: Duration = Duration::from_secs(10);

/// base64url, as Key Vault writes it (without padding), read with or without padding.
const BASE64URL: GeneralPurpose = GeneralPurpose::new(
    &URL_SAFE,
    GeneralPurposeConfig::new().with_encode_padding(false).with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// An Azure Key Vault or Managed HSM RSA key that wraps a new slot's key.
#[derive(Clone)]
pub struct AzureKeyVault {
    key: String,
    token: Option<Zeroizing<String>>,
}

impl fmt::Debug for AzureKeyVault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AzureKeyVault").field("key", &self.key).finish_non_exhaustive()
    }
}

impl AzureKeyVault {
    /// The key `key`: its identifier, `https://NAME.vault.azure.net/keys/KEY[/VERSION]` (or
    /// `https://NAME.managedhsm.azure.net/keys/…`).
    pub fn new(key: &str) -> Result<Self, CustodyError> {
        let url = KeyUrl::parse(key.trim())?;
        Ok(AzureKeyVault { key: url.id(), token: None })
    }

    /// This custodian with the access token `token` rather than `AZURE_ACCESS_TOKEN`'s or an
    /// Azure identity's. For tests and embedders.
    #[doc(hidden)]
    pub fn with_token(mut self, token: &str) -> Self {
        self.token = Some(Zeroizing::new(token.trim().to_owned()));
        self
    }

    /// The KEK of an Azure Key Vault slot: `unwrapKey` of its wrapped key with the key version
    /// that wrapped it, with the environment's credentials, if its key is on a host allowed
    /// here. The store binding is the slot's own (see the module doc), so `_store_id` is not
    /// sent.
    pub(crate) async fn open(custody: &Custody, _store_id: &[u8; 16]) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        unwrap(custody, None, None).await
    }
}

#[async_trait]
impl Custodian for AzureKeyVault {
    fn opens(&self, _: SlotKind) -> bool {
        false
    }

    async fn open(
        &self,
        _: SlotKind,
        custody: &Custody,
        _store_id: &[u8; 16],
    ) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
        // The key this custodian was made with was given by its maker: its origin is allowed.
        let origin = KeyUrl::parse(&self.key)?.origin;
        unwrap(custody, self.token.as_ref(), Some(&origin)).await
    }

    async fn seal(&self, _store_id: &[u8; 16]) -> Result<CustodyKek, CustodyError> {
        let key = KeyUrl::parse(&self.key)?;
        let kek = kek::random()?;
        let token = access_token(&key, self.token.as_ref()).await?;
        let value = Zeroizing::new(BASE64URL.encode(&kek[..]));
        let body = json(&KeyOperation { alg: ALGORITHM, value: &value }, "Key Vault")?;
        let answer = call(&key, &self.key, "wrapKey", &token, body).await?;
        let unreadable =
            || CustodyError(format!("Azure Key Vault key {}: wrapKey gave an answer without a wrapped key", self.key));
        let wrapped: KeyOperationResult<'_> = serde_json::from_slice(&answer).map_err(|_| unreadable())?;
        let kid = wrapped.kid.ok_or_else(unreadable)?;
        // The slot will send its wrapped key and a token to `kid`: it must be this key on this
        // vault, with a version.
        let version = KeyUrl::parse(&kid).ok().filter(|kid| kid.is_version_of(&key));
        let Some(version) = version else {
            return Err(CustodyError(format!(
                "Azure Key Vault key {}: wrapKey answered for another key than the one asked",
                self.key
            )));
        };
        let wrapped = BASE64URL.decode(wrapped.value.as_bytes()).map_err(|_| unreadable())?;
        if wrapped.is_empty() {
            return Err(unreadable());
        }
        let custody = Custody { key: version.id(), region: None, wrapped };
        Ok(CustodyKek { kind: SlotKind::AzureKeyVault, custody, kek })
    }
}

/// `unwrapKey` of a slot's wrapped key; with `token` if given, else the environment's. The
/// key must be on an official host, on `MEMFS_AZURE_KEY_VAULT_ENDPOINT`'s origin, or on
/// `given` (an origin the caller was given), or nothing is sent.
async fn unwrap(
    custody: &Custody,
    token: Option<&Zeroizing<String>>,
    given: Option<&str>,
) -> Result<Zeroizing<[u8; 32]>, CustodyError> {
    let key = checked_key(custody, given)?;
    let id = &custody.key;
    if custody.wrapped.is_empty() {
        return Err(CustodyError(format!("Azure Key Vault key {id}: the key slot holds no wrapped key")));
    }
    let token = access_token(&key, token).await?;
    let value = BASE64URL.encode(&custody.wrapped);
    let body = json(&KeyOperation { alg: ALGORITHM, value: &value }, "Key Vault")?;
    let answer = call(&key, id, "unwrapKey", &token, body).await?;
    let unreadable = || CustodyError(format!("Azure Key Vault key {id}: unwrapKey did not return a 32-byte key"));
    let unwrapped: KeyOperationResult<'_> = serde_json::from_slice(&answer).map_err(|_| unreadable())?;
    let encoded = match unwrapped.value {
        Cow::Borrowed(text) => Zeroizing::new(text.to_owned()),
        Cow::Owned(text) => Zeroizing::new(text),
    };
    // A decoding error would quote a byte of the key: only "not a key" is said.
    let plain = Zeroizing::new(BASE64URL.decode(encoded.as_bytes()).map_err(|_| unreadable())?);
    kek::from_slice(&plain).ok_or_else(unreadable)
}

/// Refuses a slot whose key is neither on an official host nor on
/// `MEMFS_AZURE_KEY_VAULT_ENDPOINT`'s origin.
pub(crate) fn allowed(custody: &Custody) -> Result<(), CustodyError> {
    checked_key(custody, None).map(drop)
}

/// A slot's key, if it is on an official host, on `MEMFS_AZURE_KEY_VAULT_ENDPOINT`'s origin
/// or on `given`. The identifier comes from the store: checked before a token goes to it.
fn checked_key(custody: &Custody, given: Option<&str>) -> Result<KeyUrl, CustodyError> {
    let key = KeyUrl::parse(&custody.key)?;
    if !key.official && Some(key.origin.as_str()) != given && key.origin != configured_origin()? {
        return Err(SlotRefused::AzureEndpoint { endpoint: key.origin }.into());
    }
    Ok(key)
}

/// The origin `MEMFS_AZURE_KEY_VAULT_ENDPOINT` gives, as a key URL's origin is written (an
/// empty string when it is not set: no key URL has that origin).
fn configured_origin() -> Result<String, CustodyError> {
    let value = std::env::var(AZURE_ENDPOINT_VAR).unwrap_or_default();
    let value = value.trim();
    if value.is_empty() {
        return Ok(String::new());
    }
    let refused = || {
        CustodyError(format!(
            "{AZURE_ENDPOINT_VAR} {value:?} is refused: expected an origin such as http://127.0.0.1:8443"
        ))
    };
    let url = reqwest::Url::parse(value).map_err(|_| refused())?;
    if !matches!(url.path(), "" | "/") || url.query().is_some() || !url.username().is_empty() {
        return Err(refused());
    }
    Ok(url.origin().ascii_serialization())
}

/// A key identifier, checked: `scheme://host[:port]/keys/NAME[/VERSION]`.
struct KeyUrl {
    /// `https://NAME.vault.azure.net`, or a loopback origin.
    origin: String,
    name: String,
    version: Option<String>,
    loopback: bool,
    /// On an official host (Key Vault's or Managed HSM's, port 443).
    official: bool,
    scope: &'static str,
}

impl KeyUrl {
    /// `key` as a Key Vault or Managed HSM key identifier on Azure's public cloud, or on a
    /// loopback host.
    fn parse(key: &str) -> Result<KeyUrl, CustodyError> {
        let refused = |why: &str| CustodyError(format!("not an Azure Key Vault key URL: {key:?}: {why}"));
        let url = reqwest::Url::parse(key).map_err(|_| {
            refused("expected https://NAME.vault.azure.net/keys/KEY or https://NAME.vault.azure.net/keys/KEY/VERSION")
        })?;
        let host = url.host_str().unwrap_or_default();
        let loopback = is_loopback(&url);
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            "http" => return Err(refused("http:// is allowed only for 127.0.0.1, [::1] and localhost; use https://")),
            _ => return Err(refused("not an https:// URL")),
        }
        // A loopback stub takes any token; Key Vault's scope is as good as another.
        let vault = url.scheme() == "https" && vault_name(host, ".vault.azure.net") && url.port().is_none();
        let hsm = url.scheme() == "https" && vault_name(host, ".managedhsm.azure.net") && url.port().is_none();
        let scope = if vault || loopback {
            VAULT_SCOPE
        } else if hsm {
            HSM_SCOPE
        } else {
            return Err(refused(
                "not a Key Vault or Managed HSM host (NAME.vault.azure.net, NAME.managedhsm.azure.net)",
            ));
        };
        if !url.username().is_empty() || url.password().is_some() || url.query().is_some() || url.fragment().is_some() {
            return Err(refused("a key URL has no user, query or fragment"));
        }
        let mut segments: Vec<&str> = url.path_segments().map(Iterator::collect).unwrap_or_default();
        if segments.last() == Some(&"") {
            segments.pop();
        }
        let (name, version) = match segments[..] {
            ["keys", name] => (name, None),
            ["keys", name, version] => (name, Some(version)),
            _ => return Err(refused("not a key's path (/keys/KEY or /keys/KEY/VERSION)")),
        };
        let name_ok = (1..=127).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
        let version_ok =
            version.is_none_or(|v| (1..=64).contains(&v.len()) && v.chars().all(|c| c.is_ascii_alphanumeric()));
        if !name_ok || !version_ok {
            return Err(refused("a key's name is letters, digits and dashes, and its version letters and digits"));
        }
        Ok(KeyUrl {
            origin: url.origin().ascii_serialization(),
            name: name.to_owned(),
            version: version.map(str::to_owned),
            loopback,
            official: vault || hsm,
            scope,
        })
    }

    /// The identifier, as Key Vault writes it.
    fn id(&self) -> String {
        match &self.version {
            Some(version) => format!("{}/keys/{}/{version}", self.origin, self.name),
            None => format!("{}/keys/{}", self.origin, self.name),
        }
    }

    /// Whether this identifier names a version of `key` (its version, if it names one): same
    /// vault, same name (Key Vault's names ignore case).
    fn is_version_of(&self, key: &KeyUrl) -> bool {
        let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
        self.origin == key.origin
            && same(&self.name, &key.name)
            && match (&self.version, &key.version) {
                (Some(ours), Some(theirs)) => same(ours, theirs),
                (Some(_), None) => true,
                (None, _) => false,
            }
    }
}

/// Whether `host` is one DNS label (a vault's name) followed by `suffix`.
fn vault_name(host: &str, suffix: &str) -> bool {
    host.strip_suffix(suffix).is_some_and(|name| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    })
}

/// The access token for `key`: `given`, else `AZURE_ACCESS_TOKEN`, else an Azure identity's
/// (never for a key on a loopback host).
async fn access_token(key: &KeyUrl, given: Option<&Zeroizing<String>>) -> Result<Zeroizing<String>, CustodyError> {
    if let Some(token) = given {
        return Ok(token.clone());
    }
    if let Ok(value) = std::env::var(TOKEN_VAR) {
        let value = Zeroizing::new(value);
        if !value.trim().is_empty() {
            return Ok(Zeroizing::new(value.trim().to_owned()));
        }
    }
    let no_token = |why: &str| CustodyError(format!("Azure Key Vault key {}: no access token: {why}", key.id()));
    if key.loopback {
        return Err(no_token(&format!(
            "a key on a loopback host gets its token from {TOKEN_VAR} only, never from an Azure identity"
        )));
    }
    let why = match tokio::time::timeout(TOKEN_TIMEOUT, identity_token(key.scope)).await {
        Ok(Ok(token)) => return Ok(token),
        Ok(Err(why)) => why,
        Err(_) => "no Azure identity gave a token in time (30 s)".to_owned(),
    };
    Err(no_token(&format!(
        "{} (set AZURE_TENANT_ID, AZURE_CLIENT_ID and AZURE_CLIENT_SECRET or AZURE_FEDERATED_TOKEN_FILE, \
         log in with `az login`, or run with a managed identity; or set {TOKEN_VAR})",
        shown(&why)
    )))
}

/// A token for `scope` from the first Azure identity at hand (see the module doc), or why
/// each one tried gave none.
async fn identity_token(scope: &str) -> Result<Zeroizing<String>, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|value| !value.trim().is_empty());
    if let Some(secret) = var("AZURE_CLIENT_SECRET") {
        let (Some(tenant), Some(client)) = (var("AZURE_TENANT_ID"), var("AZURE_CLIENT_ID")) else {
            return Err("AZURE_CLIENT_SECRET is set without AZURE_TENANT_ID and AZURE_CLIENT_ID".into());
        };
        let said = |why: String| format!("client secret of AZURE_CLIENT_ID: {why}");
        let credential =
            ClientSecretCredential::new(&tenant, client, Secret::new(secret), None).map_err(|e| said(why(&e)))?;
        return token_of(&*credential, scope).await.map_err(said);
    }
    if var("AZURE_FEDERATED_TOKEN_FILE").is_some() {
        let said = |why: String| format!("workload identity (AZURE_FEDERATED_TOKEN_FILE): {why}");
        let credential = WorkloadIdentityCredential::new(None).map_err(|e| said(why(&e)))?;
        return token_of(&*credential, scope).await.map_err(said);
    }
    let mut failures = Vec::new();
    let tools: [(&str, azure_core::Result<Arc<dyn TokenCredential>>); 2] = [
        ("Azure CLI", AzureCliCredential::new(None).map(|c| c as Arc<dyn TokenCredential>)),
        ("azd", AzureDeveloperCliCredential::new(None).map(|c| c as Arc<dyn TokenCredential>)),
    ];
    for (name, credential) in tools {
        match credential {
            Ok(credential) => match token_of(&*credential, scope).await {
                Ok(token) => return Ok(token),
                Err(e) => failures.push(format!("{name}: {e}")),
            },
            Err(e) => failures.push(format!("{name}: {}", why(&e))),
        }
    }
    let options = ManagedIdentityCredentialOptions {
        user_assigned_id: var("AZURE_CLIENT_ID").map(UserAssignedId::ClientId),
        ..Default::default()
    };
    match ManagedIdentityCredential::new(Some(options)) {
        Ok(credential) => match tokio::time::timeout(MANAGED_IDENTITY_TIMEOUT, token_of(&*credential, scope)).await {
            Ok(Ok(token)) => return Ok(token),
            Ok(Err(why)) => failures.push(format!("managed identity: {why}")),
            Err(_) => failures.push("managed identity: no answer in 10 s (not on Azure?)".to_owned()),
        },
        Err(e) => failures.push(format!("managed identity: {}", why(&e))),
    }
    Err(failures.join("; "))
}

/// A token for `scope` from `credential`, copied into a buffer zeroized on drop.
async fn token_of(credential: &dyn TokenCredential, scope: &str) -> Result<Zeroizing<String>, String> {
    let token = credential.get_token(&[scope], None).await.map_err(|e| why(&e))?;
    Ok(Zeroizing::new(token.token.secret().to_owned()))
}

/// An identity's failure in its own words: azure_identity wraps the cause in "XCredential
/// authentication failed. {cause}" and a troubleshooting link, and the cause is what to show.
fn why(e: &azure_core::Error) -> String {
    use std::error::Error as _;
    shown(&e.source().map_or_else(|| e.to_string(), ToString::to_string))
}

/// `{key}/{operation}?api-version=7.4` with `body`: the answer's body if Key Vault did it,
/// else an error naming `shown_key` and with the service's words.
async fn call(
    key: &KeyUrl,
    shown_key: &str,
    operation: &str,
    token: &str,
    body: Zeroizing<Vec<u8>>,
) -> Result<Zeroizing<Vec<u8>>, CustodyError> {
    let failed = |why: String| CustodyError(format!("Azure Key Vault key {shown_key}: {operation} failed: {why}"));
    let url = format!("{}/{}?api-version={API_VERSION}", key.id(), operation.to_ascii_lowercase());
    let (status, answer) = post(&url, &key.origin, key.loopback, token, body).await.map_err(failed)?;
    if status.is_success() { Ok(answer) } else { Err(failed(refusal(operation, status, &answer))) }
}

/// A refusal in words: Key Vault's code and message and a hint, or only the HTTP status when
/// the body is not Key Vault's error JSON (a proxy's page, say).
fn refusal(operation: &str, status: StatusCode, body: &[u8]) -> String {
    let Ok(VaultError { error }) = serde_json::from_slice::<VaultError>(body) else {
        return format!("HTTP {status}");
    };
    if error.code.is_empty() || !error.code.chars().all(|c| c.is_ascii_alphanumeric()) {
        return format!("HTTP {status}");
    }
    let inner = error.inner.map(|inner| inner.code).unwrap_or_default();
    let disabled = inner == "KeyDisabled" || error.message.contains("disabled key");
    let permission = format!(
        " (the identity lacks the {operation} permission on this key: grant it by an access policy or a role such as \
         Key Vault Crypto Service Encryption User)"
    );
    let hint = match (error.code.as_str(), operation) {
        ("Forbidden" | "BadParameter", _) if disabled => " (the key is disabled)",
        ("Forbidden", _) if inner == "ForbiddenByFirewall" => " (the vault's firewall does not admit this network)",
        ("Forbidden", _) => permission.as_str(),
        ("KeyNotFound", _) => " (no such key or key version in this vault)",
        ("Unauthorized", _) => " (the access token was refused: expired, or for another resource than this vault)",
        ("BadParameter", "unwrapKey") => " (the slot's wrapped key is not this key's, or was changed)",
        _ => "",
    };
    match shown(&error.message) {
        message if message.is_empty() => format!("{}{hint}", error.code),
        message => format!("{}: {message}{hint}", error.code),
    }
}

/// `wrapkey`'s and `unwrapkey`'s request body (`KeyOperationsParameters`).
#[derive(Serialize)]
struct KeyOperation<'a> {
    alg: &'a str,
    value: &'a str,
}

/// Their answer (`KeyOperationResult`): the key version used and the bytes, borrowed from the
/// zeroized answer when they can be.
#[derive(Deserialize)]
struct KeyOperationResult<'a> {
    #[serde(default)]
    kid: Option<String>,
    #[serde(borrow)]
    value: Cow<'a, str>,
}

/// Key Vault's error body: `{"error": {"code": "Forbidden", "message": "…", "innererror":
/// {"code": "KeyDisabled"}}}`.
#[derive(Deserialize)]
struct VaultError {
    error: VaultErrorBody,
}

#[derive(Deserialize)]
struct VaultErrorBody {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
    #[serde(default, rename = "innererror", alias = "innerError")]
    inner: Option<InnerError>,
}

#[derive(Deserialize)]
struct InnerError {
    #[serde(default)]
    code: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_urls() {
        let id = |key: &str| AzureKeyVault::new(key).map(|k| k.key).map_err(|e| e.0);
        assert_eq!(id("https://memfs.vault.azure.net/keys/kek"), Ok("https://memfs.vault.azure.net/keys/kek".into()));
        assert_eq!(
            id(" https://Memfs.vault.azure.net:443/keys/kek/0123abcd/ "),
            Ok("https://memfs.vault.azure.net/keys/kek/0123abcd".into())
        );
        assert_eq!(
            id("https://h-1.managedhsm.azure.net/keys/kek"),
            Ok("https://h-1.managedhsm.azure.net/keys/kek".into())
        );
        assert_eq!(id("http://127.0.0.1:8443/keys/kek"), Ok("http://127.0.0.1:8443/keys/kek".into()));
        assert_eq!(id("https://localhost:8443/keys/kek/1"), Ok("https://localhost:8443/keys/kek/1".into()));
        let refused =
            |key: &str, why: &str| assert_eq!(id(key), Err(format!("not an Azure Key Vault key URL: {key:?}: {why}")));
        refused(
            "http://memfs.vault.azure.net/keys/kek",
            "http:// is allowed only for 127.0.0.1, [::1] and localhost; use https://",
        );
        refused(
            "https://memfs.vault.azure.net.example.com/keys/kek",
            "not a Key Vault or Managed HSM host (NAME.vault.azure.net, NAME.managedhsm.azure.net)",
        );
        refused(
            "https://a.b.vault.azure.net/keys/kek",
            "not a Key Vault or Managed HSM host (NAME.vault.azure.net, NAME.managedhsm.azure.net)",
        );
        refused(
            "https://memfs.vault.azure.net:8443/keys/kek",
            "not a Key Vault or Managed HSM host (NAME.vault.azure.net, NAME.managedhsm.azure.net)",
        );
        refused("https://memfs.vault.azure.net/secrets/kek", "not a key's path (/keys/KEY or /keys/KEY/VERSION)");
        refused(
            "https://memfs.vault.azure.net/keys/kek/1/wrapkey",
            "not a key's path (/keys/KEY or /keys/KEY/VERSION)",
        );
        refused("https://memfs.vault.azure.net/keys/kek?x=1", "a key URL has no user, query or fragment");
        refused(
            "https://memfs.vault.azure.net/keys/k%2e",
            "a key's name is letters, digits and dashes, and its version letters and digits",
        );
        refused(
            "memfs",
            "expected https://NAME.vault.azure.net/keys/KEY or https://NAME.vault.azure.net/keys/KEY/VERSION",
        );
    }

    #[test]
    fn a_kid_names_a_version_of_the_key_asked() {
        let url = |s: &str| KeyUrl::parse(s).unwrap();
        let key = url("https://memfs.vault.azure.net/keys/kek");
        assert!(url("https://memfs.vault.azure.net/keys/KEK/abc").is_version_of(&key));
        assert!(!url("https://memfs.vault.azure.net/keys/kek").is_version_of(&key));
        assert!(!url("https://other.vault.azure.net/keys/kek/abc").is_version_of(&key));
        assert!(!url("https://memfs.vault.azure.net/keys/kek2/abc").is_version_of(&key));
        let version = url("https://memfs.vault.azure.net/keys/kek/abc");
        assert!(url("https://memfs.vault.azure.net/keys/kek/ABC").is_version_of(&version));
        assert!(!url("https://memfs.vault.azure.net/keys/kek/abd").is_version_of(&version));
    }

    #[test]
    fn refusals() {
        let body = br#"{"error":{"code":"Forbidden","message":"Operation unwrapKey is not allowed on a disabled key.","innererror":{"code":"KeyDisabled"}}}"#;
        assert_eq!(
            refusal("unwrapKey", StatusCode::FORBIDDEN, body),
            "Forbidden: Operation unwrapKey is not allowed on a disabled key. (the key is disabled)"
        );
        let body = br#"{"error":{"code":"BadParameter","message":"Bad Request"}}"#;
        assert_eq!(
            refusal("unwrapKey", StatusCode::BAD_REQUEST, body),
            "BadParameter: Bad Request (the slot's wrapped key is not this key's, or was changed)"
        );
        assert_eq!(refusal("wrapKey", StatusCode::SERVICE_UNAVAILABLE, b"busy"), "HTTP 503 Service Unavailable");
    }

    #[test]
    fn base64url_without_padding() {
        assert_eq!(BASE64URL.encode([0xfb, 0xff]), "-_8");
        assert_eq!(BASE64URL.decode("-_8=").unwrap(), [0xfb, 0xff]);
    }
}
