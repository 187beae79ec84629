//! Record rules (`contracts.expr_eval`) natively: numeric comparisons and their
//! conjunctions (the rest of the grammar: `expr`).
//!
//! Python's arithmetic is followed exactly or not at all: int op int is checked i64
//! arithmetic, int op float converts the int (round-half-even, as Python does), true
//! division of ints only when both are exact doubles, int-vs-float comparisons only when
//! the int is an exact double. Anything else is `Unsure` and the record goes to Python.

use super::json::Val;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    I(i64),
    F(f64),
    /// An int constant beyond i64 (a bound or rule constant), as its nearest double.
    Big(f64),
}

const EXACT: i64 = 1 << 53;

fn exact(i: i64) -> bool {
    (-EXACT..=EXACT).contains(&i)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl Cmp {
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "<" => Cmp::Lt,
            "<=" => Cmp::Le,
            ">" => Cmp::Gt,
            ">=" => Cmp::Ge,
            "==" => Cmp::Eq,
            "!=" => Cmp::Ne,
            _ => return None,
        })
    }

    fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Gt => a > b,
            Cmp::Ge => a >= b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
        }
    }
}

/// `a op b` as Python compares an int or float with another; None when not sure.
pub fn compare(op: Cmp, a: Num, b: Num) -> Option<bool> {
    match (a, b) {
        (Num::I(x), Num::I(y)) => Some(op.holds(x, y)),
        (Num::F(x), Num::F(y)) => Some(op.holds(x, y)),
        (Num::I(x), Num::F(y)) if exact(x) => Some(op.holds(x as f64, y)),
        (Num::F(x), Num::I(y)) if exact(y) => Some(op.holds(x, y as f64)),
        // Every i64 lies on the near side of an int beyond i64, whose sign its double has.
        (Num::I(_), Num::Big(y)) => Some(op.holds(0.0, y)),
        (Num::Big(x), Num::I(_)) => Some(op.holds(x, 0.0)),
        // No double lies strictly between such an int and its nearest double.
        (Num::F(x), Num::Big(y)) if x != y => Some(op.holds(x, y)),
        (Num::Big(x), Num::F(y)) if x != y => Some(op.holds(x, y)),
        _ => None,
    }
}

#[derive(Debug, Clone)]
pub enum Expr {
    Field(usize),
    Const(Num),
    Neg(Box<Expr>),
    Bin(u8, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone)]
pub struct Link {
    pub left: Expr,
    pub op: Cmp,
    pub right: Expr,
    /// The fields the link reads: one that is not a usable number makes it hold.
    pub fields: Vec<usize>,
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub links: Vec<Link>,
    /// Bitmask of the fields whose own failure skips the rule.
    pub deps: u64,
    pub flag: bool,
    /// A rule beyond a conjunction (`or`, `not`, `in`, strings, `when`): judged by this
    /// condition instead of `links`.
    pub cond: Option<super::expr::Cond>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Fails,
    Unsure,
}

pub(super) enum Stop {
    Undefined,
    Unsure,
}

pub(super) fn number(value: Option<Val<'_>>) -> Option<Num> {
    match value {
        Some(Val::Int(i)) => Some(Num::I(i)),
        Some(Val::Float(f)) => Some(Num::F(f)),
        _ => None,
    }
}

pub(super) fn eval(expr: &Expr, vals: &[Option<Val<'_>>]) -> Result<Num, Stop> {
    Ok(match expr {
        Expr::Field(i) => number(vals[*i]).ok_or(Stop::Unsure)?,
        Expr::Const(Num::Big(_)) => return Err(Stop::Unsure),
        Expr::Const(n) => *n,
        Expr::Neg(e) => match eval(e, vals)? {
            Num::I(i) => Num::I(i.checked_neg().ok_or(Stop::Unsure)?),
            Num::F(f) => Num::F(-f),
            Num::Big(_) => return Err(Stop::Unsure),
        },
        Expr::Bin(op, l, r) => {
            let (a, b) = (eval(l, vals)?, eval(r, vals)?);
            match (a, b, op) {
                (Num::I(x), Num::I(y), b'+') => Num::I(x.checked_add(y).ok_or(Stop::Unsure)?),
                (Num::I(x), Num::I(y), b'-') => Num::I(x.checked_sub(y).ok_or(Stop::Unsure)?),
                (Num::I(x), Num::I(y), b'*') => Num::I(x.checked_mul(y).ok_or(Stop::Unsure)?),
                (Num::I(_), Num::I(0), b'/') => return Err(Stop::Undefined),
                (Num::I(x), Num::I(y), b'/') if exact(x) && exact(y) => Num::F(x as f64 / y as f64),
                (Num::I(_), Num::I(_), _) => return Err(Stop::Unsure),
                _ => {
                    let float = |n: Num| match n {
                        Num::I(i) => i as f64,
                        Num::F(f) | Num::Big(f) => f,
                    };
                    if matches!(a, Num::Big(_)) || matches!(b, Num::Big(_)) {
                        return Err(Stop::Unsure);
                    }
                    let (x, y) = (float(a), float(b));
                    Num::F(match op {
                        b'+' => x + y,
                        b'-' => x - y,
                        b'*' => x * y,
                        b'/' if y == 0.0 => return Err(Stop::Undefined),
                        b'/' => x / y,
                        _ => return Err(Stop::Unsure),
                    })
                }
            }
        }
    })
}

pub(super) fn link(link: &Link, vals: &[Option<Val<'_>>]) -> Verdict {
    if link.fields.iter().any(|&i| number(vals[i]).is_none()) {
        return Verdict::Holds; // missing, null, bool, str: not applicable
    }
    let simple = |e: &Expr| match e {
        Expr::Field(i) => number(vals[*i]),
        Expr::Const(n @ (Num::I(_) | Num::F(_))) => Some(*n),
        _ => None,
    };
    if let (Some(a), Some(b)) = (simple(&link.left), simple(&link.right)) {
        // Fields and constants: nothing to compute (a JSON number is never NaN).
        return match compare(link.op, a, b) {
            Some(true) => Verdict::Holds,
            Some(false) => Verdict::Fails,
            None => Verdict::Unsure,
        };
    }
    let (a, b) = match (eval(&link.left, vals), eval(&link.right, vals)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(Stop::Unsure), _) | (_, Err(Stop::Unsure)) => return Verdict::Unsure,
        _ => return Verdict::Fails, // a division by zero on usable inputs
    };
    let nan = |n: Num| matches!(n, Num::F(f) if f.is_nan());
    if nan(a) || nan(b) {
        return Verdict::Fails;
    }
    match compare(link.op, a, b) {
        Some(true) => Verdict::Holds,
        Some(false) => Verdict::Fails,
        None => Verdict::Unsure,
    }
}

/// A rule's verdict on the record's values (`vals`, indexed by field).
pub fn judge(rule: &Rule, vals: &[Option<Val<'_>>]) -> Verdict {
    if let Some(cond) = &rule.cond {
        return super::expr::judge(cond, vals);
    }
    let mut out = Verdict::Holds;
    for l in &rule.links {
        match link(l, vals) {
            Verdict::Holds => {}
            Verdict::Fails => return Verdict::Fails,
            Verdict::Unsure => out = Verdict::Unsure,
        }
    }
    out
}
