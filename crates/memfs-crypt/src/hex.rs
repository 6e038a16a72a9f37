//! Lower-case hex for the bytes in key-slot JSON, and a constant-time decoder.
//!
//! Decoding runs in time independent of the digits (no table lookups or branches on them),
//! because it also reads key files, whose digits are the key.

use serde::{Deserialize, Deserializer, Serializer, de};

/// Lower-case hex of public bytes (salts, nonces, wrapped keys, ids).
pub(crate) fn encode(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0xf)]));
    }
    s
}

/// The value of one hex digit (either case), or a value with bits above the low nibble set
/// when `c` is not one. Branch-free (after the `base16ct` crate's decoder).
fn nibble(c: u8) -> u16 {
    let c = i16::from(c);
    let mut v: i16 = -1;
    // Each line adds `c - base + 1` exactly when `lo < c < hi`, and 0 otherwise: the sign
    // bit of `(lo - c) & (c - hi)` is set only inside the range.
    v += (((0x2f - c) & (c - 0x3a)) >> 8) & (c - 47); // '0'..='9' -> 0..9
    v += (((0x40 - c) & (c - 0x47)) >> 8) & (c - 54); // 'A'..='F' -> 10..15
    v += (((0x60 - c) & (c - 0x67)) >> 8) & (c - 86); // 'a'..='f' -> 10..15
    v as u16
}

/// Decodes exactly `2 * N` hex digits into `out`; false (with `out` in an unspecified state)
/// when the length or any digit is wrong. Constant-time in the digits.
pub(crate) fn decode_into<const N: usize>(s: &[u8], out: &mut [u8; N]) -> bool {
    decode_slice(s, out)
}

/// Decodes exactly `2 * out.len()` hex digits into `out`, as [`decode_into`].
pub(crate) fn decode_slice(s: &[u8], out: &mut [u8]) -> bool {
    if s.len() != 2 * out.len() {
        return false;
    }
    let mut bad: u16 = 0;
    for (o, pair) in out.iter_mut().zip(s.chunks_exact(2)) {
        let v = (nibble(pair[0]) << 4) | nibble(pair[1]);
        // An invalid digit is 0xffff, which sets high bits in `v` wherever it sits.
        bad |= v & 0xff00;
        *o = v as u8;
    }
    bad == 0
}

/// Serde for `[u8; N]` as a lower-case hex string.
pub(crate) mod array {
    use super::*;

    pub(crate) fn serialize<S: Serializer, const N: usize>(bytes: &[u8; N], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode(bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>, const N: usize>(d: D) -> Result<[u8; N], D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        let mut out = [0u8; N];
        if decode_into(s.as_bytes(), &mut out) {
            Ok(out)
        } else {
            Err(de::Error::invalid_value(de::Unexpected::Str(&s), &&*format!("{} hex digits", 2 * N)))
        }
    }
}

/// Serde for `Option<[u8; N]>` as a lower-case hex string, absent when `None` (with
/// `#[serde(default, skip_serializing_if = "Option::is_none")]`).
pub(crate) mod option_array {
    use super::*;

    pub(crate) fn serialize<S: Serializer, const N: usize>(bytes: &Option<[u8; N]>, s: S) -> Result<S::Ok, S::Error> {
        match bytes {
            Some(b) => array::serialize(b, s),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>, const N: usize>(d: D) -> Result<Option<[u8; N]>, D::Error> {
        array::deserialize(d).map(Some)
    }
}

/// Serde for a `Vec<u8>` of at most [`vec::MAX`] bytes as a lower-case hex string.
pub(crate) mod vec {
    use super::*;

    /// The longest byte string read: a hostile `memfs.keys` cannot make memfs hold more.
    pub(crate) const MAX: usize = 16 * 1024;

    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&encode(bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        // The length first: nothing is allocated for a string past the bound.
        let mut out = vec![0u8; if s.len() % 2 == 0 && s.len() / 2 <= MAX { s.len() / 2 } else { 0 }];
        if 2 * out.len() == s.len() && decode_slice(s.as_bytes(), &mut out) {
            Ok(out)
        } else {
            Err(de::Error::invalid_value(de::Unexpected::Str("…"), &&*format!("at most {} hex digits", 2 * MAX)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects() {
        let bytes: Vec<u8> = (0..=255).collect();
        let s = encode(&bytes);
        assert_eq!(&s[..8], "00010203");
        let mut out = [0u8; 256];
        assert!(decode_into(s.as_bytes(), &mut out));
        assert_eq!(out.to_vec(), bytes);
        let mut two = [0u8; 2];
        assert!(decode_into(b"ABcd", &mut two));
        assert_eq!(two, [0xab, 0xcd]);
        for bad in [&b"abc"[..], b"abcde", b"ab g", b"0x12", b"12 3", b"/0:0", b"@0G0", b"`0g0", b"\xff000"] {
            let mut two = [0u8; 2];
            assert!(!decode_into(bad, &mut two), "{bad:?}");
        }
    }

    #[test]
    fn every_byte_value_is_classified_like_the_obvious_decoder() {
        for c in 0..=255u8 {
            let want = (c as char).to_digit(16);
            let got = nibble(c);
            match want {
                Some(d) => assert_eq!(u32::from(got), d, "{c}"),
                None => assert!(got > 0xf, "{c}"),
            }
        }
    }
}
