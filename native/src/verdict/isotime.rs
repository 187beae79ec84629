//! The one datetime form read natively: `YYYY-MM-DDTHH:MM:SS[.fff|.ffffff][Z|±HH:MM]`.
//!
//! Every string this accepts, `datetime.fromisoformat` (CPython 3.11+) accepts and reads
//! as the same instant; any other string is `Unsure` (Python judges it) unless it cannot
//! start an ISO date at all (`NotIso`: fewer than four leading ASCII digits, which
//! fromisoformat always refuses). The differential test holds this to fromisoformat.

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

pub fn parse(text: &[u8]) -> Parsed {
    if text.len() < 4 || !text[..4].iter().all(u8::is_ascii_digit) {
        return Parsed::NotIso;
    }
    parse_plain(text).unwrap_or(Parsed::Unsure)
}

fn parse_plain(t: &[u8]) -> Option<Parsed> {
    let year = digits(t, 0, 4)?;
    let month = digits(t, 5, 2)?;
    let day = digits(t, 8, 2)?;
    if t.get(4) != Some(&b'-') || t.get(7) != Some(&b'-') || t.get(10) != Some(&b'T') {
        return None;
    }
    let hour = digits(t, 11, 2)?;
    let minute = digits(t, 14, 2)?;
    let second = digits(t, 17, 2)?;
    if t.get(13) != Some(&b':') || t.get(16) != Some(&b':') {
        return None;
    }
    if year == 0 || !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut at = 19;
    let mut micros = 0i64;
    if t.get(at) == Some(&b'.') {
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
    let days = days_from_civil(i64::from(year), i64::from(month), i64::from(day));
    let seconds = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - offset;
    Some(Parsed::Moment { micros: seconds * 1_000_000 + micros, aware })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(parse(b"2024-02-30T00:00:00Z"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29T00:00:00.12Z"), Parsed::Unsure);
        assert_eq!(parse(b"2024-02-29 00:00:00Z"), Parsed::Unsure);
        assert_eq!(parse(b"yesterday"), Parsed::NotIso);
        assert_eq!(parse(b"202"), Parsed::NotIso);
    }
}
