//! The per-record verdict of a contract, natively (pure Rust, no Python); object and
//! array fields are walked by `nested`, rules beyond conjunctions judged by `expr`.
//!
//! `judge` reads one payload and returns the verdict `verify.batch` would reach: valid
//! (with its null slots and the flag rules it broke), quarantined with its violations
//! (same order, kinds and texts as `verify.rules`), or `Defer` when anything falls outside
//! what is proven equal here; a deferred record is judged by the Python rules.

pub mod expr;
pub mod isotime;
pub mod json;
pub mod nested;
pub mod render;
pub mod rules;

use json::{Decline, Reader, Val};
use rules::{Num, Rule, Verdict};

/// Fields and rules per plan are bitmasks of this many bits.
pub const MAX_FIELDS: usize = 64;
/// Python's `MAX_NAMED_VIOLATIONS` and `MAX_KEY_CHARS`: past them, Python words it.
pub const MAX_NAMED: usize = 50;
pub const MAX_KEY_BYTES: usize = 256;
/// A pattern verdict is remembered for values up to this many bytes.
pub const PATTERN_VALUE_BYTES: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Float,
    Int,
    Str,
    Bool,
    Datetime,
    /// Containers: their value is walked by `nested` (`Field::nest`).
    Object,
    Array,
}

/// Violation kinds, by their index in `verify.rustcore.KINDS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Missing = 0,
    Null = 1,
    Mismatch = 2,
    BelowMin = 3,
    AboveMax = 4,
    Unknown = 5,
    NotAllowed = 6,
    TooShort = 7,
    TooLong = 8,
}

#[derive(Debug, Clone)]
pub struct Field {
    pub name: Vec<u8>,
    /// `repr(name)`, as the messages quote it.
    pub name_repr: String,
    pub ty: Ty,
    /// The slot of its null count; None when not nullable.
    pub null_slot: Option<usize>,
    /// Bounds with their `repr`.
    pub lo: Option<(Num, String)>,
    pub hi: Option<(Num, String)>,
    /// "float", "datetime with a UTC offset", ...
    pub label: String,
    pub require_tz: bool,
    /// Its index among the skew windows the caller passes to `judge`.
    pub window: Option<usize>,
    pub min_len: Option<usize>,
    pub max_len: Option<usize>,
    pub allowed_str: Option<Vec<Vec<u8>>>,
    pub allowed_int: Option<Vec<i64>>,
    pub allowed_shown: String,
    pub pattern: bool,
    /// Action flag: any violation of it defers the record (Python words flagged ones).
    pub flag: bool,
    /// An object or array field: the spec its value is walked against.
    pub nest: Option<Box<nested::Node>>,
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub fields: Vec<Field>,
    pub forbid_unknown: bool,
    pub rules: Vec<Rule>,
    /// Value slots per record: the fields, then the nested object paths the rules read.
    pub width: usize,
    /// Null-count slots: the top-level nullable fields, then the nested ones.
    pub slots: usize,
    /// The compact form's bytes before each field's value (`{"a":`, `,"b":`), then `}`.
    plain: Vec<Vec<u8>>,
}

impl Plan {
    pub fn new(fields: Vec<Field>, forbid_unknown: bool, rules: Vec<Rule>) -> Self {
        let mut plain: Vec<Vec<u8>> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let mut lit = vec![if i == 0 { b'{' } else { b',' }, b'"'];
                lit.extend_from_slice(&f.name);
                lit.extend_from_slice(b"\":");
                lit
            })
            .collect();
        plain.push(b"}".to_vec());
        let (mut slots, mut width) = (0, fields.len());
        for f in &fields {
            if let Some(slot) = f.null_slot {
                slots = slots.max(slot + 1);
            }
            if let Some(node) = &f.nest {
                node.visit_slots(&mut slots, &mut width);
            }
        }
        Plan { fields, forbid_unknown, rules, width, slots, plain }
    }
}

/// `buf[at..]` starts with `lit`: eight bytes at a time.
#[inline]
fn starts(buf: &[u8], at: usize, lit: &[u8]) -> bool {
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

/// The common form: every declared key once, in order, compact, scalar values. False
/// (with `vals` partly filled) when the payload is not in it: the general reader then runs.
fn read_plain<'a>(plan: &Plan, buf: &'a [u8], vals: &mut [Option<Val<'a>>], nulls: &mut u64) -> bool {
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
            Some(b'-' | b'0'..=b'9') => r.number(),
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

#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub field: Option<String>,
    pub kind: Kind,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Valid: the nullable slots that were null, the flag rules broken (bitmasks).
    Valid { nulls: u64, flags: u64 },
    Bad(Vec<Violation>),
    Defer,
    /// A pattern verdict is not known yet for (field, value): learn it, then judge again.
    Pending(usize, Vec<u8>),
}

/// A skew window resolved at the time of validation, in microseconds since the epoch.
pub type Window = (Option<i64>, Option<i64>);

/// What a pattern says of a value (None: not known yet).
pub trait Patterns {
    fn verdict(&self, field: usize, value: &[u8]) -> Option<bool>;
}

/// One record: its outcome, and its undeclared keys in order (Valid and Bad only).
/// `vals`: scratch space, reused from record to record.
pub fn judge<'a, P: Patterns + ?Sized>(
    plan: &Plan,
    buf: &'a [u8],
    windows: &[Window],
    patterns: &P,
    unknown: &mut Vec<&'a [u8]>,
    vals: &mut Vec<Option<Val<'a>>>,
) -> Outcome {
    unknown.clear();
    vals.clear();
    vals.resize(plan.width, None);
    let mut nested_nulls = 0;
    if !read_plain(plan, buf, vals, &mut nested_nulls) {
        vals.fill(None);
        nested_nulls = 0;
        if read_object(plan, buf, vals, unknown, &mut nested_nulls).is_err() {
            unknown.clear();
            return Outcome::Defer;
        }
    }
    let mut out = check(plan, vals, windows, patterns, unknown);
    if let Outcome::Valid { nulls, .. } = &mut out {
        *nulls |= nested_nulls;
    }
    if !matches!(out, Outcome::Valid { .. } | Outcome::Bad(_)) {
        unknown.clear();
    }
    out
}

fn read_object<'a>(
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

/// `value < bound` (`below`) or `value > bound`, exactly as Python compares; None: unsure.
fn beyond(value: Num, bound: Num, below: bool) -> Option<bool> {
    let op = if below { rules::Cmp::Lt } else { rules::Cmp::Gt };
    rules::compare(op, value, bound)
}

struct Found {
    violations: Vec<Violation>,
    failed: u64,
}

impl Found {
    fn add(&mut self, i: usize, f: &Field, kind: Kind, message: String) {
        self.failed |= 1 << i;
        self.violations.push(Violation {
            field: Some(String::from_utf8_lossy(&f.name).into_owned()),
            kind,
            message,
        });
    }
}

fn mismatch(found: &mut Found, i: usize, f: &Field, v: &Val<'_>) -> Option<()> {
    let text = render::show(v)?;
    let message = format!(
        "field {}: expected {}, got {} {}",
        f.name_repr,
        f.label,
        render::type_label(v),
        text
    );
    found.add(i, f, Kind::Mismatch, message);
    Some(())
}

/// The checks of one field with a value (not null); None: defer the record.
fn check_value<P: Patterns + ?Sized>(
    found: &mut Found,
    i: usize,
    f: &Field,
    v: Val<'_>,
    patterns: &P,
) -> Result<(), Outcome> {
    let defer = || Outcome::Defer;
    let num = match (f.ty, v) {
        (Ty::Float, Val::Float(x)) => Num::F(x),
        (Ty::Float | Ty::Int, Val::Int(x)) => Num::I(x),
        (Ty::Bool, Val::Bool(_)) | (Ty::Object, Val::Obj) | (Ty::Array, Val::Arr(_)) => return Ok(()),
        (Ty::Object | Ty::Array, _) => return Err(defer()), // Python words a container's
        (Ty::Str, Val::Str(s)) => return check_text(found, i, f, s, patterns),
        (Ty::Datetime, Val::Str(s)) => {
            return match isotime::parse(s) {
                isotime::Parsed::Moment { aware, .. } if aware || !f.require_tz => Ok(()),
                isotime::Parsed::Unsure => Err(defer()),
                _ => mismatch(found, i, f, &v).ok_or_else(defer),
            }
        }
        _ => return mismatch(found, i, f, &v).ok_or_else(defer),
    };
    let shown = || render::show(&v).ok_or_else(defer);
    if let Some((lo, repr)) = &f.lo {
        if beyond(num, *lo, true).ok_or_else(defer)? {
            let message = format!("field {}: {} is below min_value {}", f.name_repr, shown()?, repr);
            found.add(i, f, Kind::BelowMin, message);
            return Ok(());
        }
    }
    if let Some((hi, repr)) = &f.hi {
        if beyond(num, *hi, false).ok_or_else(defer)? {
            let message = format!("field {}: {} is above max_value {}", f.name_repr, shown()?, repr);
            found.add(i, f, Kind::AboveMax, message);
            return Ok(());
        }
    }
    if let (Some(allowed), Num::I(x)) = (&f.allowed_int, num) {
        if !allowed.contains(&x) {
            not_allowed(found, i, f, shown()?);
        }
    }
    Ok(())
}

struct NoPatterns;

impl Patterns for NoPatterns {
    fn verdict(&self, _field: usize, _value: &[u8]) -> Option<bool> {
        None
    }
}

/// A scalar inside an object or array: true when it passes its checks (a nested field
/// has no pattern: the plan leaves such contracts to Python).
pub(crate) fn clean(f: &Field, v: Val<'_>) -> bool {
    let mut found = Found { violations: Vec::new(), failed: 0 };
    check_value(&mut found, 0, f, v, &NoPatterns).is_ok() && found.violations.is_empty()
}

fn not_allowed(found: &mut Found, i: usize, f: &Field, shown: String) {
    let message = format!(
        "field {}: {} is not one of the allowed values ({})",
        f.name_repr, shown, f.allowed_shown
    );
    found.add(i, f, Kind::NotAllowed, message);
}

/// `ValueCheck.violation` of a str value: lengths, pattern, allowed (one violation).
fn check_text<P: Patterns + ?Sized>(
    found: &mut Found,
    i: usize,
    f: &Field,
    s: &[u8],
    patterns: &P,
) -> Result<(), Outcome> {
    let size = s.iter().filter(|&&c| (c & 0xC0) != 0x80).count(); // code points
    let shown = || render::show(&Val::Str(s)).ok_or(Outcome::Defer);
    if let Some(min) = f.min_len {
        if size < min {
            let message = format!(
                "field {}: {} has {} characters, fewer than min_length {}",
                f.name_repr,
                shown()?,
                size,
                min
            );
            found.add(i, f, Kind::TooShort, message);
            return Ok(());
        }
    }
    if let Some(max) = f.max_len {
        if size > max {
            let message = format!(
                "field {}: {} has {} characters, more than max_length {}",
                f.name_repr,
                shown()?,
                size,
                max
            );
            found.add(i, f, Kind::TooLong, message);
            return Ok(());
        }
    }
    if f.pattern {
        match patterns.verdict(i, s) {
            Some(true) => {}
            Some(false) => return Err(Outcome::Defer), // Python words a mismatch
            None if s.len() <= PATTERN_VALUE_BYTES => return Err(Outcome::Pending(i, s.to_vec())),
            None => return Err(Outcome::Defer),
        }
    }
    if let Some(allowed) = &f.allowed_str {
        if !allowed.iter().any(|a| a.as_slice() == s) {
            not_allowed(found, i, f, shown()?);
        }
    }
    Ok(())
}

fn check<P: Patterns + ?Sized>(
    plan: &Plan,
    vals: &[Option<Val<'_>>],
    windows: &[Window],
    patterns: &P,
    unknown: &[&[u8]],
) -> Outcome {
    let mut found = Found { violations: Vec::new(), failed: 0 };
    let mut nulls = 0u64;
    for (i, f) in plan.fields.iter().enumerate() {
        let before = found.violations.len();
        match vals[i] {
            None => {
                let message = format!("missing required field {}", f.name_repr);
                found.add(i, f, Kind::Missing, message);
            }
            Some(Val::Null) => match f.null_slot {
                Some(slot) => nulls |= 1 << slot,
                None => {
                    let message = format!("field {} is null but is not nullable", f.name_repr);
                    found.add(i, f, Kind::Null, message);
                }
            },
            Some(v) => {
                if let Err(out) = check_value(&mut found, i, f, v, patterns) {
                    return out;
                }
            }
        }
        if f.flag && found.violations.len() > before {
            return Outcome::Defer; // a flagged field's violation: Python words it
        }
    }
    if plan.forbid_unknown {
        for key in unknown {
            let Some(shown) = render::show(&Val::Str(key)) else {
                return Outcome::Defer;
            };
            found.violations.push(Violation {
                field: Some(String::from_utf8_lossy(key).into_owned()),
                kind: Kind::Unknown,
                message: format!("undeclared field {shown} (the contract forbids unknown fields)"),
            });
        }
    }
    if !windows.is_empty() {
        for (i, f) in plan.fields.iter().enumerate() {
            let (Some(w), Some(Val::Str(s))) = (f.window, vals[i]) else { continue };
            if found.failed & (1 << i) != 0 {
                continue;
            }
            let isotime::Parsed::Moment { micros, .. } = isotime::parse(s) else {
                return Outcome::Defer;
            };
            let (lo, hi) = windows[w];
            if lo.is_some_and(|lo| micros < lo) || hi.is_some_and(|hi| micros > hi) {
                return Outcome::Defer; // out of range: Python words it
            }
        }
    }
    let mut flags = 0u64;
    for (k, rule) in plan.rules.iter().enumerate() {
        if rule.deps & found.failed != 0 {
            continue;
        }
        match rules::judge(rule, vals) {
            Verdict::Holds => {}
            Verdict::Fails if rule.flag => flags |= 1 << k,
            _ => return Outcome::Defer, // unsure, or a rule violation Python words
        }
    }
    if found.violations.is_empty() {
        Outcome::Valid { nulls, flags }
    } else if flags != 0 {
        Outcome::Defer // a quarantined record lists its flag rules: Python words them
    } else {
        Outcome::Bad(found.violations)
    }
}

#[cfg(not(fuzzing))]
pub mod py;
#[cfg(not(fuzzing))]
pub mod record;
#[cfg(not(fuzzing))]
mod pyspec;
#[cfg(not(fuzzing))]
pub mod statefeed;
