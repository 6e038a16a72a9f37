//! The one AEAD memfs uses, AES-256-GCM (NIST SP 800-38D) with 96-bit nonces and 128-bit tags,
//! behind two thin functions that sealed objects and key slots share, so the known-answer tests
//! below exercise the exact code path of both.

use aes_gcm::aead::{AeadInOut, KeyInit, Nonce};
use aes_gcm::{Aes256Gcm, Tag};

use crate::error::Error;

/// Nonce length in bytes (96 bits: SP 800-38D §8.2's recommended IV length).
pub(crate) const NONCE_LEN: usize = 12;
/// Tag length in bytes (128 bits, the full tag).
pub(crate) const TAG_LEN: usize = 16;

/// An expanded AES-256-GCM key. `aes-gcm`'s `zeroize` feature wipes the key schedule and the
/// GHASH key on drop; its `Debug` prints no key material.
pub(crate) struct Cipher(Aes256Gcm);

impl Cipher {
    pub(crate) fn new(key: &[u8; 32]) -> Self {
        Cipher(Aes256Gcm::new(key.into()))
    }
}

fn nonce_ref(nonce: &[u8; NONCE_LEN]) -> &Nonce<Aes256Gcm> {
    nonce.into()
}

/// A fresh nonce from the operating system's RNG. Random 96-bit nonces stay below the 2^-32
/// collision bound of SP 800-38D §8.3 for up to 2^32 seals under one key.
pub(crate) fn random_nonce() -> Result<[u8; NONCE_LEN], Error> {
    let mut nonce = [0u8; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(|_| Error::Random)?;
    Ok(nonce)
}

/// Appends `ciphertext || tag` of `plaintext` to `out`.
pub(crate) fn seal_into(
    cipher: &Cipher,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    plaintext: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let start = out.len();
    out.reserve(plaintext.len() + TAG_LEN);
    out.extend_from_slice(plaintext);
    let tag = cipher
        .0
        .encrypt_inout_detached(nonce_ref(nonce), aad, (&mut out[start..]).into())
        // The only failure: a plaintext over 2^36 - 32 bytes (SP 800-38D §5.2.1.1).
        .map_err(|_| Error::TooLarge { len: plaintext.len() })?;
    out.extend_from_slice(&tag);
    Ok(())
}

/// Decrypts `ciphertext || tag` in place and returns the plaintext's length; the tag is
/// checked (in constant time, by `aes-gcm`) before anything is decrypted, so on failure
/// `buf` still holds ciphertext. Every failure is [`Error::Decrypt`].
pub(crate) fn open_in_place(
    cipher: &Cipher,
    nonce: &[u8; NONCE_LEN],
    aad: &[u8],
    buf: &mut [u8],
) -> Result<usize, Error> {
    let len = buf.len().checked_sub(TAG_LEN).ok_or(Error::Decrypt)?;
    let (ciphertext, tag) = buf.split_at_mut(len);
    let tag = Tag::try_from(&*tag).map_err(|_| Error::Decrypt)?;
    cipher.0.decrypt_inout_detached(nonce_ref(nonce), aad, ciphertext.into(), &tag).map_err(|_| Error::Decrypt)?;
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap()).collect()
    }

    struct Vector {
        source: &'static str,
        key: &'static str,
        nonce: &'static str,
        aad: &'static str,
        plaintext: &'static str,
        ciphertext: &'static str,
        tag: &'static str,
    }

    /// AES-256 vectors. "McGrew-Viega" are test cases 13-16 of D. McGrew and J. Viega, "The
    /// Galois/Counter Mode of Operation (GCM)", revised 2005, Appendix B (also in the `aes-gcm`
    /// crate's history). "NIST CAVS" is from `gcmEncryptExtIV256.rsp` of the CAVP GCM test
    /// vectors (also in the `aes-gcm` crate's `tests/aes256gcm.rs`).
    const VECTORS: &[Vector] = &[
        Vector {
            source: "McGrew-Viega test case 13",
            key: "0000000000000000000000000000000000000000000000000000000000000000",
            nonce: "000000000000000000000000",
            aad: "",
            plaintext: "",
            ciphertext: "",
            tag: "530f8afbc74536b9a963b4f1c4cb738b",
        },
        Vector {
            source: "McGrew-Viega test case 14",
            key: "0000000000000000000000000000000000000000000000000000000000000000",
            nonce: "000000000000000000000000",
            aad: "",
            plaintext: "00000000000000000000000000000000",
            ciphertext: "cea7403d4d606b6e074ec5d3baf39d18",
            tag: "d0d1c8a799996bf0265b98b5d48ab919",
        },
        Vector {
            source: "McGrew-Viega test case 15",
            key: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
            nonce: "cafebabefacedbaddecaf888",
            aad: "",
            plaintext: "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72\
                        1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255",
            ciphertext: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa\
                         8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
            tag: "b094dac5d93471bdec1a502270e3cc6c",
        },
        Vector {
            source: "McGrew-Viega test case 16",
            key: "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
            nonce: "cafebabefacedbaddecaf888",
            aad: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            plaintext: "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72\
                        1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39",
            ciphertext: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa\
                         8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
            tag: "76fc6ece0f4e1768cddf8853bb2d551b",
        },
        Vector {
            source: "NIST CAVS gcmEncryptExtIV256.rsp, [Keylen = 256] [PTlen = 128] [AADlen = 128] Count = 0",
            key: "92e11dcdaa866f5ce790fd24501f92509aacf4cb8b1339d50c9c1240935dd08b",
            nonce: "ac93a1a6145299bde902f21a",
            aad: "1e0889016f67601c8ebea4943bc23ad6",
            plaintext: "2d71bcfa914e4ac045b2aa60955fad24",
            ciphertext: "8995ae2e6df3dbf96fac7b7137bae67f",
            tag: "eca5aa77d51d4a0a14d9c51e1da474ab",
        },
    ];

    fn array<const N: usize>(s: &str) -> [u8; N] {
        unhex(s).try_into().unwrap()
    }

    #[test]
    fn known_answers() {
        for v in VECTORS {
            let cipher = Cipher::new(&array(v.key));
            let nonce = array(v.nonce);
            let aad = unhex(v.aad);
            let mut expected = unhex(v.ciphertext);
            expected.extend(unhex(v.tag));

            let mut out = b"prefix".to_vec();
            seal_into(&cipher, &nonce, &aad, &unhex(v.plaintext), &mut out).unwrap();
            assert_eq!(&out[..6], b"prefix", "{}", v.source);
            assert_eq!(out[6..], expected, "{}", v.source);

            let mut buf = expected.clone();
            let len = open_in_place(&cipher, &nonce, &aad, &mut buf).unwrap();
            assert_eq!(buf[..len], unhex(v.plaintext), "{}", v.source);
        }
    }

    #[test]
    fn known_answers_tampered_fail() {
        for v in VECTORS {
            let cipher = Cipher::new(&array(v.key));
            let nonce: [u8; 12] = array(v.nonce);
            let mut sealed = unhex(v.ciphertext);
            sealed.extend(unhex(v.tag));
            for i in 0..sealed.len() {
                let mut buf = sealed.clone();
                buf[i] ^= 0x80;
                assert!(matches!(open_in_place(&cipher, &nonce, &unhex(v.aad), &mut buf), Err(Error::Decrypt)));
            }
            let mut aad = unhex(v.aad);
            aad.push(0);
            assert!(matches!(open_in_place(&cipher, &nonce, &aad, &mut sealed.clone()), Err(Error::Decrypt)));
            let mut other_nonce = nonce;
            other_nonce[11] ^= 1;
            assert!(matches!(
                open_in_place(&cipher, &other_nonce, &unhex(v.aad), &mut sealed.clone()),
                Err(Error::Decrypt)
            ));
        }
    }

    #[test]
    fn shorter_than_a_tag_fails() {
        let cipher = Cipher::new(&[0; 32]);
        for n in 0..TAG_LEN {
            assert!(matches!(open_in_place(&cipher, &[0; 12], b"", &mut vec![0; n]), Err(Error::Decrypt)));
        }
    }

    #[test]
    fn nonces_are_random() {
        assert_ne!(random_nonce().unwrap(), random_nonce().unwrap());
    }
}
