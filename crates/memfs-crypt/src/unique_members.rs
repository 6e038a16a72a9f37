//! JSON with no member name repeated in one object, for `memfs.keys`: its tag covers the
//! object as parsed (`keys_object::tag_body`), and a parser keeps the last of two members of one
//! name, so a copy planted before a genuine member would pass the tag here while a reader that
//! keeps the first reads the copy. Refusing repeats leaves one reading for every reader.

use std::collections::HashSet;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// Walks a JSON value and refuses an object that repeats a member name.
pub(crate) struct UniqueMembers;

impl<'de> Deserialize<'de> for UniqueMembers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueMembers)
    }
}

impl<'de> Visitor<'de> for UniqueMembers {
    type Value = UniqueMembers;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            if !seen.insert(name.clone()) {
                return Err(de::Error::custom(format_args!("the member {name:?} is repeated in one object")));
            }
            map.next_value::<UniqueMembers>()?;
        }
        Ok(UniqueMembers)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<UniqueMembers>()?.is_some() {}
        Ok(UniqueMembers)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(UniqueMembers)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(UniqueMembers)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(UniqueMembers)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(UniqueMembers)
    }
    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(UniqueMembers)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(UniqueMembers)
    }
}
