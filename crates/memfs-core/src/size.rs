//! Human-readable sizes, one formatter per dialect.

/// The Python SDK's `_format_file_size`: `0B`; otherwise unit index
/// `(bit_length - 1) // 10` capped at `G`; a whole value prints bare (`4K`), any other with
/// one decimal (`1.0K`, `1.2K` for 1280: round-half-even on exact ties).
///
/// ```
/// use memfs_core::size::python_sdk;
/// assert_eq!(python_sdk(4096), "4K");
/// assert_eq!(python_sdk(1025), "1.0K");
/// assert_eq!(python_sdk(1048575), "1024.0K");
/// ```
pub fn python_sdk(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "K", "M", "G"];
    if bytes == 0 {
        return "0B".to_owned();
    }
    let bit_length = 64 - bytes.leading_zeros() as usize;
    let i = ((bit_length - 1) / 10).min(UNITS.len() - 1);
    // Same IEEE division as Python's `bytes_size / (k**i)`.
    let size = bytes as f64 / (1u64 << (10 * i)) as f64;
    if size.fract() == 0.0 { format!("{}{}", size as u64, UNITS[i]) } else { format!("{size:.1}{}", UNITS[i]) }
}

/// The documentation page's sizes (`4.0K`, `1.5K`, `5.5K`, `1.2M`): bytes below 1 KiB as
/// `{n}B`; above, one decimal below 10 units and whole numbers from 10 up, rounded to nearest,
/// moving to the next unit when rounding reaches 1024.
///
/// ```
/// use memfs_core::size::spec;
/// assert_eq!(spec(4096), "4.0K");
/// assert_eq!(spec(10 * 1024), "10K");
/// assert_eq!(spec(1_234_567), "1.2M");
/// ```
pub fn spec(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "K", "M", "G", "T"];
    if bytes < 1024 {
        return format!("{bytes}B");
    }
    let mut i = 1;
    let mut value = bytes as f64 / 1024.0;
    while i < UNITS.len() - 1 && value >= 1024.0 {
        value /= 1024.0;
        i += 1;
    }
    let one_decimal = format!("{value:.1}");
    if value < 10.0 && one_decimal != "10.0" {
        return format!("{one_decimal}{}", UNITS[i]);
    }
    let whole = value.round();
    if whole >= 1024.0 && i < UNITS.len() - 1 {
        return format!("1.0{}", UNITS[i + 1]);
    }
    format!("{whole:.0}{}", UNITS[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_table() {
        let table = [
            (0, "0B"),
            (1, "1B"),
            (1023, "1023B"),
            (1024, "1K"),
            (1025, "1.0K"),
            (1126, "1.1K"),
            (1280, "1.2K"),
            (1536, "1.5K"),
            (2047, "2.0K"),
            (2048, "2K"),
            (2304, "2.2K"),
            (3328, "3.2K"),
            (4096, "4K"),
            (5000, "4.9K"),
            (5632, "5.5K"),
            (10240, "10K"),
            (1048575, "1024.0K"),
            (1048576, "1M"),
            (1234567, "1.2M"),
            (1572864, "1.5M"),
            (1 << 30, "1G"),
            (1 << 40, "1024G"),
        ];
        for (n, want) in table {
            assert_eq!(python_sdk(n), want, "{n}");
        }
    }

    #[test]
    fn spec_table() {
        let table = [
            (0, "0B"),
            (5, "5B"),
            (1023, "1023B"),
            (1024, "1.0K"),
            (1536, "1.5K"),
            (2048, "2.0K"),
            (4096, "4.0K"),
            (5632, "5.5K"),
            (10188, "9.9K"),
            (10230, "10K"),
            (10240, "10K"),
            (15000, "15K"),
            (1048064, "1.0M"),
            (1048576, "1.0M"),
            (1234567, "1.2M"),
            (1 << 30, "1.0G"),
            (1 << 40, "1.0T"),
        ];
        for (n, want) in table {
            assert_eq!(spec(n), want, "{n}");
        }
    }
}
