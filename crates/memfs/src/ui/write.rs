//! The writing routes. Each change is a commit by the session's actor, through the same code
//! as the command line: the tool's commands for create, rename and delete (so the store's
//! policy and the sensitive-data filter apply, and their answers are the tool's), an edit
//! that writes only over the version the person started from ([`Memfs::edit`]), restore,
//! undo, purge (a dry run first; a real one only with the path typed again) and check.

use std::future::Future;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Ui;
use super::read::{LastCheck, change};
use super::reply::{Refusal, Reply, Sent, body, failed, refuse};
use crate::edit::Edited;
use crate::engine::Memfs;
use crate::history::CheckOptions;
use crate::{Command, PurgeOptions};
use memfs_core::ToolResult;

#[derive(Deserialize)]
pub(super) struct Create {
    path: String,
    text: String,
}

#[derive(Deserialize)]
pub(super) struct Edit {
    path: String,
    base: String,
    text: String,
}

#[derive(Deserialize)]
pub(super) struct Rename {
    from: String,
    to: String,
}

#[derive(Deserialize)]
pub(super) struct Delete {
    path: String,
}

#[derive(Deserialize)]
pub(super) struct Restore {
    at: String,
    path: Option<String>,
    #[serde(default)]
    dry_run: bool,
}

#[derive(Deserialize)]
pub(super) struct Undo {
    #[serde(default)]
    dry_run: bool,
}

#[derive(Deserialize)]
pub(super) struct Purge {
    path: String,
    #[serde(default)]
    all_copies: bool,
    #[serde(default)]
    dry_run: bool,
    confirm: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct Check {
    #[serde(default)]
    read_data: bool,
}

pub(super) async fn create(State(ui): State<Arc<Ui>>, c: Sent<Create>) -> Reply {
    let c = body(c)?;
    tool(&ui, Command::Create { path: c.path, file_text: c.text }).await
}

pub(super) async fn rename(State(ui): State<Arc<Ui>>, r: Sent<Rename>) -> Reply {
    let r = body(r)?;
    tool(&ui, Command::Rename { old_path: r.from, new_path: r.to }).await
}

pub(super) async fn delete(State(ui): State<Arc<Ui>>, d: Sent<Delete>) -> Reply {
    let d = body(d)?;
    tool(&ui, Command::Delete { path: d.path }).await
}

/// A tool command, answered with the tool's own words.
async fn tool(ui: &Ui, command: Command) -> Reply {
    let result = ui.memfs.execute(&command).await.map_err(|e| failed(&e))?;
    Ok(Json(answer(&result)))
}

fn answer(result: &ToolResult) -> Value {
    json!({"ok": !result.is_error, "message": result.content})
}

pub(super) async fn edit(State(ui): State<Arc<Ui>>, e: Sent<Edit>) -> Reply {
    let e = body(e)?;
    match ui.memfs.edit(&e.path, &e.base, &e.text).await.map_err(|e| failed(&e))? {
        Edited::Answered { result, version } => {
            let mut value = answer(&result);
            value["version"] = Value::String(version);
            Ok(Json(value))
        }
        Edited::Unchanged { version } => Ok(Json(
            json!({"ok": true, "unchanged": true, "message": "nothing to save: the file already holds this text", "version": version}),
        )),
        Edited::Changed { now } => {
            let (error, current, version) = match now {
                Some(f) => ("the file changed since you opened it", Some(f.text), Some(f.version)),
                None => ("the file was deleted or moved since you opened it", None, None),
            };
            Err(Refusal::with(StatusCode::CONFLICT, json!({"error": error, "current": current, "version": version})))
        }
    }
}

pub(super) async fn restore(State(ui): State<Arc<Ui>>, r: Sent<Restore>) -> Reply {
    let r = body(r)?;
    let restored = ui.memfs.restore(&r.at, r.path.as_deref(), r.dry_run).await.map_err(|e| failed(&e))?;
    Ok(Json(json!({
        "generation": restored.generation,
        "from": restored.source.generation,
        "path": restored.path,
        "changes": restored.changes.iter().map(change).collect::<Vec<_>>(),
    })))
}

pub(super) async fn undo(State(ui): State<Arc<Ui>>, u: Sent<Undo>) -> Reply {
    let u = body(u)?;
    let undone = ui.memfs.undo(u.dry_run).await.map_err(|e| failed(&e))?;
    Ok(Json(json!({
        "generation": undone.generation,
        "undone": undone.undone.generation,
        "changes": undone.changes.iter().map(change).collect::<Vec<_>>(),
    })))
}

pub(super) async fn purge(State(ui): State<Arc<Ui>>, p: Sent<Purge>) -> Reply {
    let p = body(p)?;
    // As on the command line: a purge cannot be undone, so a real one needs the path typed
    // again (the page shows the dry run's report first).
    if !p.dry_run && p.confirm.as_deref() != Some(p.path.as_str()) {
        return Err(refuse(StatusCode::BAD_REQUEST, "a purge cannot be undone: confirm it by typing the path again"));
    }
    let options = PurgeOptions { all_copies: p.all_copies, dry_run: p.dry_run };
    let path = p.path.clone();
    let report = apart(&ui, move |memfs| async move { memfs.purge(&path, options, &()).await })
        .await?
        .map_err(|e| failed(&e))?;
    Ok(Json(json!({
        "path": report.path,
        "dry_run": report.dry_run,
        "generation": report.generation,
        "removed": report.removed,
        "live_copies": report.live_copies,
        "history_copies": report.history_copies,
        "versions": report.versions,
        "commits": report.commits,
        "rewritten": report.rewritten,
        "deleted": report.deleted,
        "remaining": report.remaining,
    })))
}

pub(super) async fn check(State(ui): State<Arc<Ui>>, c: Sent<Check>) -> Reply {
    let c = body(c)?;
    let options = CheckOptions { read_data: c.read_data };
    let report =
        apart(&ui, move |memfs| async move { memfs.check(options, &()).await }).await?.map_err(|e| failed(&e))?;
    let ok = report.problems.is_empty();
    let summary = format!(
        "{} commits (@{}..@{}), {} directories, {} file contents ({} bytes{}): {}",
        report.commits,
        report.oldest,
        report.newest,
        report.dirs,
        report.files,
        report.file_bytes,
        if report.read_data { ", read and verified" } else { ", sizes checked" },
        if ok { "no problems".to_owned() } else { format!("{} problems", report.problems.len()) }
    );
    let problems: Vec<String> = report
        .problems
        .iter()
        .map(|p| format!("{} ({}): {}", p.object, p.context, crate::error_chain(&p.error)))
        .collect();
    let time_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    *ui.last_check.lock().expect("last check") = Some(LastCheck { time_ms, ok, summary: summary.clone() });
    Ok(Json(json!({"ok": ok, "summary": summary, "problems": problems})))
}

/// Runs `work` on a blocking thread of this runtime: purge's and check's futures are not
/// provably `Send` (the binary runs them in its own task), and a route's must be.
async fn apart<T, F>(ui: &Ui, work: impl FnOnce(Arc<Memfs>) -> F + Send + 'static) -> Result<T, Refusal>
where
    F: Future<Output = T>,
    T: Send + 'static,
{
    let (memfs, runtime) = (ui.memfs.clone(), tokio::runtime::Handle::current());
    tokio::task::spawn_blocking(move || runtime.block_on(work(memfs)))
        .await
        .map_err(|_| refuse(StatusCode::INTERNAL_SERVER_ERROR, "the operation stopped unexpectedly"))
}
