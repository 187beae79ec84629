//! A strict JSON reader over one payload, for the plain form only.
//!
//! Whatever it cannot read exactly as orjson reads it (an escape, a control byte in a
//! string, a number orjson would widen or refuse, nesting deeper than `MAX_DEPTH`, a
//! syntax error) is `Err(Decline)`: the caller then hands the record to the Python rules,
//! whose verdict (and orjson's message) is final. The whole payload is known to be valid
//! UTF-8 without a backslash before any of this runs (`Reader::new`).

/// The reader cannot decide this payload: the Python rules judge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decline;

pub type Read<T> = Result<T, Decline>;

/// Deeper values are declined (orjson's limit is 1024; the Python rules apply it).
pub const MAX_DEPTH: usize = 64;

const LOW: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;
const QUOTES: u64 = LOW * b'"' as u64;
const BACKSLASHES: u64 = LOW * b'\\' as u64;

/// Non-zero when a byte of `w` is zero.
#[inline]
fn has_zero(w: u64) -> u64 {
    w.wrapping_sub(LOW) & !w & HIGH
}

/// Non-zero when a byte of `w` is below 0x20 (exact for bytes below 0x80).
#[inline]
fn below_space(w: u64) -> u64 {
    w.wrapping_sub(LOW * 0x20) & !w & HIGH
}

pub(super) const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// One JSON value as the field checks see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Val<'a> {
    Null,
    Bool(bool),
    /// An integer literal that fits in 64 signed bits (a Python int).
    Int(i64),
    /// A literal with a fraction or exponent, finite (a Python float).
    Float(f64),
    /// The raw bytes between the quotes: UTF-8, no escape, no control byte.
    Str(&'a [u8]),
    /// An array and its item count.
    Arr(usize),
    /// An object (its size is not counted: a message naming it is left to Python).
    Obj,
}

pub struct Reader<'a> {
    pub buf: &'a [u8],
    pub at: usize,
}

impl<'a> Reader<'a> {
    /// A reader over `buf`. Bytes outside strings are checked by the grammar; inside a
    /// string a backslash or a control byte declines, and non-ASCII text must be UTF-8.
    pub fn new(buf: &'a [u8]) -> Read<Self> {
        Ok(Reader { buf, at: 0 })
    }

    #[inline]
    pub fn ws(&mut self) {
        while let Some(&c) = self.buf.get(self.at) {
            if c == b' ' || c == b'\n' || c == b'\r' || c == b'\t' {
                self.at += 1;
            } else {
                break;
            }
        }
    }

    #[inline]
    pub fn peek(&self) -> Option<u8> {
        self.buf.get(self.at).copied()
    }

    #[inline]
    pub fn expect(&mut self, byte: u8) -> Read<()> {
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(Decline)
        }
    }

    /// A string whose opening quote is at `self.at`: its raw content.
    #[inline]
    pub fn string(&mut self) -> Read<&'a [u8]> {
        self.expect(b'"')?;
        let start = self.at;
        let rest = &self.buf[start..];
        let mut wide = false;
        // Eight bytes at a time while none is a quote, a backslash, a control or non-ASCII.
        // The lowest flagged byte of a word is exact (a borrow only flags bytes above a true
        // one), so the first stop is found with a count of trailing zeros.
        let mut skip = 0;
        while let Some(chunk) = rest.get(skip..skip + 8) {
            let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
            let stops = has_zero(w ^ QUOTES) | has_zero(w ^ BACKSLASHES) | below_space(w) | (w & HIGH);
            if stops != 0 {
                let len = skip + (stops.trailing_zeros() / 8) as usize;
                if rest[len] == b'"' {
                    self.at = start + len + 1;
                    return Ok(&rest[..len]);
                }
                skip = len;
                break;
            }
            skip += 8;
        }
        for (len, &c) in rest.iter().enumerate().skip(skip) {
            if c == b'"' {
                let text = &rest[..len];
                if wide && std::str::from_utf8(text).is_err() {
                    return Err(Decline); // orjson refuses text that is not UTF-8
                }
                self.at = start + len + 1;
                return Ok(text);
            }
            if c < 0x20 || c == b'\\' {
                return Err(Decline); // a control byte (refused) or an escape (Python reads it)
            }
            wide |= c >= 0x80;
        }
        Err(Decline)
    }

    /// The key `name` at `self.at` (its opening quote), read without a search.
    #[inline]
    pub fn key_is(&mut self, name: &[u8]) -> bool {
        let at = self.at + 1;
        let end = at + name.len();
        // The opening quote too: a key without it is not JSON (Python words the error).
        if self.buf.get(self.at) == Some(&b'"') && self.buf.get(end) == Some(&b'"') && &self.buf[at..end] == name {
            self.at = end + 1;
            return true;
        }
        false
    }

    fn literal(&mut self, word: &[u8]) -> Read<()> {
        if self.buf[self.at..].starts_with(word) {
            self.at += word.len();
            Ok(())
        } else {
            Err(Decline)
        }
    }

    /// A number literal: an i64 int, or a finite float; anything else declines.
    /// One pass: the digits are accumulated while the grammar is checked.
    pub fn number(&mut self) -> Read<Val<'a>> {
        let start = self.at;
        let buf = self.buf;
        let mut i = start;
        let negative = buf.get(i) == Some(&b'-');
        i += usize::from(negative);
        let digits = i;
        let mut mantissa: u64 = 0;
        while let Some(&c @ b'0'..=b'9') = buf.get(i) {
            mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            i += 1;
        }
        let whole = i - digits;
        if whole == 0 || (buf[digits] == b'0' && whole > 1) {
            return Err(Decline); // no digit, or a leading zero
        }
        let mut fraction = 0;
        if buf.get(i) == Some(&b'.') {
            i += 1;
            let frac = i;
            while let Some(&c @ b'0'..=b'9') = buf.get(i) {
                mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                i += 1;
            }
            fraction = i - frac;
            if fraction == 0 {
                return Err(Decline);
            }
        }
        let mut exponent = false;
        if matches!(buf.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(buf.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let exp = i;
            while matches!(buf.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
            if i == exp {
                return Err(Decline);
            }
            exponent = true;
        }
        self.at = i;
        if fraction == 0 && !exponent {
            if whole <= 18 {
                // At most 18 digits: exact in i64.
                let value = mantissa as i64;
                return Ok(Val::Int(if negative { -value } else { value }));
            }
            // Past i64 orjson returns a Python int up to u64 and a float beyond.
            let text = std::str::from_utf8(&buf[start..i]).map_err(|_| Decline)?;
            return text.parse::<i64>().map(Val::Int).map_err(|_| Decline);
        }
        if !exponent && whole + fraction <= 15 && fraction < POW10.len() {
            // Clinger's fast path: the digits are an integer below 2**53 and 10**fraction
            // is exact, so one correctly rounded division is the correctly rounded value.
            let value = mantissa as f64 / POW10[fraction];
            return Ok(Val::Float(if negative { -value } else { value }));
        }
        let text = std::str::from_utf8(&buf[start..i]).map_err(|_| Decline)?;
        let value: f64 = text.parse().map_err(|_| Decline)?;
        if !value.is_finite() {
            return Err(Decline); // orjson: "number is infinity when parsed as double"
        }
        Ok(Val::Float(value))
    }

    /// Any value; containers are walked (validated) and summarised.
    pub fn value(&mut self, depth: usize) -> Read<Val<'a>> {
        match self.peek().ok_or(Decline)? {
            b'"' => self.string().map(Val::Str),
            b'n' => self.literal(b"null").map(|_| Val::Null),
            b't' => self.literal(b"true").map(|_| Val::Bool(true)),
            b'f' => self.literal(b"false").map(|_| Val::Bool(false)),
            b'[' => self.array(depth + 1).map(Val::Arr),
            b'{' => self.object(depth + 1).map(|_| Val::Obj),
            _ => self.number(),
        }
    }

    fn array(&mut self, depth: usize) -> Read<usize> {
        if depth > MAX_DEPTH {
            return Err(Decline);
        }
        self.expect(b'[')?;
        self.ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(0);
        }
        let mut items = 0;
        loop {
            self.ws();
            self.value(depth)?;
            items += 1;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(items);
                }
                _ => return Err(Decline),
            }
        }
    }

    /// A nested object, validated only (its duplicate keys are not the record's).
    fn object(&mut self, depth: usize) -> Read<()> {
        if depth > MAX_DEPTH {
            return Err(Decline);
        }
        self.expect(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(());
        }
        loop {
            self.ws();
            self.string()?;
            self.ws();
            self.expect(b':')?;
            self.ws();
            self.value(depth)?;
            self.ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Decline),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Read<Val<'_>> {
        let mut r = Reader::new(text.as_bytes())?;
        let v = r.value(0)?;
        if r.at != text.len() {
            return Err(Decline);
        }
        Ok(v)
    }

    #[test]
    fn numbers_as_orjson_reads_them() {
        assert_eq!(read("-0"), Ok(Val::Int(0)));
        assert_eq!(read("12"), Ok(Val::Int(12)));
        assert_eq!(read("1E+2"), Ok(Val::Float(100.0)));
        assert_eq!(read("-0.0"), Ok(Val::Float(-0.0)));
        assert_eq!(read("9223372036854775808"), Err(Decline)); // a Python int past i64
        for bad in ["01", "1.", ".5", "-", "1e400", "1e", "+1"] {
            assert_eq!(read(bad), Err(Decline), "{bad}");
        }
    }

    #[test]
    fn strings_and_containers() {
        assert_eq!(read("\"ab\""), Ok(Val::Str(b"ab")));
        assert_eq!(read("[\"abcdefghij\",\"\"]"), Ok(Val::Arr(2)));
        assert_eq!(read("[\"abcdefg\",\"é\"]"), Ok(Val::Arr(2)));
        assert_eq!(read("\"abcdefghijk\\\"\""), Err(Decline));
        assert_eq!(read("\"abcdéfghijk\u{1}\""), Err(Decline));
        assert_eq!(read("\"a\\u0062\""), Err(Decline));
        assert_eq!(read("\"a\tb\""), Err(Decline));
        assert_eq!(read("[1, [2], {\"a\": null}]"), Ok(Val::Arr(3)));
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(read(&deep), Err(Decline));
    }
}
