//! Opening a key slot, and the chain of roots a slot trusts.
//!
//! A credential opens its slot's X25519 secret, which unwraps the root wrapped to the slot.
//! Since anyone can wrap a root to a public key, a slot accepts only a root its holder
//! confirmed (its `tag`) or one that a chain of signatures, each root signing the next
//! (`roots` in the slot set), leads to from one it confirmed. A rotation (`memfs key rotate`)
//! adds a root to the chain, signed by the one before, wraps it to every slot and confirms
//! the rotator's own; another holder's slot renews its confirmation the first time it opens
//! the store since.

use std::fmt;

use zeroize::Zeroizing;

use crate::credential::Credential;
use crate::error::Error;
use crate::root::RootKey;
use crate::slot::{Slot, slot_tag, wrap_root};
use crate::slot_id::{SlotId, SlotKind};
use crate::slot_set::{KeySlots, MAX_ROOTS, RootLink, check_work};

/// A slot opened by a credential: which one, and the root it gave. Keeps the slot's KEK (wiped
/// on drop) so that a stale confirmation can be renewed, and the slot's secret kept, without a
/// second Argon2 run.
pub struct Opened {
    slot: SlotId,
    root: RootKey,
    kek: Zeroizing<[u8; 32]>,
    /// The slot's confirmation names an older root of the chain than the current one.
    stale: bool,
}

impl Opened {
    /// The slot the credential opened.
    pub fn slot(&self) -> SlotId {
        self.slot
    }

    /// The store's root key.
    pub fn root(&self) -> &RootKey {
        &self.root
    }

    /// The root, by value.
    pub fn into_root(self) -> RootKey {
        let Opened { slot: _, root, kek: _, stale: _ } = self;
        root
    }
}

impl Opened {
    /// The X25519 secret of the slot this credential opened, as it stands in `slots`, for an
    /// open store to follow a rotation without the credential ([`KeySlots::root_for`]).
    pub fn slot_secret(&self, slots: &KeySlots, store_id: &[u8; 16]) -> Result<SlotSecret, Error> {
        let slot = &slots.slots[slots.index(self.slot)?];
        Ok(SlotSecret { id: self.slot, secret: slot.unwrap(&self.kek, store_id)? })
    }
}

/// The X25519 secret of one slot, kept (wiped on drop, never printed) by a store that
/// stays open, so that it can unwrap the new root a rotation wraps to its slot.
pub struct SlotSecret {
    id: SlotId,
    secret: Zeroizing<[u8; 32]>,
}

impl SlotSecret {
    /// The slot's id.
    pub fn slot(&self) -> SlotId {
        self.id
    }
}

impl fmt::Debug for SlotSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SlotSecret").field("slot", &self.id).finish_non_exhaustive()
    }
}

impl fmt::Debug for Opened {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Opened").field("slot", &self.slot).finish_non_exhaustive()
    }
}

impl KeySlots {
    /// The slot `credential` opens, and the root it gives.
    ///
    /// Tries only the slots of the credential's kind, in order, so with one passphrase slot
    /// this costs exactly one Argon2 run. Errors: [`Error::WrongKey`] if the credential opens
    /// none of them; [`Error::KdfParams`] if every such slot asks for out-of-range costs (no
    /// Argon2 run for those); [`Error::NoSlot`] if there is no slot of that kind.
    ///
    /// A passphrase first checks that the slots' summed Argon2id work is within
    /// [`MAX_UNLOCK_WORK_KIB`](Self::MAX_UNLOCK_WORK_KIB): [`Error::UnlockWork`] otherwise,
    /// with no Argon2 run. A key file runs no Argon2, so no such check.
    pub fn unlock(&self, credential: &Credential, store_id: &[u8; 16]) -> Result<Opened, Error> {
        let kind = credential.kind().ok_or(Error::Custodian)?;
        if kind == SlotKind::Passphrase {
            check_work(self.passphrase_work(None))?;
        }
        let mut failure = Error::NoSlot { kind };
        for slot in self.slots.iter().filter(|s| s.kind() == kind) {
            let kek = match slot.kek(credential) {
                Ok(kek) => kek,
                Err(e) => {
                    if matches!(failure, Error::NoSlot { .. }) {
                        failure = e;
                    }
                    continue;
                }
            };
            let Ok(inner) = slot.unwrap(&kek, store_id) else {
                failure = Error::WrongKey;
                continue;
            };
            let root = slot.open_root(&inner, store_id)?;
            let stale = self.confirmed(slot, &inner, &root, store_id)?;
            // Authentic but not this set's key: the set was assembled wrongly.
            self.check_root(&root)?;
            return Ok(Opened { slot: slot.id, root, kek, stale });
        }
        Err(failure)
    }

    /// Whether `root`, which `slot` unwrapped, is one its holder confirmed, or one a chain of
    /// signatures leads to from one it confirmed: `Ok(false)` for the root it confirmed last,
    /// `Ok(true)` for a later one (the confirmation is stale: [`KeySlots::renew`] renews it), [`Error::UntrustedRoot`] otherwise.
    ///
    /// Why: the root is wrapped to the slot's *public* key, which anyone can do. Without this,
    /// whoever holds the storage could wrap a root of their own to a slot, with a keyring and a
    /// tag of their own, and the slot's credential would open that store and seal new data
    /// under keys they know. The confirmation needs the slot's secret, and each later root the
    /// previous root's signature.
    fn confirmed(
        &self,
        slot: &Slot,
        secret: &Zeroizing<[u8; 32]>,
        root: &RootKey,
        store_id: &[u8; 16],
    ) -> Result<bool, Error> {
        self.current_root_is(root)?;
        let tag = blake3::Hash::from(slot.tag);
        let confirmed = self
            .roots
            .iter()
            .rposition(|link| blake3::Hash::from(slot_tag(secret, store_id, slot.id, &link.public)) == tag)
            .ok_or(Error::UntrustedRoot)?;
        for index in confirmed + 1..self.roots.len() {
            let (previous, link) = (&self.roots[index - 1], &self.roots[index]);
            let vouch = link.vouch.as_ref().ok_or(Error::UntrustedRoot)?;
            let at = u32::try_from(index).map_err(|_| Error::UntrustedRoot)?;
            if !crate::root::vouched(&previous.public, &link.public, store_id, at, vouch) {
                return Err(Error::UntrustedRoot);
            }
        }
        Ok(confirmed + 1 < self.roots.len())
    }

    /// [`Error::UntrustedRoot`] unless `root` is the last of the chain.
    fn current_root_is(&self, root: &RootKey) -> Result<(), Error> {
        match self.roots.last() {
            Some(link) if link.public == root.public() => Ok(()),
            _ => Err(Error::UntrustedRoot),
        }
    }

    /// Renews the confirmation of the slot `opened` came from, if it named an older root of
    /// the chain than the current one (another holder rotated the store since this slot last
    /// opened it): the slot then confirms `root`, the current root, which the chain vouched
    /// for. Returns whether it changed anything.
    pub fn renew(&mut self, opened: &Opened, root: &RootKey, store_id: &[u8; 16]) -> Result<bool, Error> {
        let index = self.index(opened.slot)?;
        if !opened.stale {
            return Ok(false);
        }
        self.check_root(root)?;
        let slot = &self.slots[index];
        let secret = slot.unwrap(&opened.kek, store_id)?;
        self.slots[index].tag = slot_tag(&secret, store_id, slot.id, &root.public());
        Ok(true)
    }

    /// The root this set wraps to the slot of `secret`: what an open store reads after a
    /// rotation. [`Error::NoSuchSlot`] if the slot was removed, [`Error::Decrypt`] if it no
    /// longer holds that key pair, [`Error::KeyMismatch`] if the root is not the set's.
    pub fn root_for(&self, secret: &SlotSecret, store_id: &[u8; 16]) -> Result<RootKey, Error> {
        let slot = &self.slots[self.index(secret.id)?];
        let root = slot.open_root(&secret.secret, store_id)?;
        self.check_root(&root)?;
        self.confirmed(slot, &secret.secret, &root, store_id)?;
        Ok(root)
    }

    /// Confirms `root` for the slot of `secret` (its holder is at hand: a rotation confirms the
    /// rotator's own slot, so its next unlock has nothing to renew). [`Error::NoSuchSlot`] if
    /// the slot is gone; [`Error::KeyMismatch`] if `root` is not this set's.
    pub fn confirm(&mut self, secret: &SlotSecret, root: &RootKey, store_id: &[u8; 16]) -> Result<(), Error> {
        self.check_root(root)?;
        let index = self.index(secret.id)?;
        self.slots[index].tag = slot_tag(&secret.secret, store_id, secret.id, &root.public());
        Ok(())
    }

    /// Wraps `new_root` to every slot (by its public key: no credential needed) in place of
    /// `old_root`, this set's root, which signs the new one into the chain, for `memfs key
    /// rotate`. [`Error::TooManyEpochs`] past 4,096 roots.
    pub fn rewrap_root(&mut self, old_root: &RootKey, new_root: &RootKey, store_id: &[u8; 16]) -> Result<(), Error> {
        self.check_root(old_root)?;
        if self.roots.len() >= MAX_ROOTS {
            return Err(Error::TooManyEpochs);
        }
        let public = new_root.public();
        let index = u32::try_from(self.roots.len()).map_err(|_| Error::TooManyEpochs)?;
        self.roots.push(RootLink { public, vouch: Some(old_root.vouch(&public, store_id, index)) });
        for slot in &mut self.slots {
            slot.root = wrap_root(&slot.public, new_root, store_id, slot.id)?;
        }
        self.key_check = *new_root.check().as_bytes();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use secrecy::SecretString;

    use super::*;
    use crate::custody::{Custody, CustodyKek};
    use crate::derive::KdfParams;
    use crate::derive::tests::argon2_runs;
    use crate::keyfile::KeyFile;
    use crate::slot::KekSource;

    fn cheap() -> KdfParams {
        KdfParams::new(8, 1, 1).unwrap()
    }

    fn phrase(s: &str) -> Credential {
        Credential::Passphrase(SecretString::from(s))
    }

    #[test]
    fn one_passphrase_slot_costs_one_argon2_run() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&root, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        let file = KeyFile::from_bytes([3; 32]);
        slots.add_key_file_slot(&root, &store, &file).unwrap();

        let before = argon2_runs();
        assert!(slots.unlock(&phrase("a"), &store).is_ok());
        assert_eq!(argon2_runs() - before, 1);
        assert!(matches!(slots.unlock(&phrase("b"), &store), Err(Error::WrongKey)));
        assert_eq!(argon2_runs() - before, 2);
        // A key file never runs Argon2, whatever passphrase slots there are.
        assert!(slots.unlock(&Credential::KeyFile(file), &store).is_ok());
        assert_eq!(argon2_runs() - before, 2);
    }

    #[test]
    fn a_hostile_slot_does_not_hide_a_good_one() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_slot(&root, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        slots.add_slot(&root, &store, &Credential::Passphrase("a".into()), cheap()).unwrap();
        let KekSource::Passphrase { argon2id, .. } = &mut slots.slots[0].source else { unreachable!() };
        argon2id.m_cost = u32::MAX;
        let id = slots.unlock(&phrase("a"), &store).unwrap().slot();
        assert_eq!(id, SlotId::new(2));
        // With a wrong passphrase the tried slot decides: WrongKey.
        assert!(matches!(slots.unlock(&phrase("b"), &store), Err(Error::WrongKey)));
    }

    /// A new root reaches every slot through its public key, with no credential at hand; a
    /// removed slot, which kept its secret, opens only the old root.
    #[test]
    fn a_new_root_reaches_the_remaining_slots_only() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let (kept, removed) = (KeyFile::from_bytes([3; 32]), KeyFile::from_bytes([4; 32]));
        let mut slots = KeySlots::with_key_file(&root, &store, &kept).unwrap();
        let gone = slots.add_key_file_slot(&root, &store, &removed).unwrap();
        let before = slots.clone();
        slots.remove_slot(gone).unwrap();
        let new_root = RootKey::from_bytes([9; 32]);
        slots.rewrap_root(&root, &new_root, &store).unwrap();
        let opened = slots.unlock(&Credential::KeyFile(kept), &store).unwrap();
        assert_eq!(*opened.root().expose(), [9; 32]);
        // An open store follows with the slot's secret alone; the removed slot's cannot.
        let kept_secret = opened.slot_secret(&slots, &store).unwrap();
        assert_eq!(slots.root_for(&kept_secret, &store).map(|r| *r.expose()).unwrap(), [9; 32]);
        let gone_opened = before.unlock(&Credential::KeyFile(KeyFile::from_bytes([4; 32])), &store).unwrap();
        let gone_secret = gone_opened.slot_secret(&before, &store).unwrap();
        assert!(matches!(slots.root_for(&gone_secret, &store), Err(Error::NoSuchSlot { .. })));
        // The removed credential still opens its copy of the old set, and only the old root.
        let old = before.unlock(&Credential::KeyFile(KeyFile::from_bytes([4; 32])), &store).unwrap();
        assert_eq!(*old.root().expose(), [2; 32]);
        assert!(matches!(slots.unlock(&Credential::KeyFile(removed), &store), Err(Error::WrongKey)));
    }

    fn kept(kind: SlotKind, key: &str, kek: u8) -> Credential {
        let custody = Custody { key: key.into(), region: None, wrapped: vec![kek; 3] };
        Credential::Kek(CustodyKek { kind, custody, kek: Zeroizing::new([kek; 32]) })
    }

    /// A custody slot stores its custody (kind, outside key, wrapped KEK) in the clear and
    /// opens with exactly that custody and KEK; the root reaches it through its public key
    /// like any slot. A custodian itself is never taken here.
    #[test]
    fn a_custody_slot_opens_with_its_kek_and_custody_only() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_key_file(&root, &store, &KeyFile::from_bytes([3; 32])).unwrap();
        let age = slots.add_slot(&root, &store, &kept(SlotKind::Age, "age1xyz", 7), cheap()).unwrap();
        let kms = slots.add_slot(&root, &store, &kept(SlotKind::AwsKms, "alias/memfs", 8), cheap()).unwrap();
        let json = serde_json::to_value(&slots).unwrap();
        assert_eq!(json["slots"][1]["kind"], "age");
        assert_eq!(json["slots"][1]["key"], "age1xyz");
        assert_eq!(json["slots"][1]["wrapped_kek"], "070707");
        assert_eq!(json["slots"][2]["kind"], "aws-kms");
        let slots: KeySlots = serde_json::from_value(json).unwrap();
        let listed: Vec<_> = slots.custody_slots().map(|(id, kind, c)| (id, kind, c.key.clone())).collect();
        assert_eq!(listed, [(age, SlotKind::Age, "age1xyz".into()), (kms, SlotKind::AwsKms, "alias/memfs".into())]);
        assert_eq!(slots.unlock(&kept(SlotKind::Age, "age1xyz", 7), &store).unwrap().slot(), age);
        assert_eq!(slots.unlock(&kept(SlotKind::AwsKms, "alias/memfs", 8), &store).unwrap().slot(), kms);
        // Another KEK, another custody, another kind: no.
        assert!(matches!(slots.unlock(&kept(SlotKind::Age, "age1xyz", 8), &store), Err(Error::WrongKey)));
        assert!(matches!(slots.unlock(&kept(SlotKind::Age, "age1abc", 7), &store), Err(Error::WrongKey)));
        assert!(matches!(slots.unlock(&kept(SlotKind::GcpKms, "age1xyz", 7), &store), Err(Error::NoSlot { .. })));
        // A rotation reaches it with no outside key at hand.
        let mut rotated = slots.clone();
        rotated.rewrap_root(&root, &RootKey::from_bytes([9; 32]), &store).unwrap();
        let opened = rotated.unlock(&kept(SlotKind::Age, "age1xyz", 7), &store).unwrap();
        assert_eq!(*opened.root().expose(), [9; 32]);
        // A custodian must be asked by the store first; a custody kind is no passphrase.
        struct Nobody;
        #[async_trait::async_trait]
        impl crate::Custodian for Nobody {
            fn opens(&self, _: SlotKind) -> bool {
                true
            }
            async fn open(
                &self,
                _: SlotKind,
                _: &Custody,
                _: &[u8; 16],
            ) -> Result<Zeroizing<[u8; 32]>, crate::CustodyError> {
                Err(crate::CustodyError("no".into()))
            }
            async fn seal(&self, _: &[u8; 16]) -> Result<CustodyKek, crate::CustodyError> {
                Err(crate::CustodyError("no".into()))
            }
        }
        let nobody = Credential::Custodian(std::sync::Arc::new(Nobody));
        assert!(matches!(slots.unlock(&nobody, &store), Err(Error::Custodian)));
        assert!(matches!(slots.clone().add_slot(&root, &store, &nobody, cheap()), Err(Error::Custodian)));
        let not_custody = Custody { key: "k".into(), region: None, wrapped: Vec::new() };
        assert!(matches!(KekSource::custody(SlotKind::Passphrase, not_custody), Err(Error::Custodian)));
    }

    /// A public key replaced by a low-order point would make the wrapping key public: such a
    /// slot is never wrapped to, and a root sealed with it never opens.
    #[test]
    fn a_low_order_public_key_is_refused() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let mut slots = KeySlots::with_key_file(&root, &store, &KeyFile::from_bytes([3; 32])).unwrap();
        slots.slots[0].public = [0; 32];
        assert!(matches!(slots.rewrap_root(&root, &root, &store), Err(Error::Decrypt)));
    }

    /// The attack the chain of roots meets: the storage holder wraps a root of their own to a
    /// slot's public key (public: anyone can), with the set's check value and chain made to
    /// match. The slot's credential unlocks the slot, and the root is refused: the slot never
    /// confirmed it and no root it confirmed signed it.
    #[test]
    fn a_root_wrapped_to_a_slot_by_someone_else_is_refused() {
        let (store, root) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let file = KeyFile::from_bytes([3; 32]);
        let genuine = KeySlots::with_key_file(&root, &store, &file).unwrap();
        let attacker = RootKey::from_bytes([66; 32]);
        let mut forged = genuine.clone();
        let public = forged.slots[0].public;
        forged.slots[0].root = wrap_root(&public, &attacker, &store, SlotId::new(1)).unwrap();
        forged.key_check = *attacker.check().as_bytes();
        forged.roots = vec![RootLink { public: attacker.public(), vouch: None }];
        assert!(matches!(forged.unlock(&Credential::KeyFile(file), &store), Err(Error::UntrustedRoot)));
        // Appending the attacker's root to the genuine chain needs the genuine root's signature.
        let mut appended = genuine.clone();
        appended.slots[0].root = forged.slots[0].root;
        appended.key_check = forged.key_check;
        let forged_vouch = attacker.vouch(&attacker.public(), &store, 1);
        appended.roots.push(RootLink { public: attacker.public(), vouch: Some(forged_vouch) });
        let file = KeyFile::from_bytes([3; 32]);
        assert!(matches!(appended.unlock(&Credential::KeyFile(file), &store), Err(Error::UntrustedRoot)));
    }

    /// After rotations by another slot's holder, a slot's confirmation names an older root; the
    /// chain of signatures vouches for the current one, and the next unlock confirms it.
    #[test]
    fn a_stale_confirmation_follows_the_chain_and_is_renewed() {
        let (store, first) = ([1u8; 16], RootKey::from_bytes([2; 32]));
        let (mine, theirs) = (KeyFile::from_bytes([3; 32]), KeyFile::from_bytes([4; 32]));
        let mut slots = KeySlots::with_key_file(&first, &store, &mine).unwrap();
        slots.add_key_file_slot(&first, &store, &theirs).unwrap();
        let (second, third) = (RootKey::from_bytes([5; 32]), RootKey::from_bytes([6; 32]));
        slots.rewrap_root(&first, &second, &store).unwrap();
        slots.rewrap_root(&second, &third, &store).unwrap();
        // The rotator confirms its own slot at once; the other holder's is renewed on unlock.
        let theirs_opened = slots.unlock(&Credential::KeyFile(KeyFile::from_bytes([4; 32])), &store).unwrap();
        let theirs_secret = theirs_opened.slot_secret(&slots, &store).unwrap();
        let mut confirmed = slots.clone();
        confirmed.confirm(&theirs_secret, &third, &store).unwrap();
        let fresh = confirmed.unlock(&Credential::KeyFile(KeyFile::from_bytes([4; 32])), &store).unwrap();
        assert!(!confirmed.renew(&fresh, &third, &store).unwrap(), "confirmed: nothing to renew");
        let opened = slots.unlock(&Credential::KeyFile(KeyFile::from_bytes([3; 32])), &store).unwrap();
        assert_eq!(*opened.root().expose(), [6; 32]);
        assert!(slots.renew(&opened, &third, &store).unwrap(), "the confirmation is renewed");
        let again = slots.unlock(&Credential::KeyFile(mine), &store).unwrap();
        assert!(!slots.renew(&again, &third, &store).unwrap(), "and then current");
        // A link whose signature is broken breaks the chain for a stale slot.
        let mut broken = slots.clone();
        broken.roots[2].vouch = Some([0; 64]);
        assert!(matches!(broken.unlock(&Credential::KeyFile(theirs), &store), Err(Error::UntrustedRoot)));
    }
}
