//! The payload readers of `judge`: the plain form (every declared key once, in order,
//! compact) with its key literals compared eight bytes at a time, and the general object
//! reader for any other spelling.

use super::fieldcheck::Quick;
use super::json::{Decline, Read, Reader, Val, POW10};
use super::{nested, Plan, MAX_KEY_BYTES, MAX_NAMED};

/// `buf[at..]` starts with `lit`: eight bytes at a time.
#[inline]
pub(super) fn starts(buf: &[u8], at: usize, lit: &[u8]) -> bool {
    let Some(part) = buf.get(at..at + lit.len()) else { return false };
    let mut i = 0;
    while i + 8 <= lit.len() {
        let a = u64::from_le_bytes(part[i..i + 8].try_into().expect("eight bytes"));
        let b = u64::from_le_bytes(lit[i..i + 8].try_into().expect("eight bytes"));
        if a != b {
            return false;
        }
        i += 8;
    }
    if i == lit.len() {
        return true;
    }
    if lit.len() >= 8 {
        // The last eight bytes, overlapping the ones compared: no call to memcmp.
        let at = lit.len() - 8;
        let a = u64::from_le_bytes(part[at..].try_into().expect("eight bytes"));
        let b = u64::from_le_bytes(lit[at..].try_into().expect("eight bytes"));
        return a == b;
    }
    part.iter().zip(lit).all(|(a, b)| a == b)
}

/// The digits from `i`, accumulated into `m` (wrapping: the caller bounds the count).
#[inline(always)]
pub(super) fn digits(buf: &[u8], i: usize, m: &mut u64) -> usize {
    let rest = buf.get(i..).unwrap_or_default();
    let mut n = 0;
    for &c in rest {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *m = m.wrapping_mul(10).wrapping_add(u64::from(d));
        n += 1;
    }
    i + n
}

/// A number literal at `r.at`, read exactly as `Reader::number` reads it, and whether the
/// field's `quick` range settles it: the short forms (an int of at most 18 digits, a
/// decimal of at most 15 without an exponent) in one pass, anything else by `number`.
#[inline(always)]
pub(super) fn number_checked<'a>(r: &mut Reader<'a>, quick: Quick) -> Read<(Val<'a>, bool)> {
    let (buf, start) = (r.buf, r.at);
    let negative = buf.get(start) == Some(&b'-');
    let first = start + usize::from(negative);
    let mut m = 0u64;
    let mut i = digits(buf, first, &mut m);
    let whole = i - first;
    if whole == 0 || whole > 18 || (whole > 1 && buf[first] == b'0') {
        return general(r, quick); // no digit (declined), a leading zero, or a long int
    }
    let v = match buf.get(i) {
        Some(b'.') => {
            let from = i + 1;
            i = digits(buf, from, &mut m);
            let fraction = i - from;
            if fraction == 0 || whole + fraction > 15 || matches!(buf.get(i), Some(b'e' | b'E')) {
                return general(r, quick);
            }
            // Clinger's fast path, as `number` takes it: both operands exact, one rounding.
            let x = m as f64 / POW10[fraction];
            Val::Float(if negative { -x } else { x })
        }
        Some(b'e' | b'E') => return general(r, quick),
        _ => {
            let n = m as i64; // at most 18 digits: exact
            Val::Int(if negative { -n } else { n })
        }
    };
    r.at = i;
    Ok((v, quick.clean(Some(v))))
}

#[cold]
fn general<'a>(r: &mut Reader<'a>, quick: Quick) -> Read<(Val<'a>, bool)> {
    let v = r.number()?;
    Ok((v, quick.clean(Some(v))))
}

/// The common form: every declared key once, in order, compact, scalar values. False
/// (with `vals` partly filled) when the payload is not in it: the general reader then runs.
/// A number is checked as it is read: `done` gets the bit of each field its `Quick` range
/// settled, which `check` then skips.
pub(super) fn read_plain<'a>(
    plan: &Plan,
    buf: &'a [u8],
    vals: &mut [Option<Val<'a>>],
    nulls: &mut u64,
    done: &mut u64,
) -> bool {
    if plan.fields.is_empty() {
        return false; // `{}`: the general reader
    }
    let mut r = Reader { buf, at: 0 };
    for (i, lit) in plan.plain[..plan.fields.len()].iter().enumerate() {
        if !starts(buf, r.at, lit) {
            return false;
        }
        r.at += lit.len();
        let value = match r.peek() {
            Some(b'"') => r.string().map(Val::Str),
            Some(b'-' | b'0'..=b'9') => match number_checked(&mut r, plan.quick[i]) {
                Ok((v, clean)) => {
                    *done |= u64::from(clean) << i;
                    Ok(v)
                }
                Err(e) => Err(e),
            },
            Some(b'n' | b't' | b'f') => r.value(0),
            Some(b'{' | b'[') => match &plan.fields[i].nest {
                Some(node) => nested::walk(node, &mut r, 0, vals, nulls),
                None => return false,
            },
            _ => return false,
        };
        match value {
            Ok(v) => vals[i] = Some(v),
            Err(_) => return false,
        }
    }
    r.at + 1 == buf.len() && buf[r.at] == b'}'
}

pub(super) fn read_object<'a>(
    plan: &Plan,
    buf: &'a [u8],
    vals: &mut [Option<Val<'a>>],
    unknown: &mut Vec<&'a [u8]>,
    nulls: &mut u64,
) -> Result<(), Decline> {
    let mut r = Reader::new(buf)?;
    r.ws();
    r.expect(b'{')?; // not an object: Python words it
    r.ws();
    let fields = &plan.fields;
    let mut hint = 0;
    if r.peek() == Some(b'}') {
        r.at += 1;
    } else {
        loop {
            r.ws();
            // Keys usually come in the declared order: try the next one in place first.
            let found = if hint < fields.len() && r.key_is(&fields[hint].name) {
                Some(hint)
            } else {
                let key = r.string()?;
                let found = fields.iter().position(|f| f.name == key);
                if found.is_none() {
                    if key.len() > MAX_KEY_BYTES || unknown.len() >= MAX_NAMED || unknown.contains(&key)
                    {
                        return Err(Decline);
                    }
                    if plan.width > fields.len() && key.contains(&b'.') {
                        return Err(Decline); // PathView reads such a key as the path
                    }
                    unknown.push(key);
                }
                found
            };
            r.ws();
            r.expect(b':')?;
            r.ws();
            let value = match found.and_then(|i| fields[i].nest.as_ref()) {
                Some(node) if r.peek() != Some(b'n') => nested::walk(node, &mut r, 0, vals, nulls)?,
                _ => r.value(0)?,
            };
            if let Some(i) = found {
                if vals[i].is_some() {
                    return Err(Decline); // a repeated key: Python words it
                }
                vals[i] = Some(value);
                hint = i + 1;
            }
            r.ws();
            match r.peek() {
                Some(b',') => r.at += 1,
                Some(b'}') => {
                    r.at += 1;
                    break;
                }
                _ => return Err(Decline),
            }
        }
    }
    r.ws();
    if r.at != buf.len() {
        return Err(Decline);
    }
    Ok(())
}

