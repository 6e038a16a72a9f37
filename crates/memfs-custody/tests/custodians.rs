//! The cloud custodians against loopback stubs of their REST APIs, built from the documented
//! request and answer shapes: Google Cloud KMS `encrypt`/`decrypt`
//! (<https://cloud.google.com/kms/docs/reference/rest/v1/projects.locations.keyRings.cryptoKeys/encrypt>)
//! and Azure Key Vault `wrapkey`/`unwrapkey`
//! (<https://learn.microsoft.com/rest/api/keyvault/keys/wrap-key/wrap-key>).
//!
//! Each test starts its own stub on a free port and gives the custodian its endpoint and token
//! explicitly (`with_endpoint`, `with_token`). No test changes its own environment, so they run
//! alike in one process (`cargo test`) or in many (nextest): the one test of the path through
//! the environment runs a child process of this binary with the variables set. Errors are
//! compared in full.

use std::collections::{HashMap, HashSet};
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use base64::Engine as _;
use memfs_crypt::{Custodian, Custody, CustodyError, SlotKind};
use memfs_custody::{AzureKeyVault, GcpKms, Unlock};
use serde_json::{Value, json};

/// The token the stubs accept.
const TOKEN: &str = "stub-token-5f0c2b7e9d";
/// A token they refuse.
const WRONG_TOKEN: &str = "wrong-token-1a2b3c4d5e";
const STORE: [u8; 16] = [7; 16];
const OTHER_STORE: [u8; 16] = [8; 16];

/// Serves `router` on a free loopback port, for as long as the test's runtime runs.
async fn serve(router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(axum::serve(listener, router).into_future());
    addr
}

/// Whether the request carries the stub's bearer token.
fn authorized(headers: &HeaderMap) -> bool {
    headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) == Some(&format!("Bearer {TOKEN}"))
}

/// The error of `result`, checked to hold no token.
fn refused<T>(result: Result<T, CustodyError>) -> String {
    let Err(CustodyError(message)) = result else { panic!("expected an error") };
    assert!(!message.contains(TOKEN) && !message.contains(WRONG_TOKEN), "a token in {message:?}");
    message
}

/// `future`, or a failed test if it takes longer than the custodians' own bounds allow.
async fn bounded<F: IntoFuture>(future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(40), future).await.expect("a custodian call hung")
}

#[tokio::test]
async fn unlock_opens_cloud_slots() {
    let unlock = Unlock::default();
    assert!(unlock.opens(SlotKind::GcpKms) && unlock.opens(SlotKind::AzureKeyVault) && unlock.opens(SlotKind::AwsKms));
    assert!(!unlock.opens(SlotKind::Passphrase));
    // A name from a store is checked before anything is sent.
    let custody = Custody { key: "alias/memfs".into(), region: None, wrapped: vec![1] };
    assert_eq!(
        refused(unlock.open(SlotKind::GcpKms, &custody, &STORE).await),
        "not a Google Cloud KMS key name (projects/P/locations/L/keyRings/R/cryptoKeys/K): \"alias/memfs\""
    );
    assert_eq!(
        refused(unlock.open(SlotKind::AzureKeyVault, &custody, &STORE).await),
        "not an Azure Key Vault key URL: \"alias/memfs\": expected https://NAME.vault.azure.net/keys/KEY or \
         https://NAME.vault.azure.net/keys/KEY/VERSION"
    );
    // An AWS slot's region becomes part of a host name, and its key must be a key's name.
    let custody = Custody { key: "alias/memfs".into(), region: Some("x.evil.example".into()), wrapped: vec![1] };
    assert_eq!(
        refused(unlock.open(SlotKind::AwsKms, &custody, &STORE).await),
        "names the AWS region \"x.evil.example\": not a region's name (as eu-west-1); nothing was sent"
    );
    let custody = Custody { key: "alias/../memfs".into(), region: Some("eu-west-1".into()), wrapped: vec![1] };
    assert_eq!(
        refused(unlock.open(SlotKind::AwsKms, &custody, &STORE).await),
        "names the AWS KMS key \"alias/../memfs\": not a key id, key ARN, alias name or alias ARN; nothing was sent"
    );
}

/// `Unlock`, as memfs uses it, reads the Cloud KMS endpoint and both access tokens from the
/// environment: this test seals a slot on each stub, then runs itself again in a child process
/// with those variables set (no test changes its own process's environment, which other tests
/// share), where it opens both slots through `Unlock` and checks the KEKs.
#[tokio::test]
async fn unlock_reads_endpoint_and_tokens_from_the_environment() {
    let var = |name: &str| std::env::var(name).ok();
    if let Some(wrapped) = var("MEMFS_TEST_GCP_WRAPPED") {
        // The child: open both slots with what the environment gives.
        let unhex = |text: String| {
            (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect::<Vec<u8>>()
        };
        let unlock = Unlock::default();
        let custody = Custody { key: gcp_kms::KEY.into(), region: None, wrapped: unhex(wrapped) };
        let kek = bounded(unlock.open(SlotKind::GcpKms, &custody, &STORE)).await.unwrap();
        assert_eq!(kek.to_vec(), unhex(var("MEMFS_TEST_GCP_KEK").unwrap()));
        let custody = Custody {
            key: var("MEMFS_TEST_AZURE_KEY").unwrap(),
            region: None,
            wrapped: unhex(var("MEMFS_TEST_AZURE_WRAPPED").unwrap()),
        };
        let kek = bounded(unlock.open(SlotKind::AzureKeyVault, &custody, &STORE)).await.unwrap();
        assert_eq!(kek.to_vec(), unhex(var("MEMFS_TEST_AZURE_KEK").unwrap()));
        return;
    }
    let gcp = gcp_kms::stub().await;
    let kms = GcpKms::new(gcp_kms::KEY).unwrap().with_endpoint(&gcp).unwrap().with_token(TOKEN);
    let gcp_sealed = bounded(kms.seal(&STORE)).await.unwrap();
    let azure = azure_key_vault::stub().await;
    let vault = AzureKeyVault::new(&format!("{azure}/keys/kek")).unwrap().with_token(TOKEN);
    let azure_sealed = bounded(vault.seal(&STORE)).await.unwrap();
    let hex = |bytes: &[u8]| bytes.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", "unlock_reads_endpoint_and_tokens_from_the_environment", "--nocapture", "--test-threads=1"])
        .env("MEMFS_GCP_KMS_ENDPOINT", &gcp)
        .env("GOOGLE_OAUTH_ACCESS_TOKEN", TOKEN)
        .env("AZURE_ACCESS_TOKEN", TOKEN)
        .env("MEMFS_AZURE_KEY_VAULT_ENDPOINT", &azure)
        .env("MEMFS_TEST_GCP_WRAPPED", hex(&gcp_sealed.custody.wrapped))
        .env("MEMFS_TEST_GCP_KEK", hex(&gcp_sealed.kek[..]))
        .env("MEMFS_TEST_AZURE_KEY", &azure_sealed.custody.key)
        .env("MEMFS_TEST_AZURE_WRAPPED", hex(&azure_sealed.custody.wrapped))
        .env("MEMFS_TEST_AZURE_KEK", hex(&azure_sealed.kek[..]));
    let output = tokio::task::spawn_blocking(move || child.output().unwrap()).await.unwrap();
    let said = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && said.contains("1 passed"), "{said}");
}

mod gcp_kms {
    use super::*;

    pub(super) const KEY: &str = "projects/memfs-test/locations/global/keyRings/memfs/cryptoKeys/kek";
    const DISABLED: &str = "projects/memfs-test/locations/global/keyRings/memfs/cryptoKeys/disabled";
    const UNKNOWN: &str = "projects/memfs-test/locations/global/keyRings/memfs/cryptoKeys/unknown";
    /// A key behind a proxy that answers with its own page.
    const PROXIED: &str = "projects/memfs-test/locations/global/keyRings/memfs/cryptoKeys/proxied";

    /// Cloud KMS as far as memfs uses it: `encrypt` and `decrypt` on CryptoKey `KEY`, with
    /// additional authenticated data checked on decrypt.
    #[derive(Default)]
    struct Kms {
        /// Each ciphertext given out, with what it stands for.
        issued: Mutex<HashMap<Vec<u8>, Issued>>,
        serial: AtomicU64,
    }

    /// A plaintext and the additional authenticated data it was encrypted with.
    struct Issued {
        plaintext: Vec<u8>,
        aad: Vec<u8>,
    }

    /// Google's error body (https://cloud.google.com/apis/design/errors#http_mapping).
    fn error(status: StatusCode, name: &str, message: &str) -> Response {
        let body = json!({"error": {"code": status.as_u16(), "message": message, "status": name}});
        (status, Json(body)).into_response()
    }

    fn bytes_of(request: &Value, field: &str) -> Option<Vec<u8>> {
        match request.get(field) {
            None => Some(Vec::new()),
            Some(Value::String(text)) => base64::engine::general_purpose::STANDARD.decode(text).ok(),
            Some(_) => None,
        }
    }

    async fn handle(
        State(kms): State<Arc<Kms>>,
        Path(name): Path<String>,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        if !authorized(&headers) {
            return error(
                StatusCode::UNAUTHORIZED,
                "UNAUTHENTICATED",
                "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or \
                 other valid authentication credential.",
            );
        }
        let Some((key, verb)) = name.rsplit_once(':') else {
            return error(StatusCode::NOT_FOUND, "NOT_FOUND", "no such method");
        };
        let permission = if verb == "encrypt" { "useToEncrypt" } else { "useToDecrypt" };
        match key {
            KEY => {}
            DISABLED => {
                let message = format!("{key}/cryptoKeyVersions/1 is not enabled, current state is: DISABLED.");
                return error(StatusCode::BAD_REQUEST, "FAILED_PRECONDITION", &message);
            }
            PROXIED => return (StatusCode::BAD_GATEWAY, "<html><body>502 Bad Gateway</body></html>").into_response(),
            // Cloud KMS answers 403 for a key the caller may not use or that does not exist.
            _ => {
                let message = format!(
                    "Permission 'cloudkms.cryptoKeyVersions.{permission}' denied on resource '{key}' (or it may not exist)."
                );
                return error(StatusCode::FORBIDDEN, "PERMISSION_DENIED", &message);
            }
        }
        let Ok(request) = serde_json::from_slice::<Value>(&body) else {
            return error(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "Invalid JSON payload received.");
        };
        let Some(aad) = bytes_of(&request, "additionalAuthenticatedData") else {
            return error(
                StatusCode::BAD_REQUEST,
                "INVALID_ARGUMENT",
                "Invalid value at 'additional_authenticated_data'",
            );
        };
        let b64 = base64::engine::general_purpose::STANDARD;
        match verb {
            "encrypt" => {
                let Some(plaintext) = bytes_of(&request, "plaintext").filter(|p| !p.is_empty()) else {
                    return error(StatusCode::BAD_REQUEST, "INVALID_ARGUMENT", "Invalid value at 'plaintext'");
                };
                // Not encryption: bytes unlike the plaintext, remembered with what they stand for.
                let serial = kms.serial.fetch_add(1, Ordering::Relaxed);
                let mut ciphertext = serial.to_be_bytes().to_vec();
                ciphertext.extend(plaintext.iter().map(|b| b ^ 0x5a));
                kms.issued.lock().unwrap().insert(ciphertext.clone(), Issued { plaintext, aad });
                let body = json!({
                    "name": format!("{KEY}/cryptoKeyVersions/1"),
                    "ciphertext": b64.encode(&ciphertext),
                    "protectionLevel": "SOFTWARE",
                });
                Json(body).into_response()
            }
            "decrypt" => {
                let ciphertext = bytes_of(&request, "ciphertext").unwrap_or_default();
                let issued = kms.issued.lock().unwrap();
                match issued.get(&ciphertext) {
                    Some(issued) if issued.aad == aad => {
                        Json(json!({"plaintext": b64.encode(&issued.plaintext), "usedPrimary": true})).into_response()
                    }
                    _ => error(
                        StatusCode::BAD_REQUEST,
                        "INVALID_ARGUMENT",
                        "Decryption failed: verify that 'name' refers to the correct CryptoKey.",
                    ),
                }
            }
            _ => error(StatusCode::NOT_FOUND, "NOT_FOUND", "no such method"),
        }
    }

    /// A stub Cloud KMS: its endpoint.
    pub(super) async fn stub() -> String {
        let router = Router::new().route("/v1/{*name}", post(handle)).with_state(Arc::new(Kms::default()));
        format!("http://{}", serve(router).await)
    }

    fn kms(endpoint: &str, key: &str) -> GcpKms {
        GcpKms::new(key).unwrap().with_endpoint(endpoint).unwrap().with_token(TOKEN)
    }

    #[tokio::test]
    async fn a_key_is_sealed_and_opened_for_its_store_only() {
        let endpoint = stub().await;
        let kms = kms(&endpoint, KEY);
        let sealed = bounded(kms.seal(&STORE)).await.unwrap();
        assert_eq!(sealed.kind, SlotKind::GcpKms);
        // The CryptoKey, not the version encrypt answered with: decrypt takes a CryptoKey.
        assert_eq!(sealed.custody.key, KEY);
        assert_eq!(sealed.custody.region, None);
        assert_eq!(sealed.custody.wrapped.len(), 8 + 32);
        assert!(!sealed.custody.wrapped.windows(32).any(|w| w == &sealed.kek[..]));

        let opened = bounded(kms.open(SlotKind::GcpKms, &sealed.custody, &STORE)).await.unwrap();
        assert_eq!(*opened, *sealed.kek);
        let again = bounded(kms.seal(&STORE)).await.unwrap();
        assert_ne!(*again.kek, *sealed.kek);

        // Another store's additional authenticated data: Cloud KMS refuses.
        assert_eq!(
            refused(bounded(kms.open(SlotKind::GcpKms, &sealed.custody, &OTHER_STORE)).await),
            format!(
                "Google Cloud KMS key {KEY}: decrypt failed: INVALID_ARGUMENT: Decryption failed: verify that 'name' \
                 refers to the correct CryptoKey. (the slot's ciphertext is not this store's, or was changed)"
            )
        );
        // A changed ciphertext too.
        let mut changed = sealed.custody.clone();
        changed.wrapped[9] ^= 1;
        assert!(
            refused(bounded(kms.open(SlotKind::GcpKms, &changed, &STORE)).await)
                .ends_with("(the slot's ciphertext is not this store's, or was changed)")
        );
    }

    #[tokio::test]
    async fn refusals_in_words() {
        let endpoint = stub().await;
        assert_eq!(
            refused(bounded(kms(&endpoint, UNKNOWN).seal(&STORE)).await),
            format!(
                "Google Cloud KMS key {UNKNOWN}: encrypt failed: PERMISSION_DENIED: Permission \
                 'cloudkms.cryptoKeyVersions.useToEncrypt' denied on resource '{UNKNOWN}' (or it may not exist). (IAM \
                 must grant cloudkms.cryptoKeyVersions.useToEncrypt on this key, as roles/cloudkms.cryptoKeyEncrypter \
                 does; or the key does not exist)"
            )
        );
        let custody = Custody { key: UNKNOWN.into(), region: None, wrapped: vec![1, 2, 3] };
        assert_eq!(
            refused(bounded(kms(&endpoint, KEY).open(SlotKind::GcpKms, &custody, &STORE)).await),
            format!(
                "Google Cloud KMS key {UNKNOWN}: decrypt failed: PERMISSION_DENIED: Permission \
                 'cloudkms.cryptoKeyVersions.useToDecrypt' denied on resource '{UNKNOWN}' (or it may not exist). (IAM \
                 must grant cloudkms.cryptoKeyVersions.useToDecrypt on this key, as roles/cloudkms.cryptoKeyDecrypter \
                 does; or the key does not exist)"
            )
        );
        assert_eq!(
            refused(bounded(kms(&endpoint, DISABLED).seal(&STORE)).await),
            format!(
                "Google Cloud KMS key {DISABLED}: encrypt failed: FAILED_PRECONDITION: {DISABLED}/cryptoKeyVersions/1 \
                 is not enabled, current state is: DISABLED. (the key version is disabled or destroyed)"
            )
        );
        assert_eq!(
            refused(bounded(kms(&endpoint, PROXIED).seal(&STORE)).await),
            format!("Google Cloud KMS key {PROXIED}: encrypt failed: HTTP 502 Bad Gateway")
        );
        let wrong = GcpKms::new(KEY).unwrap().with_endpoint(&endpoint).unwrap().with_token(WRONG_TOKEN);
        assert_eq!(
            refused(bounded(wrong.seal(&STORE)).await),
            format!(
                "Google Cloud KMS key {KEY}: encrypt failed: UNAUTHENTICATED: Request had invalid authentication \
                 credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. \
                 (the access token was refused: expired, revoked, or not for Google Cloud)"
            )
        );
    }

    #[tokio::test]
    async fn an_unreachable_endpoint_fails_at_once() {
        let kms = kms("http://127.0.0.1:1", KEY);
        let start = Instant::now();
        let message = refused(bounded(kms.seal(&STORE)).await);
        let prefix = format!("Google Cloud KMS key {KEY}: encrypt failed: could not reach http://127.0.0.1:1: ");
        assert!(message.starts_with(&prefix), "{message}");
        assert!(message.to_lowercase().contains("connection refused"), "{message}");
        let custody = Custody { key: KEY.into(), region: None, wrapped: vec![1, 2, 3] };
        let message = refused(bounded(kms.open(SlotKind::GcpKms, &custody, &STORE)).await);
        assert!(message.starts_with(&prefix.replace("encrypt", "decrypt")), "{message}");
        assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    }

    #[test]
    fn endpoints_off_loopback_are_https() {
        assert_eq!(
            GcpKms::new(KEY).unwrap().with_endpoint("http://kms.example.com").unwrap_err().0,
            "Cloud KMS endpoint \"http://kms.example.com\" is refused: http:// is allowed only for 127.0.0.1, [::1] \
             and localhost; use https://"
        );
        assert!(GcpKms::new(KEY).unwrap().with_endpoint("https://kms.example.com").is_ok());
    }

    #[test]
    fn debug_shows_no_token() {
        let kms = kms("http://127.0.0.1:1", KEY);
        let shown = format!("{kms:?}");
        assert!(!shown.contains(TOKEN), "{shown}");
        assert_eq!(shown, format!("GcpKms {{ key: {KEY:?}, endpoint: Some(\"http://127.0.0.1:1\"), .. }}"));
    }
}

mod azure_key_vault {
    use super::*;

    /// The current version of key `kek` (Key Vault's versions are 32 hex digits).
    const VERSION: &str = "0123456789abcdef0123456789abcdef";
    /// Keys: `kek` works, `disabled` is disabled, `liar` answers with another key's `kid`;
    /// any other is one the identity may not use.
    const WRAPPED_PAD: u8 = 0xa5;

    /// Key Vault as far as memfs uses it.
    struct Vault {
        addr: SocketAddr,
        /// Each wrapped value given out (RSA-OAEP would refuse any other).
        issued: Mutex<HashSet<Vec<u8>>>,
    }

    /// Key Vault's error body.
    fn error(status: StatusCode, code: &str, message: &str, inner: Option<&str>) -> Response {
        let mut error = json!({"code": code, "message": message});
        if let Some(inner) = inner {
            error["innererror"] = json!({"code": inner});
        }
        (status, Json(json!({"error": error}))).into_response()
    }

    async fn with_version(
        State(vault): State<Arc<Vault>>,
        Path((name, version, op)): Path<(String, String, String)>,
        query: RawQuery,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        handle(&vault, &name, Some(&version), &op, query, &headers, &body)
    }

    async fn without_version(
        State(vault): State<Arc<Vault>>,
        Path((name, op)): Path<(String, String)>,
        query: RawQuery,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        handle(&vault, &name, None, &op, query, &headers, &body)
    }

    fn handle(
        vault: &Vault,
        name: &str,
        version: Option<&str>,
        op: &str,
        RawQuery(query): RawQuery,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Response {
        if !authorized(headers) {
            return error(StatusCode::UNAUTHORIZED, "Unauthorized", "AKV10032: Invalid issuer.", None);
        }
        if query.as_deref() != Some("api-version=7.4") {
            return error(StatusCode::BAD_REQUEST, "BadParameter", "The specified version is not recognized.", None);
        }
        let operation = match op {
            "wrapkey" => "wrapKey",
            "unwrapkey" => "unwrapKey",
            _ => return error(StatusCode::NOT_FOUND, "NotFound", "no such operation", None),
        };
        let kid = match (name, version) {
            ("kek" | "disabled", None | Some(VERSION)) => format!("http://{}/keys/{name}/{VERSION}", vault.addr),
            ("liar", _) => format!("http://{}/keys/kek/{VERSION}", vault.addr),
            ("kek" | "disabled", Some(version)) => {
                let message = format!(
                    "A key with (name/id) {name}/{version} was not found in this key vault. If you recently deleted \
                     this key you may be able to recover it using the correct recovery command."
                );
                return error(StatusCode::NOT_FOUND, "KeyNotFound", &message, None);
            }
            _ => {
                let message = format!(
                    "The user, group or application 'appid=stub;oid=stub' does not have keys {operation} permission \
                     on key vault 'stub;location=local'."
                );
                return error(StatusCode::FORBIDDEN, "Forbidden", &message, Some("ForbiddenByPolicy"));
            }
        };
        if name == "disabled" {
            let message = format!("Operation {operation} is not allowed on a disabled key.");
            return error(StatusCode::FORBIDDEN, "Forbidden", &message, Some("KeyDisabled"));
        }
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let Ok(request) = serde_json::from_slice::<Value>(body) else {
            return error(StatusCode::BAD_REQUEST, "BadParameter", "Invalid JSON", None);
        };
        if request["alg"] != "RSA-OAEP-256" {
            return error(StatusCode::BAD_REQUEST, "BadParameter", "Invalid algorithm", None);
        }
        let Some(value) = request["value"].as_str().and_then(|v| b64.decode(v).ok()) else {
            return error(StatusCode::BAD_REQUEST, "BadParameter", "Invalid value", None);
        };
        // Not RSA: the bytes change, and only values given out unwrap.
        let flipped: Vec<u8> = value.iter().map(|b| b ^ WRAPPED_PAD).collect();
        if operation == "wrapKey" {
            vault.issued.lock().unwrap().insert(flipped.clone());
        } else if !vault.issued.lock().unwrap().contains(&value) {
            return error(StatusCode::BAD_REQUEST, "BadParameter", "Bad Request", None);
        }
        Json(json!({"kid": kid, "value": b64.encode(&flipped)})).into_response()
    }

    /// A stub Key Vault: its origin.
    pub(super) async fn stub() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let vault = Arc::new(Vault { addr, issued: Mutex::default() });
        let router = Router::new()
            .route("/keys/{name}/{version}/{op}", post(with_version))
            .route("/keys/{name}/{op}", post(without_version))
            .with_state(vault);
        tokio::spawn(axum::serve(listener, router).into_future());
        format!("http://{addr}")
    }

    fn vault(key: &str) -> AzureKeyVault {
        AzureKeyVault::new(key).unwrap().with_token(TOKEN)
    }

    #[tokio::test]
    async fn a_key_is_wrapped_and_unwrapped_by_the_version_that_wrapped() {
        let origin = stub().await;
        let vault = vault(&format!("{origin}/keys/kek"));
        let sealed = bounded(vault.seal(&STORE)).await.unwrap();
        assert_eq!(sealed.kind, SlotKind::AzureKeyVault);
        assert_eq!(sealed.custody.key, format!("{origin}/keys/kek/{VERSION}"));
        assert_eq!(sealed.custody.wrapped.len(), 32);
        assert_ne!(sealed.custody.wrapped, sealed.kek.to_vec());
        // No associated data: the store binding is the slot's (see the module doc).
        for store in [STORE, OTHER_STORE] {
            let opened = bounded(vault.open(SlotKind::AzureKeyVault, &sealed.custody, &store)).await.unwrap();
            assert_eq!(*opened, *sealed.kek);
        }
        let pinned = self::vault(&format!("{origin}/keys/kek/{VERSION}"));
        let sealed = bounded(pinned.seal(&STORE)).await.unwrap();
        assert_eq!(sealed.custody.key, format!("{origin}/keys/kek/{VERSION}"));

        let mut changed = sealed.custody.clone();
        changed.wrapped[0] ^= 1;
        assert_eq!(
            refused(bounded(vault.open(SlotKind::AzureKeyVault, &changed, &STORE)).await),
            format!(
                "Azure Key Vault key {origin}/keys/kek/{VERSION}: unwrapKey failed: BadParameter: Bad Request (the \
                 slot's wrapped key is not this key's, or was changed)"
            )
        );
    }

    #[tokio::test]
    async fn refusals_in_words() {
        let origin = stub().await;
        let permission = " (the identity lacks the wrapKey permission on this key: grant it by an access policy or a \
                          role such as Key Vault Crypto Service Encryption User)";
        assert_eq!(
            refused(bounded(vault(&format!("{origin}/keys/unknown")).seal(&STORE)).await),
            format!(
                "Azure Key Vault key {origin}/keys/unknown: wrapKey failed: Forbidden: The user, group or application \
                 'appid=stub;oid=stub' does not have keys wrapKey permission on key vault 'stub;location=local'.{permission}"
            )
        );
        assert_eq!(
            refused(bounded(vault(&format!("{origin}/keys/disabled")).seal(&STORE)).await),
            format!(
                "Azure Key Vault key {origin}/keys/disabled: wrapKey failed: Forbidden: Operation wrapKey is not \
                 allowed on a disabled key. (the key is disabled)"
            )
        );
        let disabled = Custody { key: format!("{origin}/keys/disabled/{VERSION}"), region: None, wrapped: vec![1; 32] };
        assert_eq!(
            refused(bounded(vault(&origin_key(&origin)).open(SlotKind::AzureKeyVault, &disabled, &STORE)).await),
            format!(
                "Azure Key Vault key {origin}/keys/disabled/{VERSION}: unwrapKey failed: Forbidden: Operation unwrapKey \
                 is not allowed on a disabled key. (the key is disabled)"
            )
        );
        let gone = Custody { key: format!("{origin}/keys/kek/ffff"), region: None, wrapped: vec![1; 32] };
        assert_eq!(
            refused(bounded(vault(&origin_key(&origin)).open(SlotKind::AzureKeyVault, &gone, &STORE)).await),
            format!(
                "Azure Key Vault key {origin}/keys/kek/ffff: unwrapKey failed: KeyNotFound: A key with (name/id) \
                 kek/ffff was not found in this key vault. If you recently deleted this key you may be able to recover \
                 it using the correct recovery command. (no such key or key version in this vault)"
            )
        );
        assert_eq!(
            refused(bounded(vault(&format!("{origin}/keys/liar")).seal(&STORE)).await),
            format!("Azure Key Vault key {origin}/keys/liar: wrapKey answered for another key than the one asked")
        );
        let wrong = AzureKeyVault::new(&origin_key(&origin)).unwrap().with_token(WRONG_TOKEN);
        assert_eq!(
            refused(bounded(wrong.seal(&STORE)).await),
            format!(
                "Azure Key Vault key {origin}/keys/kek: wrapKey failed: Unauthorized: AKV10032: Invalid issuer. (the \
                 access token was refused: expired, or for another resource than this vault)"
            )
        );
    }

    fn origin_key(origin: &str) -> String {
        format!("{origin}/keys/kek")
    }

    #[tokio::test]
    async fn an_unreachable_vault_fails_at_once() {
        let vault = vault("http://127.0.0.1:1/keys/kek");
        let start = Instant::now();
        let message = refused(bounded(vault.seal(&STORE)).await);
        let prefix =
            "Azure Key Vault key http://127.0.0.1:1/keys/kek: wrapKey failed: could not reach http://127.0.0.1:1: ";
        assert!(message.starts_with(prefix), "{message}");
        assert!(message.to_lowercase().contains("connection refused"), "{message}");
        let custody =
            Custody { key: format!("http://127.0.0.1:1/keys/kek/{VERSION}"), region: None, wrapped: vec![1; 32] };
        let message = refused(bounded(vault.open(SlotKind::AzureKeyVault, &custody, &STORE)).await);
        let prefix =
            format!("Azure Key Vault key {}: unwrapKey failed: could not reach http://127.0.0.1:1: ", custody.key);
        assert!(message.starts_with(&prefix), "{message}");
        assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    }

    /// A key URL comes from the store: one on a host that is neither Azure's nor given here
    /// (`MEMFS_AZURE_KEY_VAULT_ENDPOINT`, or the key a custodian was made with) is refused
    /// before a token is read, by `Unlock` and by a custodian made for another vault.
    #[tokio::test]
    async fn a_key_on_a_host_not_given_is_refused() {
        if std::env::var_os("MEMFS_AZURE_KEY_VAULT_ENDPOINT").is_some() {
            return; // the environment gives an endpoint: the rule cannot be seen
        }
        let custody =
            Custody { key: format!("http://127.0.0.1:1/keys/kek/{VERSION}"), region: None, wrapped: vec![1; 32] };
        let words = "names the endpoint http://127.0.0.1:1: not an official Azure Key Vault host \
                     (https://NAME.vault.azure.net, https://NAME.managedhsm.azure.net) nor one given by \
                     MEMFS_AZURE_KEY_VAULT_ENDPOINT; nothing was sent";
        assert_eq!(refused(bounded(Unlock::default().open(SlotKind::AzureKeyVault, &custody, &STORE)).await), words);
        let other = vault("http://127.0.0.1:2/keys/kek");
        assert_eq!(refused(bounded(other.open(SlotKind::AzureKeyVault, &custody, &STORE)).await), words);
    }

    #[test]
    fn debug_shows_no_token() {
        let shown = format!("{:?}", vault("http://127.0.0.1:1/keys/kek"));
        assert_eq!(shown, "AzureKeyVault { key: \"http://127.0.0.1:1/keys/kek\", .. }");
    }
}
