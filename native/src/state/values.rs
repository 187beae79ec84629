//! The values the per-symbol state holds and reports: event times, quote values, events,
//! and the long-symbol digest, each exactly as the Python reference
//! (`stream_validator/verify/symbolstate.py`) computes them.

use blake2::digest::{Update, VariableOutput};
use blake2::Blake2bVar;

/// An event time: epoch seconds (a number field), or epoch microseconds (an aware
/// datetime, UTC). One kind per tracker, as one contract field gives.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EventTime {
    Seconds(f64),
    Micros(i64),
}

impl EventTime {
    /// `self > other` as Python compares them; None: two kinds (Python raises TypeError).
    pub fn later_than(self, other: EventTime) -> Option<bool> {
        match (self, other) {
            (EventTime::Seconds(a), EventTime::Seconds(b)) => Some(a > b),
            (EventTime::Micros(a), EventTime::Micros(b)) => Some(a > b),
            _ => None,
        }
    }

    /// Seconds from `earlier` to `self`: a float subtraction, or for datetimes
    /// `timedelta.total_seconds()` (microseconds / 10**6, correctly rounded).
    pub fn span_since(self, earlier: EventTime) -> Option<f64> {
        match (self, earlier) {
            (EventTime::Seconds(a), EventTime::Seconds(b)) => Some(a - b),
            (EventTime::Micros(a), EventTime::Micros(b)) => {
                Some(micros_to_seconds(a as i128 - b as i128))
            }
            _ => None,
        }
    }
}

/// `d / 10**6` correctly rounded (ties to even), as Python's int true division gives it.
pub fn micros_to_seconds(d: i128) -> f64 {
    const MILLION: i128 = 1_000_000;
    if d.unsigned_abs() < (1u128 << 53) {
        return d as f64 / 1e6; // both operands exact: one IEEE division, correctly rounded
    }
    let negative = d < 0;
    let n = d.unsigned_abs() as i128;
    // A candidate within an ulp or two, then the nearest of its neighbours, exactly.
    let mut best = n as f64 / 1e6;
    let mut best_err = exact_error(best, n, MILLION);
    for candidate in [next_down(best), next_up(best)] {
        let err = exact_error(candidate, n, MILLION);
        let closer = err.abs() < best_err.abs();
        let tie_to_even = err.abs() == best_err.abs() && candidate.to_bits() & 1 == 0;
        if closer || tie_to_even {
            best = candidate;
            best_err = err;
        }
    }
    if negative {
        -best
    } else {
        best
    }
}

/// `x * divisor - n`, scaled by a power of two so it is an integer (x > 0, finite, below 2^64).
fn exact_error(x: f64, n: i128, divisor: i128) -> i128 {
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let mantissa = (bits & ((1u64 << 52) - 1)) | (1u64 << 52);
    let shift = 1075 - exponent; // x = mantissa * 2^-shift
    if shift <= 0 {
        return ((mantissa as i128) << (-shift)) * divisor - n;
    }
    (mantissa as i128) * divisor - (n << shift)
}

fn next_up(x: f64) -> f64 {
    f64::from_bits(x.to_bits() + 1)
}

fn next_down(x: f64) -> f64 {
    f64::from_bits(x.to_bits() - 1)
}

/// One value of a quote, compared as Python compares `int`, `float` and `None`.
#[derive(Clone, Debug)]
pub enum QuoteValue {
    Null,
    Int(i64),
    Float(f64),
    /// An int outside i64 that no float equals exactly: its decimal text.
    Big(Box<String>),
}

impl PartialEq for QuoteValue {
    #[inline(always)]
    fn eq(&self, other: &Self) -> bool {
        use QuoteValue::*;
        match (self, other) {
            (Null, Null) => true,
            (Int(a), Int(b)) => a == b,
            (Float(a), Float(b)) => a == b,
            (Int(i), Float(f)) | (Float(f), Int(i)) => int_equals_float(*i, *f),
            (Big(a), Big(b)) => a == b,
            _ => false,
        }
    }
}

impl QuoteValue {
    pub fn is_nan(&self) -> bool {
        matches!(self, QuoteValue::Float(f) if f.is_nan())
    }
}

/// Python's exact `int == float` for an i64.
#[inline]
fn int_equals_float(i: i64, f: f64) -> bool {
    // Every float at or past 2^63 in magnitude is outside i64; below it, an integral float
    // converts exactly.
    f.fract() == 0.0
        && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f)
        && f as i64 == i
}

/// What a finding is about (the Python `SymbolEventKind`, in this order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    SequenceGap = 0,
    SequenceRegression = 1,
    EventTimeRegression = 2,
    FrozenQuote = 3,
    HolesGivenUp = 4,
    SequenceLate = 5,
}

impl EventKind {
    pub const ALL: [EventKind; 6] = [
        EventKind::SequenceGap,
        EventKind::SequenceRegression,
        EventKind::EventTimeRegression,
        EventKind::FrozenQuote,
        EventKind::HolesGivenUp,
        EventKind::SequenceLate,
    ];

    /// The stable code (the Python enum's value).
    pub fn code(self) -> &'static str {
        match self {
            EventKind::SequenceGap => "sequence_gap",
            EventKind::SequenceRegression => "sequence_regression",
            EventKind::EventTimeRegression => "event_time_regression",
            EventKind::FrozenQuote => "frozen_quote",
            EventKind::HolesGivenUp => "sequence_holes_given_up",
            EventKind::SequenceLate => "sequence_late",
        }
    }
}

/// One finding for one symbol (the key it is held under: a long symbol's compact key);
/// `count`: the sequence numbers missed for a gap or given up with holes, else 1.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    pub kind: EventKind,
    /// UTF-8, surrogates encoded as Python's "surrogatepass" does.
    pub symbol: Box<[u8]>,
    pub detail: String,
    pub count: i128,
}

/// A key (symbol) longer than this many characters is held as `compact_key`.
pub const MAX_KEY_CHARS: usize = 256;
const KEPT_CHARS: usize = 32;

/// Characters (code points) of a surrogatepass UTF-8 text: its bytes that start one.
pub fn char_count(text: &[u8]) -> usize {
    text.iter().filter(|&&b| (b as i8) >= -0x40).count()
}

/// A long key's stand-in: its first 32 characters, "…#" and the 128-bit BLAKE2b digest of
/// all of it in hex (Python: `f"{symbol[:32]}…#{blake2b(symbol, digest_size=16).hexdigest()}"`).
pub fn compact_key(symbol: &[u8]) -> Box<[u8]> {
    let mut digest = [0u8; 16];
    let mut hasher = Blake2bVar::new(16).expect("16 is a valid BLAKE2b output size");
    hasher.update(symbol);
    hasher
        .finalize_variable(&mut digest)
        .expect("the buffer is 16 bytes");
    let cut = symbol
        .iter()
        .enumerate()
        .filter(|&(_, &b)| (b as i8) >= -0x40)
        .nth(KEPT_CHARS)
        .map_or(symbol.len(), |(at, _)| at);
    let mut out = Vec::with_capacity(cut + 4 + 32);
    out.extend_from_slice(&symbol[..cut]);
    out.extend_from_slice("…#".as_bytes());
    for byte in digest {
        out.extend_from_slice(format!("{byte:02x}").as_bytes());
    }
    out.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micros_divide_as_python() {
        assert_eq!(micros_to_seconds(1_500_000), 1.5);
        assert_eq!(micros_to_seconds(-1), -1e-6);
        // Python: (2**60 + 1) / 10**6 == 1152921504606.847 (the nearest float to the quotient)
        assert_eq!(micros_to_seconds((1i128 << 60) + 1), 1152921504606.847);
        assert_eq!(micros_to_seconds(-(1i128 << 60) - 3), -1152921504606.847);
    }

    #[test]
    fn ints_equal_floats_exactly() {
        assert!(QuoteValue::Int(1) == QuoteValue::Float(1.0));
        assert!(QuoteValue::Int((1 << 53) + 1) != QuoteValue::Float(9007199254740992.0));
        assert!(QuoteValue::Int(i64::MIN) == QuoteValue::Float(-9.223_372_036_854_776e18));
        assert!(QuoteValue::Float(f64::NAN) != QuoteValue::Float(f64::NAN));
    }

    #[test]
    fn long_keys_are_compacted_as_python() {
        let key = compact_key("A".repeat(300).as_bytes());
        // Python: compact_key("A" * 300)
        let expected = format!("{}…#e2e4069c9ad9c21ad36ce5272e41091c", "A".repeat(32));
        assert_eq!(std::str::from_utf8(&key).unwrap(), expected);
    }
}
