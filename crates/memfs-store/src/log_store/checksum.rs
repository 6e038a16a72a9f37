//! The checksums of the local log: over each record, and over each block and the metadata of
//! an index file. They detect damage (a torn write, a failing disk), not tampering: whoever
//! can write the folder can compute them, which is why everything that matters is sealed
//! above this layer.
//!
//! Log and index version 1 used BLAKE3, version 2 XXH3-128: on records of a few hundred bytes
//! BLAKE3 cannot hash chunks in parallel and took about 1.3 µs a record here against 25 ns,
//! and opening a store checks every record of its last segment past its index. A segment's
//! header and an index file's header name their version, and so which checksum their records
//! or blocks carry; a reader takes both, a writer writes version 2.

use twox_hash::XxHash3_128;

/// Bytes of every checksum.
pub(super) const LEN: usize = 16;

/// Which checksum a segment's records, or an index file's blocks, carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sum {
    /// Version 1: the first 16 bytes of BLAKE3 (keyed by the segment number for an index).
    Blake3,
    /// Version 2: XXH3-128, little-endian (seeded by the segment number for an index).
    Xxh3,
}

impl Sum {
    /// What a writer writes.
    pub(super) const NEWEST: Sum = Sum::Xxh3;

    /// The checksum of a file format `version` (1 or 2).
    pub(super) fn of_version(version: u32) -> Option<Sum> {
        match version {
            1 => Some(Sum::Blake3),
            2 => Some(Sum::Xxh3),
            _ => None,
        }
    }

    /// The file format version that carries this checksum.
    pub(super) const fn version(self) -> u32 {
        match self {
            Sum::Blake3 => 1,
            Sum::Xxh3 => 2,
        }
    }

    /// Over `parts`, one after the other: a record's bytes before its checksum. One call over
    /// contiguous bytes is faster for both (`parts` of one slice).
    pub(super) fn of(self, parts: &[&[u8]]) -> [u8; LEN] {
        match (self, parts) {
            (Sum::Blake3, [one]) => truncate(blake3::hash(one)),
            (Sum::Blake3, _) => {
                let mut h = blake3::Hasher::new();
                for part in parts {
                    h.update(part);
                }
                truncate(h.finalize())
            }
            (Sum::Xxh3, [one]) => XxHash3_128::oneshot(one).to_le_bytes(),
            (Sum::Xxh3, _) => {
                let mut h = XxHash3_128::new();
                for part in parts {
                    h.write(part);
                }
                h.finish_128().to_le_bytes()
            }
        }
    }

    /// Over `bytes`, bound to segment `segment`: an index block or metadata copied from
    /// another segment's index does not verify.
    pub(super) fn of_segment(self, segment: u64, bytes: &[u8]) -> [u8; LEN] {
        match self {
            Sum::Blake3 => {
                let mut key = [0; 32];
                key[..8].copy_from_slice(&segment.to_le_bytes());
                truncate(blake3::keyed_hash(&key, bytes))
            }
            Sum::Xxh3 => XxHash3_128::oneshot_with_seed(segment, bytes).to_le_bytes(),
        }
    }

    /// Two 64-bit hashes of a path, for a bloom filter's probes: the first 16 bytes of its
    /// hash, as two little-endian u64.
    pub(super) fn of_path(self, path: &str) -> (u64, u64) {
        let b: [u8; 16] = match self {
            Sum::Blake3 => blake3::hash(path.as_bytes()).as_bytes()[..16].try_into().expect("16 bytes"),
            Sum::Xxh3 => XxHash3_128::oneshot(path.as_bytes()).to_le_bytes(),
        };
        let h1 = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        let h2 = u64::from_le_bytes(b[8..].try_into().expect("8 bytes"));
        (h1, h2)
    }
}

fn truncate(hash: blake3::Hash) -> [u8; LEN] {
    let mut out = [0; LEN];
    out.copy_from_slice(&hash.as_bytes()[..LEN]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values are stored: they must never change. Pinned against the reference
    /// algorithms (BLAKE3's and XXH3's published outputs for the empty input).
    #[test]
    fn values_are_pinned() {
        assert_eq!(hex::encode(Sum::Blake3.of(&[b""])), "af1349b9f5f9a1a6a0404dea36dcc949");
        assert_eq!(
            hex::encode(Sum::Xxh3.of(&[b""]).iter().rev().copied().collect::<Vec<u8>>()),
            "99aa06d3014798d86001c324468d497f"
        );
        // Pieces hash as their concatenation.
        for sum in [Sum::Blake3, Sum::Xxh3] {
            assert_eq!(sum.of(&[b"ab", b"", b"cd"]), sum.of(&[b"abcd"]));
            assert_ne!(sum.of_segment(1, b"x"), sum.of_segment(2, b"x"));
            assert_eq!(Sum::of_version(sum.version()), Some(sum));
        }
        assert_eq!(Sum::of_version(3), None);
    }
}
