//! The one datetime form read natively: `YYYY-MM-DDTHH:MM:SS[.fff|.ffffff][Z|±HH:MM]`.
//!
//! Every string this accepts, `datetime.fromisoformat` (CPython 3.11+) accepts and reads
//! as the same instant; any other string is `Unsure` (Python judges it) unless it cannot
//! start an ISO date at all (`NotIso`: fewer than four leading ASCII digits, which
//! fromisoformat always refuses). The differential test holds this to fromisoformat.

use std::cell::Cell;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed {
    /// Microseconds since 1970-01-01T00:00:00 UTC (a naive value read as UTC), and
    /// whether it carried an offset.
    Moment { micros: i64, aware: bool },
    NotIso,
    Unsure,
}

fn digits(text: &[u8], at: usize, n: usize) -> Option<u32> {
    let part = text.get(at..at + n)?;
    let mut value = 0u32;
    for &c in part {
        if !c.is_ascii_digit() {
            return None;
        }
        value = value * 10 + u32::from(c - b'0');
    }
    Some(value)
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the civil date (proleptic Gregorian; H. Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A datetime text read without the memo (the record path reads through `parse_memo`).
#[cfg_attr(not(test), allow(dead_code))]
pub fn parse(text: &[u8]) -> Parsed {
    parse_with_minute(text).0
}

/// `parse`, and when the text is the plain form, the instant its minute starts.
fn parse_with_minute(text: &[u8]) -> (Parsed, Option<i64>) {
    if text.len() < 4 || !text[..4].iter().all(u8::is_ascii_digit) {
        return (Parsed::NotIso, None);
    }
    match parse_plain(text) {
        Some((parsed, minute_start)) => (parsed, Some(minute_start)),
        None => (Parsed::Unsure, None),
    }
}

/// What `parse_memo` remembers on its thread: the text it read last (address, length)
/// and its parse; the first sixteen bytes (`YYYY-MM-DDTHH:MM`) of the last plain form it
/// read in full, with the instant they start (a feed's times share them for a minute).
/// One cell each, so that a lookup reads and writes only what it needs.
struct Memo {
    at: Cell<usize>,
    len: Cell<usize>,
    parsed: Cell<Parsed>,
    minute: Cell<[u64; 2]>,
    minute_start: Cell<i64>,
}

thread_local! {
    static LAST: Memo = const {
        Memo {
            at: Cell::new(0),
            len: Cell::new(0),
            parsed: Cell::new(Parsed::NotIso),
            minute: Cell::new([0; 2]),
            minute_start: Cell::new(0),
        }
    };
}

/// Forget the text `parse_memo` read last: `judge` calls it before each record, so that
/// part of the memo only ever answers for the bytes of the record being judged (alive and
/// unchanged until then). The minute it keeps is keyed by content and needs no forgetting.
pub(crate) fn forget() {
    LAST.with(|memo| memo.at.set(0));
}

/// `parse(text)` for `text` inside the payload being judged, read once per record: the
/// field check, the skew window and the state feed ask for the same event time. Keyed by
/// address and length, valid because `forget` runs before each payload is read. A text
/// whose first sixteen bytes are the remembered minute's only has its seconds and what
/// follows read (those bytes were checked when the minute was remembered).
pub(crate) fn parse_memo(text: &[u8]) -> Parsed {
    LAST.with(|memo| {
        let at = text.as_ptr() as usize;
        if memo.at.get() == at && memo.len.get() == text.len() && at != 0 {
            return memo.parsed.get();
        }
        let t = text;
        let minute = memo.minute.get();
        let parsed = if t.len() >= 19
            && minute[0] != 0
            && [word(t, 0), word(t, 8)] == minute
            && t[16] == b':'
            && t[17].is_ascii_digit()
            && t[18].is_ascii_digit()
            && t[17] <= b'5'
        {
            let second = i64::from((t[17] - b'0') * 10 + (t[18] - b'0'));
            rest(t, memo.minute_start.get() + second).unwrap_or(Parsed::Unsure)
        } else {
            let (parsed, minute_start) = parse_with_minute(t);
            if let Some(start) = minute_start {
                memo.minute.set([word(t, 0), word(t, 8)]);
                memo.minute_start.set(start);
            }
            parsed
        };
        memo.at.set(at);
        memo.len.set(text.len());
        memo.parsed.set(parsed);
        parsed
    })
}

/// Eight bytes of `t` from `at` (the caller checked the length).
#[inline]
fn word(t: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(t[at..at + 8].try_into().expect("eight bytes"))
}

/// The bytes of `w` under the mask `m` (0xFF per byte) are all ASCII digits: each XOR '0'
/// is 0..=9, its high nibble clear and no carry into bit 4 when six is added (no byte
/// carries into the next: each is below 0x10 by then).
#[inline]
fn ok(w: u64, m: u64) -> bool {
    const ZEROS: u64 = 0x3030_3030_3030_3030;
    const HIGHS: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    const SIXTEENS: u64 = 0x1010_1010_1010_1010;
    let d = (w ^ ZEROS) & m;
    d & HIGHS == 0 && (d + SIXES) & SIXTEENS == 0
}

/// `YYYY-MM-DDTHH:MM:SS` at the start of `t`, checked eight bytes at a time: the digits of
/// (year, month, day, hour, minute, second), or None when the form differs in any byte.
#[inline]
fn head(t: &[u8]) -> Option<[u32; 6]> {
    if t.len() < 19 {
        return None;
    }
    let word = |at: usize| word(t, at);
    // Bytes 0..8 `YYYY-MM-`, 8..16 `DDTHH:MM`, 11..19 `HH:MM:SS` (overlapping).
    let (a, b, c) = (word(0), word(8), word(11));
    const fn mask(digits: [bool; 8]) -> u64 {
        let mut m = 0u64;
        let mut i = 0;
        while i < 8 {
            if digits[i] {
                m |= 0xFF << (8 * i);
            }
            i += 1;
        }
        m
    }
    const MA: u64 = mask([true, true, true, true, false, true, true, false]);
    const MB: u64 = mask([true, true, false, true, true, false, true, true]);
    const MC: u64 = mask([true, true, false, true, true, false, true, true]);
    const SA: u64 = u64::from_le_bytes(*b"\0\0\0\0-\0\0-");
    const SB: u64 = u64::from_le_bytes(*b"\0\0T\0\0:\0\0");
    const SC: u64 = u64::from_le_bytes(*b"\0\0:\0\0:\0\0");
    if (a & !MA) != SA || (b & !MB) != SB || (c & !MC) != SC {
        return None;
    }
    if !(ok(a, MA) && ok(b, MB) && ok(c, MC)) {
        return None;
    }
    let n = |at: usize| u32::from(t[at] - b'0');
    Some([
        n(0) * 1000 + n(1) * 100 + n(2) * 10 + n(3),
        n(5) * 10 + n(6),
        n(8) * 10 + n(9),
        n(11) * 10 + n(12),
        n(14) * 10 + n(15),
        n(17) * 10 + n(18),
    ])
}

/// The plain form, and the instant its `YYYY-MM-DDTHH:MM` starts (seconds, naive).
fn parse_plain(t: &[u8]) -> Option<(Parsed, i64)> {
    let [year, month, day, hour, minute, second] = head(t)?;
    if year == 0 || !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let days = days_from_civil(i64::from(year), i64::from(month), i64::from(day));
    let minute_start = days * 86_400 + i64::from(hour * 3600 + minute * 60);
    Some((rest(t, minute_start + i64::from(second))?, minute_start))
}

/// What follows `YYYY-MM-DDTHH:MM:SS` (the fraction, the offset), `seconds` being that head's.
#[inline]
fn rest(t: &[u8], seconds: i64) -> Option<Parsed> {
    let mut at = 19;
    let mut micros = 0i64;
    if t.len() >= 28 && t[19] == b'.' && !t[26].is_ascii_digit() && ok(word(t, 20), 0xFFFF_FFFF_FFFF) {
        // `.ffffff` then the offset, the usual feed form: the six digits checked in one word
        // and read in three multiplications (two zero digits put before them: eight digits,
        // the first in the lowest byte, combined pairwise).
        let d = ((word(t, 20) ^ 0x3030_3030_3030_3030) & 0xFFFF_FFFF_FFFF) << 16;
        let d = (d * 10 + (d >> 8)) & 0x00FF_00FF_00FF_00FF;
        let d = (d * 100 + (d >> 16)) & 0x0000_FFFF_0000_FFFF;
        micros = ((d * 10_000 + (d >> 32)) & 0xFFFF_FFFF) as i64;
        at = 26;
        if t.len() == 32 && word(t, 24) >> 16 == u64::from_le_bytes(*b"\0\0+00:00") >> 16 {
            // `+00:00`, the usual offset.
            return Some(Parsed::Moment { micros: seconds * 1_000_000 + micros, aware: true });
        }
    }
    if at == 19 && t.get(at) == Some(&b'.') {
        let n = t[at + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        match n {
            3 => micros = i64::from(digits(t, at + 1, 3)?) * 1000,
            6 => micros = i64::from(digits(t, at + 1, 6)?),
            _ => return None,
        }
        at += 1 + n;
    }
    let mut offset = 0i64;
    let aware = match t.get(at) {
        None => false,
        Some(b'Z') if at + 1 == t.len() => true,
        Some(&sign @ (b'+' | b'-')) if t.len() == at + 6 && t[at + 3] == b':' => {
            let oh = digits(t, at + 1, 2)?;
            let om = digits(t, at + 4, 2)?;
            if oh > 23 || om > 59 {
                return None;
            }
            offset = i64::from(oh * 60 + om) * 60;
            if sign == b'-' {
                offset = -offset;
            }
            true
        }
        _ => return None,
    };
    Some(Parsed::Moment { micros: (seconds - offset) * 1_000_000 + micros, aware })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_memo_answers_for_one_record_only() {
        let mut buf = b"1970-01-01T00:00:01.000001Z".to_vec();
        forget();
        let first = parse_memo(&buf);
        assert_eq!(first, parse(&buf));
        assert_eq!(parse_memo(&buf), first);
        assert_eq!(parse_memo(&buf[..19]), parse(&buf[..19])); // same address, shorter
        // The same bytes rewritten in place (a new record at the same address).
        buf[18] = b'2';
        forget();
        assert_eq!(parse_memo(&buf), parse(&buf));
        assert_ne!(parse_memo(&buf), first);
    }

    #[test]
    fn a_remembered_minute_reads_as_parse() {
        let texts: [&[u8]; 12] = [
            b"2026-11-30T14:05:07.123000+00:00",
            b"2026-11-30T14:05:59.999999-01:30",
            b"2026-11-30T14:05:60.000000+00:00",
            b"2026-11-30T14:05:5a.000000+00:00",
            b"2026-11-30T14:05-07.000000+00:00",
            b"2026-11-30T14:05:07",
            b"2026-11-30T14:05:07Z",
            b"2026-11-30T14:05:07.12Z",
            b"2026-11-30T14:05:07.123+24:00",
            b"2026-11-30T14:05:",
            b"2026-11-30T14:06:00Z",
            b"2024-02-29T23:59:59.5Z",
        ];
        for t in texts.iter().chain(texts.iter().rev()) {
            forget();
            assert_eq!(parse_memo(t), parse(t), "{:?}", std::str::from_utf8(t));
        }
        // A minute that is not a date: never remembered, every text read in full.
        for t in [&b"2024-02-30T00:00:00Z"[..], b"2024-02-30T00:00:01Z", b"2024-13-01T00:00:00Z"] {
            forget();
            assert_eq!(parse_memo(t), parse(t));
        }
    }

    #[test]
    fn the_plain_forms() {
        assert_eq!(
            parse(b"1970-01-01T00:00:01.000001Z"),
            Parsed::Moment { micros: 1_000_001, aware: true }
        );
        assert_eq!(
            parse(b"1970-01-01T01:00:00+01:00"),
            Parsed::Moment { micros: 0, aware: true }
        );
        assert_eq!(parse(b"1970-01-02T00:00:00"), Parsed::Moment { micros: 86_400_000_000, aware: false });
        // Six fraction digits read in one word, and the `+00:00` offset taken in one step.
        assert_eq!(
            parse(b"1970-01-01T00:00:00.987654+00:00"),
            Parsed::Moment { micros: 987_654, aware: true }
        );
        assert_eq!(
            parse(b"1970-01-01T00:00:01.000001-00:00"),
            Parsed::Moment { micros: 1_000_001, aware: true }
        );
        assert_eq!(parse(b"1970-01-01T00:00:00.123456+00:0a"), Parsed::Unsure);
        assert_eq!(parse(b"1970-01-01T00:00:00.123456+00:000"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-30T00:00:00Z"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29T00:00:00.12Z"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29 00:00:00Z"), Parsed::Unsure);
        assert_eq!(parse(b"yesterday"), Parsed::NotIso);
        assert_eq!(parse(b"202"), Parsed::NotIso);
        assert_eq!(parse(b"2024-02-29T00:00:0"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29T00:00:0a"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29T00:0::00"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29T00:00:/0"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29T00:00:\xd90"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29t00:00:00"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29T00:00:00.1234567+00:00"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29T00:00:00.12345a+00:00"), Parsed::Unsure);
        assert_eq!(
            parse(b"1970-01-01T00:00:00.123456-01:00"),
            Parsed::Moment { micros: 3_600_123_456, aware: true }
        );
        assert_eq!(
            parse(b"2024-02-29T23:59:59"),
            Parsed::Moment { micros: 1_709_251_199_000_000, aware: false }
        );
    }
}
