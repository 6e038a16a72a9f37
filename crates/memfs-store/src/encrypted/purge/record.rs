//! A commit's record through a purge: the lineage of the purged path, and the changes and
//! command rewritten so that they name no purged path.

use std::collections::{HashMap, HashSet};

use memfs_core::{Change, FileRef, MemoryPath, Name, Node, ObjectId, normalized};
use serde_json::Value;

use super::graph::Graph;

/// Moves the lineage along one change: a rename takes every lineage path at or below its
/// source (and, when it moves something out of a lineage directory, its destination) along;
/// a deletion ends the lineage paths at or below it. The purged path itself always stays.
pub(super) fn follow(lineage: &mut Vec<Vec<Name>>, target: &[Name], change: &Change) {
    match change {
        Change::Renamed { from, to } => {
            let (Some(from), Some(to)) = (components(from), components(to)) else { return };
            let mut moved = Vec::new();
            for t in lineage.iter() {
                if t.starts_with(&from) {
                    moved.push([&to[..], &t[from.len()..]].concat());
                } else if from.starts_with(t) {
                    moved.push(to.clone());
                }
            }
            lineage.retain(|t| t == target || !t.starts_with(&from));
            lineage.extend(moved);
        }
        Change::Deleted { path } => {
            let Some(path) = components(path) else { return };
            lineage.retain(|t| t == target || !t.starts_with(&path));
        }
        Change::Created { .. } | Change::Modified { .. } => {}
    }
    lineage.sort();
    lineage.dedup();
}

fn components(path: &str) -> Option<Vec<Name>> {
    MemoryPath::parse(path).ok().map(|p| p.components().to_vec())
}

fn change_paths(change: &Change) -> Vec<&str> {
    match change {
        Change::Created { path } | Change::Modified { path } | Change::Deleted { path } => vec![path],
        Change::Renamed { from, to } => vec![from, to],
    }
}

/// A restore or undo command names the commit it came from: point it at its rewritten id.
pub(in crate::encrypted) fn follow_commit_ids(command: &str, renamed: &HashMap<String, String>) -> String {
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(command) else { return command.to_owned() };
    match map.get("commit").and_then(Value::as_str).and_then(|old| renamed.get(old).map(|new| (old, new))) {
        Some((old, new)) => command.replace(old, new),
        None => command.to_owned(),
    }
}

/// What decides whether a commit's record names a purged path.
pub(super) struct Context<'a> {
    /// The lineage before and after the commit.
    pub(super) before: &'a [Vec<Name>],
    pub(super) after: &'a [Vec<Name>],
    pub(super) purge: &'a HashSet<ObjectId>,
    /// The old trees before and after the commit (`None` before: unknown, or empty).
    pub(super) old: (Option<ObjectId>, ObjectId),
}

impl Context<'_> {
    fn on_lineage(&self, path: &[Name]) -> bool {
        self.before.iter().chain(self.after).any(|t| path.starts_with(t))
    }

    /// Whether `path` is on the lineage, or held a purged content before or after the commit.
    fn names(&self, graph: &mut Graph, path: &[Name]) -> bool {
        let purged = |f: Option<FileRef>| f.is_some_and(|f| self.purge.contains(&f.id));
        self.on_lineage(path)
            || purged(graph.file_at(self.old.0, path))
            || purged(graph.file_at(Some(self.old.1), path))
    }

    /// Whether a command names a purged path in one of its fields, or spells a lineage path
    /// anywhere (a command that is not JSON, a path quoted in a text).
    pub(super) fn names_in_command(&self, graph: &mut Graph, command: &str, target: &MemoryPath) -> bool {
        // Followed by the end, a quote, a separator, a space or an escape: not a longer name.
        let spelled = |t: &[Name]| {
            let t = normalized(t);
            command.match_indices(&t).any(|(at, _)| {
                command[at + t.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| matches!(c, '"' | '/' | '\\') || c.is_whitespace())
            })
        };
        if spelled(target.components()) || self.before.iter().chain(self.after).any(|t| spelled(t)) {
            return true;
        }
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(command) else { return false };
        map.values().filter_map(Value::as_str).filter_map(components).any(|p| self.names(graph, &p))
    }
}

/// A commit's changes without those that name a purged path, or (when the tree before is
/// known) that the rewritten trees `new` (before and after) no longer bear out, such as the
/// deletion of a directory that held only purged files. Each dropped change is replaced by
/// what the rewritten trees say changed at its paths, where they still hold something. Also
/// returns whether a change named a purged path.
pub(super) fn rewrite_changes(
    graph: &mut Graph,
    context: &Context<'_>,
    changes: &[Change],
    new: Option<(Option<ObjectId>, ObjectId)>,
) -> (Vec<Change>, bool) {
    let mut out = Vec::with_capacity(changes.len());
    let mut named = false;
    for change in changes {
        let paths = change_paths(change);
        let names = paths.iter().filter_map(|p| components(p)).any(|p| context.names(graph, &p));
        let Some((before, after)) = new else {
            match names {
                true => named = true,
                false => out.push(change.clone()),
            }
            continue;
        };
        let mut holds =
            |root: Option<ObjectId>, path: &str| components(path).is_some_and(|p| graph.node_at(root, &p).is_some());
        let borne_out = match change {
            Change::Created { path } => holds(Some(after), path),
            Change::Modified { path } => holds(before, path) && holds(Some(after), path),
            Change::Deleted { path } => holds(before, path),
            Change::Renamed { from, to } => holds(before, from) && holds(Some(after), to),
        };
        if !names && borne_out {
            out.push(change.clone());
            continue;
        }
        named |= names;
        for (p, components) in paths.iter().filter_map(|p| Some((*p, components(p)?))) {
            if context.on_lineage(&components) || change_paths_of(&out).contains(&p) {
                continue;
            }
            let path = p.to_owned();
            match (graph.node_at(before, &components), graph.node_at(Some(after), &components)) {
                (None, Some(Node::File(_))) => out.push(Change::Created { path }),
                (Some(_), None) => out.push(Change::Deleted { path }),
                (Some(Node::File(a)), Some(Node::File(b))) if a.id != b.id => out.push(Change::Modified { path }),
                _ => {}
            }
        }
    }
    (out, named)
}

fn change_paths_of(changes: &[Change]) -> Vec<&str> {
    changes.iter().flat_map(change_paths).collect()
}
