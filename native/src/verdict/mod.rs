//! The per-record verdict of a contract, natively (pure Rust, no Python); object and
//! array fields are walked by `nested`, rules beyond conjunctions judged by `expr`.
//!
//! `judge` reads one payload and returns the verdict `verify.batch` would reach: valid
//! (with its null slots and the flag rules it broke), quarantined with its violations
//! (same order, kinds and texts as `verify.rules`), or `Defer` when anything falls outside
//! what is proven equal here; a deferred record is judged by the Python rules.

pub mod expr;
mod fieldcheck;
pub mod isotime;
pub mod json;
pub mod malformed;
pub mod nested;
mod onepass;
mod read;
pub mod render;
pub mod rules;

pub(crate) use fieldcheck::clean;
use fieldcheck::{check, Quick};
use json::Val;
use read::{read_object, read_plain};
use rules::{Num, Rule};

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

#[cfg(any(test, fuzzing))]
impl Field {
    /// A field of `ty` named `name` with no check beyond its type (label "x"): the tests and
    /// the fuzz target build their plans from it.
    pub fn bare(name: &str, ty: Ty) -> Self {
        Field {
            name: name.as_bytes().to_vec(),
            name_repr: format!("'{name}'"),
            ty,
            null_slot: None,
            lo: None,
            hi: None,
            label: "x".into(),
            require_tz: false,
            window: None,
            min_len: None,
            max_len: None,
            allowed_str: None,
            allowed_int: None,
            allowed_shown: String::new(),
            pattern: false,
            flag: false,
            nest: None,
        }
    }
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
    /// Per field, the value ranges `check` settles without its general path.
    quick: Vec<Quick>,
    /// Per field, what the one pass checks (`onepass`), when every field is a flat scalar.
    steps: Option<Vec<(onepass::Lit, onepass::Step, u64)>>,
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
        let quick: Vec<Quick> = fields.iter().map(Quick::of).collect();
        let steps = if width == fields.len() { onepass::steps(&fields, &quick, &plain) } else { None };
        Plan { fields, forbid_unknown, rules, width, slots, plain, quick, steps }
    }
}

impl Plan {
    /// The same plan without its one pass: the differential fuzz target and the tests
    /// compare the two.
    #[cfg(any(test, fuzzing))]
    pub fn without_one_pass(&self) -> Plan {
        Plan { steps: None, ..self.clone() }
    }
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

/// The instant of the datetime text the one-pass judge read last in the record being
/// judged: (its address, its length, microseconds since the epoch), as
/// `isotime::parse_memo` gave it. The state feed reads the event time from it, where the
/// text is the same, instead of asking the memo (a thread-local) again.
pub type Moment = Option<(usize, usize, i64)>;

/// What a pattern says of a value (None: not known yet).
pub trait Patterns {
    fn verdict(&self, field: usize, value: &[u8]) -> Option<bool>;
}

/// One record: its outcome, and its undeclared keys in order (Valid and Bad only).
/// `vals`: scratch space, reused from record to record. The tests' and the fuzz target's
/// entry; the scans call `judge_alive` (through `record::judge_and_feed`).
#[cfg(any(test, fuzzing))]
pub fn judge<'a, P: Patterns + ?Sized>(
    plan: &Plan,
    buf: &'a [u8],
    windows: &[Window],
    patterns: &P,
    unknown: &mut Vec<&'a [u8]>,
    vals: &mut Vec<Option<Val<'a>>>,
) -> Outcome {
    isotime::forget();
    judge_alive(plan, buf, windows, patterns, unknown, vals, &mut None)
}

/// `judge` of one of a batch of payloads all alive and unchanged from the batch's first
/// record to its last (a scan's chunk: the list holds them), the caller having called
/// `isotime::forget` before the batch's first: two texts at the same address and of the
/// same length are then the same bytes, so the datetime memo needs no forgetting per record.
pub(crate) fn judge_alive<'a, P: Patterns + ?Sized>(
    plan: &Plan,
    buf: &'a [u8],
    windows: &[Window],
    patterns: &P,
    unknown: &mut Vec<&'a [u8]>,
    vals: &mut Vec<Option<Val<'a>>>,
    moment: &mut Moment,
) -> Outcome {
    unknown.clear();
    *moment = None;
    if vals.len() != plan.width {
        vals.clear();
        vals.resize(plan.width, None);
    }
    if let Some(steps) = &plan.steps {
        if let Some(valid) = onepass::judge(plan, steps, buf, windows, patterns, vals, moment) {
            return valid;
        }
    }
    vals.fill(None);
    let (mut nested_nulls, mut done) = (0, 0);
    if !read_plain(plan, buf, vals, &mut nested_nulls, &mut done) {
        vals.fill(None);
        nested_nulls = 0;
        done = 0;
        if read_object(plan, buf, vals, unknown, &mut nested_nulls).is_err() {
            unknown.clear();
            return Outcome::Defer;
        }
    }
    let mut out = check(plan, vals, done, windows, patterns, unknown);
    if let Outcome::Valid { nulls, .. } = &mut out {
        *nulls |= nested_nulls;
    }
    if !matches!(out, Outcome::Valid { .. } | Outcome::Bad(_)) {
        unknown.clear();
    }
    out
}

#[cfg(not(fuzzing))]
pub mod built;
#[cfg(not(fuzzing))]
pub mod py;
#[cfg(not(fuzzing))]
pub mod record;
#[cfg(not(fuzzing))]
mod pyspec;
#[cfg(not(fuzzing))]
pub mod statefeed;
