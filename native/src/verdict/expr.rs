//! Record rules beyond a conjunction of numeric comparisons: `or`, `not`, `in`, strings and
//! `when` (`contracts.expr_eval._compile_condition`), natively.
//!
//! The plan receives the rule in normal form (`expr_eval.normal_form`: `not` pushed down to
//! the comparisons, `when: W` / `check: C` already `not W or C`), so a condition is a tree
//! of `All`/`Any` over leaves. Each leaf is judged as Python judges it, or `Unsure`; the
//! tree combines the three verdicts so that `Unsure` never decides: `All` fails on a
//! failing term whatever the unsure ones are, `Any` holds on a holding one. Otherwise an
//! unsure term makes the rule unsure and the record goes to the Python rules.

use super::json::Val;
use super::rules::{compare, eval, link, number, Cmp, Expr, Link, Num, Stop, Verdict};

/// One side of a string comparison: a str field (by value index) or a constant.
#[derive(Debug, Clone)]
pub enum Side {
    Field(usize),
    Const(Vec<u8>),
}

#[derive(Debug, Clone)]
pub enum Cond {
    All(Vec<Cond>),
    Any(Vec<Cond>),
    /// A numeric comparison (`_compile_link`).
    Link(Link),
    /// `a == b` (`equal`) or `a != b` on strings (`_text_link`).
    Text {
        left: Side,
        right: Side,
        equal: bool,
    },
    /// `operand [not] in [numbers]` (`_in_test`); `fields`: what the operand reads.
    InNum {
        operand: Expr,
        fields: Vec<usize>,
        items: Vec<Num>,
        negated: bool,
    },
    /// `operand [not] in ['text', ...]`.
    InText {
        operand: Side,
        items: Vec<Vec<u8>>,
        negated: bool,
    },
}

/// `_text_reader`: the string, None when a str field holds anything but a str.
fn text<'a>(side: &'a Side, vals: &[Option<Val<'a>>]) -> Option<&'a [u8]> {
    match side {
        Side::Const(s) => Some(s.as_slice()),
        // The reader yields valid UTF-8 without escapes: bytes equal exactly when the
        // Python strings do.
        Side::Field(i) => match vals[*i] {
            Some(Val::Str(s)) => Some(s),
            _ => None,
        },
    }
}

fn verdict(holds: bool) -> Verdict {
    if holds {
        Verdict::Holds
    } else {
        Verdict::Fails
    }
}

/// `value in members` of Python's frozenset: an item equal to it (hash and `==` agree for
/// int and float); None when an equality cannot be decided exactly and none held.
fn member(value: Num, items: &[Num]) -> Option<bool> {
    let mut sure = true;
    for &item in items {
        match compare(Cmp::Eq, value, item) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => sure = false,
        }
    }
    sure.then_some(false)
}

fn in_number(
    operand: &Expr,
    fields: &[usize],
    items: &[Num],
    negated: bool,
    vals: &[Option<Val<'_>>],
) -> Verdict {
    if fields.iter().any(|&i| number(vals[i]).is_none()) {
        return Verdict::Holds; // missing, null, bool, str: not applicable
    }
    let value = match eval(operand, vals) {
        Ok(v) => v,
        Err(Stop::Unsure) => return Verdict::Unsure,
        Err(Stop::Undefined) => return Verdict::Fails, // a division by zero on usable inputs
    };
    if matches!(value, Num::F(f) if f.is_nan()) {
        return Verdict::Fails; // NaN from allowed infinities fails either way
    }
    match member(value, items) {
        Some(found) => verdict(found != negated),
        None => Verdict::Unsure,
    }
}

/// A condition's verdict on the record's values.
pub fn judge(cond: &Cond, vals: &[Option<Val<'_>>]) -> Verdict {
    match cond {
        Cond::All(terms) => {
            let mut out = Verdict::Holds;
            for term in terms {
                match judge(term, vals) {
                    Verdict::Holds => {}
                    Verdict::Fails => return Verdict::Fails,
                    Verdict::Unsure => out = Verdict::Unsure,
                }
            }
            out
        }
        Cond::Any(terms) => {
            let mut out = Verdict::Fails;
            for term in terms {
                match judge(term, vals) {
                    Verdict::Holds => return Verdict::Holds,
                    Verdict::Fails => {}
                    Verdict::Unsure => out = Verdict::Unsure,
                }
            }
            out
        }
        Cond::Link(l) => link(l, vals),
        Cond::Text { left, right, equal } => match (text(left, vals), text(right, vals)) {
            (Some(a), Some(b)) => verdict((a == b) == *equal),
            _ => Verdict::Holds,
        },
        Cond::InNum {
            operand,
            fields,
            items,
            negated,
        } => in_number(operand, fields, items, *negated, vals),
        Cond::InText {
            operand,
            items,
            negated,
        } => match text(operand, vals) {
            Some(s) => verdict(items.iter().any(|i| i.as_slice() == s) != *negated),
            None => Verdict::Holds,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vals() -> Vec<Option<Val<'static>>> {
        vec![
            Some(Val::Str(b"buy")),
            Some(Val::Int(3)),
            Some(Val::Null),
            Some(Val::Float(2.5)),
        ]
    }

    #[test]
    fn three_valued_combination() {
        let v = vals();
        let side = |s: &str, equal| Cond::Text {
            left: Side::Field(0),
            right: Side::Const(s.into()),
            equal,
        };
        let unknown = Cond::Link(Link {
            left: Expr::Field(2),
            op: Cmp::Lt,
            right: Expr::Field(1),
            fields: vec![1, 2],
        });
        // A link reading a null holds: `not` was pushed below it already.
        assert_eq!(judge(&unknown, &v), Verdict::Holds);
        assert_eq!(
            judge(&Cond::Any(vec![side("sell", true), side("buy", true)]), &v),
            Verdict::Holds
        );
        assert_eq!(
            judge(&Cond::All(vec![side("buy", true), side("buy", false)]), &v),
            Verdict::Fails
        );
        let big = Cond::InNum {
            operand: Expr::Field(3),
            fields: vec![3],
            items: vec![Num::Big(2.5)],
            negated: false,
        };
        assert_eq!(judge(&big, &v), Verdict::Unsure);
        assert_eq!(
            judge(&Cond::Any(vec![big.clone(), side("buy", true)]), &v),
            Verdict::Holds
        );
        assert_eq!(
            judge(&Cond::All(vec![big, side("buy", false)]), &v),
            Verdict::Fails
        );
    }

    #[test]
    fn membership_as_python_sets() {
        let v = vals();
        let within = |items: Vec<Num>, negated| Cond::InNum {
            operand: Expr::Field(1),
            fields: vec![1],
            items,
            negated,
        };
        assert_eq!(judge(&within(vec![Num::F(3.0)], false), &v), Verdict::Holds);
        assert_eq!(judge(&within(vec![Num::I(4)], false), &v), Verdict::Fails);
        assert_eq!(judge(&within(vec![Num::I(4)], true), &v), Verdict::Holds);
        let texts = Cond::InText {
            operand: Side::Field(1),
            items: vec![b"3".to_vec()],
            negated: false,
        };
        assert_eq!(judge(&texts, &v), Verdict::Holds); // not a str: not applicable
    }
}
