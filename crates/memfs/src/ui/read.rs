//! The reading routes: session, tree, file, search, history, a past version, a diff, and the
//! store at a glance. None of them writes (a file read here records no last-access day: a
//! person looking is not the agent using it).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::Ui;
use super::reply::{Refusal, Reply, failed, refuse};
use crate::history::{CommitRecord, Shown};
use memfs_core::Change;

/// The query parameters of a request.
type Params = Query<HashMap<String, String>>;

/// The most commits the overview's charts count (the newest).
const STATS_COMMITS: usize = 10_000;

/// The most matching lines a search returns.
const SEARCH_LINES: usize = 200;

/// A `check` run from the page.
#[derive(Debug, Clone)]
pub(super) struct LastCheck {
    pub(super) time_ms: u64,
    pub(super) ok: bool,
    pub(super) summary: String,
}

fn param<'p>(params: &'p Params, name: &str) -> Result<&'p str, Refusal> {
    params
        .get(name)
        .map(String::as_str)
        .ok_or_else(|| refuse(StatusCode::BAD_REQUEST, &format!("missing parameter {name}")))
}

pub(super) async fn session(State(ui): State<Arc<Ui>>) -> Reply {
    Ok(Json(json!({
        "store": crate::url::redact(ui.location.url()),
        "actor": ui.memfs.actor(),
        "version": env!("CARGO_PKG_VERSION"),
        "history": ui.memfs.repository().history().is_some(),
    })))
}

pub(super) async fn tree(State(ui): State<Arc<Ui>>) -> Reply {
    let memfs = &ui.memfs;
    let generation = memfs.repository().head().await.map_err(|e| failed(&memfs.store_error(e)))?.generation;
    // A new store has no commit yet for `HEAD` to name: its tree is empty.
    if generation == 0 {
        return Ok(Json(json!({"generation": 0, "entries": []})));
    }
    let listed = memfs.list("HEAD", memfs_core::ROOT, true).await.map_err(|e| failed(&e))?;
    // Paths from the depth-first listing: the directories open above each entry.
    let mut open: Vec<String> = Vec::new();
    let entries: Vec<Value> = listed
        .iter()
        .map(|l| {
            open.truncate(l.depth);
            let parent = open.last().map_or(memfs_core::ROOT, String::as_str);
            let path = format!("{parent}/{}", l.name);
            if l.is_dir {
                open.push(path.clone());
            }
            json!({"path": path, "name": l.name, "depth": l.depth, "dir": l.is_dir,
                   "files": l.totals.files, "bytes": l.totals.bytes})
        })
        .collect();
    Ok(Json(json!({"generation": generation, "entries": entries})))
}

pub(super) async fn file(State(ui): State<Arc<Ui>>, params: Params) -> Reply {
    let file = ui.memfs.file(param(&params, "path")?).await.map_err(|e| failed(&e))?;
    let size = file.text.len();
    Ok(Json(json!({"path": file.path, "text": file.text, "version": file.version, "size": size})))
}

pub(super) async fn search(State(ui): State<Arc<Ui>>, params: Params) -> Reply {
    let found = ui.memfs.search(param(&params, "q")?, SEARCH_LINES).await.map_err(|e| failed(&e))?;
    let lines: Vec<Value> =
        found.lines.iter().map(|l| json!({"path": l.path, "line": l.line, "text": l.text})).collect();
    Ok(Json(json!({"names": found.names, "lines": lines, "truncated": found.truncated})))
}

pub(super) async fn log(State(ui): State<Arc<Ui>>, params: Params) -> Reply {
    let limit = match params.get("limit") {
        Some(n) => Some(n.parse().map_err(|_| refuse(StatusCode::BAD_REQUEST, "limit is a number of commits"))?),
        None => None,
    };
    let path = params.get("path").map(String::as_str);
    let commits = ui.memfs.log(limit, path).await.map_err(|e| failed(&e))?;
    Ok(Json(json!({"commits": commits.iter().map(commit).collect::<Vec<_>>()})))
}

pub(super) async fn show(State(ui): State<Arc<Ui>>, params: Params) -> Reply {
    let (rev, path) = (param(&params, "rev")?, param(&params, "path")?);
    let record = ui.memfs.resolve(rev).await.map_err(|e| failed(&e))?;
    match ui.memfs.read_at(rev, path).await.map_err(|e| failed(&e))? {
        Shown::File(bytes) => Ok(Json(json!({
            "rev": rev, "generation": record.generation, "time_ms": record.time_ms, "actor": record.actor,
            "text": String::from_utf8_lossy(&bytes),
        }))),
        _ => Err(refuse(StatusCode::BAD_REQUEST, &format!("{path} is a directory at {rev}"))),
    }
}

pub(super) async fn diff(State(ui): State<Arc<Ui>>, params: Params) -> Reply {
    let from = param(&params, "from")?;
    let to = params.get("to").map(String::as_str);
    let within = match params.get("path") {
        Some(p) => Some(memfs_core::MemoryPath::parse(p).map_err(|e| failed(&e.into()))?.normalized()),
        None => None,
    };
    let (a, b, patches) = ui.memfs.patches(from, to, within.as_deref()).await.map_err(|e| failed(&e))?;
    let files: Vec<Value> = patches
        .iter()
        .map(|(change, patch)| json!({"status": change.status.letter().to_string(), "path": change.path, "patch": patch}))
        .collect();
    Ok(Json(json!({"from": a.generation, "to": b.generation, "files": files})))
}

pub(super) async fn stats(State(ui): State<Arc<Ui>>) -> Reply {
    let memfs = &ui.memfs;
    let info = memfs.info().await.map_err(|e| failed(&e))?;
    let commits = match memfs.repository().history().is_some() {
        true => memfs.log(Some(STATS_COMMITS), None).await.map_err(|e| failed(&e))?,
        false => Vec::new(),
    };
    let (mut per_day, mut per_actor) = (BTreeMap::<String, u64>::new(), BTreeMap::<String, u64>::new());
    for c in &commits {
        *per_day.entry(day(c.time_ms)).or_default() += 1;
        *per_actor.entry(c.actor.clone()).or_default() += 1;
    }
    let mut per_actor: Vec<_> = per_actor.into_iter().collect();
    per_actor.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let policy: Vec<Value> = info.policy.settings().into_iter().map(|(k, v)| json!({"key": k, "value": v})).collect();
    // Labels only: a slot's id, kind and what its owner called it; never anything of its key.
    let key_slots: Vec<Value> = match ui.location.is_memory() {
        true => Vec::new(),
        false => crate::Memfs::key_slots(ui.location.clone())
            .await
            .map_err(|e| failed(&e))?
            .into_iter()
            .map(|(id, kind, note)| json!({"id": id.to_string(), "kind": kind.to_string(), "label": note.label}))
            .collect(),
    };
    let last_check = ui.last_check.lock().expect("last check").clone();
    Ok(Json(json!({
        "generation": info.generation,
        "files": info.totals.files,
        "bytes": info.totals.bytes,
        "per_day": per_day.into_iter().map(|(d, n)| json!({"day": d, "commits": n})).collect::<Vec<_>>(),
        "per_actor": per_actor.into_iter().map(|(a, n)| json!({"actor": a, "commits": n})).collect::<Vec<_>>(),
        "counted": commits.len(),
        "policy": policy,
        "key_slots": key_slots,
        "last_check": last_check.map(|c| json!({"time_ms": c.time_ms, "ok": c.ok, "summary": c.summary})),
    })))
}

/// A commit as the timeline shows it.
fn commit(c: &CommitRecord) -> Value {
    let record: Value = serde_json::from_str(&c.record().to_json()).unwrap_or(Value::Null);
    let name = record.get("command").and_then(Value::as_str).unwrap_or("?").to_owned();
    let about = ["path", "old_path", "new_path", "at", "from"]
        .iter()
        .filter_map(|k| record.get(*k).and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join(" → ");
    let summary = if about.is_empty() { name.clone() } else { format!("{name} {about}") };
    let changes: Vec<Value> = c.changes.iter().map(change).collect();
    json!({"id": c.id, "generation": c.generation, "time_ms": c.time_ms, "actor": c.actor,
           "command": name, "summary": summary, "changes": changes})
}

pub(super) fn change(c: &Change) -> Value {
    match c {
        Change::Created { path } => json!({"status": "A", "path": path}),
        Change::Modified { path } => json!({"status": "M", "path": path}),
        Change::Deleted { path } => json!({"status": "D", "path": path}),
        Change::Renamed { from, to } => json!({"status": "R", "path": to, "from": from}),
    }
}

/// The UTC day of a time in milliseconds, `YYYY-MM-DD`.
fn day(time_ms: u64) -> String {
    let ts = jiff::Timestamp::from_millisecond(i64::try_from(time_ms).unwrap_or(i64::MAX)).unwrap_or_default();
    ts.strftime("%Y-%m-%d").to_string()
}
