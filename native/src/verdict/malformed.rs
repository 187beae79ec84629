//! Payloads that are not one JSON object, judged natively with `verify.malformed`'s texts:
//! bytes orjson refuses (`undecodable`, with orjson's own error text and position) and a
//! JSON value that is not an object (`not_a_mapping`).
//!
//! Only called for a record the verdict scan deferred, so a valid record never pays for it.
//! `judge` returns None (the Python rules judge the record) for a well-formed object and
//! for whatever is not proven to match orjson word for word: nesting near orjson's depth
//! limit, a broken document holding more values than orjson's reader reserves memory for
//! (orjson then says "failed to allocate memory"), the error cases not listed below, and a
//! top-level value `show` cannot render (a string with escapes or non-ASCII text, an int
//! past 64 signed bits).

use super::json::Val;
use super::render::{show, type_label};

/// The violation kinds judged here, by their index in `verify.rustcore.KINDS`.
pub const UNDECODABLE: u8 = 9;
pub const NOT_A_MAPPING: u8 = 10;
pub const OVERSIZED: u8 = 11;

/// Containers deeper than this are left to Python (orjson refuses past 1,024).
const MAX_DEPTH: usize = 1000;

/// Why a document stopped: the end of the input where more was needed, an error orjson
/// words as given at a byte offset, or a case not proven equal (Python judges).
enum Stop {
    End,
    At(usize, &'static str),
    Unsure,
}

type Step<T> = Result<T, Stop>;

struct Scan<'a> {
    buf: &'a [u8],
    at: usize,
    /// Values and keys read so far.
    values: usize,
}

impl<'a> Scan<'a> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.buf.get(self.at) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Step<u8> {
        self.buf.get(self.at).copied().ok_or(Stop::End)
    }

    /// One value; for the root, what `show` needs of it (None: a container).
    fn value(&mut self, depth: usize) -> Step<Val<'a>> {
        self.ws();
        self.values += 1;
        match self.peek()? {
            b'{' => self.object(depth + 1).map(|()| Val::Obj),
            b'[' => self.array(depth + 1).map(Val::Arr),
            b'"' => self.string(),
            b't' => self.literal(b"true", "invalid literal, expected 'true'").map(|()| Val::Bool(true)),
            b'f' => self.literal(b"false", "invalid literal, expected 'false'").map(|()| Val::Bool(false)),
            b'n' => self.literal(b"null", "invalid literal, expected 'null'").map(|()| Val::Null),
            b'-' | b'0'..=b'9' => self.number(),
            b'+' | b'.' => Err(Stop::At(self.at, "no digit after sign")),
            _ => Err(Stop::At(self.at, "unexpected character, expected a JSON value")),
        }
    }

    fn object(&mut self, depth: usize) -> Step<()> {
        if self.open(depth, b'}')? {
            return Ok(());
        }
        loop {
            if self.peek()? != b'"' {
                return Err(Stop::At(self.at, "unexpected character, expected a string key"));
            }
            self.values += 1;
            self.string()?;
            self.ws();
            if self.peek()? != b':' {
                return Err(Stop::At(self.at, "unexpected character, expected ':' after key"));
            }
            self.at += 1;
            self.value(depth)?;
            self.ws();
            match self.peek()? {
                b',' => self.comma(b'}')?,
                b'}' => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(Stop::At(self.at, "unexpected character, expected ',' or '}'")),
            }
        }
    }

    /// At the '{' or '[' of a container closed by `close`: past it, and true when the
    /// container is empty (then past its `close` too); nesting past orjson's limit is left
    /// to the Python rules.
    fn open(&mut self, depth: usize, close: u8) -> Step<bool> {
        if depth > MAX_DEPTH {
            return Err(Stop::Unsure);
        }
        self.at += 1;
        self.ws();
        if self.peek()? == close {
            self.at += 1;
            return Ok(true);
        }
        Ok(false)
    }

    /// Past a ',' inside an object or array closed by `close`: a trailing comma right
    /// before `close` is orjson's error; after whitespace it is left to the Python rules.
    fn comma(&mut self, close: u8) -> Step<()> {
        let comma = self.at;
        self.at += 1;
        self.ws();
        if self.peek()? == close {
            return Err(if self.at == comma + 1 {
                Stop::At(comma, "trailing comma is not allowed")
            } else {
                Stop::Unsure
            });
        }
        Ok(())
    }

    fn array(&mut self, depth: usize) -> Step<usize> {
        if self.open(depth, b']')? {
            return Ok(0);
        }
        let mut items = 0;
        loop {
            self.value(depth)?;
            items += 1;
            self.ws();
            match self.peek()? {
                b',' => self.comma(b']')?,
                b']' => {
                    self.at += 1;
                    return Ok(items);
                }
                _ => return Err(Stop::At(self.at, "unexpected character, expected ',' or ']'")),
            }
        }
    }

    fn literal(&mut self, word: &[u8], message: &'static str) -> Step<()> {
        let rest = &self.buf[self.at..];
        if rest.starts_with(word) {
            self.at += word.len();
            return Ok(());
        }
        if rest.len() < word.len() && word.starts_with(rest) {
            return Err(Stop::End);
        }
        Err(Stop::At(self.at, message))
    }

    /// Four hex digits at `at` (End: the input ends inside them).
    fn hex4(&self, at: usize) -> Step<Option<u32>> {
        let rest = &self.buf[at.min(self.buf.len())..];
        let digits = &rest[..rest.len().min(4)];
        if !digits.iter().all(u8::is_ascii_hexdigit) {
            return Ok(None);
        }
        if digits.len() < 4 {
            return Err(Stop::End);
        }
        let text = std::str::from_utf8(digits).map_err(|_| Stop::Unsure)?;
        Ok(Some(u32::from_str_radix(text, 16).map_err(|_| Stop::Unsure)?))
    }

    /// A string (the input is valid UTF-8); its bytes when it holds no escape.
    fn string(&mut self) -> Step<Val<'a>> {
        let start = self.at + 1;
        self.at = start;
        let mut plain = true;
        loop {
            let b = self.peek()?;
            match b {
                b'"' => {
                    self.at += 1;
                    return Ok(if plain { Val::Str(&self.buf[start..self.at - 1]) } else { Val::Obj });
                }
                b'\\' => {
                    plain = false;
                    self.escape()?;
                }
                0..=0x1f => return Err(Stop::At(self.at, "unexpected control character in string")),
                _ => self.at += 1,
            }
        }
    }

    fn escape(&mut self) -> Step<()> {
        let slash = self.at;
        self.at += 1;
        match self.peek()? {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {
                self.at += 1;
                Ok(())
            }
            b'u' => {
                let Some(code) = self.hex4(slash + 2)? else {
                    return Err(Stop::At(slash, "invalid escaped sequence in string"));
                };
                self.at = slash + 6;
                match code {
                    0xD800..=0xDBFF => {
                        if self.peek()? != b'\\' {
                            return Err(Stop::At(slash, "no low surrogate in string"));
                        }
                        self.at += 1;
                        if self.peek()? != b'u' {
                            return Err(Stop::At(slash, "no low surrogate in string"));
                        }
                        let low = match self.hex4(slash + 8) {
                            // Cut short: "unexpected end of data" only while what is left
                            // could still begin a low surrogate (`d`, then `c`-`f`), as
                            // orjson words it; else an invalid escape.
                            Err(Stop::End) if !low_surrogate_start(&self.buf[slash + 8..]) => {
                                return Err(Stop::At(slash, "invalid escape in string"));
                            }
                            low => low?,
                        };
                        let Some(low) = low else {
                            return Err(Stop::Unsure);
                        };
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(Stop::At(slash, "invalid low surrogate in string"));
                        }
                        self.at = slash + 12;
                        Ok(())
                    }
                    // A lone low surrogate: orjson words it "unexpected end of data" when what
                    // follows, up to the end of the input, could still begin a low surrogate
                    // (`\udc00`, `\udc00\`, `\udc00\udc0`, but not `\udc00\u12`); that
                    // is decided by the Python rules whenever a whole escape does not fit.
                    0xDC00..=0xDFFF if self.buf.len() - self.at < 6 => Err(Stop::Unsure),
                    0xDC00..=0xDFFF => Err(Stop::At(slash, "invalid high surrogate in string")),
                    _ => Ok(()),
                }
            }
            _ => Err(Stop::At(slash, "invalid escaped sequence in string")),
        }
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.buf.get(self.at) {
            self.at += 1;
        }
    }

    fn number(&mut self) -> Step<Val<'a>> {
        let start = self.at;
        if self.peek()? == b'-' {
            self.at += 1;
        }
        let first = self.peek()?;
        if !first.is_ascii_digit() {
            return Err(Stop::At(self.at, "no digit after sign"));
        }
        if first == b'0' {
            self.at += 1;
            if let Some(b'0'..=b'9') = self.buf.get(self.at) {
                return Err(Stop::At(self.at - 1, "number with leading zero is not allowed"));
            }
        } else {
            self.digits();
        }
        let mut integral = true;
        if self.buf.get(self.at) == Some(&b'.') {
            integral = false;
            self.at += 1;
            if !self.peek()?.is_ascii_digit() {
                return Err(Stop::At(self.at, "no digit after decimal point"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.buf.get(self.at) {
            integral = false;
            self.at += 1;
            if let Some(b'+' | b'-') = self.buf.get(self.at) {
                self.at += 1;
            }
            if !self.peek()?.is_ascii_digit() {
                return Err(Stop::At(self.at, "no digit after exponent sign"));
            }
            self.digits();
        }
        let text = std::str::from_utf8(&self.buf[start..self.at]).map_err(|_| Stop::Unsure)?;
        if integral {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Val::Int(i));
            }
            if text.parse::<u64>().is_ok() {
                return Ok(Val::Obj); // an int past i64: `show` is left to Python
            }
        }
        // A fraction, an exponent or an int past 64 bits: orjson's double.
        let value: f64 = text.parse().map_err(|_| Stop::Unsure)?;
        if !value.is_finite() {
            return Err(Stop::At(start, "number is infinity when parsed as double"));
        }
        Ok(Val::Float(value))
    }
}

/// `str(orjson.JSONDecodeError)`: the message, then where, as Python's `JSONDecodeError`
/// counts it in characters of the (valid UTF-8) document.
fn located(buf: &[u8], at: usize, message: &str) -> String {
    let head = &buf[..at.min(buf.len())];
    let chars = |b: &[u8]| b.iter().filter(|&&c| c & 0xC0 != 0x80).count();
    let pos = chars(head);
    let (line, col) = match head.iter().rposition(|&c| c == b'\n') {
        Some(nl) => (head.iter().filter(|&&c| c == b'\n').count() + 1, pos - chars(&head[..nl])),
        None => (1, pos + 1),
    };
    format!("{message}: line {line} column {col} (char {pos})")
}

fn undecodable(buf: &[u8], at: usize, message: &str) -> (u8, String) {
    (UNDECODABLE, format!("payload is not valid JSON: {}", located(buf, at, message)))
}

/// The one violation (kind code, message) of a payload that is not one JSON object, or
/// None: a well-formed object, or a case left to the Python rules.
pub fn judge(buf: &[u8]) -> Option<(u8, String)> {
    if buf.is_empty() {
        return Some(undecodable(buf, 0, "Input is a zero-length, empty document"));
    }
    if std::str::from_utf8(buf).is_err() {
        return Some(undecodable(buf, 0, "str is not valid UTF-8: surrogates not allowed"));
    }
    let mut scan = Scan { buf, at: 0, values: 0 };
    scan.ws();
    if scan.at == buf.len() {
        return Some(undecodable(buf, 0, "input data is empty"));
    }
    let stop = match scan.value(0) {
        Ok(root) => {
            scan.ws();
            if scan.at == buf.len() {
                return not_an_object(&root);
            }
            Stop::At(scan.at, "unexpected content after document")
        }
        Err(stop) => stop,
    };
    // orjson's reader reserves about one value per two bytes (yyjson's bound for a valid
    // document): past it, a broken document may be refused for memory instead ("failed
    // to allocate memory", whose position is not mirrored here).
    if scan.values.saturating_mul(2) > buf.len() + 4 {
        return None;
    }
    match stop {
        Stop::End => Some(undecodable(buf, buf.len(), "unexpected end of data")),
        Stop::At(at, message) => Some(undecodable(buf, at, message)),
        Stop::Unsure => None,
    }
}

/// `not_a_mapping(value)` of a root that is not an object (None for an object, or a value
/// `show` leaves to Python).
fn not_an_object(root: &Val<'_>) -> Option<(u8, String)> {
    let got = match root {
        Val::Obj => return None,
        Val::Null => "null".to_string(),
        _ => format!("{} {}", type_label(root), show(root)?),
    };
    Some((NOT_A_MAPPING, format!("payload is not a JSON object (mapping): got {got}")))
}

/// `hex` (fewer than four hex digits, the input's end after them) can begin the hex digits
/// of a low surrogate (`DC00`-`DFFF`, either case).
fn low_surrogate_start(hex: &[u8]) -> bool {
    hex.first().map_or(true, |b| b.eq_ignore_ascii_case(&b'd'))
        && hex.get(1).map_or(true, |b| matches!(b.to_ascii_lowercase(), b'c'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(buf: &[u8]) -> Option<String> {
        judge(buf).map(|(_, m)| m)
    }

    #[test]
    fn orjson_texts_for_common_breaks() {
        let cases: [(&[u8], &str); 8] = [
            (b"", "Input is a zero-length, empty document: line 1 column 1 (char 0)"),
            (b"\xff\xfe{", "str is not valid UTF-8: surrogates not allowed: line 1 column 1 (char 0)"),
            (b"{\"a\":1", "unexpected end of data: line 1 column 7 (char 6)"),
            (b"{\"a\":NaN}", "unexpected character, expected a JSON value: line 1 column 6 (char 5)"),
            (b"{\"a\":1}x", "unexpected content after document: line 1 column 8 (char 7)"),
            (b"\"\\ud800\"", "no low surrogate in string: line 1 column 2 (char 1)"),
            (b"\n\n{\"a\" 1}", "unexpected character, expected ':' after key: line 3 column 6 (char 7)"),
            ("{\"\u{e9}\":x}".as_bytes(), "unexpected character, expected a JSON value: line 1 column 6 (char 5)"),
        ];
        for (buf, want) in cases {
            assert_eq!(text(buf), Some(format!("payload is not valid JSON: {want}")), "{buf:?}");
        }
    }

    #[test]
    fn a_lone_low_surrogate_near_the_end_is_left_to_python() {
        // orjson: "unexpected end of data" for `["\udc00` and `["\udc00\udc0`, "invalid
        // high surrogate" for `["\udc00\u12`: decided by the Python rules, never guessed.
        for buf in [&b"[\"\\udc00"[..], b"[\"\\udc00\\", b"[\"\\udc00\\udc0", b"[\"\\udc00\\u12"] {
            assert_eq!(judge(buf), None, "{buf:?}");
        }
        let want = "payload is not valid JSON: invalid high surrogate in string: line 1 column 3 (char 2)";
        assert_eq!(text(b"[\"\\udc00\\udc00\"]").as_deref(), Some(want));
    }

    #[test]
    fn a_low_surrogate_cut_short_is_worded_as_orjson_words_it() {
        // After a high surrogate, input that ends while it could still begin a low one
        // (`\u`, `\ud`, `\udc0`, any case) is "unexpected end of data" at the end; input
        // that ends where it no longer could (`\u0`, `\ue`, `\udb`) is "invalid escape in
        // string" at the high surrogate (orjson 3's texts, checked one by one).
        let end = |n: usize| format!("payload is not valid JSON: unexpected end of data: line 1 column {} (char {n})", n + 1);
        let invalid = "payload is not valid JSON: invalid escape in string: line 1 column 5 (char 4)";
        for (buf, want) in [
            (&br#"{"as\ud800\u"#[..], end(12)),
            (br#"{"as\ud800\ud"#, end(13)),
            (br#"{"as\ud800\uD"#, end(13)),
            (br#"{"as\ud800\ude"#, end(14)),
            (br#"{"as\ud800\uDC0"#, end(15)),
            (br#"{"as\ud800\u0"#, invalid.to_string()),
            (br#"{"as\ud800\u004"#, invalid.to_string()),
            (br#"{"as\ud800\ue"#, invalid.to_string()),
            (br#"{"as\ud800\udb"#, invalid.to_string()),
            (br#"{"as\ud800\ud0"#, invalid.to_string()),
        ] {
            assert_eq!(text(buf), Some(want), "{buf:?}");
        }
    }

    #[test]
    fn values_that_are_not_objects() {
        let got = |buf: &[u8]| text(buf).map(|m| m["payload is not a JSON object (mapping): got ".len()..].to_string());
        assert_eq!(got(b"[\"SYM\", 1.5]").as_deref(), Some("list <list of 2 items>"));
        assert_eq!(got(b" null ").as_deref(), Some("null"));
        assert_eq!(got(b"true").as_deref(), Some("bool True"));
        assert_eq!(got(b"-0").as_deref(), Some("int 0"));
        assert_eq!(got(b"1e16").as_deref(), Some("float 1e+16"));
        assert_eq!(got(b"\"it's\"").as_deref(), Some("str \"it's\""));
        assert_eq!(judge(b"\"\\n\""), None);
        assert_eq!(judge(b"{\"a\":[1,{}]}"), None);
    }

    #[test]
    fn deep_nesting_is_left_to_python() {
        let deep = [vec![b'['; 1100], vec![b']'; 1100]].concat();
        assert_eq!(judge(&deep), None);
    }
}
