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

/// One step of a float program (`FloatLink`), run on a small stack of doubles.
#[derive(Debug, Clone, Copy)]
enum Op {
    Load(usize),
    Const(f64),
    Neg,
    Bin(u8),
}

/// A link whose sides read only fields and float constants, as stack programs: while every
/// field read holds a float, they compute what `link` would, without its general arithmetic.
#[derive(Debug, Clone)]
pub struct FloatLink {
    left: Vec<Op>,
    op: Cmp,
    right: Vec<Op>,
    /// Both sides as short terms, when they are (`judge_floats` then runs no stack program).
    terms: Option<(Term, Term)>,
}

/// A side of at most one operation on fields and constants: `x`, `c`, `x op y`.
#[derive(Debug, Clone, Copy)]
enum Term {
    Load(usize),
    Const(f64),
    Bin(u8, Leaf, Leaf),
}

#[derive(Debug, Clone, Copy)]
enum Leaf {
    Load(usize),
    Const(f64),
}

impl Term {
    fn of(prog: &[Op]) -> Option<Term> {
        let leaf = |op: &Op| match *op {
            Op::Load(i) => Some(Leaf::Load(i)),
            Op::Const(c) => Some(Leaf::Const(c)),
            _ => None,
        };
        match prog {
            [Op::Load(i)] => Some(Term::Load(*i)),
            [Op::Const(c)] => Some(Term::Const(*c)),
            [a, b, Op::Bin(op)] => Some(Term::Bin(*op, leaf(a)?, leaf(b)?)),
            _ => None,
        }
    }

    /// What `run_floats` computes of the term's program.
    #[inline(always)]
    fn value(self, x: &[f64]) -> Option<f64> {
        let leaf = |l: Leaf| match l {
            Leaf::Load(i) => x.get(i).copied(),
            Leaf::Const(c) => Some(c),
        };
        let v = match self {
            Term::Load(i) => return x.get(i).copied(), // a JSON number is never NaN
            Term::Const(c) => c,
            Term::Bin(op, a, b) => {
                let (a, b) = (leaf(a)?, leaf(b)?);
                match op {
                    b'+' => a + b,
                    b'-' => a - b,
                    b'*' => a * b,
                    b'/' if b != 0.0 => a / b,
                    _ => return None,
                }
            }
        };
        (!v.is_nan()).then_some(v)
    }
}

const STACK: usize = 8;

impl FloatLink {
    fn of(link: &Link) -> Option<Self> {
        fn compile(e: &Expr, out: &mut Vec<Op>, depth: usize) -> Option<usize> {
            // The stack depth the program needs, or None when not a float expression.
            Some(match e {
                Expr::Field(i) => {
                    out.push(Op::Load(*i));
                    depth + 1
                }
                Expr::Const(Num::F(x)) => {
                    out.push(Op::Const(*x));
                    depth + 1
                }
                Expr::Const(_) => return None,
                Expr::Neg(e) => {
                    let d = compile(e, out, depth)?;
                    out.push(Op::Neg);
                    d
                }
                Expr::Bin(op, l, r) => {
                    let dl = compile(l, out, depth)?;
                    let dr = compile(r, out, depth + 1)?;
                    out.push(Op::Bin(*op));
                    dl.max(dr)
                }
            })
        }
        let (mut left, mut right) = (Vec::new(), Vec::new());
        let fits = compile(&link.left, &mut left, 0)? <= STACK && compile(&link.right, &mut right, 0)? <= STACK;
        let terms = Term::of(&left).zip(Term::of(&right));
        fits.then_some(FloatLink { left, op: link.op, right, terms })
    }

    /// The verdict, or None when a field read is not a float or the arithmetic meets a
    /// division by zero or a NaN (then `link` decides).
    #[inline]
    fn judge(&self, vals: &[Option<Val<'_>>]) -> Option<Verdict> {
        let a = run(&self.left, vals)?;
        let b = run(&self.right, vals)?;
        Some(if self.op.holds(a, b) { Verdict::Holds } else { Verdict::Fails })
    }
}

impl FloatLink {
    /// `judge` on the fields' doubles (`x`, by field index), each field it reads a float.
    #[inline]
    fn judge_floats(&self, x: &[f64]) -> Option<Verdict> {
        let (a, b) = match self.terms {
            Some((l, r)) => (l.value(x)?, r.value(x)?),
            None => (run_floats(&self.left, x)?, run_floats(&self.right, x)?),
        };
        Some(if self.op.holds(a, b) { Verdict::Holds } else { Verdict::Fails })
    }

    /// The fields it reads, as a bitmask.
    fn loads(&self) -> u64 {
        self.left.iter().chain(&self.right).fold(0, |m, op| match op {
            Op::Load(i) if *i < 64 => m | 1 << i,
            Op::Load(_) => u64::MAX,
            _ => m,
        })
    }
}

/// `run` on doubles: the same arithmetic, the same refusals (a division by zero, a NaN).
#[inline(always)]
fn run_floats(prog: &[Op], x: &[f64]) -> Option<f64> {
    match prog {
        [Op::Load(i)] => return x.get(*i).copied(), // a JSON number is never NaN
        [Op::Const(c)] => return (!c.is_nan()).then_some(*c),
        _ => {}
    }
    let mut stack = [0.0f64; STACK];
    let mut top = 0;
    for op in prog {
        match *op {
            Op::Load(i) => {
                *stack.get_mut(top)? = *x.get(i)?;
                top += 1;
            }
            Op::Const(c) => {
                *stack.get_mut(top)? = c;
                top += 1;
            }
            Op::Neg => {
                let v = stack.get_mut(top.checked_sub(1)?)?;
                *v = -*v;
            }
            Op::Bin(op) => {
                top = top.checked_sub(1)?;
                let y = *stack.get(top)?;
                let v = stack.get_mut(top.checked_sub(1)?)?;
                *v = match op {
                    b'+' => *v + y,
                    b'-' => *v - y,
                    b'*' => *v * y,
                    b'/' if y != 0.0 => *v / y,
                    _ => return None,
                };
            }
        }
    }
    let v = *stack.first()?;
    (top == 1 && !v.is_nan()).then_some(v)
}

#[inline]
fn run(prog: &[Op], vals: &[Option<Val<'_>>]) -> Option<f64> {
    if let [Op::Load(i)] = prog {
        return match vals.get(*i) {
            Some(Some(Val::Float(x))) => Some(*x),
            _ => None,
        };
    }
    let mut stack = [0.0f64; STACK];
    let mut top = 0;
    for op in prog {
        match *op {
            Op::Load(i) => {
                let Some(Some(Val::Float(x))) = vals.get(i) else { return None };
                *stack.get_mut(top)? = *x;
                top += 1;
            }
            Op::Const(x) => {
                *stack.get_mut(top)? = x;
                top += 1;
            }
            Op::Neg => {
                let x = stack.get_mut(top.checked_sub(1)?)?;
                *x = -*x;
            }
            Op::Bin(op) => {
                let y = *stack.get(top.checked_sub(1)?)?;
                top -= 1;
                let x = stack.get_mut(top.checked_sub(1)?)?;
                *x = match op {
                    b'+' => *x + y,
                    b'-' => *x - y,
                    b'*' => *x * y,
                    b'/' if y != 0.0 => *x / y,
                    _ => return None,
                };
            }
        }
    }
    let x = *stack.first()?;
    (top == 1 && !x.is_nan()).then_some(x)
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub links: Vec<Link>,
    /// Per link, its float program when it has one.
    pub floats: Vec<Option<FloatLink>>,
    /// Bitmask of the fields whose own failure skips the rule.
    pub deps: u64,
    pub flag: bool,
    /// A rule beyond a conjunction (`or`, `not`, `in`, strings, `when`): judged by this
    /// condition instead of `links`.
    pub cond: Option<super::expr::Cond>,
    /// A conjunction whose every link has a float program: the fields they read (bitmask).
    pub float_loads: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Holds,
    Fails,
    Unsure,
}

impl Rule {
    pub fn new(links: Vec<Link>, deps: u64, flag: bool, cond: Option<super::expr::Cond>) -> Self {
        let floats: Vec<Option<FloatLink>> = links.iter().map(FloatLink::of).collect();
        let float_loads = if cond.is_none() && floats.iter().all(Option::is_some) {
            Some(floats.iter().flatten().fold(0, |m, f| m | f.loads())).filter(|&m| m != u64::MAX)
        } else {
            None
        };
        Rule { links, floats, deps, flag, cond, float_loads }
    }

    /// `judge` when every field the rule reads is a float, given as `x` by field index (the
    /// caller checks that with `float_loads`); None: ask `judge`.
    #[inline]
    pub fn judge_floats(&self, x: &[f64]) -> Option<Verdict> {
        for f in &self.floats {
            if f.as_ref()?.judge_floats(x)? == Verdict::Fails {
                return Some(Verdict::Fails);
            }
        }
        Some(Verdict::Holds)
    }
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
    for (k, l) in rule.links.iter().enumerate() {
        let fast = rule.floats.get(k).and_then(|f| f.as_ref()?.judge(vals));
        match fast.unwrap_or_else(|| link(l, vals)) {
            Verdict::Holds => {}
            Verdict::Fails => return Verdict::Fails,
            Verdict::Unsure => out = Verdict::Unsure,
        }
    }
    out
}
