//! The head's plaintext (`docs/FORMAT.md`, "Head"): ids as their 32 bytes, numbers as
//! varints, and each inline object as its kind and its plaintext only. An inline object's id
//! is the keyed hash of its plaintext, which its reader computes, so the head leaves it out:
//! the head is small, and sixteen writers on S3 move every head two to three times per
//! mutation (the swap, a refused swap, the read after it).

use memfs_core::ObjectId;

use super::binary_commit::{HAS_EXTENSIONS, Writer};
use super::{HeadObject, InlineKind, InlineObject, MAX_RECENT, Reader};

/// The first byte of a head.
pub(crate) const BINARY_HEAD: u8 = 0x01;

/// Flags: which optional fields follow.
const HAS_STORE_ID: u8 = 1;
const HAS_KEYS: u8 = 2;

/// An inline object's kind, in the low bits of its first byte.
const COMMIT: u8 = 1;
const POLICY: u8 = 2;
const DIR: u8 = 3;
const BLOB: u8 = 4;
/// The high bit of an inline object's first byte: carried unwritten.
const UNWRITTEN: u8 = 0x80;

/// What an inline object costs the head besides its plaintext, at most: its kind byte
/// and its length (a varint: 3 bytes up to 2 MiB; a head holds far less).
pub(crate) const INLINE_OVERHEAD: usize = 4;

/// Encodes `head`: `0x01`, the flags, the store id (if any, a string), the keys counter (if
/// any), the generation, the commit, the recent commits (a count, then each id), and the
/// inline objects (a count, then each one's kind byte, its plaintext's length and plaintext).
pub(super) fn encode(head: &HeadObject) -> Vec<u8> {
    let inline: usize = head.inline.iter().map(|o| o.plain.len() + INLINE_OVERHEAD).sum();
    let mut out = Vec::with_capacity(64 + 32 * head.recent.len() + inline);
    out.push(BINARY_HEAD);
    let flag = |on: bool, flag: u8| if on { flag } else { 0 };
    out.push(flag(head.store_id.is_some(), HAS_STORE_ID) | flag(head.keys.is_some(), HAS_KEYS));
    let mut w = Writer(&mut out);
    if let Some(store_id) = &head.store_id {
        w.str(store_id);
    }
    if let Some(keys) = head.keys {
        w.number(keys);
    }
    w.number(head.generation);
    w.id(&head.commit);
    w.number(head.recent.len() as u64);
    head.recent.iter().for_each(|id| w.id(id));
    w.number(head.inline.len() as u64);
    for object in &head.inline {
        let kind = match object.kind {
            InlineKind::Commit => COMMIT,
            InlineKind::Policy => POLICY,
            InlineKind::Dir => DIR,
            InlineKind::Blob => BLOB,
        };
        w.0.push(kind | if object.unwritten { UNWRITTEN } else { 0 });
        w.number(object.plain.len() as u64);
        w.0.extend_from_slice(&object.plain);
    }
    out
}

/// Decodes a head; `address` gives an inline object's id from its kind and plaintext.
/// Extensions (a later writer's fields, [`Reader::extensions`]) are skipped; nothing else may
/// follow the last object; unknown flags and kinds are refused, and so is a list of more than
/// [`MAX_RECENT`] recent commits.
pub(super) fn decode(
    bytes: &[u8],
    address: impl Fn(InlineKind, &[u8]) -> ObjectId,
) -> Result<HeadObject, &'static str> {
    let mut r = Reader::new(bytes, 1);
    let flags = r.byte()?;
    if flags & !(HAS_STORE_ID | HAS_KEYS | HAS_EXTENSIONS) != 0 {
        return Err("unknown flags");
    }
    let store_id = if flags & HAS_STORE_ID != 0 { Some(r.string()?) } else { None };
    let keys = if flags & HAS_KEYS != 0 { Some(r.number()?) } else { None };
    let generation = r.number()?;
    let commit = r.object_id()?;
    let count = r.number()?;
    if count > MAX_RECENT as u64 {
        return Err("more than 256 recent commits");
    }
    let recent = (0..count).map(|_| r.object_id()).collect::<Result<Vec<_>, _>>()?;
    // Each object takes at least two bytes: the count cannot ask for more room than is left.
    let count = r.number()?;
    let mut inline = Vec::new();
    for _ in 0..count {
        let byte = r.byte()?;
        let kind = match byte & !UNWRITTEN {
            COMMIT => InlineKind::Commit,
            POLICY => InlineKind::Policy,
            DIR => InlineKind::Dir,
            BLOB => InlineKind::Blob,
            _ => return Err("an inline object of unknown kind"),
        };
        let len = usize::try_from(r.number()?).map_err(|_| "truncated")?;
        let plain = r.take(len).ok_or("truncated")?.to_vec();
        inline.push(InlineObject { kind, id: address(kind, &plain), plain, unwritten: byte & UNWRITTEN != 0 });
    }
    if flags & HAS_EXTENSIONS != 0 {
        r.extensions()?;
    }
    if r.at != bytes.len() {
        return Err("bytes after the last object");
    }
    Ok(HeadObject { store_id, keys, generation, commit, recent, inline })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head() -> HeadObject {
        let object = |kind, plain: &[u8], unwritten| InlineObject {
            kind,
            id: ObjectId::from_bytes([plain.len() as u8; 32]),
            plain: plain.to_vec(),
            unwritten,
        };
        HeadObject {
            store_id: Some("00112233445566778899aabbccddeeff".into()),
            keys: Some(300),
            generation: 7,
            commit: ObjectId::from_bytes([1; 32]),
            recent: vec![ObjectId::from_bytes([2; 32]), ObjectId::from_bytes([3; 32])],
            inline: vec![
                object(InlineKind::Commit, &[3, 0, 9], false),
                object(InlineKind::Policy, b"{}", false),
                object(InlineKind::Dir, &[0x03, 0], true),
                object(InlineKind::Blob, "é\n".as_bytes(), true),
            ],
        }
    }

    /// The id a test decoder gives: the plaintext's length in every byte (as [`head`] made them).
    fn address(_: InlineKind, plain: &[u8]) -> ObjectId {
        ObjectId::from_bytes([plain.len() as u8; 32])
    }

    #[test]
    fn a_head_round_trips_byte_for_byte() {
        let bytes = encode(&head());
        let mut expected = vec![BINARY_HEAD, HAS_STORE_ID | HAS_KEYS, 32];
        expected.extend_from_slice(b"00112233445566778899aabbccddeeff");
        expected.extend_from_slice(&[0xac, 0x02, 7]); // 300 as a varint, then 7
        expected.extend_from_slice(&[1; 32]);
        expected.push(2);
        expected.extend_from_slice(&[2; 32]);
        expected.extend_from_slice(&[3; 32]);
        expected.push(4);
        expected.extend_from_slice(&[COMMIT, 3, 3, 0, 9, POLICY, 2, b'{', b'}', DIR | UNWRITTEN, 2, 3, 0]);
        expected.extend_from_slice(&[BLOB | UNWRITTEN, 3, 0xc3, 0xa9, b'\n']);
        assert_eq!(bytes, expected);
        let decoded = decode(&bytes, address).unwrap();
        assert_eq!(encode(&decoded), bytes);
        assert_eq!(format!("{decoded:?}"), format!("{:?}", head()));
        let bare = HeadObject { store_id: None, keys: None, recent: Vec::new(), inline: Vec::new(), ..head() };
        let bytes = encode(&bare);
        assert_eq!(bytes.len(), 1 + 1 + 1 + 32 + 1 + 1);
        assert_eq!(format!("{:?}", decode(&bytes, address).unwrap()), format!("{bare:?}"));
    }

    #[test]
    fn malformed_heads_are_refused() {
        let bytes = encode(&head());
        for cut in 1..bytes.len() {
            assert_eq!(decode(&bytes[..cut], address).unwrap_err(), "truncated", "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer, address).unwrap_err(), "bytes after the last object");
        let mut flags = bytes.clone();
        flags[1] |= 4;
        assert_eq!(decode(&flags, address).unwrap_err(), "unknown flags");
        let mut kind = bytes.clone();
        let first_object = bytes.len() - (5 + 4 + 4 + 5);
        assert_eq!(kind[first_object], COMMIT);
        kind[first_object] = 5;
        assert_eq!(decode(&kind, address).unwrap_err(), "an inline object of unknown kind");
        let many = HeadObject { recent: vec![ObjectId::from_bytes([2; 32]); MAX_RECENT + 1], ..head() };
        assert_eq!(decode(&encode(&many), address).unwrap_err(), "more than 256 recent commits");
    }

    /// `bytes` with the extension flag set and `area` after the last object.
    fn extended(bytes: &[u8], area: &[u8]) -> Vec<u8> {
        let mut out = bytes.to_vec();
        out[1] |= HAS_EXTENSIONS;
        out.extend_from_slice(area);
        out
    }

    #[test]
    fn a_later_writers_extensions_are_skipped() {
        let bytes = encode(&head());
        // Two extensions: number 1 of 3 bytes, number 300 of none.
        let decoded = decode(&extended(&bytes, &[2, 1, 3, 7, 8, 9, 0xac, 0x02, 0]), address).unwrap();
        assert_eq!(format!("{decoded:?}"), format!("{:?}", head()));
        assert_eq!(encode(&decoded), bytes);
    }

    #[test]
    fn malformed_extensions_are_refused() {
        let bytes = encode(&head());
        let refused = |area: &[u8]| decode(&extended(&bytes, area), address).unwrap_err();
        assert_eq!(refused(&[]), "truncated");
        assert_eq!(refused(&[0]), "an empty list of extensions");
        assert_eq!(refused(&[1, 1, 3, 7, 8]), "truncated");
        assert_eq!(refused(&[2, 5, 0, 5, 0]), "extensions out of order");
        assert_eq!(refused(&[2, 5, 0, 4, 0]), "extensions out of order");
        assert_eq!(refused(&[1, 1, 0, 0]), "bytes after the last object");
    }
}
