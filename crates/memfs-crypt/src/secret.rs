//! 32 secret bytes, zeroized on drop: the body of a [`FirstKey`](crate::FirstKey) and of a
//! [`KeyFile`](crate::KeyFile).
//!
//! One place fills them from the operating system's RNG straight into their final place (no
//! copy left on the stack) and gives them out only by reference.

use zeroize::ZeroizeOnDrop;

use crate::error::Error;

/// 32 secret bytes. No `Debug`, `Clone` or `AsRef<[u8]>`: the types that hold it decide.
#[derive(ZeroizeOnDrop)]
pub(crate) struct Secret32([u8; 32]);

impl Secret32 {
    /// All zero, to be filled in place.
    pub(crate) const fn zeroed() -> Self {
        Secret32([0; 32])
    }

    /// Fresh random bytes from the operating system.
    pub(crate) fn random() -> Result<Self, Error> {
        let mut key = Self::zeroed();
        getrandom::fill(&mut key.0).map_err(|_| Error::Random)?;
        Ok(key)
    }

    /// Takes ownership of `bytes`; the caller should zeroize its own copy.
    pub(crate) const fn new(bytes: [u8; 32]) -> Self {
        Secret32(bytes)
    }

    /// The bytes.
    pub(crate) fn expose(&self) -> &[u8; 32] {
        &self.0
    }

    /// The bytes, to fill in place.
    pub(crate) fn expose_mut(&mut self) -> &mut [u8; 32] {
        &mut self.0
    }
}
