//! The native verdict scanner on arbitrary bytes: it must return, never panic or hang.
//!
//! The scanner's modules are compiled in directly (no PyO3): the plan is the shipped tick
//! contract's shape (every field type, bounds of both kinds, a pattern, lengths, allowed
//! values, rules with division), plus an order book (an object, an array of level objects
//! with a nullable leaf) and a rule with or/not/in/strings on a nested path, judged with
//! unknown fields reported and forbidden, with and without skew windows; and the judge of
//! payloads that are not one JSON object (`malformed`), which must name a violation, or
//! leave the payload to the Python rules, for any bytes. Run by scripts/fuzz.sh.
#![no_main]

#[path = "../../src/verdict/mod.rs"]
mod verdict;

use libfuzzer_sys::fuzz_target;
use verdict::expr::{Cond, Side};
use verdict::nested::{Node, Shape};
use verdict::rules::{Cmp, Expr, Link, Num, Rule};
use verdict::{judge, Field, Outcome, Patterns, Plan, Ty};

struct Alternate;

impl Patterns for Alternate {
    fn verdict(&self, _field: usize, value: &[u8]) -> Option<bool> {
        // Known for some values (either way), unknown for the rest.
        match value.len() % 3 {
            0 => Some(true),
            1 => Some(false),
            _ => None,
        }
    }
}

fn field(name: &str, ty: Ty) -> Field {
    Field::bare(name, ty)
}

fn plan(forbid_unknown: bool, flat: bool) -> Plan {
    let mut symbol = field("symbol", Ty::Str);
    symbol.min_len = Some(1);
    symbol.max_len = Some(8);
    let mut exchange = field("exchange", Ty::Str);
    exchange.pattern = true;
    exchange.allowed_str = Some(vec![b"XNAS".to_vec(), b"ARCX".to_vec()]);
    let mut ts = field("event_ts", Ty::Datetime);
    ts.require_tz = true;
    ts.window = Some(0);
    let mut seq = field("seq", Ty::Int);
    seq.lo = Some((Num::I(0), "0".into()));
    seq.hi = Some((Num::Big(9.3e18), "9300000000000000000".into()));
    seq.allowed_int = Some(vec![0, 1, 7]);
    let mut price = field("price", Ty::Float);
    price.lo = Some((Num::F(1e-9), "1e-09".into()));
    price.hi = Some((Num::I(10_000_000), "10000000".into()));
    let mut bid = field("bid", Ty::Float);
    bid.null_slot = Some(0);
    let mut live = field("live", Ty::Bool);
    live.null_slot = Some(1);
    live.flag = true;
    let leaf = |name: &str, ty: Ty, null_slot: Option<usize>, path_slot: Option<usize>| {
        let mut f = field(name, ty);
        f.lo = Some((Num::F(0.0), "0.0".into()));
        (name.as_bytes().to_vec(), Node { null_slot, path_slot, shape: Shape::Leaf(Box::new(f)) })
    };
    let level = Node {
        null_slot: None,
        path_slot: None,
        shape: Shape::Object(vec![leaf("px", Ty::Float, None, None), leaf("sz", Ty::Int, Some(3), None)]),
    };
    let mut book = field("book", Ty::Object);
    book.null_slot = Some(2);
    book.nest = Some(Box::new(Node {
        null_slot: Some(2),
        path_slot: None,
        shape: Shape::Object(vec![
            leaf("side", Ty::Str, None, Some(10)),
            leaf("bid", Ty::Float, Some(4), Some(11)),
            (
                b"levels".to_vec(),
                Node { null_slot: None, path_slot: None, shape: Shape::Array { min: 1, max: 4, item: Box::new(level) } },
            ),
        ]),
    }));
    let mut fields = vec![symbol, exchange, ts, seq, price, bid, live, book];
    let f = |i: usize| Box::new(Expr::Field(i));
    let mut rules = vec![
        Rule::new(vec![Link { left: *f(5), op: Cmp::Le, right: *f(4), fields: vec![4, 5] }], 0b110000, false, None),
        Rule::new(
            vec![Link {
                left: Expr::Bin(b'/', f(4), Box::new(Expr::Bin(b'-', f(3), Box::new(Expr::Const(Num::I(1)))))),
                op: Cmp::Ne,
                right: Expr::Neg(f(5)),
                fields: vec![3, 4, 5],
            }],
            0b111000,
            true,
            None,
        ),
        // Float arithmetic only: the rule's float program (`FloatLink`).
        Rule::new(
            vec![Link {
                left: Expr::Bin(b'-', f(4), Box::new(Expr::Bin(b'*', f(5), Box::new(Expr::Const(Num::F(0.5)))))),
                op: Cmp::Ge,
                right: Expr::Neg(Box::new(Expr::Bin(b'/', f(5), f(4)))),
                fields: vec![4, 5],
            }],
            0b110000,
            true,
            None,
        ),
        Rule::new(
            vec![],
            0b1000_0001,
            true,
            Some(Cond::Any(vec![
                Cond::Text { left: Side::Field(10), right: Side::Const(b"sell".to_vec()), equal: true },
                Cond::InText { operand: Side::Field(0), items: vec![b"A".to_vec()], negated: true },
                Cond::All(vec![
                    Cond::InNum { operand: *f(11), fields: vec![11], items: vec![Num::I(1), Num::F(2.5)], negated: false },
                    Cond::Link(Link { left: *f(11), op: Cmp::Lt, right: *f(4), fields: vec![4, 11] }),
                ]),
            ])),
        ),
    ];
    if flat {
        // Flat scalars only (no container, no rule on a nested path): the one pass applies.
        fields.pop();
        rules.pop();
    }
    Plan::new(fields, forbid_unknown, rules)
}

fuzz_target!(|data: &[u8]| {
    let plans = [plan(false, false), plan(true, false), plan(false, true)];
    let windows = [(Some(0i64), Some(2_000_000_000_000_000i64))];
    let mut unknown = Vec::new();
    let mut vals = Vec::new();
    for p in &plans {
        for w in [&windows[..], &[][..]] {
            let out = judge(p, data, w, &Alternate, &mut unknown, &mut vals);
            if let Outcome::Valid { .. } | Outcome::Bad(_) = out {
                // Only a JSON object is ever judged natively.
                let first = data.iter().find(|c| !b" \t\r\n".contains(c));
                assert_eq!(first, Some(&b'{'));
            } else {
                assert!(unknown.is_empty());
            }
        }
    }
    // The one pass (a flat plan) and the general readers alone give the same outcome.
    let flat = &plans[2];
    let general = flat.without_one_pass();
    for w in [&windows[..], &[][..]] {
        let (mut known, mut vals_general) = (Vec::new(), Vec::new());
        let one = judge(flat, data, w, &Alternate, &mut unknown, &mut vals);
        let other = judge(&general, data, w, &Alternate, &mut known, &mut vals_general);
        assert_eq!(one, other);
        assert_eq!(unknown, known);
    }
    if let Some((kind, message)) = verdict::malformed::judge(data) {
        let kinds = [verdict::malformed::UNDECODABLE, verdict::malformed::NOT_A_MAPPING];
        assert!(kinds.contains(&kind) && !message.is_empty());
    }
});
