//! A bucket on the S3 emulator (moto, under `scripts/emulators.sh`) with versioning on: every
//! version of every object ever written stays, as an attacker who keeps a versioned bucket or
//! its backups holds them. Spoken to in plain HTTP/1.1 (path-style, with a signature moto does not
//! check), since object_store reads only the newest version of an object.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;

/// Who the requests are from: moto takes the account from the access key id and checks no
/// signature, but answers an anonymous read of an object 403.
const AUTHORIZATION: &str = "Authorization: AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00";

/// One version of one object: its key (path in the bucket) and version id.
pub(crate) type Version = (String, String);

/// A fresh bucket with versioning on.
pub(crate) struct VersionedBucket {
    /// `host:port` of the emulator.
    host: String,
    /// `http://host:port`, as `AWS_ENDPOINT`.
    endpoint: String,
    name: String,
}

impl VersionedBucket {
    /// A new bucket with versioning on; `None` where the emulator does not run (the test is
    /// then skipped, unless `MEMFS_TEST_CLOUD=required`).
    pub(crate) fn new() -> Option<VersionedBucket> {
        let Ok(endpoint) = std::env::var("MEMFS_TEST_S3_ENDPOINT") else {
            assert!(
                std::env::var("MEMFS_TEST_CLOUD").as_deref() != Ok("required"),
                "MEMFS_TEST_CLOUD=required but MEMFS_TEST_S3_ENDPOINT is not set"
            );
            eprintln!("skipping S3: MEMFS_TEST_S3_ENDPOINT is not set (scripts/emulators.sh sets it)");
            return None;
        };
        let host = endpoint.strip_prefix("http://").expect("the emulator speaks http://").trim_end_matches('/');
        let mut id = [0u8; 6];
        getrandom::fill(&mut id).unwrap();
        let name = format!("versioned-{}", id.iter().map(|b| format!("{b:02x}")).collect::<String>());
        let bucket = VersionedBucket { host: host.to_owned(), endpoint: endpoint.clone(), name };
        bucket.expect(200, "PUT", &format!("/{}", bucket.name), b"");
        let on = b"<VersioningConfiguration xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Status>Enabled</Status></VersioningConfiguration>";
        bucket.expect(200, "PUT", &format!("/{}?versioning", bucket.name), on);
        Some(bucket)
    }

    /// The store URL of `prefix` in this bucket.
    pub(crate) fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.name)
    }

    /// The environment a `memfs` process needs to reach the bucket.
    pub(crate) fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT", self.endpoint.clone()),
            ("AWS_ALLOW_HTTP", "true".to_owned()),
            ("AWS_REGION", "us-east-1".to_owned()),
            ("AWS_ACCESS_KEY_ID", "test".to_owned()),
            ("AWS_SECRET_ACCESS_KEY", "test-secret".to_owned()),
        ]
    }

    /// Every version of every object now in the bucket (delete markers aside).
    pub(crate) fn versions(&self) -> Vec<Version> {
        let listing = self.expect(200, "GET", &format!("/{}?versions&max-keys=1000", self.name), b"");
        let listing = String::from_utf8(listing).expect("an XML listing");
        assert!(!listing.contains("<IsTruncated>true</IsTruncated>"), "more than 1,000 versions: not expected here");
        listing.split("<Version>").skip(1).map(|v| (element(v, "Key"), element(v, "VersionId"))).collect()
    }

    /// Every version of every object, with its bytes, the path relative to `prefix`.
    pub(crate) fn history(&self, prefix: &str) -> BTreeMap<Version, Vec<u8>> {
        let strip = format!("{prefix}/");
        self.versions()
            .into_iter()
            .filter_map(|(key, version)| {
                let path = key.strip_prefix(&strip)?.to_owned();
                let bytes = self.expect(200, "GET", &format!("/{}/{key}?versionId={version}", self.name), b"");
                Some(((path, version), bytes))
            })
            .collect()
    }

    /// Sends one request and returns the body of an answer with `status`.
    #[track_caller]
    fn expect(&self, status: u16, method: &str, target: &str, body: &[u8]) -> Vec<u8> {
        let (got, answer) = self.request(method, target, body);
        assert_eq!(got, status, "{method} {target}: {}", String::from_utf8_lossy(&answer));
        answer
    }

    /// One HTTP/1.1 request on a connection of its own: the status and the body.
    fn request(&self, method: &str, target: &str, body: &[u8]) -> (u16, Vec<u8>) {
        let mut conn = TcpStream::connect(&self.host).expect("connect to the S3 emulator");
        let head = format!(
            "{method} {target} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n{AUTHORIZATION}\r\nConnection: close\r\n\r\n",
            self.host,
            body.len()
        );
        conn.write_all(head.as_bytes()).and_then(|()| conn.write_all(body)).expect("send a request");
        let mut answer = Vec::new();
        conn.read_to_end(&mut answer).expect("read the answer");
        let split = answer.windows(4).position(|w| w == b"\r\n\r\n").expect("an HTTP answer") + 4;
        let head = String::from_utf8_lossy(&answer[..split]).to_ascii_lowercase();
        let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).expect("a status");
        let body = answer.split_off(split);
        match head.contains("transfer-encoding: chunked") {
            true => (status, dechunk(&body)),
            false => (status, body),
        }
    }
}

/// The text of the first `<name>` element in `xml`.
fn element(xml: &str, name: &str) -> String {
    let open = format!("<{name}>");
    let start = xml.find(&open).unwrap_or_else(|| panic!("no <{name}> in {xml}")) + open.len();
    let end = start + xml[start..].find(&format!("</{name}>")).expect("a closing tag");
    xml[start..end].to_owned()
}

/// A chunked body's bytes.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line = body.windows(2).position(|w| w == b"\r\n").expect("a chunk size");
        let size = std::str::from_utf8(&body[..line]).ok().and_then(|s| usize::from_str_radix(s.trim(), 16).ok());
        let size = size.expect("a hex chunk size");
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[line + 2..line + 2 + size]);
        body = &body[line + 4 + size..];
    }
}
