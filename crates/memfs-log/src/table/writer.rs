//! Writing a segment's index file (the layout is in the parent module's doc): its entries in
//! blocks, the bloom filter and the block directory, then its header.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path as FsPath;

use integer_encoding::VarInt;

use super::{
    BLOCK_LEN, BLOOM_BITS_PER_ENTRY, BlockRef, CHECKSUM_LEN, MAGIC, PREFIX_LEN, Seal, Slot, TABLE_HEADER_LEN,
    TAG_COMPACTED_PUT, TAG_DELETE, TAG_OBJECT_PATH, TAG_PUT, Table, VERSION, path, probes,
};
use crate::checksum;
use crate::error::LogError;
use crate::fixed_keys::FixedKeys;
use crate::local_fs;

/// Writes segment `seal.segment`'s index from its entries, sorted by path, then renames it into
/// place. `estimate` sizes the bloom filter (at least the number of entries). `None` if an
/// entry cannot be indexed (a path longer than 64 KiB): that segment is read instead.
pub(crate) fn write<'a>(
    log_dir: &FsPath,
    seal: Seal,
    keys: &FixedKeys,
    estimate: usize,
    entries: impl Iterator<Item = Result<(&'a str, &'a Slot), LogError>>,
) -> Result<Option<Table>, LogError> {
    let final_path = path(log_dir, seal.segment);
    let tmp = log_dir.join(format!("{:016x}.index.tmp", seal.segment));
    let file = local_fs::create_new(&tmp, 0o600).map_err(LogError::open("create", &tmp))?;
    let written = write_file(&file, &tmp, seal, keys, estimate, entries);
    match written {
        Ok(Some(())) => {}
        Ok(None) | Err(_) => {
            let _ = std::fs::remove_file(&tmp);
            return written.map(|_| None);
        }
    }
    std::fs::rename(&tmp, &final_path).map_err(LogError::io("rename", &tmp))?;
    drop(file);
    Ok(Table::read(log_dir, seal.segment, keys).filter(|t| t.seal == seal))
}

/// Writes the whole index into `file`, created at `tmp`: a header left zero, the entries'
/// blocks, the bloom filter and the block directory, then the header; and syncs it. `None` if
/// an entry cannot be indexed.
fn write_file<'a>(
    file: &File,
    tmp: &FsPath,
    seal: Seal,
    keys: &FixedKeys,
    estimate: usize,
    entries: impl Iterator<Item = Result<(&'a str, &'a Slot), LogError>>,
) -> Result<Option<()>, LogError> {
    let mut w = BufWriter::with_capacity(1 << 16, file);
    let io = |e| LogError::io("write", tmp)(e);
    w.write_all(&[0; TABLE_HEADER_LEN]).map_err(io)?;
    let mut blocks = Blocks::new(seal.segment, estimate);
    for item in entries {
        let (name, slot) = item?;
        if !blocks.add(&mut w, name, slot, keys).map_err(io)? {
            return Ok(None);
        }
    }
    if !blocks.block.is_empty() {
        blocks.flush(&mut w).map_err(io)?;
    }
    let meta = blocks.meta();
    w.write_all(&meta).map_err(io)?;
    w.flush().map_err(io)?;
    drop(w);
    file.write_all_at(&blocks.header(seal, &meta), 0).map_err(io)?;
    // Synced before the rename: after a crash the name never shows a file without its data
    // (which would be refused anyway, by its checksums, and read around).
    file.sync_data().map_err(LogError::io("sync", tmp))?;
    Ok(Some(()))
}

/// The entries' blocks as they are written, and what the bloom filter, the block directory and
/// the header (written last, at the start of the file) are made of.
struct Blocks {
    /// The segment indexed: its number is in every block's checksum.
    segment: u64,
    bloom: Vec<u64>,
    /// The blocks written.
    dir: Vec<BlockRef>,
    /// The block being filled.
    block: Vec<u8>,
    /// Its first path in the directory.
    first: String,
    /// Where it starts in the file.
    offset: u64,
    /// The entries written.
    count: u64,
    /// The entry at hand, encoded.
    one: Vec<u8>,
    /// The previous entry's time (0 before the first): an entry's time is stored as the
    /// difference from it, and whole when the entry starts a block.
    last_time: u64,
    /// The path before the current one: a block's first path in the directory is the
    /// shortest start of its first entry's that sorts after it (readers only compare keys
    /// against it), so the directory read on every open stays small.
    previous: String,
}

impl Blocks {
    /// No blocks yet, in segment `segment`'s index, with a bloom filter sized for `estimate`
    /// entries.
    fn new(segment: u64, estimate: usize) -> Self {
        let words = (estimate as u64).max(1).saturating_mul(BLOOM_BITS_PER_ENTRY).div_ceil(64).max(1);
        Blocks {
            segment,
            bloom: vec![0u64; words as usize],
            dir: Vec::new(),
            block: Vec::with_capacity(BLOCK_LEN),
            first: String::new(),
            offset: TABLE_HEADER_LEN as u64,
            count: 0,
            one: Vec::new(),
            last_time: 0,
            previous: String::new(),
        }
    }

    /// Adds one entry, writing out the block first if the entry does not fit in it; `false` if
    /// its path is too long for the format.
    fn add(&mut self, w: &mut BufWriter<&File>, name: &str, slot: &Slot, keys: &FixedKeys) -> std::io::Result<bool> {
        self.one.clear();
        let mut time = self.last_time;
        if !encode_entry(&mut self.one, name, slot, keys, &mut time) {
            return Ok(false);
        }
        if !self.block.is_empty() && self.block.len() + self.one.len() + CHECKSUM_LEN > BLOCK_LEN {
            self.flush(w)?;
            // The entry starts a block: encoded again against no previous time.
            self.one.clear();
            time = 0;
            encode_entry(&mut self.one, name, slot, keys, &mut time);
        }
        self.last_time = time;
        if self.block.is_empty() {
            self.first.clear();
            self.first.push_str(match self.previous.is_empty() {
                true => name,
                false => separator(&self.previous, name),
            });
        }
        self.previous.clear();
        self.previous.push_str(name);
        self.block.extend_from_slice(&self.one);
        bloom_insert(&mut self.bloom, name);
        self.count += 1;
        Ok(true)
    }

    /// Writes out the block with its checksum and lists it in the directory.
    fn flush(&mut self, w: &mut BufWriter<&File>) -> std::io::Result<()> {
        w.write_all(&self.block)?;
        w.write_all(&checksum::of_segment(self.segment, &self.block))?;
        self.dir.push(BlockRef { offset: self.offset, len: self.block.len() as u32, first: self.first.clone() });
        self.offset += (self.block.len() + CHECKSUM_LEN) as u64;
        self.block.clear();
        Ok(())
    }

    /// The bloom filter and the block directory, as they follow the blocks.
    fn meta(&self) -> Vec<u8> {
        let mut meta = Vec::with_capacity(self.bloom.len() * 8 + self.dir.len() * 64);
        for word in &self.bloom {
            meta.extend_from_slice(&word.to_le_bytes());
        }
        for b in &self.dir {
            meta.extend_from_slice(&b.offset.to_le_bytes());
            meta.extend_from_slice(&b.len.to_le_bytes());
            put_str(&mut meta, &b.first);
        }
        meta
    }

    /// The header of `seal`'s index, once every block is written and `meta` follows them.
    fn header(&self, seal: Seal, meta: &[u8]) -> [u8; TABLE_HEADER_LEN] {
        let mut h = [0u8; TABLE_HEADER_LEN];
        h[..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[16..24].copy_from_slice(&seal.segment.to_le_bytes());
        h[24..32].copy_from_slice(&seal.covered_len.to_le_bytes());
        h[32..48].copy_from_slice(&seal.last_checksum);
        h[48..56].copy_from_slice(&self.count.to_le_bytes());
        h[56..64].copy_from_slice(&seal.dead.to_le_bytes());
        h[64..72].copy_from_slice(&self.offset.to_le_bytes());
        h[72..80].copy_from_slice(&(meta.len() as u64).to_le_bytes());
        h[80..88].copy_from_slice(&(self.bloom.len() as u64).to_le_bytes());
        h[88..96].copy_from_slice(&(self.dir.len() as u64).to_le_bytes());
        h[96..112].copy_from_slice(&checksum::of_segment(seal.segment, meta));
        let sum = checksum::of_segment(0, &h[..TABLE_HEADER_LEN - CHECKSUM_LEN]);
        h[TABLE_HEADER_LEN - CHECKSUM_LEN..].copy_from_slice(&sum);
        h
    }
}

/// The shortest start of `name` that sorts after `before` (which sorts before `name`): where
/// a block begins, between the previous block's last path and its own first.
fn separator<'a>(before: &str, name: &'a str) -> &'a str {
    let differ = before.bytes().zip(name.bytes()).take_while(|(a, b)| a == b).count();
    let mut end = (differ + 1).min(name.len());
    while !name.is_char_boundary(end) {
        end += 1;
    }
    &name[..end]
}

/// Encodes one entry; `false` if its path is too long for the format. `last_time`: the time of
/// the block's previous entry (0 for its first), which an entry's is relative to, replaced by
/// this entry's.
fn encode_entry(out: &mut Vec<u8>, name: &str, slot: &Slot, keys: &FixedKeys, last_time: &mut u64) -> bool {
    let tag = match slot {
        Slot::Live(e) if e.origin.is_some() => TAG_COMPACTED_PUT,
        Slot::Live(_) => TAG_PUT,
        Slot::Deleted => TAG_DELETE,
    };
    match keys.id(name) {
        Some(id) => {
            out.push(tag | TAG_OBJECT_PATH);
            // A delete has no record offset to confirm a prefix by: it keeps the whole id.
            out.extend_from_slice(if tag != TAG_DELETE { &id[..PREFIX_LEN] } else { &id });
        }
        None => {
            if u16::try_from(name.len()).is_err() {
                return false;
            }
            out.push(tag);
            put_str(out, name);
        }
    }
    let Slot::Live(e) = slot else { return true };
    let origin = e.origin.map(|(s, o)| [s, o]);
    // Wrapping, and read back the same way: any two u64 times have a difference.
    let delta = e.time_ms.wrapping_sub(*last_time) as i64;
    put_varint(out, e.offset);
    put_varint(out, e.record_len);
    put_varint(out, delta);
    origin.iter().flatten().for_each(|&n| put_varint(out, n));
    *last_time = e.time_ms;
    true
}

/// Appends `n` as a varint, without the allocation `encode_var_vec` makes (an index write
/// encodes some 20,000 entries).
fn put_varint(out: &mut Vec<u8>, n: impl VarInt) {
    let mut buf = [0u8; 10];
    let len = n.encode_var(&mut buf);
    out.extend_from_slice(&buf[..len]);
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u16).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn bloom_insert(bloom: &mut [u64], name: &str) {
    for bit in probes(checksum::of_path(name), bloom.len() as u64 * 64) {
        bloom[(bit / 64) as usize] |= 1 << (bit % 64);
    }
}

#[cfg(test)]
mod tests {
    use object_store::path::Path;

    use super::*;
    use crate::table::{Confirm, Entry, Key};

    #[test]
    fn a_block_starts_at_the_shortest_start_of_its_first_path_after_the_last() {
        assert_eq!(separator("p/00099/long", "p/00100/long"), "p/001");
        assert_eq!(separator("p/a", "p/ab"), "p/ab");
        assert_eq!(separator("p/a", "p/a/b"), "p/a/");
        // Never inside a character.
        assert_eq!(separator("p/é1", "p/éa"), "p/éa");
        assert_eq!(separator("p/a", "p/éa"), "p/é");
        // Long paths that differ early: the directory keeps their starts only (at most
        // `p/` and five digits).
        let dir = tempfile::tempdir().unwrap();
        let names: Vec<Path> = (0..3000).map(|i| Path::from(format!("p/{i:05}/{}", "x".repeat(60)))).collect();
        let slot = Slot::Live(Entry { segment: 3, offset: 1, record_len: 100, time_ms: 7, origin: None, path_len: 0 });
        let seal = Seal { segment: 3, covered_len: 1000, last_checksum: [0; 16], dead: 0 };
        let mut table =
            write(dir.path(), seal, &FixedKeys::default(), names.len(), names.iter().map(|n| Ok((n.as_ref(), &slot))))
                .unwrap()
                .unwrap();
        let firsts: Vec<String> = table.meta().unwrap().dir.iter().map(|b| b.first.clone()).collect();
        assert!(firsts.len() > 100, "{} blocks", firsts.len());
        assert_eq!(firsts[0], names[0].as_ref());
        assert!(firsts[1..].iter().all(|f| f.len() <= 7), "{firsts:?}");
        let segment = File::create(dir.path().join("segment")).unwrap();
        for n in &names {
            assert!(table.get(&Key::new(n), &segment, Confirm::Yes).unwrap().is_some(), "{n}");
        }
    }
}
