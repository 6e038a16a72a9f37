//! The decoders of the encrypted store, for [`crate::fuzzing`]: each function runs on bytes
//! what a read runs on the bytes it fetched, with the same calls, and no I/O.

use super::*;

/// `memfs.keys` as [`EncryptedRepository::open`] reads it: parsed, its store id decoded, and
/// `credential` tried on its slots, the whole authenticated and its keyring opened: the keys
/// the store would work with.
pub fn open_keys(bytes: &[u8], credential: &Credential) -> Result<StoreKeys, Error> {
    let keys = parse_keys(bytes)?;
    let id = decode_store_id(&keys.store_id)?;
    let root = keys.slots.unlock(credential, &id)?.into_root();
    key_set::open_authenticated(&keys, &root, &id)
}

/// `memfs.keys` parsed and written back as `init` writes it.
pub fn reencode_keys(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    Ok(serde_json::to_vec_pretty(&parse_keys(bytes)?).expect("key slots serialize"))
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

/// The head's plaintext decoded and encoded again (its inline objects are not verified: see
/// [`Keys::open_head_plain`]).
///
/// A binary head (format 14) is written again in binary, a JSON head (formats 4 to 13) in
/// JSON: both are fixed points, and the ids a JSON head names (checked when it is opened)
/// stay as they were. A binary head's ids are computed by whoever opens it; a round trip
/// needs none.
pub fn reencode_head(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let head = HeadObject::decode_unverified(bytes).map_err(|e| format::corrupt_named(HEAD_PATH, "head", &e))?;
    Ok(match bytes.first() {
        Some(&format::BINARY_HEAD) => head.encode(),
        _ => serde_json::to_vec(&head).expect("the head serializes"),
    })
}

/// A head's plaintext (binary or JSON) in the binary form of format 14: a seed for the head
/// target from a JSON head.
pub fn encode_head_binary(bytes: &[u8]) -> Result<Vec<u8>, Error> {
    let head = HeadObject::decode_unverified(bytes).map_err(|e| format::corrupt_named(HEAD_PATH, "head", &e))?;
    Ok(head.encode())
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
    /// The store of `master`, with empty caches.
    pub fn new(master: &MasterKey) -> Self {
        let conn = connect(Backend::Memory).expect("an in-memory store connects");
        let options = OpenOptions { state_dir: StateDir::Off, ..OpenOptions::default() };
        let keys = super::Keys::new(StoreKeys::from_master(master), None, None);
        Keys(EncryptedRepository::assemble(conn, keys, String::new(), options).expect("no state to open"))
    }

    /// The head's plaintext, as [`EncryptedRepository::open_head`] takes it once the AEAD has
    /// opened it: decoded, and its inline objects verified against their ids, decoded and
    /// assembled into directories (`prime`).
    pub fn open_head_plain(&self, plain: &[u8]) -> Result<(), Error> {
        self.0.prime(&self.0.decode_head(plain)?)
    }

    /// A head's plaintext (binary or JSON) in the JSON form of format 13, each inline object
    /// with its id: what tests read and change a head through.
    pub fn head_json(&self, plain: &[u8]) -> Result<Vec<u8>, Error> {
        Ok(serde_json::to_vec(&self.0.decode_head(plain)?).expect("the head serializes"))
    }

    /// Sealed bytes read as `kind` from where `id` names: the head (kind `Head`, id zero) is
    /// opened with `open_head`, gc's state (kind `Head`, its id) opened and decoded as
    /// `read_gc_state` does, and any other object opened with `open_object` (the AEAD, then
    /// its id checked against its content) and decoded as its reader decodes it.
    pub fn open_sealed(&self, kind: ObjectKind, id: &ObjectId, sealed: &[u8]) -> Result<(), Error> {
        let repo = &self.0;
        if kind == ObjectKind::Head && *id == head_id() {
            return repo.open_head(&Bytes::copy_from_slice(sealed)).map(drop);
        }
        if kind == ObjectKind::Head {
            let plain = repo.keys.objects().open(kind, id, sealed).map_err(|e| open_error(e, GC_STATE_PATH.into()))?;
            return reencode_gc_state(&plain).map(drop);
        }
        let plain = repo.open_object(kind, id, sealed)?;
        match kind {
            ObjectKind::Dir => objects::decode_level(&[*id], &[Arc::from(plain)]).map(drop),
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
        let page = format!(r#"{{"entries":[{{"file":{{"name":"a.md","id":"{id}","size":3,"accessed":20000}}}}]}}"#);
        let index = format!(r#"{{"pages":["{id}"]}}"#);
        // A JSON page (formats 3 to 9) and a binary one of format 10 are written again in the
        // binary form of format 11 (varints: 3 is one byte, 20,000 three), a fixed point.
        let mut leaf_10 = vec![0x01, 1, 0, 0, 0, 0x00, 4, 0, b'a', b'.', b'm', b'd'];
        leaf_10.extend([0xab; 32]);
        leaf_10.extend(3u64.to_le_bytes());
        leaf_10.extend(20000u32.to_le_bytes());
        let mut leaf_11 = vec![0x03, 1, 0x00, 4, b'a', b'.', b'm', b'd'];
        leaf_11.extend([0xab; 32]);
        leaf_11.extend([3, 0xa0, 0x9c, 0x01]);
        let mut index_10 = vec![0x02, 1, 0, 0, 0];
        index_10.extend([0xab; 32]);
        let mut index_11 = vec![0x04, 1];
        index_11.extend([0xab; 32]);
        for (json, old, binary) in [(page, leaf_10, leaf_11), (index, index_10, index_11)] {
            assert_eq!(reencode_page(json.as_bytes()).unwrap(), binary);
            assert_eq!(reencode_page(&old).unwrap(), binary);
            assert_eq!(reencode_page(&binary).unwrap(), binary);
        }
        // Refused: trailing bytes, a truncated entry, an unknown kind, an empty index, in both
        // binary forms; a day past u32.
        for bad in [
            &[0x02, 1, 0, 0, 0][..],
            &[0x01, 1, 0, 0, 0, 0x07],
            &[0x02, 0, 0, 0, 0],
            &[0x01, 0, 0, 0, 0, 9],
            &[0x04, 1],
            &[0x03, 1, 0x07],
            &[0x04, 0],
            &[0x03, 0, 9],
        ] {
            assert!(reencode_page(bad).is_err(), "{bad:?}");
        }
        // An index page of format 12 at height 2: three pages below, with 1, 2 and 300 leaves
        // (varints), and lows "note-10.md" and "note-12.md" (the second shares 6 bytes
        // with the first and has 4 of its own).
        let mut index_12 = vec![0x05, 2, 3];
        index_12.extend([0xab; 32]);
        index_12.push(1);
        index_12.extend([0xcd; 32]);
        index_12.push(2);
        index_12.extend([0, 10]);
        index_12.extend(b"note-10.md");
        index_12.extend([0xef; 32]);
        index_12.extend([0xac, 0x02]);
        index_12.extend([6, 4]);
        index_12.extend(b"2.md");
        assert_eq!(reencode_page(&index_12).unwrap(), index_12);
        // Refused: a height of 0, names out of order, more shared than the name before has,
        // a page with no leaves, a name that is not one (`.`).
        let with = |at: usize, bytes: &[u8]| {
            let mut b = index_12.clone();
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
        assert!(reencode_page(br#"{"pages":[]}"#).is_err());
        assert!(reencode_commit(b"{}").is_err());
        // A JSON commit (formats 3 to 10) is written again in the binary form, a fixed point.
        let json = format!(
            r#"{{"parent":"{id}","tree":"{id}","generation":300,"time_ms":1764000000000,"actor":"a","command":"{{}}","changes":[{{"kind":"renamed","from":"/memories/x","to":"/memories/y"}}],"files":1,"bytes":2,"replaced":[{{"generation":3,"commit":"{id}"}}]}}"#
        );
        let binary = reencode_commit(json.as_bytes()).unwrap();
        assert_eq!(binary[..2], [0x03, 0b101], "binary, with a parent and replaced commits");
        assert_eq!(reencode_commit(&binary).unwrap(), binary);
        let commit = CommitObject::decode(&binary).unwrap();
        assert_eq!((commit.generation, commit.time_ms, commit.files, commit.bytes), (300, 1_764_000_000_000, 1, 2));
        assert_eq!(
            commit.changes,
            [memfs_core::Change::Renamed { from: "/memories/x".into(), to: "/memories/y".into() }]
        );
        // Refused: cut short anywhere, a byte after the end, an unknown flag.
        for len in 0..binary.len() {
            assert!(reencode_commit(&binary[..len]).is_err(), "cut to {len}");
        }
        assert!(reencode_commit(&[&binary[..], &[0]].concat()).is_err());
        assert!(reencode_commit(&[&[0x03, 0b1000][..], &binary[2..]].concat()).is_err());
    }

    /// A head whose inline commit does not hash to its id is refused by its snapshot check.
    #[test]
    fn a_head_with_a_forged_inline_object_is_refused() {
        let keys = Keys::new(&MasterKey::from_bytes([7; 32]));
        let zero = "0".repeat(64);
        let empty = format!(r#"{{"generation":1,"commit":"{zero}","inline":[]}}"#);
        keys.open_head_plain(empty.as_bytes()).unwrap();
        let forged = format!(
            r#"{{"generation":1,"commit":"{zero}","inline":[{{"kind":"commit","id":"{zero}","plain":"{{}}"}}]}}"#
        );
        let err = keys.open_head_plain(forged.as_bytes()).unwrap_err();
        assert!(err.to_string().contains("does not match its id"), "{err}");
    }
}
