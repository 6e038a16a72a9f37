//! Fixed-width keys: paths `{prefix}{hex[0..2]}/{hex}` (64 lowercase hex digits) under a
//! prefix the caller names, which may make up most of a log (memfs's `objects/`). A record
//! stores such a path as its 32 bytes, 32 bytes instead of `prefix.len() + 67`, and so does an
//! index file (a put's entry the first 16). Without a prefix every path is stored as UTF-8.
//!
//! The form is part of the folder's format: a log is read with the prefix it was written with.

use std::sync::Arc;

/// Which paths are stored as 32 bytes: those of the form above under `prefix`, or none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FixedKeys {
    prefix: Option<Arc<str>>,
}

impl FixedKeys {
    /// Paths `{prefix}{hex[0..2]}/{hex}` stored as 32 bytes.
    pub(crate) fn under(prefix: &str) -> FixedKeys {
        FixedKeys { prefix: Some(Arc::from(prefix)) }
    }

    /// Whether any path is stored as 32 bytes.
    pub(crate) fn any(&self) -> bool {
        self.prefix.is_some()
    }

    /// The 32 bytes of `name` if it is a fixed-width key in exactly that form.
    pub(crate) fn id(&self, name: &str) -> Option<[u8; 32]> {
        let hex = name.strip_prefix(self.prefix.as_deref()?)?;
        let (fan, id) = hex.split_once('/')?;
        if id.len() != 64 || fan.len() != 2 || !id.starts_with(fan) {
            return None;
        }
        // Lowercase only, as every such path is spelled (`base16ct::lower` refuses upper case;
        // twice as fast as `hex`, which matters here: every lookup and index entry decodes one).
        let mut out = [0; 32];
        base16ct::lower::decode(id, &mut out).ok()?;
        Some(out)
    }

    /// Writes the path of `id` into `out`. Only called for bytes stored as a fixed-width key,
    /// which a log without a prefix refuses before (`record.rs`, `table.rs`).
    pub(crate) fn spell(&self, id: &[u8], out: &mut String) {
        let mut spelled = [0; 64];
        hex::encode_to_slice(id, &mut spelled).expect("32 bytes are 64 hex digits");
        out.clear();
        out.push_str(self.prefix.as_deref().unwrap_or_default());
        out.push_str(std::str::from_utf8(&spelled[..2]).expect("hex is ASCII"));
        out.push('/');
        out.push_str(std::str::from_utf8(&spelled).expect("hex is ASCII"));
    }

    /// How many bytes `path` takes in a record: a fixed-width key its 32 bytes.
    pub(crate) fn stored_len(&self, path: &str) -> usize {
        self.id(path).map_or(path.len(), |id| id.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_lowercase_key_in_its_own_fan_has_an_id() {
        let keys = FixedKeys::under("objects/");
        let id: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(37));
        let mut path = String::new();
        keys.spell(&id, &mut path);
        assert_eq!(keys.id(&path), Some(id));
        assert_eq!(keys.id(&path.to_uppercase().replacen("OBJECTS", "objects", 1)), None);
        assert_eq!(keys.id(&path.replacen("objects/00", "objects/01", 1)), None);
        assert_eq!(keys.id(&path[..path.len() - 1]), None);
        assert_eq!(keys.id(&format!("{path}0")), None);
        assert_eq!(keys.id(&path.replacen("objects/", "object/", 1)), None);
        assert_eq!(FixedKeys::default().id(&path), None);
        assert_eq!(FixedKeys::under("").id(&path["objects/".len()..]), Some(id));
    }
}
