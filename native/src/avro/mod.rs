//! Avro binary datums transcoded into the JSON text the JSON route judges.
//!
//! A `Node` tree is one writer schema, compiled once per schema id on the Python side
//! (`stream_validator/registry/avroplan.py`, which admits only the types whose JSON form
//! decodes, by orjson, to exactly the values fastavro gives). `transcode` reads one datum
//! after its framing and writes its JSON; it returns None for anything it cannot prove
//! equal to fastavro's reading: truncated or corrupt bytes, a varint past 64 bits, a
//! boolean byte other than 0/1, an enum or union index out of range, invalid UTF-8, a
//! non-finite float (JSON has no NaN), a timestamp outside Python's datetime range, or a
//! JSON text over `limit` bytes. The caller decodes those with fastavro, whose verdict
//! and error text are final. Trailing bytes are ignored, as fastavro's schemaless reader
//! ignores them.

use std::io::Write;

pub mod py;

/// One type of a writer schema.
pub enum Node {
    Null,
    Bool,
    /// Avro `int` and `long` alike (fastavro reads both as a varint of any size).
    Long,
    Float,
    Double,
    Str,
    /// The symbols, each as its JSON string literal.
    Enum(Vec<Vec<u8>>),
    /// Each field's `"name":` and its type.
    Record(Vec<(Vec<u8>, Node)>),
    Array(Box<Node>),
    Union(Vec<Node>),
    /// `long` with logicalType timestamp-millis / timestamp-micros: an aware UTC datetime.
    TsMillis,
    TsMicros,
}

/// Array items read per datum at most: past it the datum is left to fastavro.
const MAX_ITEMS: i64 = 1 << 20;
/// Microseconds since the epoch of 0001-01-01T00:00:00 and 9999-12-31T23:59:59.999999.
const MIN_MICROS: i64 = -62_135_596_800_000_000;
const MAX_MICROS: i64 = 253_402_300_799_999_999;

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn byte(&mut self) -> Option<u8> {
        let b = *self.buf.get(self.pos)?;
        self.pos += 1;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// A zigzag varint that fits 64 bits (at most 10 bytes, the last one 0 or 1).
    fn long(&mut self) -> Option<i64> {
        let mut n: u64 = 0;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return None;
            }
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(((n >> 1) as i64) ^ -((n & 1) as i64));
            }
        }
        None
    }

    fn len(&mut self) -> Option<usize> {
        usize::try_from(self.long()?).ok()
    }
}

/// The JSON text of one datum (`buf` the bytes after the framing), or None (see the top).
pub fn transcode(node: &Node, buf: &[u8], limit: usize, days: &mut Days) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(buf.len() * 2 + 16);
    let mut reader = Reader { buf, pos: 0 };
    write(node, &mut reader, &mut out, limit, days)?;
    (out.len() <= limit).then_some(out)
}

/// The date text of the last day written: a batch's timestamps mostly share their day.
#[derive(Default)]
pub struct Days(Option<(i64, [u8; 10])>);

impl Days {
    fn date(&mut self, day: i64) -> [u8; 10] {
        if let Some((known, text)) = self.0 {
            if known == day {
                return text;
            }
        }
        let (y, m, d) = civil(day);
        let mut text = Vec::with_capacity(10);
        padded(y, 4, &mut text);
        text.push(b'-');
        padded(m, 2, &mut text);
        text.push(b'-');
        padded(d, 2, &mut text);
        let mut out = [0u8; 10];
        out.copy_from_slice(&text);
        self.0 = Some((day, out));
        out
    }
}

fn write(
    node: &Node,
    r: &mut Reader<'_>,
    out: &mut Vec<u8>,
    limit: usize,
    days: &mut Days,
) -> Option<()> {
    if out.len() > limit {
        return None;
    }
    match node {
        Node::Null => out.extend_from_slice(b"null"),
        Node::Bool => match r.byte()? {
            0 => out.extend_from_slice(b"false"),
            1 => out.extend_from_slice(b"true"),
            _ => return None,
        },
        Node::Long => integer(r.long()?, out),
        Node::Float => {
            let b = r.take(4)?;
            float(f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])), out)?;
        }
        Node::Double => {
            let b = r.take(8)?;
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            float(f64::from_le_bytes(a), out)?;
        }
        Node::Str => {
            let n = r.len()?;
            let text = std::str::from_utf8(r.take(n)?).ok()?;
            string(text, out);
        }
        Node::Enum(symbols) => {
            let i = usize::try_from(r.long()?).ok()?;
            out.extend_from_slice(symbols.get(i)?);
        }
        Node::Record(fields) => {
            out.push(b'{');
            for (i, (key, field)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(key);
                write(field, r, out, limit, days)?;
            }
            out.push(b'}');
        }
        Node::Array(item) => {
            out.push(b'[');
            let mut seen: i64 = 0;
            loop {
                let mut count = r.long()?;
                if count == 0 {
                    break;
                }
                if count < 0 {
                    count = count.checked_neg()?;
                    r.long()?; // the block's size in bytes
                }
                seen = seen.checked_add(count)?;
                if seen > MAX_ITEMS {
                    return None;
                }
                for _ in 0..count {
                    if out.last() != Some(&b'[') {
                        out.push(b',');
                    }
                    write(item, r, out, limit, days)?;
                }
            }
            out.push(b']');
        }
        Node::Union(branches) => {
            let i = usize::try_from(r.long()?).ok()?;
            write(branches.get(i)?, r, out, limit, days)?;
        }
        Node::TsMillis => timestamp(r.long()?.checked_mul(1000)?, out, days)?,
        Node::TsMicros => timestamp(r.long()?, out, days)?,
    }
    Some(())
}

/// A finite double as the shortest text that reads back to it, always with a `.` or an
/// exponent (an integer literal would decode as an int).
fn float(v: f64, out: &mut Vec<u8>) -> Option<()> {
    if !v.is_finite() {
        return None;
    }
    if fixed(v, out) {
        return Some(());
    }
    // Debug: the shortest round-trip digits, with ".0" or an exponent.
    write!(out, "{v:?}").ok()
}

/// Powers of ten exactly representable as doubles, for `fixed`.
const TENS: [f64; 7] = [1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6];

/// A double with at most six decimals written as such (`190.25`, `3.0`), when the text
/// provably reads back to it: `m / 10^k`, both exact, is the correctly rounded quotient, as
/// a correctly rounding parser reads the decimal. False (nothing written) otherwise.
fn fixed(v: f64, out: &mut Vec<u8>) -> bool {
    let size = v.abs();
    if !(1e-4..1e15).contains(&size) {
        return false;
    }
    for (k, ten) in TENS.iter().enumerate() {
        let m = (v * ten).round();
        if m.abs() >= 9_007_199_254_740_992.0 {
            return false;
        }
        if m / ten == v {
            let digits = m.abs() as i64;
            if v < 0.0 {
                out.push(b'-');
            }
            let unit = TENS[k] as i64;
            integer(digits / unit, out);
            out.push(b'.');
            if k == 0 {
                out.push(b'0');
            } else {
                padded(digits % unit, k, out);
            }
            return true;
        }
    }
    false
}

/// An integer in decimal, without the formatting machinery.
fn integer(v: i64, out: &mut Vec<u8>) {
    let mut digits = [0u8; 20];
    let mut n = v.unsigned_abs();
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[at..]);
}

/// `v` as exactly `width` decimal digits (`v` < 10^width).
fn padded(v: i64, width: usize, out: &mut Vec<u8>) {
    let mut digits = [b'0'; 6];
    let mut n = v;
    for slot in digits[..width].iter_mut().rev() {
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&digits[..width]);
}

fn string(text: &str, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    for &b in text.as_bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0..=0x1f => {
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 15)]);
            }
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

/// JSON string literal of a text (the enum symbols and field names, at compile time).
pub fn literal(text: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + 2);
    string(text, &mut out);
    out
}

/// `epoch + timedelta(microseconds=us)` as Python's `isoformat()` writes it.
fn timestamp(us: i64, out: &mut Vec<u8>, days: &mut Days) -> Option<()> {
    if !(MIN_MICROS..=MAX_MICROS).contains(&us) {
        return None;
    }
    let cache = days;
    let day = us.div_euclid(86_400_000_000);
    let rest = us.rem_euclid(86_400_000_000);
    let secs = rest / 1_000_000;
    let micros = rest % 1_000_000;
    out.push(b'"');
    out.extend_from_slice(&cache.date(day));
    out.push(b'T');
    padded(secs / 3600, 2, out);
    out.push(b':');
    padded(secs / 60 % 60, 2, out);
    out.push(b':');
    padded(secs % 60, 2, out);
    if micros != 0 {
        out.push(b'.');
        padded(micros, 6, out);
    }
    out.extend_from_slice(b"+00:00\"");
    Some(())
}

/// Year, month, day of a day count since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zigzag(v: i64) -> Vec<u8> {
        let mut n = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = Vec::new();
        loop {
            if n < 0x80 {
                out.push(n as u8);
                return out;
            }
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
    }

    #[test]
    fn longs_round_trip_and_overlong_varints_are_refused() {
        for v in [0, -1, 1, 63, -64, 64, i64::MAX, i64::MIN] {
            assert_eq!(
                transcode(&Node::Long, &zigzag(v), 100, &mut Days::default()),
                Some(v.to_string().into_bytes())
            );
        }
        assert_eq!(
            transcode(&Node::Long, &[0xff; 11], 100, &mut Days::default()),
            None
        );
        assert_eq!(
            transcode(&Node::Long, &[0x80], 100, &mut Days::default()),
            None
        );
    }

    #[test]
    fn timestamps_are_written_as_isoformat() {
        let mut days = Days::default();
        let mut t = |us: i64| {
            transcode(&Node::TsMicros, &zigzag(us), 100, &mut days)
                .map(|v| String::from_utf8(v).unwrap())
        };
        assert_eq!(t(0).as_deref(), Some("\"1970-01-01T00:00:00+00:00\""));
        assert_eq!(
            t(-1).as_deref(),
            Some("\"1969-12-31T23:59:59.999999+00:00\"")
        );
        assert_eq!(
            t(MIN_MICROS).as_deref(),
            Some("\"0001-01-01T00:00:00+00:00\"")
        );
        assert_eq!(
            t(MAX_MICROS).as_deref(),
            Some("\"9999-12-31T23:59:59.999999+00:00\"")
        );
        assert_eq!(t(MAX_MICROS + 1), None);
        assert_eq!(t(MIN_MICROS - 1), None);
    }

    #[test]
    fn non_finite_floats_and_bad_booleans_are_left_to_fastavro() {
        assert_eq!(
            transcode(
                &Node::Double,
                &f64::NAN.to_le_bytes(),
                100,
                &mut Days::default()
            ),
            None
        );
        assert_eq!(
            transcode(
                &Node::Float,
                &f32::INFINITY.to_le_bytes(),
                100,
                &mut Days::default()
            ),
            None
        );
        assert_eq!(
            transcode(
                &Node::Double,
                &1e300f64.to_le_bytes(),
                100,
                &mut Days::default()
            ),
            Some(b"1e300".to_vec())
        );
        assert_eq!(
            transcode(
                &Node::Double,
                &2.0f64.to_le_bytes(),
                100,
                &mut Days::default()
            ),
            Some(b"2.0".to_vec())
        );
        assert_eq!(
            transcode(&Node::Bool, &[2], 100, &mut Days::default()),
            None
        );
    }

    #[test]
    fn floats_read_back_to_themselves() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut values = vec![
            190.25,
            -0.5,
            0.0001,
            123.456,
            1e15 - 0.5,
            0.1,
            1.0 / 3.0,
            -2.0,
        ];
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            let sign = if x & 1 == 0 { 1.0 } else { -1.0 };
            values.push(v);
            values.push((v.abs().fract() * 1e6).round() / 1e4 * sign);
            values.push(f64::from(f32::from_bits(x as u32)));
        }
        for v in values.into_iter().filter(|v| v.is_finite()) {
            let mut out = Vec::new();
            float(v, &mut out).unwrap();
            let text = std::str::from_utf8(&out).unwrap();
            assert!(text.contains('.') || text.contains('e'), "{text}");
            assert_eq!(
                text.parse::<f64>().unwrap().to_bits(),
                v.to_bits(),
                "{text}"
            );
        }
    }
}
