//! Object paths, `objects/{id[0..2]}/{id}` (64 lowercase hex digits), which make up most of a
//! log: an index file stores them as the 32 bytes of `id`, and so does a record of log version
//! 2, 32 bytes instead of 75.

/// The 32 bytes of `name` if it is an object path in exactly that form.
pub(super) fn object_id(name: &str) -> Option<[u8; 32]> {
    let hex = name.strip_prefix("objects/")?;
    let (fan, id) = hex.split_once('/')?;
    // Lowercase only: `hex` also takes upper case, which no object path has.
    if id.len() != 64 || !id.starts_with(fan) || fan.len() != 2 || id.bytes().any(|c| c.is_ascii_uppercase()) {
        return None;
    }
    let mut out = [0; 32];
    hex::decode_to_slice(id, &mut out).ok()?;
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
