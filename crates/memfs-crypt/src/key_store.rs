//! [`KeyStore`]: `memfs.keys` read from and written to the [`KeysCell`] it is given, its only
//! I/O. What may be written, and when a write is proved not in, is decided here.

use crate::keys_cell::{KeysCell, Swap};
use crate::keys_error::KeysError;
use crate::keys_object::{Confirmation, KeysObject};
use crate::{KeySet, RootKey};

/// How many times [`KeyStore::write_over`] reads and swaps again when another writer changed
/// `memfs.keys` meanwhile.
const OVERWRITE_ATTEMPTS: usize = 8;

/// `memfs.keys` in the cell `C`.
pub struct KeyStore<C> {
    cell: C,
}

impl<C: KeysCell> KeyStore<C> {
    /// The key store kept in `cell`.
    pub fn new(cell: C) -> Self {
        KeyStore { cell }
    }

    /// `memfs.keys` parsed ([`KeysObject::parse`]), and the version it was read at;
    /// [`KeysError::Missing`] when there is none.
    pub async fn read(&self) -> Result<(KeysObject, C::Version), C::Error> {
        let Some((bytes, version)) = self.cell.read().await? else { return Err(KeysError::Missing.into()) };
        Ok((KeysObject::parse(&bytes)?, version))
    }

    /// Writes `object` (a new store's, sealed by the caller) into the empty cell;
    /// [`KeysError::Exists`] if it holds one already.
    pub async fn create(&self, object: &KeysObject) -> Result<(), C::Error> {
        match self.cell.create(object.to_bytes()).await {
            Swap::Landed => Ok(()),
            Swap::Conflict => Err(KeysError::Exists.into()),
            Swap::Failed(e) | Swap::Unknown(e) => Err(e),
        }
    }

    /// Writes `object` by compare-and-swap on `version`, as it is (sealed by the caller).
    /// [`KeysError::Conflict`] if `memfs.keys` changed meanwhile.
    pub async fn put(&self, version: &C::Version, object: &KeysObject) -> Result<(), C::Error> {
        match self.cell.swap(version, object.to_bytes()).await {
            Swap::Landed => Ok(()),
            Swap::Conflict => Err(KeysError::Conflict.into()),
            Swap::Failed(e) | Swap::Unknown(e) => Err(e),
        }
    }

    /// Writes `set` back by compare-and-swap on the version it was read at, sealed.
    /// [`KeysError::Conflict`] if `memfs.keys` changed meanwhile.
    pub async fn write(&self, set: &mut KeySet<C::Version>) -> Result<(), C::Error> {
        set.seal();
        self.put(set.version(), set.object()).await?;
        set.written();
        Ok(())
    }

    /// [`KeyStore::write`] of a change a user asked for, its answer possibly lost: its error
    /// ([`KeysError::Conflict`] when refused) only when the change is proved not in
    /// (`memfs.keys` holds another change of the same counter, which the same compare-and-swap
    /// let in instead, or an older one), and [`KeysError::OutcomeUnknown`] when it may be (a
    /// newer counter: a change made after one that may have been this one; or a cell that
    /// could not be read).
    pub async fn write_settled(&self, set: &mut KeySet<C::Version>) -> Result<(), C::Error> {
        set.seal();
        let e = match self.cell.swap(set.version(), set.object().to_bytes()).await {
            Swap::Landed => {
                set.written();
                return Ok(());
            }
            Swap::Unknown(_) => return Err(KeysError::OutcomeUnknown.into()),
            Swap::Conflict => KeysError::Conflict.into(),
            Swap::Failed(e) => e,
        };
        let ours = set.keyring().counter();
        let now = match self.cell.read().await {
            Ok(Some((bytes, _))) => KeysObject::parse(&bytes).ok().map(|k| k.keyring.counter()),
            _ => None,
        };
        match now {
            Some(now) if now <= ours => Err(e),
            _ => Err(KeysError::OutcomeUnknown.into()),
        }
    }

    /// Writes `object` (the key set a shred ends with) over whatever `memfs.keys` holds now,
    /// its counter raised above that one's and sealed by `seal`, by compare-and-swap (tried
    /// again when another writer changed `memfs.keys` meanwhile: its change was made with the
    /// keys being retired).
    pub async fn write_over(
        &self,
        object: &mut KeysObject,
        seal: impl Fn(&mut KeysObject) + Sync,
    ) -> Result<(), C::Error> {
        for _ in 0..OVERWRITE_ATTEMPTS {
            let (now, version) = self.read().await?;
            object.keyring.raise_counter(now.keyring.counter() + 1);
            seal(object);
            match self.cell.swap(&version, object.to_bytes()).await {
                Swap::Landed => return Ok(()),
                Swap::Conflict => continue,
                Swap::Failed(e) | Swap::Unknown(e) => return Err(e),
            }
        }
        Err(KeysError::Conflict.into())
    }

    /// Removes `mark` from `memfs.keys` by compare-and-swap, cleared by `clear` (with
    /// [`KeysObject::clear_mark`] under the root the caller holds; `None`: it holds none, and
    /// nothing is written); nothing either if the mark is gone or another writer changed
    /// `memfs.keys` meanwhile (its own write took the mark, or its next open will).
    pub async fn clear_mark(
        &self,
        mark: Confirmation,
        clear: impl Fn(&mut KeysObject) -> Option<Result<(), KeysError>> + Sync,
    ) -> Result<(), C::Error> {
        let (mut object, version) = self.read().await?;
        if object.unrecorded != Some(mark) {
            return Ok(());
        }
        match clear(&mut object) {
            None => return Ok(()),
            Some(sealed) => sealed?,
        }
        match self.cell.swap(&version, object.to_bytes()).await {
            Swap::Landed | Swap::Conflict => Ok(()),
            Swap::Failed(e) | Swap::Unknown(e) => Err(e),
        }
    }
}

impl KeysObject {
    /// Clears the unrecorded mark, once this object's tag holds under `root`, and seals it
    /// again under `root`.
    pub fn clear_mark(&mut self, root: &RootKey) -> Result<(), KeysError> {
        self.authenticate(root)?;
        self.unrecorded = None;
        self.seal(root);
        Ok(())
    }
}
