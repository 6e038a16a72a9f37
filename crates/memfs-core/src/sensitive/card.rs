//! Payment card numbers (ISO/IEC 7812 PANs): Luhn-valid, with a known brand's prefix and
//! length, written as cards are printed.

use std::sync::LazyLock;

use regex::Regex;

use super::{Detector, Finding, after, before, finding};

/// A run of digit groups joined by single spaces or dashes. The run is taken whole (so a search
/// never rescans it) and card numbers are then looked for among its groups.
static RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[0-9]+(?:[ -][0-9]+)*").expect("built-in pattern compiles"));

/// Most groups a card is printed in (4-4-4-4-3).
const MAX_GROUPS: usize = 5;

pub(super) fn find(text: &str, out: &mut Vec<Finding>) {
    for m in RUN.find_iter(text) {
        if m.len() < 13 {
            continue;
        }
        // Groups as (start, end) in `text`.
        let mut groups = Vec::new();
        let mut start = m.start();
        for (i, b) in m.as_str().bytes().enumerate() {
            if b == b' ' || b == b'-' {
                groups.push((start, m.start() + i));
                start = m.start() + i + 1;
            }
        }
        groups.push((start, m.end()));
        let open_start = !bad_before(text, m.start()) && !listed_before(text, m.start());
        let open_end = !bad_after(text, m.end()) && !listed_after(text, m.end());
        // Inside the run, a card may border another group (`outside`) only across a space (a
        // dash joins it to a longer identifier), and only if that group is not of exactly four
        // digits: that is a longer number printed in fours, like a USPS tracking number.
        // `k` is the group after the space.
        let border = |k: usize, outside: usize| {
            text.as_bytes()[groups[k].0 - 1] == b' ' && groups[outside].1 - groups[outside].0 != 4
        };
        let mut i = 0;
        while i < groups.len() {
            let starts_ok = if i == 0 { open_start } else { border(i, i - 1) };
            let found = starts_ok
                .then(|| {
                    (i + 1..=groups.len().min(i + MAX_GROUPS)).rev().find(|&j| {
                        let ends_ok = if j == groups.len() { open_end } else { border(j, j) };
                        ends_ok && is_card(text, &groups[i..j])
                    })
                })
                .flatten();
            match found {
                Some(j) => {
                    out.push(finding(Detector::PaymentCard, groups[i].0..groups[j - 1].1));
                    i = j;
                }
                None => i += 1,
            }
        }
    }
}

/// A run cannot start a card after a letter, digit or `_`, after `+` (phone numbers), `#`,
/// `$`, `/`, `@`, `\`, or after `-` or `.` that follow a letter or digit (identifiers such as
/// `ORD-…`, decimals). A comma is a list separator here (see [`listed_before`]): thousands
/// separators never precede 13 digits.
fn bad_before(text: &str, start: usize) -> bool {
    match before(text, start) {
        Some(b) if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'#' | b'$' | b'/' | b'@' | b'\\') => true,
        Some(b'-' | b'.') => before(text, start - 1).is_some_and(|b| b.is_ascii_alphanumeric()),
        _ => false,
    }
}

/// A run cannot end a card before a letter, digit, `_` or `@`, or before `-`, `.` or `/`
/// followed by a letter or digit.
fn bad_after(text: &str, end: usize) -> bool {
    match after(text, end) {
        Some(b) if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'@') => true,
        Some(b'-' | b'.' | b'/') => after(text, end + 1).is_some_and(|b| b.is_ascii_alphanumeric()),
        _ => false,
    }
}

/// How far [`listed_before`] and [`listed_after`] look past white space, and how many digits
/// of the neighbour they read (bounded work per run).
const LIST_SPACE: usize = 16;
const LIST_DIGITS: usize = 32;

/// Whether the run at `start` follows `<number>,` where the number has at least 8 digits and is
/// not a card itself: the run is then an entry of a table of numbers (hash constants, ids,
/// test vectors), not a card. A list of cards stays a list of cards.
fn listed_before(text: &str, start: usize) -> bool {
    let b = text.as_bytes();
    let skip = |mut i: usize| {
        let stop = i.saturating_sub(LIST_SPACE);
        while i > stop && b[i - 1].is_ascii_whitespace() {
            i -= 1;
        }
        i
    };
    let i = skip(start);
    if i == 0 || b[i - 1] != b',' {
        return false;
    }
    let end = skip(i - 1);
    let mut first = end;
    while first > end.saturating_sub(LIST_DIGITS + 1) && first > 0 && b[first - 1].is_ascii_digit() {
        first -= 1;
    }
    long_non_card(&b[first..end])
}

/// The same as [`listed_before`], for `,<number>` after the run ending at `end`.
fn listed_after(text: &str, end: usize) -> bool {
    let b = text.as_bytes();
    let skip = |mut i: usize| {
        let stop = (i + LIST_SPACE).min(b.len());
        while i < stop && b[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let i = skip(end);
    if i >= b.len() || b[i] != b',' {
        return false;
    }
    let first = skip(i + 1);
    let mut last = first;
    while last < (first + LIST_DIGITS + 1).min(b.len()) && b[last].is_ascii_digit() {
        last += 1;
    }
    long_non_card(&b[first..last])
}

fn long_non_card(digits: &[u8]) -> bool {
    let d: Vec<u8> = digits.iter().map(|b| b - b'0').collect();
    d.len() >= 8 && !((13..=16).contains(&d.len()) && brand(&d) && luhn(&d))
}

/// Whether these consecutive groups spell a card: 13 to 16 digits in one group, or 13 to 19
/// in groups laid out as printed and joined by one kind of separator; a brand; Luhn. (Longer
/// unbroken runs are far more often 64-bit integers, hash constants or nanosecond times than
/// the rare 17–19-digit cards, which are printed in groups.)
fn is_card(text: &str, groups: &[(usize, usize)]) -> bool {
    let lens: Vec<usize> = groups.iter().map(|(s, e)| e - s).collect();
    let total: usize = lens.iter().sum();
    let max = if groups.len() == 1 { 16 } else { 19 };
    if !(13..=max).contains(&total) {
        return false;
    }
    if groups.len() > 1 {
        let (last, init) = lens.split_last().expect("two groups or more");
        let printed =
            (init.iter().all(|&l| l == 4) && (1..=4).contains(last)) || lens == [4, 6, 5] || lens == [4, 6, 4];
        let separators: Vec<u8> = groups[1..].iter().map(|(s, _)| text.as_bytes()[s - 1]).collect();
        if !printed || separators.windows(2).any(|w| w[0] != w[1]) {
            return false;
        }
    }
    let digits: Vec<u8> = groups.iter().flat_map(|&(s, e)| text.as_bytes()[s..e].iter().map(|b| b - b'0')).collect();
    brand(&digits) && luhn(&digits)
}

/// Whether the digits have a brand's prefix (IIN range) and length. Sources: the brands' own
/// published IIN ranges, as summarized in ISO/IEC 7812 registries and the Wikipedia table
/// "Payment card number".
fn brand(d: &[u8]) -> bool {
    let prefix = |k: usize| d[..k].iter().fold(0u32, |acc, &x| acc * 10 + u32::from(x));
    let n = d.len();
    let (p2, p3, p4, p6) = (prefix(2), prefix(3), prefix(4), prefix(6));
    let visa = d[0] == 4 && matches!(n, 13 | 16 | 19);
    let mastercard = ((51..=55).contains(&p2) || (2221..=2720).contains(&p4)) && n == 16;
    let amex = matches!(p2, 34 | 37) && n == 15;
    let discover = (p4 == 6011 || (644..=649).contains(&p3) || p2 == 65 || (622126..=622925).contains(&p6))
        && (16..=19).contains(&n);
    let jcb = (3528..=3589).contains(&p4) && (16..=19).contains(&n);
    let diners = ((300..=305).contains(&p3) || p3 == 309 || matches!(p2, 36 | 38 | 39)) && matches!(n, 14 | 16);
    let unionpay = (p2 == 62 || (8100..=8171).contains(&p4)) && (16..=19).contains(&n);
    let maestro = matches!(p4, 5018 | 5020 | 5038 | 5893 | 6304 | 6759 | 6761 | 6762 | 6763) && (13..=19).contains(&n);
    let mir = (2200..=2204).contains(&p4) && (16..=19).contains(&n);
    visa || mastercard || amex || discover || jcb || diners || unionpay || maestro || mir
}

/// The Luhn (mod 10) check of ISO/IEC 7812-1 Annex B.
fn luhn(d: &[u8]) -> bool {
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &x)| {
            let x = u32::from(x);
            if i % 2 == 1 { if x * 2 > 9 { x * 2 - 9 } else { x * 2 } } else { x }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digits(s: &str) -> Vec<u8> {
        s.bytes().map(|b| b - b'0').collect()
    }

    #[test]
    fn luhn_and_brands() {
        for ok in ["4111111111111111", "5555555555554444", "2223003122003222", "378282246310005", "6011111111111117"] {
            assert!(luhn(&digits(ok)) && brand(&digits(ok)), "{ok}");
        }
        assert!(!luhn(&digits("4111111111111112")));
        // Luhn-valid, no brand: starts with 1, or 9 (an ISBN-13's 978).
        assert!(luhn(&digits("1234567812345670")) && !brand(&digits("1234567812345670")));
        assert!(!brand(&digits("9780134685991")));
    }
}
