//! The page, its script and its style sheet, compiled into the binary: the viewer fetches
//! nothing from anywhere else.
//!
//! A debug build reads them from the folder named by `MEMFS_UI_DEV_ASSETS` instead, when it is
//! set, so that the page can be worked on without a rebuild; a release build has no such
//! switch.

use axum::http::header;
use axum::response::{IntoResponse, Response};

const PAGE: &str = include_str!("assets/index.html");
const SCRIPT: &str = include_str!("assets/app.js");
const STYLE: &str = include_str!("assets/app.css");

pub(super) async fn page() -> Response {
    asset("index.html", PAGE, "text/html; charset=utf-8")
}

pub(super) async fn script() -> Response {
    asset("app.js", SCRIPT, "text/javascript; charset=utf-8")
}

pub(super) async fn style() -> Response {
    asset("app.css", STYLE, "text/css; charset=utf-8")
}

fn asset(name: &str, compiled: &'static str, content_type: &'static str) -> Response {
    ([(header::CONTENT_TYPE, content_type)], dev_asset(name).unwrap_or_else(|| compiled.to_owned())).into_response()
}

#[cfg(debug_assertions)]
fn dev_asset(name: &str) -> Option<String> {
    let dir = std::env::var_os("MEMFS_UI_DEV_ASSETS")?;
    std::fs::read_to_string(std::path::Path::new(&dir).join(name)).ok()
}

#[cfg(not(debug_assertions))]
fn dev_asset(_: &str) -> Option<String> {
    None
}
