//! The offline validator's DLQ line (`dlq.jsonlines.dlq_line`, the reference) written
//! natively for the common entry: a line not cut short, its bytes UTF-8, every violation a
//! plain `Violation` (no rule, not flagged) of texts. Anything else is left to the Python
//! writer (`None`), so an entry is always the bytes `orjson.dumps` gives for the
//! reference's dict (tests/unit/offline/test_dlqline.py compares the two byte for byte).

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};

use crate::verdict::built::ReportTypes;

/// Per byte, how orjson writes it inside a string: 0 as is, `u` as `\u00xx`, else `\`
/// and that letter.
static ESCAPES: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b'u';
        b += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table
};

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The bytes of the word `w` (little-endian) that `ESCAPES` escapes, each as its high bit:
/// a `"`, a `\\` or a byte below 0x20. The tests may also flag a byte after a flagged one
/// (a borrow carried on), never one before it, so the lowest flag is exact.
#[inline]
fn escapes_in(w: u64) -> u64 {
    let quote = w ^ (ONES * u64::from(b'"'));
    let slash = w ^ (ONES * u64::from(b'\\'));
    (quote.wrapping_sub(ONES) & !quote | slash.wrapping_sub(ONES) & !slash | w.wrapping_sub(ONES * 0x20) & !w)
        & HIGH
}

/// `s` as orjson writes a JSON string: `"` and `\\` escaped, `\b \t \n \f \r` short, every
/// other control character below 0x20 as `\u00xx` (lower-case hex), the rest as is.
///
/// Eight bytes at a time: a word without an escape is stored whole, and a word with one
/// is stored whole too before its first escape overwrites the rest (the length then counts
/// only the bytes before it), so a run of plain text costs no call to `memcpy`.
pub(crate) fn push_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    // Room for every byte escaped as two, a word stored past the end and the quotes; a
    // `\u00xx` escape (four more) reserves its own.
    out.reserve(2 * bytes.len() + 16);
    out.push(b'"');
    let mut at = 0;
    while at < bytes.len() {
        if let Some(word) = bytes.get(at..at + 8) {
            let w = u64::from_le_bytes(word.try_into().unwrap_or([0; 8]));
            let hits = escapes_in(w);
            let plain = if hits == 0 { 8 } else { (hits.trailing_zeros() / 8) as usize };
            let len = out.len();
            debug_assert!(out.capacity() - len >= 8);
            // SAFETY: at least eight bytes of spare capacity: the reservation above is two
            // per input byte plus 16, every byte written so far took at most two of it, and
            // a `\u00xx` escape reserves the same budget again for the bytes after it;
            // only the `plain` bytes stored are counted.
            unsafe {
                std::ptr::write_unaligned(out.as_mut_ptr().add(len).cast::<u64>(), w);
                out.set_len(len + plain);
            }
            at += plain;
            if plain == 8 {
                continue;
            }
        } else {
            while at < bytes.len() && ESCAPES[usize::from(bytes[at])] == 0 {
                out.push(bytes[at]);
                at += 1;
            }
            if at == bytes.len() {
                break;
            }
        }
        let b = bytes[at];
        let escape = ESCAPES[usize::from(b)];
        if escape != b'u' {
            let len = out.len();
            // SAFETY: two of the byte's budget of spare capacity (see above).
            unsafe {
                std::ptr::write_unaligned(out.as_mut_ptr().add(len).cast::<[u8; 2]>(), [b'\\', escape]);
                out.set_len(len + 2);
            }
        } else {
            out.reserve(6 + 2 * (bytes.len() - at) + 16); // the budget of the rest kept
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]);
        }
        at += 1;
    }
    out.push(b'"');
}

/// The entry of line `line` (1-based) whose violations are (field, kind, message), its
/// raw payload the UTF-8 text `raw`, with its `\n`.
pub(crate) fn render(line: u64, violations: &[(Option<&str>, &str, &str)], raw: &str) -> Vec<u8> {
    let text: usize = violations.iter().map(|(f, k, m)| f.map_or(0, str::len) + k.len() + 2 * m.len() + 48).sum();
    let mut out = Vec::with_capacity(raw.len() + text + 96);
    out.extend_from_slice(b"{\"line\":");
    out.extend_from_slice(line.to_string().as_bytes());
    out.extend_from_slice(b",\"violations\":[");
    for (i, (field, kind, message)) in violations.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"field\":");
        match field {
            Some(field) => push_str(&mut out, field),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"kind\":");
        push_str(&mut out, kind);
        out.extend_from_slice(b",\"message\":");
        push_str(&mut out, message);
        out.push(b'}');
    }
    out.extend_from_slice(b"],\"violation_reason\":");
    let reason: Vec<&str> = violations.iter().map(|v| v.2).collect();
    push_str(&mut out, &reason.join("; "));
    out.extend_from_slice(b",\"raw\":");
    push_str(&mut out, raw);
    out.extend_from_slice(b",\"raw_encoding\":\"utf-8\"}\n");
    out
}

/// A text as the reference's `str(...)` of it: a `str`, or a member of the kinds' enum
/// (a `StrEnum`, whose text is its value); None for anything else or lone surrogates.
fn text<'a>(value: &'a Bound<'_, PyAny>, kind_type: Option<&Bound<'_, PyAny>>) -> Option<&'a str> {
    let exact = value.downcast_exact::<PyString>().is_ok();
    let member = kind_type.is_some_and(|t| value.get_type().is(t));
    if !(exact || member) {
        return None;
    }
    value.downcast::<PyString>().ok()?.to_str().ok()
}

/// The entry of line `line` for the quarantined record `q` whose raw payload is `raw`
/// (`dlq_line(line, q, raw)`), or None where the Python writer must write it. The fields
/// are read through the report types' own slots (`built::ReportTypes`), so `q` and its
/// violations must be exactly those types.
pub(crate) fn entry(types: &ReportTypes, line: u64, q: &Bound<'_, PyAny>, raw: &[u8]) -> PyResult<Option<Vec<u8>>> {
    let py = q.py();
    let Ok(raw) = std::str::from_utf8(raw) else {
        return Ok(None); // base64: the Python writer's
    };
    let Ok(Some([_, _, violations])) = types.quarantined_fields(q) else {
        return Ok(None);
    };
    let Ok(violations) = violations.downcast_exact::<PyList>() else {
        return Ok(None);
    };
    let kind_type = types.kind_type(py)?;
    let mut held = Vec::with_capacity(violations.len());
    for v in violations.iter() {
        let Ok(Some([field, kind, message, rule])) = types.violation_fields(&v) else {
            return Ok(None); // a FlaggedViolation (the writer adds "action"), an unset slot
        };
        if !rule.is_none() {
            return Ok(None); // the writer adds "rule"
        }
        held.push((field, kind, message));
    }
    let mut parts = Vec::with_capacity(held.len());
    for (field, kind, message) in &held {
        let field = if field.is_none() {
            None
        } else {
            match text(field, None) {
                Some(f) => Some(f),
                None => return Ok(None),
            }
        };
        let (Some(kind), Some(message)) = (text(kind, Some(&kind_type)), text(message, None)) else {
            return Ok(None);
        };
        parts.push((field, kind, message));
    }
    Ok(Some(render(line, &parts, raw)))
}

#[cfg(test)]
mod tests {
    use super::{push_str, render};

    fn json(s: &str) -> String {
        let mut out = Vec::new();
        push_str(&mut out, s);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_orjson_escapes_them() {
        assert_eq!(json(""), "\"\"");
        assert_eq!(json("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
        assert_eq!(json("\u{8}\t\n\u{c}\r"), "\"\\b\\t\\n\\f\\r\"");
        assert_eq!(json("\u{0}\u{1f}\u{b}\u{7f}"), "\"\\u0000\\u001f\\u000b\u{7f}\"");
        assert_eq!(json("é\u{2028}😀"), "\"é\u{2028}😀\"");
    }

    #[test]
    fn every_byte_is_escaped_wherever_it_lies_in_a_word() {
        for b in 0u8..0x80 {
            for at in 0..20 {
                let text = format!("{}{}{}", "a".repeat(at), b as char, "é".repeat(5));
                let mut want = String::from("\"");
                want.push_str(&"a".repeat(at));
                match b {
                    b'"' => want.push_str("\\\""),
                    b'\\' => want.push_str("\\\\"),
                    0x08 => want.push_str("\\b"),
                    0x09 => want.push_str("\\t"),
                    0x0a => want.push_str("\\n"),
                    0x0c => want.push_str("\\f"),
                    0x0d => want.push_str("\\r"),
                    0..=0x1f => want.push_str(&format!("\\u{:04x}", b)),
                    _ => want.push(b as char),
                }
                want.push_str(&"é".repeat(5));
                want.push('"');
                assert_eq!(json(&text), want, "byte {b:#x} at {at}");
            }
        }
    }

    #[test]
    fn long_texts_of_control_characters_and_quotes_are_escaped_whole() {
        let text: String = (0..300u32).map(|i| char::from_u32(i % 0x24).unwrap_or('x')).collect();
        let want: String = text
            .chars()
            .map(|c| match c {
                '"' => "\\\"".to_string(),
                '\u{8}' => "\\b".to_string(),
                '\t' => "\\t".to_string(),
                '\n' => "\\n".to_string(),
                '\u{c}' => "\\f".to_string(),
                '\r' => "\\r".to_string(),
                c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32),
                c => c.to_string(),
            })
            .collect();
        assert_eq!(json(&text), format!("\"{want}\""));
    }

    #[test]
    fn an_entry_has_the_reference_keys_in_order() {
        let got = render(12, &[(Some("price"), "below_min", "price -1 < 0"), (None, "unknown_field", "x")], "{\"a\":1}");
        let want = concat!(
            r#"{"line":12,"violations":[{"field":"price","kind":"below_min","message":"price -1 < 0"},"#,
            r#"{"field":null,"kind":"unknown_field","message":"x"}],"violation_reason":"price -1 < 0; x","#,
            r#""raw":"{\"a\":1}","raw_encoding":"utf-8"}"#,
            "\n"
        );
        assert_eq!(String::from_utf8(got).unwrap(), want);
    }
}
