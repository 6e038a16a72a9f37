//! The checksums of the local log: over each record, and over each block and the metadata of
//! an index file. They detect damage (a torn write, a failing disk), not tampering: whoever
//! can write the folder can compute them, which is why everything that matters is sealed
//! above this layer.
//!
//! All are XXH3-128, not a cryptographic hash: on records of a few hundred bytes BLAKE3 cannot
//! hash chunks in parallel and takes about 1.3 µs a record here against 25 ns, and opening a
//! store checks every record of its last segment past its index.

use twox_hash::XxHash3_128;

/// Bytes of every checksum.
pub(super) const LEN: usize = 16;

/// XXH3-128 over `parts`, one after the other, little-endian: a record's bytes before its
/// checksum. One call over contiguous bytes is faster (`parts` of one slice).
pub(super) fn of(parts: &[&[u8]]) -> [u8; LEN] {
    if let [one] = parts {
        return XxHash3_128::oneshot(one).to_le_bytes();
    }
    let mut h = XxHash3_128::new();
    for part in parts {
        h.write(part);
    }
    h.finish_128().to_le_bytes()
}

/// XXH3-128 over `bytes` seeded with segment number `segment`, little-endian: an index block
/// or metadata copied from another segment's index does not verify.
pub(super) fn of_segment(segment: u64, bytes: &[u8]) -> [u8; LEN] {
    XxHash3_128::oneshot_with_seed(segment, bytes).to_le_bytes()
}

/// Two 64-bit hashes of a path, for a bloom filter's probes: its XXH3-128 as two
/// little-endian u64.
pub(super) fn of_path(path: &str) -> (u64, u64) {
    let b = XxHash3_128::oneshot(path.as_bytes()).to_le_bytes();
    let h1 = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let h2 = u64::from_le_bytes(b[8..].try_into().expect("8 bytes"));
    (h1, h2)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The values are stored: they must never change. Pinned against the reference
    /// algorithm (XXH3's published output for the empty input).
    #[test]
    fn values_are_pinned() {
        assert_eq!(
            hex::encode(of(&[b""]).iter().rev().copied().collect::<Vec<u8>>()),
            "99aa06d3014798d86001c324468d497f"
        );
        // Pieces hash as their concatenation.
        assert_eq!(of(&[b"ab", b"", b"cd"]), of(&[b"abcd"]));
        assert_ne!(of_segment(1, b"x"), of_segment(2, b"x"));
    }
}
