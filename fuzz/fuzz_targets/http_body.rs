//! A `POST /v1/memory` body, with a valid token and content type, through `memfs serve`'s
//! router to a fresh `memory://` namespace: the answer is 200 or 400, always a JSON object.
#![no_main]

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use libfuzzer_sys::fuzz_target;
use memfs::OpenOptions;
use memfs::http::{Namespaces, Server, Tokens};
use tower::ServiceExt;

const TOKEN: &str = "fuzz-token-0123456789abcdef0123456789";

fuzz_target!(|data: &[u8]| {
    let tokens = Tokens::parse(&format!("fuzz {TOKEN}"), "fuzz").expect("a tokens line");
    let server = Arc::new(Server::new(tokens, Namespaces::new("memory://", OpenOptions::default())));
    let request = Request::post("/v1/memory")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(data.to_vec()))
        .expect("a request");
    memfs_fuzz::runtime().block_on(async {
        let response = server.router().oneshot(request).await.expect("the router answers");
        let status = response.status();
        assert!(status == StatusCode::OK || status == StatusCode::BAD_REQUEST, "{status}");
        let body = response.into_body().collect().await.expect("a body").to_bytes();
        let value: serde_json::Value = serde_json::from_slice(&body).expect("the answer is JSON");
        assert!(value.is_object(), "{value}");
    });
});
