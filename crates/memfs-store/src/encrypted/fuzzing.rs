//! The decoders of the encrypted store, for [`crate::fuzzing`]: each function runs on bytes
//! what a read runs on the bytes it fetched, with the same calls, and no I/O.

use std::sync::Arc;

/// `memfs.keys` as [`EncryptedRepository::open`] reads it: parsed, its store id decoded, and
/// `credential` tried on its slots, the whole authenticated and its keyring opened: the keys
/// the store would work with.
use bytes::Bytes;
use memfs_core::{ObjectId, Policy};
use memfs_crypt::{Credential, KeysObject, ObjectKind, StoreKeys};

use super::{
    Backend, EncryptedRepository, GC_STATE_PATH, HEAD_PATH, OpenOptions, StateDir, connect, head_id, open_error,
};
use crate::error::Error;
use crate::format;
use crate::format::{CommitObject, HeadObject};
pub fn open_keys(bytes: &[u8], credential: &Credential) -> Result<StoreKeys, Error> {
    let keys = KeysObject::parse(bytes)?;
    let id = keys.store_id_bytes()?;
    let root = keys.slots().unlock(credential, &id)?.into_root();
    keys.authenticate(&root)?;
    Ok(keys.keyring().open(&root, &id)?)
}

/// `memfs.keys` parsed and written back as `init` writes it.
pub fn reencode_keys(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    Ok(KeysObject::parse(bytes)?.to_bytes())
}

/// A directory page's plaintext decoded (`format::decode_page`) and encoded again.
pub fn reencode_page(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    Ok(match format::decode_page(bytes, &ObjectId::from_bytes([0; 32]))? {
        format::Page::Leaf(entries) => format::encode_leaf(entries.iter().map(|(name, node)| (name, node)))
            .expect("a decoded page's directories all have ids"),
        format::Page::Index(index) => format::reencode_index(&index),
    })
}

/// A commit's plaintext decoded and encoded again.
pub fn reencode_commit(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let commit = CommitObject::decode(bytes).map_err(|e| format::corrupt_named("commit", "commit", &e))?;
    Ok(commit.encode())
}

/// The head's plaintext decoded and encoded again. Its inline objects are not verified (see
/// [`Keys::open_head_plain`]): their ids, which the head does not store, are computed by
/// whoever opens it, and a round trip needs none.
pub fn reencode_head(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let head = HeadObject::decode_unverified(bytes).map_err(|e| format::corrupt_named(HEAD_PATH, "head", &e))?;
    Ok(head.encode())
}

/// A head's plaintext: what tests write back in place of a head they read with
/// [`Keys::decode_head`] and changed.
pub fn encode_head(head: &HeadObject) -> Vec<u8> {
    head.encode()
}

/// gc's state decoded and encoded again.
pub fn reencode_gc_state(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let state: format::GcStateObject =
        serde_json::from_slice(bytes).map_err(|e| format::corrupt_named(GC_STATE_PATH, "gc state", &e))?;
    Ok(serde_json::to_vec(&state).expect("gc state serializes"))
}

/// A store's keys and caches over an empty in-memory store: what opening sealed objects and
/// the head needs.
pub struct Keys(EncryptedRepository);

impl Keys {
    /// A store working with `keys`, with empty caches.
    pub fn new(keys: StoreKeys) -> Self {
        let conn = connect(Backend::Memory).expect("an in-memory store connects");
        let options = OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() };
        let keys = super::Keys::new(keys, None, None);
        Keys(EncryptedRepository::assemble(conn, keys, String::new(), options).expect("no state to open"))
    }

    /// The head's plaintext, as [`EncryptedRepository::open_head`] takes it once the AEAD has
    /// opened it: decoded, and its inline objects verified against their ids, decoded and
    /// assembled into directories (`prime`).
    pub fn open_head_plain(&self, plain: &[u8]) -> Result<(), Error> {
        self.0.prime(&self.0.decode_head(plain)?)
    }

    /// A head's plaintext decoded, each inline object with its id under this store's keys:
    /// what tests read and change a head through.
    pub fn decode_head(&self, plain: &[u8]) -> Result<HeadObject, Error> {
        self.0.decode_head(plain)
    }

    /// Sealed bytes read as `kind` from where `id` names: the head (kind `Head`, id zero) is
    /// opened with `open_head`, gc's state (kind `Head`, its id) opened and decoded as
    /// `read_gc_state` does, and any other object opened with `Objects::open` (the AEAD, then
    /// its id checked against its content) and decoded as its reader decodes it.
    pub fn open_sealed(&self, kind: ObjectKind, id: &ObjectId, sealed: &[u8]) -> Result<(), Error> {
        let repo = &self.0;
        if kind == ObjectKind::Head && *id == head_id() {
            return repo.open_head(&Bytes::copy_from_slice(sealed)).map(drop);
        }
        if kind == ObjectKind::Head {
            let plain =
                repo.objects.keys.objects().open(kind, id, sealed).map_err(|e| open_error(e, GC_STATE_PATH.into()))?;
            return reencode_gc_state(&plain).map(drop);
        }
        let plain = repo.objects.open(kind, id, sealed)?;
        match kind {
            ObjectKind::Dir => super::objects::decode_level(&[*id], &[Arc::from(plain)]).map(drop),
            ObjectKind::Commit => reencode_commit(&plain).map(drop),
            ObjectKind::Policy => {
                serde_json::from_slice::<Policy>(&plain).map(drop).map_err(|e| format::corrupt(id, "policy", &e))
            }
            ObjectKind::Blob | ObjectKind::Head => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the fuzz targets' round trips rely on: encoding a decoded object is a fixed point.
    #[test]
    fn plaintexts_round_trip() {
        let id = "ab".repeat(32);
        // A leaf of one file, a.md: 3 bytes, last read on day 20,000 (varints: 3 is one byte,
        // 20,000 three).
        let mut leaf = vec![0x03, 1, 0x00, 4, b'a', b'.', b'm', b'd'];
        leaf.extend([0xab; 32]);
        leaf.extend([3, 0xa0, 0x9c, 0x01]);
        assert_eq!(reencode_page(&leaf).unwrap(), leaf);
        // Refused: a truncated entry, an unknown kind, bytes after the last entry, an empty
        // index, and a page whose first byte is neither a leaf's nor an index's (JSON, or the
        // ids-only index `0x04`).
        let mut ids_only = vec![0x04, 1];
        ids_only.extend([0xab; 32]);
        let json = format!(r#"{{"pages":["{id}"]}}"#);
        for bad in [
            &[0x03, 1, 0x07][..],
            &[0x03, 1],
            &[0x03, 0, 9],
            &[&leaf[..], &[0]].concat(),
            &[0x05, 1, 0],
            &[],
            &ids_only,
            json.as_bytes(),
        ] {
            assert!(reencode_page(bad).is_err(), "{bad:?}");
        }
        let err = reencode_page(json.as_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "object objects/00/0000000000000000000000000000000000000000000000000000000000000000 is corrupt: \
             undecodable directory page: not a leaf or an index page"
        );
        // An index page at height 2: three pages below, with 1, 2 and 300 leaves (varints),
        // and lows "note-10.md" and "note-12.md" (the second shares 6 bytes with the first
        // and has 4 of its own).
        let mut index = vec![0x05, 2, 3];
        index.extend([0xab; 32]);
        index.push(1);
        index.extend([0xcd; 32]);
        index.push(2);
        index.extend([0, 10]);
        index.extend(b"note-10.md");
        index.extend([0xef; 32]);
        index.extend([0xac, 0x02]);
        index.extend([6, 4]);
        index.extend(b"2.md");
        assert_eq!(reencode_page(&index).unwrap(), index);
        // Refused: a height of 0, names out of order, more shared than the name before has,
        // a page with no leaves, a name that is not one (`.`).
        let with = |at: usize, bytes: &[u8]| {
            let mut b = index.clone();
            b.splice(at..at + bytes.len(), bytes.iter().copied());
            b
        };
        let names_at = 3 + 32 + 1 + 32 + 1;
        let second_at = names_at + 2 + 10 + 32 + 2;
        for bad in [
            with(1, &[0]),
            with(second_at + 2, b"0.md"),
            with(second_at, &[11, 3]),
            with(3 + 32, &[0]),
            with(names_at, &[0, 1, b'.']),
        ] {
            assert!(reencode_page(&bad).is_err(), "{bad:?}");
        }
        let mut huge_day = vec![0x03, 1, 0x00, 4, b'a', b'.', b'm', b'd'];
        huge_day.extend([0xab; 32]);
        huge_day.extend([3, 0x80, 0x80, 0x80, 0x80, 0x10]);
        assert!(reencode_page(&huge_day).is_err());
        let state = format!(r#"{{"horizon":4,"pending":{{"{id}":1764000000000}}}}"#);
        assert_eq!(reencode_gc_state(state.as_bytes()).unwrap(), state.as_bytes());
        assert_eq!(
            reencode_commit(b"{}").unwrap_err().to_string(),
            "object commit is corrupt: undecodable commit: not a commit (an unknown first byte)"
        );
        // A commit with a parent and replaced commits, a fixed point.
        let ab = ObjectId::from_bytes([0xab; 32]);
        let commit = CommitObject {
            parent: Some(ab),
            tree: ab,
            generation: 300,
            time_ms: 1_764_000_000_000,
            actor: "a".into(),
            command: "{}".into(),
            changes: vec![memfs_core::Change::Renamed { from: "/memories/x".into(), to: "/memories/y".into() }],
            files: 1,
            bytes: 2,
            policy: None,
            replaced: vec![format::CommitAt { generation: 3, commit: ab }],
        };
        let binary = commit.encode();
        assert_eq!(binary[..2], [0x03, 0b101], "with a parent and replaced commits");
        assert_eq!(reencode_commit(&binary).unwrap(), binary);
        assert_eq!(format!("{:?}", CommitObject::decode(&binary).unwrap()), format!("{commit:?}"));
        // Refused: cut short anywhere, a byte after the end, an unknown flag.
        for len in 0..binary.len() {
            assert!(reencode_commit(&binary[..len]).is_err(), "cut to {len}");
        }
        assert!(reencode_commit(&[&binary[..], &[0]].concat()).is_err());
        assert!(reencode_commit(&[&[0x03, 0b1000][..], &binary[2..]].concat()).is_err());
    }

    /// A head's inline ids are the keyed hashes of their plaintexts; a head whose inline
    /// commit does not decode is refused, and so is a plaintext that is not a head.
    #[test]
    fn a_heads_inline_objects_are_addressed_and_decoded() {
        let master = memfs_crypt::FirstKey::from_bytes([7; 32]);
        let keys = Keys::new(StoreKeys::from_master(&master));
        // `0x01`, no flags, generation 1, the commit (zero), no recent commits, and one
        // inline object: a file's content (kind 4) of one byte, `x`.
        let mut head = vec![0x01, 0, 1];
        head.extend([0; 32]);
        head.extend([0, 1, 4, 1, b'x']);
        keys.open_head_plain(&head).unwrap();
        let decoded = keys.decode_head(&head).unwrap();
        assert_eq!(decoded.inline.len(), 1);
        assert_eq!(decoded.inline[0].id, StoreKeys::from_master(&master).blob_address.address(b"x"));
        assert_eq!(encode_head(&decoded), head);
        assert_eq!(reencode_head(&head).unwrap(), head);
        // The same bytes as a commit (kind 1): `x` is not one.
        let at = head.len() - 3;
        head[at] = 1;
        let err = keys.open_head_plain(&head).unwrap_err();
        assert_eq!(
            err.to_string(),
            "object head is corrupt: undecodable inline commit: not a commit (an unknown first byte)"
        );
        let json = format!(r#"{{"generation":1,"commit":"{}","inline":[]}}"#, "0".repeat(64));
        let err = keys.open_head_plain(json.as_bytes()).unwrap_err();
        assert_eq!(err.to_string(), "object head is corrupt: undecodable head: not a head (an unknown first byte)");
    }
}
