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

/// The TypeScript SDK's `formatFileSize`: `0B`; otherwise unit index
/// `Math.floor(Math.log(bytes) / Math.log(1024))` (floating point, no cap: from 1 TiB the unit
/// is JavaScript's `undefined`); a whole value prints bare (`4K`), any other with
/// `toFixed(1)`, which rounds exact ties up (`1.3K` for 1280, where Python says `1.2K`).
///
/// ```
/// use memfs_core::size::typescript_sdk;
/// assert_eq!(typescript_sdk(4096), "4K");
/// assert_eq!(typescript_sdk(1280), "1.3K");
/// assert_eq!(typescript_sdk(1048575), "1024.0K");
/// ```
pub fn typescript_sdk(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["B", "K", "M", "G"];
    if bytes == 0 {
        return "0B".to_owned();
    }
    // `bytes` as the JavaScript number `stat.size` is (exact below 2^53), and the same IEEE
    // logarithms V8 computes (checked against Node.js at every power of 1024 up to 2^60).
    let x = bytes as f64;
    let i = (x.ln() / 1024f64.ln()).floor() as u32;
    let unit = UNITS.get(i as usize).copied().unwrap_or("undefined");
    // `size = x / 1024 ** i` is exact (a division by a power of two), so the rest is integer
    // arithmetic on the double's exact value.
    let (exact, shift) = (x as u128, 10 * i);
    if exact & ((1u128 << shift) - 1) == 0 {
        return format!("{}{unit}", exact >> shift);
    }
    // `toFixed(1)`: the nearest tenth, the larger one on an exact tie. `shift` is at least 10
    // here: at `i == 0` every value is whole.
    let tenths = (10 * exact + (1u128 << (shift - 1))) >> shift;
    format!("{}.{}{unit}", tenths / 10, tenths % 10)
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

    /// Every value as Node.js 20 prints it with `formatFileSize` of `@anthropic-ai/sdk@1.12.0`.
    #[test]
    fn typescript_table() {
        let table = [
            (0, "0B"),
            (1, "1B"),
            (1022, "1022B"),
            (1023, "1023B"),
            (1024, "1K"),
            (1025, "1.0K"),
            (1126, "1.1K"),
            (1280, "1.3K"),
            (1536, "1.5K"),
            (1792, "1.8K"),
            (2047, "2.0K"),
            (2048, "2K"),
            (2304, "2.3K"),
            (3328, "3.3K"),
            (4096, "4K"),
            (5000, "4.9K"),
            (5632, "5.5K"),
            (10240, "10K"),
            (1048574, "1024.0K"),
            (1048575, "1024.0K"),
            (1048576, "1M"),
            (1048577, "1.0M"),
            (1234567, "1.2M"),
            (1310720, "1.3M"),
            (1572864, "1.5M"),
            (16777216, "16M"),
            (999999999, "953.7M"),
            (1073741823, "1024.0M"),
            (1 << 30, "1G"),
            (1073741825, "1.0G"),
            ((1 << 40) - 1, "1024.0G"),
            (1 << 40, "1undefined"),
            ((1 << 40) + 1, "1.0undefined"),
            ((1 << 50) - 2, "1.0undefined"),
            (1 << 50, "1undefined"),
        ];
        for (n, want) in table {
            assert_eq!(typescript_sdk(n), want, "{n}");
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
