//! A commit's plaintext (`docs/FORMAT.md`, "Commit"): ids as their 32 bytes, numbers as
//! varints (LEB128), strings as a varint length and UTF-8.

use integer_encoding::VarInt;
use memfs_core::{Change, ObjectId};

use super::{CommitAt, CommitObject, Reader};

/// The first byte of a commit.
pub(super) const BINARY_COMMIT: u8 = 0x03;

/// Flags: which optional fields follow.
const HAS_PARENT: u8 = 1;
const HAS_POLICY: u8 = 2;
const HAS_REPLACED: u8 = 4;
/// Flag (of a commit and of a head): extensions follow the last field ([`Reader::extensions`]).
pub(super) const HAS_EXTENSIONS: u8 = 0x80;

/// A change's kind.
const CREATED: u8 = 1;
const MODIFIED: u8 = 2;
const DELETED: u8 = 3;
const RENAMED: u8 = 4;

/// Encodes `commit`: `0x03`, the flags, then the parent (if any), the tree, the generation,
/// the time, the actor, the command, the changes (a count, then each one's kind and path, or
/// its from and to), the files and bytes, the policy (if any) and the commits a purge
/// replaced (if any: a count, then each one's generation and id).
pub(super) fn encode(commit: &CommitObject) -> Vec<u8> {
    let mut out = Vec::with_capacity(128 + commit.command.len() + commit.actor.len());
    out.push(BINARY_COMMIT);
    let flag = |on: bool, flag: u8| if on { flag } else { 0 };
    out.push(
        flag(commit.parent.is_some(), HAS_PARENT)
            | flag(commit.policy.is_some(), HAS_POLICY)
            | flag(!commit.replaced.is_empty(), HAS_REPLACED),
    );
    let mut w = Writer(&mut out);
    if let Some(parent) = &commit.parent {
        w.id(parent);
    }
    w.id(&commit.tree);
    w.number(commit.generation);
    w.number(commit.time_ms);
    w.str(&commit.actor);
    w.str(&commit.command);
    w.number(commit.changes.len() as u64);
    for change in &commit.changes {
        match change {
            Change::Created { path } => w.change(CREATED, &[path]),
            Change::Modified { path } => w.change(MODIFIED, &[path]),
            Change::Deleted { path } => w.change(DELETED, &[path]),
            Change::Renamed { from, to } => w.change(RENAMED, &[from, to]),
        }
    }
    w.number(commit.files);
    w.number(commit.bytes);
    if let Some(policy) = &commit.policy {
        w.id(policy);
    }
    if !commit.replaced.is_empty() {
        w.number(commit.replaced.len() as u64);
        for at in &commit.replaced {
            w.number(at.generation);
            w.id(&at.commit);
        }
    }
    out
}

/// Decodes a commit; the error says what is wrong with it. Extensions (a later writer's
/// fields) are skipped; nothing else may follow the last field, and unknown flags or change
/// kinds are refused.
pub(super) fn decode(bytes: &[u8]) -> Result<CommitObject, &'static str> {
    let mut r = Reader::new(bytes, 1);
    let flags = r.byte()?;
    if flags & !(HAS_PARENT | HAS_POLICY | HAS_REPLACED | HAS_EXTENSIONS) != 0 {
        return Err("unknown flags");
    }
    let parent = if flags & HAS_PARENT != 0 { Some(r.object_id()?) } else { None };
    let tree = r.object_id()?;
    let (generation, time_ms) = (r.number()?, r.number()?);
    let (actor, command) = (r.string()?, r.string()?);
    let count = r.number()?;
    let mut changes = Vec::new();
    for _ in 0..count {
        changes.push(match r.byte()? {
            CREATED => Change::Created { path: r.string()? },
            MODIFIED => Change::Modified { path: r.string()? },
            DELETED => Change::Deleted { path: r.string()? },
            RENAMED => Change::Renamed { from: r.string()?, to: r.string()? },
            _ => return Err("a change of unknown kind"),
        });
    }
    let (files, bytes_total) = (r.number()?, r.number()?);
    let policy = if flags & HAS_POLICY != 0 { Some(r.object_id()?) } else { None };
    let mut replaced = Vec::new();
    if flags & HAS_REPLACED != 0 {
        let count = r.number()?;
        for _ in 0..count {
            replaced.push(CommitAt { generation: r.number()?, commit: r.object_id()? });
        }
        if replaced.is_empty() {
            return Err("an empty record of replaced commits");
        }
    }
    if flags & HAS_EXTENSIONS != 0 {
        r.extensions()?;
    }
    if r.at != bytes.len() {
        return Err("bytes after the last field");
    }
    Ok(CommitObject {
        parent,
        tree,
        generation,
        time_ms,
        actor,
        command,
        changes,
        files,
        bytes: bytes_total,
        policy,
        replaced,
    })
}

/// Writes the fields of a binary plaintext (a commit, a head).
pub(super) struct Writer<'a>(pub(super) &'a mut Vec<u8>);

impl Writer<'_> {
    pub(super) fn id(&mut self, id: &ObjectId) {
        self.0.extend_from_slice(&id.to_bytes());
    }
    pub(super) fn number(&mut self, n: u64) {
        self.0.extend_from_slice(&n.encode_var_vec());
    }
    pub(super) fn str(&mut self, s: &str) {
        self.number(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }
    fn change(&mut self, kind: u8, paths: &[&String]) {
        self.0.push(kind);
        paths.iter().for_each(|p| self.str(p));
    }
}

/// What a commit (and a head) reads besides the page reader's own fields; every error is "truncated" but
/// the one about UTF-8.
impl Reader<'_> {
    pub(super) fn byte(&mut self) -> Result<u8, &'static str> {
        Ok(self.take(1).ok_or("truncated")?[0])
    }
    pub(super) fn object_id(&mut self) -> Result<ObjectId, &'static str> {
        self.id().ok_or("truncated")
    }
    pub(super) fn number(&mut self) -> Result<u64, &'static str> {
        self.varint().ok_or("truncated")
    }
    pub(super) fn string(&mut self) -> Result<String, &'static str> {
        let len = usize::try_from(self.number()?).map_err(|_| "truncated")?;
        let bytes = self.take(len).ok_or("truncated")?;
        String::from_utf8(bytes.to_vec()).map_err(|_| "a string is not UTF-8")
    }

    /// Skips the extensions of a commit or head whose flag [`HAS_EXTENSIONS`] is set: their
    /// count (at least 1), then each one's number (increasing), length and bytes. Format 1
    /// defines no extension, so every one is a later writer's field, which this reader skips;
    /// what a reader must not skip, a writer names in `memfs.keys`' `requires` instead.
    pub(super) fn extensions(&mut self) -> Result<(), &'static str> {
        let count = self.number()?;
        if count == 0 {
            return Err("an empty list of extensions");
        }
        let mut last = None;
        for _ in 0..count {
            let number = self.number()?;
            if last.is_some_and(|last| number <= last) {
                return Err("extensions out of order");
            }
            last = Some(number);
            let len = usize::try_from(self.number()?).map_err(|_| "truncated")?;
            self.take(len).ok_or("truncated")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn commit() -> CommitObject {
        CommitObject {
            parent: Some(ObjectId::from_bytes([1; 32])),
            tree: ObjectId::from_bytes([2; 32]),
            generation: 2,
            time_ms: 1_764_108_000_000,
            actor: "test".into(),
            command: r#"{"command":"delete","path":"/memories/a.md"}"#.into(),
            changes: vec![Change::Deleted { path: "/memories/a.md".into() }],
            files: 0,
            bytes: 0,
            policy: None,
            replaced: Vec::new(),
        }
    }

    #[test]
    fn a_later_writers_extensions_are_skipped() {
        let bytes = encode(&commit());
        let mut extended = bytes.clone();
        extended[1] |= HAS_EXTENSIONS;
        extended.extend_from_slice(&[1, 9, 2, b'o', b'k']);
        let decoded = decode(&extended).unwrap();
        assert_eq!(format!("{decoded:?}"), format!("{:?}", commit()));
        assert_eq!(encode(&decoded), bytes);
        extended.push(0);
        assert_eq!(decode(&extended).unwrap_err(), "bytes after the last field");
        let mut flags = bytes.clone();
        flags[1] |= 8;
        assert_eq!(decode(&flags).unwrap_err(), "unknown flags");
    }
}
