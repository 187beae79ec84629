//! The valid record in one pass: the plain form (every declared key once, in order,
//! compact) read with each value checked as it is read, for contracts whose fields are all
//! flat scalars. It only ever answers `Valid`: at the first value that is not plainly clean
//! (out of range, a null without a slot, another type, a pattern value not learnt yet,
//! non-ASCII or escaped text, a datetime outside its window, a rule that does not simply
//! hold or flag) it gives up, and `judge` reads the record again from the start with the
//! general readers and `check`, whose verdict (violations and their texts) is final.

use super::fieldcheck::Quick;
use super::json::{Reader, Val, POW10};
use super::read::{digits, number_checked, starts};
use super::rules::{self, Verdict};
use super::{isotime, Field, Moment, Outcome, Patterns, Plan, Ty, Window};

/// What the one pass checks of a field's value.
#[derive(Debug, Clone, Copy)]
pub(super) enum Step {
    /// A float literal in the field's `Quick::Floats` range.
    Float(f64, f64),
    /// An int literal in the field's `Quick::Ints` range.
    Int(i64, i64),
    Bool,
    /// Text: lengths, pattern and allowed values of the field (`check_text`).
    Text,
    Datetime,
}

/// The bytes before a field's value (`{"a":`, `,"b":`) as words: eight to sixteen bytes
/// are compared in two loads (overlapping), fewer in one masked load.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lit {
    len: usize,
    first: u64,
    last: u64,
}

impl Lit {
    fn of(lit: &[u8]) -> Option<Lit> {
        let word = |part: &[u8]| {
            let mut w = [0u8; 8];
            w[..part.len()].copy_from_slice(part);
            u64::from_le_bytes(w)
        };
        match lit.len() {
            0 => None,
            len @ 1..=7 => Some(Lit { len, first: word(lit), last: (1u64 << (8 * len)) - 1 }),
            // Longer: these two words first, then every byte (`judge`).
            len => Some(Lit { len, first: word(&lit[..8]), last: word(&lit[len - 8..]) }),
        }
    }

    /// `buf[at..]` starts with the literal.
    #[inline(always)]
    fn at(self, buf: &[u8], at: usize) -> bool {
        let load = |from: usize| buf.get(from..from + 8).map(|w| u64::from_le_bytes(w.try_into().expect("eight")));
        if self.len < 8 {
            // `last` is the mask of the literal's bytes; near the end, byte by byte.
            return match load(at) {
                Some(w) => w & self.last == self.first,
                None => buf.get(at..at + self.len).is_some_and(|part| {
                    part.iter().enumerate().all(|(k, &b)| u64::from(b) == (self.first >> (8 * k)) & 0xFF)
                }),
            };
        }
        load(at) == Some(self.first) && load(at + self.len - 8) == Some(self.last)
    }
}

/// The steps of a plan's fields (with each field's literal and null-count bit, 0 when not
/// nullable), or None when a field is not a flat scalar the one pass can settle.
pub(super) fn steps(fields: &[Field], quick: &[Quick], plain: &[Vec<u8>]) -> Option<Vec<(Lit, Step, u64)>> {
    if fields.is_empty() {
        return None;
    }
    fields
        .iter()
        .zip(quick)
        .zip(plain)
        .map(|((f, q), lit)| {
            let lit = Lit::of(lit)?;
            if f.nest.is_some() || (f.window.is_some() && f.ty != Ty::Datetime) {
                return None;
            }
            let step = match f.ty {
                Ty::Float | Ty::Int => match *q {
                    Quick::Floats(lo, hi) => Step::Float(lo, hi),
                    Quick::Ints(lo, hi) => Step::Int(lo, hi),
                    Quick::None => return None,
                },
                Ty::Bool => Step::Bool,
                Ty::Str => Step::Text,
                Ty::Datetime => Step::Datetime,
                _ => return None,
            };
            let null = match f.null_slot {
                Some(slot) if slot < 64 => 1u64 << slot,
                Some(_) => return None,
                None => 0,
            };
            Some((lit, step, null))
        })
        .collect()
}

/// A string whose opening quote is at `at`, when it is ASCII without an escape or a
/// control byte: its text and the position after its closing quote.
#[inline(always)]
fn ascii_text(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero = |w: u64| w.wrapping_sub(LOW) & !w & HIGH;
    let start = at + 1;
    let rest = buf.get(start..)?;
    let mut skip = 0;
    while let Some(chunk) = rest.get(skip..skip + 8) {
        let w = u64::from_le_bytes(chunk.try_into().expect("eight bytes"));
        // A quote, a backslash, a byte below 0x20 (exact below 0x80), a byte from 0x80.
        let stops = zero(w ^ (LOW * u64::from(b'"')))
            | zero(w ^ (LOW * u64::from(b'\\')))
            | (w.wrapping_sub(LOW * 0x20) & !w & HIGH)
            | (w & HIGH);
        if stops != 0 {
            let len = skip + (stops.trailing_zeros() / 8) as usize;
            return (rest[len] == b'"').then(|| (&rest[..len], start + len + 1));
        }
        skip += 8;
    }
    for (len, &c) in rest.iter().enumerate().skip(skip) {
        if c == b'"' {
            return Some((&rest[..len], start + len + 1));
        }
        if c < 0x20 || c == b'\\' || c >= 0x80 {
            return None;
        }
    }
    None
}

/// `-?d+.d+` at `at` with at most 15 digits and no exponent, read as `number_checked`
/// reads it (one correctly rounded division), and the position after it.
#[inline(always)]
fn decimal(buf: &[u8], at: usize) -> Option<(f64, usize)> {
    let negative = buf.get(at) == Some(&b'-');
    let first = at + usize::from(negative);
    let mut m = 0u64;
    let dot = digits(buf, first, &mut m);
    let whole = dot - first;
    if whole == 0 || whole > 15 || (whole > 1 && buf[first] == b'0') || buf.get(dot) != Some(&b'.') {
        return None;
    }
    let end = digits(buf, dot + 1, &mut m);
    let fraction = end - dot - 1;
    if fraction == 0 || whole + fraction > 15 || matches!(buf.get(end), Some(b'e' | b'E')) {
        return None;
    }
    let x = m as f64 / POW10[fraction];
    Some((if negative { -x } else { x }, end))
}

/// `-?d+` at `at` with at most 18 digits (exact in i64), as `number_checked` reads it.
#[inline(always)]
fn integer(buf: &[u8], at: usize) -> Option<(i64, usize)> {
    let negative = buf.get(at) == Some(&b'-');
    let first = at + usize::from(negative);
    let mut m = 0u64;
    let end = digits(buf, first, &mut m);
    let whole = end - first;
    if whole == 0 || whole > 18 || (whole > 1 && buf[first] == b'0') || matches!(buf.get(end), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    let n = m as i64;
    Some((if negative { -n } else { n }, end))
}

/// Any other number literal at `at`, by `number_checked`, when `quick` finds it clean.
#[cold]
fn number(buf: &[u8], at: usize, quick: Quick) -> Option<(Val<'_>, usize)> {
    let c = *buf.get(at)?;
    if c != b'-' && !c.is_ascii_digit() {
        return None;
    }
    let mut r = Reader { buf, at };
    match number_checked(&mut r, quick).ok()? {
        (v, true) => Some((v, r.at)),
        _ => None,
    }
}

/// ASCII text clean for its field: lengths, pattern, allowed values, as `check_text`.
#[inline]
fn text_clean<P: Patterns + ?Sized>(i: usize, f: &Field, s: &[u8], patterns: &P) -> bool {
    // ASCII: as many code points as bytes.
    if f.min_len.is_some_and(|min| s.len() < min) || f.max_len.is_some_and(|max| s.len() > max) {
        return false;
    }
    if f.pattern && patterns.verdict(i, s) != Some(true) {
        return false;
    }
    match &f.allowed_str {
        Some(allowed) => allowed.iter().any(|a| a.as_slice() == s),
        None => true,
    }
}

/// A datetime text clean for its field: the plain ISO form, its offset when required, and
/// inside its skew window.
#[inline]
fn moment_clean(f: &Field, s: &[u8], windows: &[Window], moment: &mut Moment) -> bool {
    let isotime::Parsed::Moment { micros, aware } = isotime::parse_memo(s) else { return false };
    *moment = Some((s.as_ptr() as usize, s.len(), micros));
    if !aware && f.require_tz {
        return false;
    }
    match f.window.and_then(|w| windows.get(w)) {
        Some((lo, hi)) => !(lo.is_some_and(|lo| micros < lo) || hi.is_some_and(|hi| micros > hi)),
        None => f.window.is_none() || windows.is_empty(),
    }
}

/// The record's verdict when it is valid in the plain form (None: read it again in full).
/// `vals` (at least `plan.fields.len()` long) gets every field's value.
pub(super) fn judge<'a, P: Patterns + ?Sized>(
    plan: &Plan,
    steps: &[(Lit, Step, u64)],
    buf: &'a [u8],
    windows: &[Window],
    patterns: &P,
    vals: &mut [Option<Val<'a>>],
    moment: &mut Moment,
) -> Option<Outcome> {
    let mut nulls = 0u64;
    // The float values by field index, and which fields hold one: the rules' float programs
    // read them here instead of matching `vals`.
    let mut floats = [0.0f64; 16];
    let mut float_mask = 0u64;
    let mut at = 0;
    let fields = &plan.fields;
    let vals = &mut vals[..fields.len()];
    for (i, (&(lit, step, null), slot)) in steps.iter().zip(vals.iter_mut()).enumerate() {
        if !lit.at(buf, at) || (lit.len > 16 && !starts(buf, at, &plan.plain[i])) {
            return None;
        }
        at += lit.len;
        let c = *buf.get(at)?;
        let v = if c == b'n' {
            if null == 0 || !starts(buf, at, b"null") {
                return None;
            }
            nulls |= null;
            at += 4;
            Val::Null
        } else {
            match step {
                Step::Float(lo, hi) => {
                    let (x, end) = match decimal(buf, at) {
                        Some(read) => read,
                        None => match number(buf, at, Quick::Floats(lo, hi))? {
                            (Val::Float(x), end) => (x, end),
                            _ => return None,
                        },
                    };
                    if !(x >= lo && x <= hi) {
                        return None;
                    }
                    at = end;
                    if let Some(held) = floats.get_mut(i) {
                        *held = x;
                        float_mask |= 1 << i;
                    }
                    Val::Float(x)
                }
                Step::Int(lo, hi) => {
                    let (n, end) = match integer(buf, at) {
                        Some(read) => read,
                        None => match number(buf, at, Quick::Ints(lo, hi))? {
                            (Val::Int(n), end) => (n, end),
                            _ => return None,
                        },
                    };
                    if !(n >= lo && n <= hi) {
                        return None;
                    }
                    at = end;
                    Val::Int(n)
                }
                Step::Text | Step::Datetime => {
                    if c != b'"' {
                        return None;
                    }
                    let (s, end) = ascii_text(buf, at)?;
                    let f = &fields[i];
                    let clean = match step {
                        Step::Text => text_clean(i, f, s, patterns),
                        _ => moment_clean(f, s, windows, moment),
                    };
                    if !clean {
                        return None;
                    }
                    at = end;
                    Val::Str(s)
                }
                Step::Bool => {
                    if starts(buf, at, b"true") {
                        at += 4;
                        Val::Bool(true)
                    } else if starts(buf, at, b"false") {
                        at += 5;
                        Val::Bool(false)
                    } else {
                        return None;
                    }
                }
            }
        };
        *slot = Some(v);
    }
    if at + 1 != buf.len() || buf[at] != b'}' {
        return None;
    }
    let mut flags = 0u64;
    for (k, rule) in plan.rules.iter().enumerate() {
        let fast = match rule.float_loads {
            Some(loads) if loads & !float_mask == 0 => rule.judge_floats(&floats),
            _ => None,
        };
        match fast.unwrap_or_else(|| rules::judge(rule, vals)) {
            Verdict::Holds => {}
            Verdict::Fails if rule.flag => flags |= 1 << k,
            _ => return None,
        }
    }
    Some(Outcome::Valid { nulls, flags })
}

#[cfg(test)]
mod tests {
    use super::super::rules::{Cmp, Expr, Link, Num, Rule};
    use super::super::{judge, Field, Outcome, Patterns, Plan, Ty};

    struct Known;

    impl Patterns for Known {
        fn verdict(&self, _field: usize, value: &[u8]) -> Option<bool> {
            (value.len() == 4).then(|| value.iter().all(u8::is_ascii_uppercase))
        }
    }

    fn field(name: &str, ty: Ty) -> Field {
        Field::bare(name, ty)
    }

    fn plan() -> Plan {
        let mut symbol = field("symbol", Ty::Str);
        symbol.min_len = Some(1);
        let mut exchange = field("exchange", Ty::Str);
        exchange.pattern = true;
        let mut ts = field("ts", Ty::Datetime);
        ts.require_tz = true;
        let mut seq = field("seq", Ty::Int);
        seq.lo = Some((Num::I(0), "0".into()));
        let mut bid = field("bid", Ty::Float);
        bid.null_slot = Some(0);
        bid.lo = Some((Num::F(1e-9), "1e-09".into()));
        let mut ask = field("ask", Ty::Float);
        ask.null_slot = Some(1);
        let live = field("live", Ty::Bool);
        let long = field("a_rather_long_key", Ty::Int);
        let crossed = Link { left: Expr::Field(4), op: Cmp::Le, right: Expr::Field(5), fields: vec![4, 5] };
        let locked = Link { left: Expr::Field(4), op: Cmp::Ne, right: Expr::Field(5), fields: vec![4, 5] };
        let rules = vec![Rule::new(vec![crossed], 0b11_0000, false, None), Rule::new(vec![locked], 0b11_0000, true, None)];
        Plan::new(vec![symbol, exchange, ts, seq, bid, ask, live, long], false, rules)
    }

    fn both(plan: &Plan, general: &Plan, text: &str) -> (Outcome, Outcome) {
        let (mut unknown, mut vals) = (Vec::new(), Vec::new());
        let one = judge(plan, text.as_bytes(), &[], &Known, &mut unknown, &mut vals);
        let (mut unknown, mut vals) = (Vec::new(), Vec::new());
        let other = judge(general, text.as_bytes(), &[], &Known, &mut unknown, &mut vals);
        (one, other)
    }

    #[test]
    fn the_one_pass_and_the_general_readers_agree() {
        let plan = plan();
        assert!(plan.steps.is_some());
        let general = plan.without_one_pass();
        let good = r#"{"symbol":"AB","exchange":"XNAS","ts":"2026-11-30T14:00:00.123456+00:00","seq":3,"bid":1.5,"ask":1.75,"live":true,"a_rather_long_key":1}"#;
        let cases = [
            ("\"AB\"", "\"\""),
            ("\"AB\"", "\"Aé\""),
            ("\"XNAS\"", "\"xnas\""),
            ("\"XNAS\"", "\"XN\\u0041S\""),
            ("+00:00\"", "-00:00\""),
            ("+00:00\"", "+00:0a\""),
            ("+00:00\"", "\""),
            ("\"seq\":3", "\"seq\":-3"),
            ("\"seq\":3", "\"seq\":null"),
            ("\"bid\":1.5", "\"bid\":null"),
            ("\"bid\":1.5", "\"bid\":1.75"),
            ("\"bid\":1.5", "\"bid\":2.5"),
            ("\"bid\":1.5", "\"bid\":1"),
            ("\"ask\":1.75", "\"ask\":null"),
            ("true,", "false,"),
            ("true,", "null,"),
            ("true,", "1,"),
            ("1}", "1,\"x\":1}"),
            ("1}", "1 }"),
            ("rather", "rathex"),
            ("key\":1", "kez\":1"),
            ("{\"symbol\"", "{\"symbol\" "),
        ];
        let (one, other) = both(&plan, &general, good);
        assert_eq!(one, Outcome::Valid { nulls: 0, flags: 0 });
        assert_eq!(one, other);
        for (from, to) in cases {
            let text = good.replacen(from, to, 1);
            assert_ne!(text, good, "{from}");
            let (one, other) = both(&plan, &general, &text);
            assert_eq!(one, other, "{text}");
        }
    }
}
