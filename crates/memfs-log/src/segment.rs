//! Segment files: names, listing, opening, creating, and scanning their records.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::error::LogError;
use super::fixed_keys::FixedKeys;
use super::record::{self, HEADER_LEN, Header, Parsed, Record};
use crate::local_fs::{self, OpenError};

/// The file of segment `n`: 16 lowercase hex digits, so names sort as numbers.
pub(super) fn path(log_dir: &Path, n: u64) -> PathBuf {
    log_dir.join(format!("{n:016x}"))
}

fn parse_name(name: &str) -> Option<u64> {
    let hex = |c: char| c.is_ascii_digit() || ('a'..='f').contains(&c);
    // Numbering starts at 1.
    (name.len() == 16 && name.chars().all(hex)).then(|| u64::from_str_radix(name, 16).ok()).flatten().filter(|&n| n > 0)
}

/// The segment numbers in the folder, ascending. Other names (a `.tmp` of a segment being
/// created) are ignored.
pub(super) fn list(log_dir: &Path) -> Result<Vec<u64>, LogError> {
    let mut numbers = Vec::new();
    for entry in std::fs::read_dir(log_dir).map_err(LogError::io("list", log_dir))? {
        let entry = entry.map_err(LogError::io("list", log_dir))?;
        if let Some(n) = entry.file_name().to_str().and_then(parse_name) {
            numbers.push(n);
        }
    }
    numbers.sort_unstable();
    Ok(numbers)
}

/// Removes what interrupted work left (under the write lock, when no creation is under way):
/// the `.tmp` files of segment and index creations, and the index files of segments below
/// `base`, which a compaction superseded.
pub(super) fn remove_leftovers(log_dir: &Path, base: u64) -> Result<(), LogError> {
    for entry in std::fs::read_dir(log_dir).map_err(LogError::io("list", log_dir))? {
        let entry = entry.map_err(LogError::io("list", log_dir))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let leftover = if let Some(n) = name.strip_suffix(".index.tmp").or_else(|| name.strip_suffix(".tmp")) {
            parse_name(n).is_some()
        } else if let Some(n) = name.strip_suffix(".index") {
            parse_name(n).is_some_and(|n| n < base)
        } else {
            false
        };
        if leftover {
            match std::fs::remove_file(entry.path()) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(LogError::io("remove", entry.path())(e)),
                _ => {}
            }
        }
    }
    Ok(())
}

/// Opens segment `n` and reads its header; `None` if it does not exist.
pub(super) fn open(log_dir: &Path, n: u64) -> Result<Option<(File, Header)>, LogError> {
    let file_path = path(log_dir, n);
    let file = match local_fs::open_file(&file_path, OpenOptions::new().read(true).write(true)) {
        Ok(f) => f,
        Err(OpenError::Io(e)) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(LogError::open("open", file_path)(e)),
    };
    let mut header = [0; HEADER_LEN as usize];
    let read = read_full_at(&file, &mut header, 0).map_err(LogError::io("read", &file_path))?;
    let header =
        record::decode_header(&header[..read]).map_err(|reason| LogError::BadHeader { file: file_path, reason })?;
    Ok(Some((file, header)))
}

/// Creates segment `n`: header and `body` go to a temporary file, which is synced and then
/// renamed into place, and the folder is synced. So a segment is never seen without its whole
/// header, and a compacted segment is never seen half-written (it supersedes every earlier
/// one the moment it appears). The caller holds the write lock, and has seen that `n` does not
/// exist. `body` is given the writer and the temporary file's name. Returns the open file.
pub(super) fn create(
    log_dir: &Path,
    n: u64,
    compacted: bool,
    body: impl FnOnce(&mut BufWriter<&File>, &Path) -> Result<(), LogError>,
) -> Result<File, LogError> {
    let final_path = path(log_dir, n);
    let tmp = final_path.with_extension("tmp");
    // Never create-and-truncate: a link planted at the temporary name would have this write
    // through it, into any file the user can write. A stale one is unlinked instead.
    let file = local_fs::create_new(&tmp, 0o600).map_err(LogError::open("create", &tmp))?;
    let mut w = BufWriter::with_capacity(1 << 20, &file);
    w.write_all(&record::encode_header(compacted)).map_err(LogError::io("write", &tmp))?;
    body(&mut w, &tmp)?;
    w.flush().map_err(LogError::io("write", &tmp))?;
    drop(w);
    file.sync_data().map_err(LogError::io("sync", &tmp))?;
    std::fs::rename(&tmp, &final_path).map_err(LogError::io("rename", &tmp))?;
    sync_dir(log_dir)?;
    Ok(file)
}

/// Makes the folder's entries (a new or removed segment) durable.
pub(super) fn sync_dir(dir: &Path) -> Result<(), LogError> {
    let d = local_fs::open_dir(dir).map_err(LogError::open("sync", dir))?;
    d.sync_all().map_err(LogError::io("sync", dir))
}

/// Reads into `buf` from `offset` until it is full or the file ends; returns the bytes read.
pub(super) fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(k) => done += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Where a scan stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ScanEnd {
    /// At the end, on a record boundary.
    Clean(u64),
    /// At an incomplete or torn last record starting here (see [`record::parse`]).
    Tail(u64),
    /// At eight zero bytes where a record would start: the rest of the segment is space a
    /// writer filled with zeros ahead of its records (see `State::append`), or never written.
    /// Not read further than the scan had read already: zeros were seen up to `checked`.
    Zeros {
        /// Where the records end.
        at: u64,
        /// The end of the zeros already read after `at` (at least `at + 8`).
        checked: u64,
    },
}

/// The most a scan reads at once.
const CHUNK: usize = 1 << 20;

/// What a scan reads first, doubling with each further read up to [`CHUNK`]: the records
/// appended since a reader last looked are usually a few kilobytes, followed by the zeros
/// written ahead of them, which need not be read.
const FIRST_CHUNK: usize = 8 << 10;

/// Whether the eight bytes at the start of `avail` are zeros: no record starts with them (its
/// length field and that field's complement cannot both be zero).
pub(super) fn starts_with_zeros(avail: &[u8]) -> bool {
    avail.get(..8).is_some_and(|head| head.iter().all(|&b| b == 0))
}

/// A page of zeros to compare with.
static ZEROS: [u8; 4096] = [0; 4096];

/// How many zero bytes start `bytes`. Compared a page at a time (`memcmp`, fast in unoptimised
/// test builds too, where a loop over the bytes is not).
pub(super) fn zeros_prefix(bytes: &[u8]) -> usize {
    let mut n = 0;
    for chunk in bytes.chunks(ZEROS.len()) {
        if chunk != &ZEROS[..chunk.len()] {
            return n + chunk.iter().position(|&b| b != 0).unwrap_or(chunk.len());
        }
        n += chunk.len();
    }
    n
}

/// Scans the records of `file` from `from` (a record boundary) to `end`, the file's length
/// when the caller looked, calling `visit` with each record's offset. Bytes appended after
/// that look are left for the next scan; reading stops early if the file got shorter.
pub(super) fn scan(
    file: &File,
    file_path: &Path,
    from: u64,
    end: u64,
    keys: &FixedKeys,
    mut visit: impl FnMut(u64, &Record<'_>, &[u8]) -> Result<(), LogError>,
) -> Result<ScanEnd, LogError> {
    let mut buf: Vec<u8> = Vec::new();
    let mut base = from; // the file offset of buf[0]
    let mut at = 0; // the next record, in buf
    let mut eof = from >= end;
    let mut chunk = FIRST_CHUNK;
    loop {
        if starts_with_zeros(&buf[at..]) {
            let zeros = zeros_prefix(&buf[at..]);
            return Ok(ScanEnd::Zeros { at: base + at as u64, checked: base + (at + zeros) as u64 });
        }
        match record::parse(&buf[at..], eof, keys) {
            Parsed::Record(r) => {
                let len = r.len;
                visit(base + at as u64, &r, &buf[at..at + len])?;
                at += len;
            }
            Parsed::NeedMore(want) if !eof => {
                buf.drain(..at);
                base += at as u64;
                at = 0;
                let pos = base + buf.len() as u64;
                let left = usize::try_from(end - pos).unwrap_or(usize::MAX);
                let target = match want {
                    // Read a whole chunk when there is one, so that small records do not cost
                    // a system call each; but never past `end`.
                    Some(n) => n.saturating_sub(buf.len()).max(chunk).min(left),
                    None => left,
                };
                chunk = (chunk * 2).min(CHUNK);
                let old = buf.len();
                buf.resize(old + target, 0);
                let read = read_full_at(file, &mut buf[old..], pos).map_err(LogError::io("read", file_path))?;
                buf.truncate(old + read);
                eof = read < target || pos + read as u64 >= end;
            }
            // `parse` does not ask for more at the end; should it, the rest is unusable.
            Parsed::NeedMore(_) | Parsed::Tail => return Ok(ScanEnd::Tail(base + at as u64)),
            Parsed::End => return Ok(ScanEnd::Clean(base + at as u64)),
            Parsed::Corrupt(reason) => {
                return Err(LogError::Corrupt { file: file_path.to_path_buf(), offset: base + at as u64, reason });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(parse_name("0000000000000001"), Some(1));
        assert_eq!(parse_name("00000000000000ff"), Some(255));
        assert_eq!(parse_name("00000000000000FF"), None);
        assert_eq!(parse_name("0000000000000001.tmp"), None);
        assert_eq!(parse_name("1"), None);
        assert_eq!(path(Path::new("/x"), 26), Path::new("/x/000000000000001a"));
    }
}
