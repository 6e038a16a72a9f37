//! Object paths, `objects/{id[0..2]}/{id}` (64 lowercase hex digits), which make up most of a
//! log: a record stores them as the 32 bytes of `id`, 32 bytes instead of 75, and so does an
//! index file (a put's entry the first 16).

/// The 32 bytes of `name` if it is an object path in exactly that form.
pub(super) fn object_id(name: &str) -> Option<[u8; 32]> {
    let hex = name.strip_prefix("objects/")?;
    let (fan, id) = hex.split_once('/')?;
    if id.len() != 64 || fan.len() != 2 || !id.starts_with(fan) {
        return None;
    }
    // Lowercase only, as every object path is spelled (`base16ct::lower` refuses upper case;
    // twice as fast as `hex`, which matters here: every lookup and index entry decodes one).
    let mut out = [0; 32];
    base16ct::lower::decode(id, &mut out).ok()?;
    Some(out)
}

/// Writes the object path of `id` into `out`.
pub(super) fn object_path(id: &[u8], out: &mut String) {
    let mut spelled = [0; 64];
    hex::encode_to_slice(id, &mut spelled).expect("32 bytes are 64 hex digits");
    out.clear();
    out.push_str("objects/");
    out.push_str(std::str::from_utf8(&spelled[..2]).expect("hex is ASCII"));
    out.push('/');
    out.push_str(std::str::from_utf8(&spelled).expect("hex is ASCII"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_lowercase_object_path_in_its_own_fan_has_an_id() {
        let id: [u8; 32] = std::array::from_fn(|i| (i as u8).wrapping_mul(37));
        let mut path = String::new();
        object_path(&id, &mut path);
        assert_eq!(object_id(&path), Some(id));
        assert_eq!(object_id(&path.to_uppercase().replacen("OBJECTS", "objects", 1)), None);
        assert_eq!(object_id(&path.replacen("objects/00", "objects/01", 1)), None);
        assert_eq!(object_id(&path[..path.len() - 1]), None);
        assert_eq!(object_id(&format!("{path}0")), None);
        assert_eq!(object_id(&path.replacen("objects/", "object/", 1)), None);
    }
}
