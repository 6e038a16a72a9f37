//! Key-encryption keys as custodians hand them over: 32 bytes, zeroized on drop.

use memfs_crypt::CustodyError;
use zeroize::Zeroizing;

/// A fresh random KEK from the operating system.
pub(crate) fn random() -> Result<Zeroizing<[u8; 32]>, CustodyError> {
    let mut kek = Zeroizing::new([0u8; 32]);
    getrandom::fill(&mut kek[..]).map_err(|_| CustodyError("the system random number generator failed".into()))?;
    Ok(kek)
}

/// `bytes` as a KEK, if they are exactly 32.
pub(crate) fn from_slice(bytes: &[u8]) -> Option<Zeroizing<[u8; 32]>> {
    let array: &[u8; 32] = bytes.try_into().ok()?;
    Some(Zeroizing::new(*array))
}
