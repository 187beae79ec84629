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

/// `s` as orjson writes a JSON string: `"` and `\` escaped, `\b \t \n \f \r` short, every
/// other control character below 0x20 as `\u00xx` (lower-case hex), the rest as is.
pub(crate) fn push_str(out: &mut Vec<u8>, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape = ESCAPES[usize::from(b)];
        if escape == 0 {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        if escape == b'u' {
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', HEX[usize::from(b >> 4)], HEX[usize::from(b & 0xf)]]);
        } else {
            out.extend_from_slice(&[b'\\', escape]);
        }
        start = i + 1;
    }
    out.extend_from_slice(&bytes[start..]);
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
/// (`dlq_line(line, q, raw)`), or None where the Python writer must write it.
pub(crate) fn entry(
    types: &ReportTypes,
    line: u64,
    q: &Bound<'_, PyAny>,
    raw: &[u8],
) -> PyResult<Option<Vec<u8>>> {
    let py = q.py();
    let Ok(raw) = std::str::from_utf8(raw) else {
        return Ok(None); // base64: the Python writer's
    };
    let violations = q.getattr(pyo3::intern!(py, "violations"))?;
    let Ok(violations) = violations.downcast_exact::<PyList>() else {
        return Ok(None);
    };
    let kind_type = types.kind_type(py)?;
    let items: Vec<Bound<'_, PyAny>> = violations.iter().collect();
    let mut parts = Vec::with_capacity(items.len());
    let mut held = Vec::with_capacity(items.len() * 3);
    for v in &items {
        if !v.get_type().is(types.violation_type(py)) || !v.getattr(pyo3::intern!(py, "rule"))?.is_none() {
            return Ok(None); // flagged or a rule's: the writer adds keys
        }
        held.push(v.getattr(pyo3::intern!(py, "field"))?);
        held.push(v.getattr(pyo3::intern!(py, "kind"))?);
        held.push(v.getattr(pyo3::intern!(py, "message"))?);
    }
    for triple in held.chunks(3) {
        let field = if triple[0].is_none() {
            None
        } else {
            match text(&triple[0], None) {
                Some(f) => Some(f),
                None => return Ok(None),
            }
        };
        let (Some(kind), Some(message)) = (text(&triple[1], Some(&kind_type)), text(&triple[2], None)) else {
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
