//! The checks of a record's values once read: each field's own (types, nulls, bounds,
//! lengths, patterns, allowed values) with its violation texts, then unknown fields, skew
//! windows and record rules (`check`); `Quick` settles plain in-range numbers first.

use super::json::Val;
use super::rules::{self, Num, Verdict};
use super::{isotime, render, Field, Kind, Outcome, Patterns, Plan, Ty, Violation, Window, PATTERN_VALUE_BYTES};

/// A field's checks when they are only bounds: a value in the range is clean, as
/// `check_value` would find it (anything else takes the general path).
#[derive(Debug, Clone, Copy)]
pub(super) enum Quick {
    /// A float field's float values (bounds as doubles, both exact).
    Floats(f64, f64),
    /// An int field's int values (int bounds).
    Ints(i64, i64),
    None,
}

impl Quick {
    pub(super) fn of(f: &Field) -> Quick {
        let float = |b: &Option<(Num, String)>, none: f64| match b {
            None => Some(none),
            Some((Num::F(x), _)) => Some(*x),
            Some((Num::I(i), _)) if (-(1i64 << 53)..=1 << 53).contains(i) => Some(*i as f64),
            Some(_) => None,
        };
        let int = |b: &Option<(Num, String)>, none: i64| match b {
            None => Some(none),
            Some((Num::I(i), _)) => Some(*i),
            Some(_) => None,
        };
        let plain = !f.flag && f.nest.is_none() && f.allowed_int.is_none() && f.allowed_str.is_none();
        match f.ty {
            Ty::Float if plain => match (float(&f.lo, f64::NEG_INFINITY), float(&f.hi, f64::INFINITY)) {
                (Some(lo), Some(hi)) => Quick::Floats(lo, hi),
                _ => Quick::None,
            },
            Ty::Int if plain => match (int(&f.lo, i64::MIN), int(&f.hi, i64::MAX)) {
                (Some(lo), Some(hi)) => Quick::Ints(lo, hi),
                _ => Quick::None,
            },
            _ => Quick::None,
        }
    }

    /// True when `v` is surely clean for the field.
    #[inline]
    pub(super) fn clean(self, v: Option<Val<'_>>) -> bool {
        match (self, v) {
            (Quick::Floats(lo, hi), Some(Val::Float(x))) => x >= lo && x <= hi,
            (Quick::Ints(lo, hi), Some(Val::Int(x))) => x >= lo && x <= hi,
            _ => false,
        }
    }
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
            return match isotime::parse_memo(s) {
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
    // Code points, counted only when a length bound asks (a byte string has no fewer).
    let size = if f.min_len.is_some() || f.max_len.is_some() {
        s.iter().filter(|&&c| (c & 0xC0) != 0x80).count()
    } else {
        0
    };
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

/// `done`: the fields the reader already found clean (`read_plain`).
pub(super) fn check<P: Patterns + ?Sized>(
    plan: &Plan,
    vals: &[Option<Val<'_>>],
    done: u64,
    windows: &[Window],
    patterns: &P,
    unknown: &[&[u8]],
) -> Outcome {
    let mut found = Found { violations: Vec::new(), failed: 0 };
    let mut nulls = 0u64;
    // The fields the reader did not settle, in order.
    let all = if plan.fields.len() == 64 { u64::MAX } else { (1u64 << plan.fields.len()) - 1 };
    let mut todo = all & !done;
    while todo != 0 {
        let i = todo.trailing_zeros() as usize;
        todo &= todo - 1;
        let f = &plan.fields[i];
        if plan.quick[i].clean(vals[i]) {
            continue;
        }
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
            let isotime::Parsed::Moment { micros, .. } = isotime::parse_memo(s) else {
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

