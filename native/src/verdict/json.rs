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
    /// A reader over `buf`, or `Decline` when it holds a backslash or is not UTF-8.
    pub fn new(buf: &'a [u8]) -> Read<Self> {
        if memchr::memchr(b'\\', buf).is_some() || std::str::from_utf8(buf).is_err() {
            return Err(Decline);
        }
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
        let len = memchr::memchr(b'"', &self.buf[start..]).ok_or(Decline)?;
        let text = &self.buf[start..start + len];
        if text.iter().any(|&c| c < 0x20) {
            return Err(Decline); // orjson refuses a raw control character
        }
        self.at = start + len + 1;
        Ok(text)
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
    pub fn number(&mut self) -> Read<Val<'a>> {
        let start = self.at;
        let buf = self.buf;
        let mut i = start;
        if buf.get(i) == Some(&b'-') {
            i += 1;
        }
        let digits = i;
        while matches!(buf.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        if i == digits || (buf[digits] == b'0' && i - digits > 1) {
            return Err(Decline); // no digit, or a leading zero
        }
        let mut float = false;
        if buf.get(i) == Some(&b'.') {
            i += 1;
            let frac = i;
            while matches!(buf.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
            if i == frac {
                return Err(Decline);
            }
            float = true;
        }
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
            float = true;
        }
        self.at = i;
        // SAFETY of the unwrap-free path: the bytes are ASCII digits and signs.
        let text = std::str::from_utf8(&buf[start..i]).map_err(|_| Decline)?;
        if float {
            let value: f64 = text.parse().map_err(|_| Decline)?;
            if !value.is_finite() {
                return Err(Decline); // orjson: "number is infinity when parsed as double"
            }
            return Ok(Val::Float(value));
        }
        // Past i64 orjson returns a Python int up to u64 and a float beyond: both declined.
        text.parse::<i64>().map(Val::Int).map_err(|_| Decline)
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
        assert_eq!(read("\"a\\u0062\""), Err(Decline));
        assert_eq!(read("\"a\tb\""), Err(Decline));
        assert_eq!(read("[1, [2], {\"a\": null}]"), Ok(Val::Arr(3)));
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(read(&deep), Err(Decline));
    }
}
