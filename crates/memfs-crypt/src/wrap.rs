//! A secret wrapped under a key: `nonce (12) || AES-256-GCM ciphertext || tag (16)`, with
//! associated data that names what it is and where it belongs. The root, epoch and
//! address keys are stored this way (docs/FORMAT.md, "Keys").

use zeroize::Zeroizing;

use crate::aead::{self, Cipher, NONCE_LEN, TAG_LEN};
use crate::error::Error;

/// A wrapped 32-byte key.
pub(crate) const WRAPPED_32: usize = NONCE_LEN + 32 + TAG_LEN;
/// A wrapped 64-byte secret (the two address keys).
pub(crate) const WRAPPED_64: usize = NONCE_LEN + 64 + TAG_LEN;

/// Wraps `secret` (`S` bytes) under `key` with `aad`, into `W = 12 + S + 16` bytes.
pub(crate) fn wrap<const S: usize, const W: usize>(
    key: &[u8; 32],
    aad: &[u8],
    secret: &[u8; S],
) -> Result<[u8; W], Error> {
    debug_assert_eq!(W, NONCE_LEN + S + TAG_LEN);
    let nonce = aead::random_nonce()?;
    // `seal_into` copies the plaintext into `out` before encrypting it there: wipe it, and
    // size it exactly so it never reallocates.
    let mut out = Zeroizing::new(Vec::with_capacity(W));
    out.extend_from_slice(&nonce);
    aead::seal_into(&Cipher::new(key), &nonce, aad, secret, &mut out)?;
    out[..].try_into().map_err(|_| Error::Decrypt)
}

/// The `S` secret bytes of `wrapped`, if `key` and `aad` are the ones it was wrapped with.
/// Every failure is [`Error::Decrypt`].
pub(crate) fn unwrap<const S: usize, const W: usize>(
    key: &[u8; 32],
    aad: &[u8],
    wrapped: &[u8; W],
) -> Result<Zeroizing<[u8; S]>, Error> {
    let (nonce, body) = wrapped.split_at(NONCE_LEN);
    let nonce: &[u8; NONCE_LEN] = nonce.try_into().map_err(|_| Error::Decrypt)?;
    let mut buf = Zeroizing::new(body.to_vec());
    let len = aead::open_in_place(&Cipher::new(key), nonce, aad, &mut buf)?;
    let mut out = Zeroizing::new([0u8; S]);
    if len != S {
        return Err(Error::Decrypt);
    }
    out.copy_from_slice(&buf[..len]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_and_refuses_another_key_or_label() {
        let wrapped: [u8; WRAPPED_32] = wrap(&[1; 32], b"label", &[9; 32]).unwrap();
        assert_eq!(*unwrap::<32, WRAPPED_32>(&[1; 32], b"label", &wrapped).unwrap(), [9; 32]);
        assert!(matches!(unwrap::<32, WRAPPED_32>(&[2; 32], b"label", &wrapped), Err(Error::Decrypt)));
        assert!(matches!(unwrap::<32, WRAPPED_32>(&[1; 32], b"other", &wrapped), Err(Error::Decrypt)));
        let mut flipped = wrapped;
        flipped[20] ^= 1;
        assert!(matches!(unwrap::<32, WRAPPED_32>(&[1; 32], b"label", &flipped), Err(Error::Decrypt)));
        // Two wraps of one secret differ (fresh nonces).
        let again: [u8; WRAPPED_32] = wrap(&[1; 32], b"label", &[9; 32]).unwrap();
        assert_ne!(wrapped, again);
    }
}
