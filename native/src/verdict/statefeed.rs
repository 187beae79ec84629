//! The interface from the verdict scan to the per-symbol state (`state::rows`): the state's
//! fields of a record the scan read, as `SymbolStateTracker.read` reads them from the
//! decoded record, pushed as one row. Whatever this cannot read exactly as Python does (a
//! datetime form `isotime` is unsure of, a quote value that is not a number or null, a
//! record the scan did not settle) is an absent row, which Python reads itself.

use super::isotime;
use super::json::Val;
use super::{Moment, Violation};
use crate::state::rows::{FeedFields, ScanRows};
use crate::state::tracker::{MixedTimes, Quote, SymbolState};
use crate::state::values::{Event, EventTime, QuoteValue};

/// Push the row of one record; `settled`: the scan judged it (valid or quarantined), so
/// `vals` holds its declared fields.
pub fn feed(rows: &mut ScanRows, vals: &[Option<Val<'_>>], settled: bool) {
    #[cfg(test)]
    if PANIC_NEXT.with(|p| p.replace(false)) {
        rows.quote_value(QuoteValue::Null); // half a row pushed, then the panic
        panic!("a test panic while feeding the state");
    }
    if !settled {
        rows.absent();
        return;
    }
    let fields = &rows.fields;
    let value = |at: Option<usize>| at.and_then(|i| vals.get(i).copied().flatten());
    // A key that is not a str: the record feeds nothing.
    let key = match value(Some(fields.key)) {
        Some(Val::Str(text)) => Some(text),
        _ => None,
    };
    let seq = match value(fields.seq) {
        Some(Val::Int(n)) => Some(n),
        _ => None,
    };
    let Ok(time) = event_time(value(fields.time)) else {
        rows.absent();
        return;
    };
    let mut quote = None;
    if !rows.fields.quotes.is_empty() {
        let from = rows.quote_start();
        for q in 0..rows.fields.quotes.len() {
            let Some(held) = quote_value(value(Some(rows.fields.quotes[q]))) else {
                rows.quote_abandon(from);
                rows.absent();
                return;
            };
            rows.quote_value(held);
        }
        quote = Some(from);
    }
    rows.read(key, seq, time, quote);
}

/// `event_moment` of the event-time field's value: a number as float seconds (not a bool),
/// ISO text as its instant (naive read as UTC), anything else none; Err: a datetime form
/// `isotime` is unsure of (Python reads the record).
#[inline(always)]
fn event_time(value: Option<Val<'_>>) -> Result<Option<EventTime>, ()> {
    Ok(match value {
        Some(Val::Int(n)) => Some(EventTime::Seconds(n as f64)),
        Some(Val::Float(x)) => Some(EventTime::Seconds(x)),
        Some(Val::Str(text)) => match isotime::parse_memo(text) {
            isotime::Parsed::Moment { micros, .. } => Some(EventTime::Micros(micros)),
            isotime::Parsed::NotIso => None,
            isotime::Parsed::Unsure => return Err(()),
        },
        _ => None,
    })
}

/// One quote field's value as the tracker compares it (a missing field as null); None: a
/// value only Python reads (text, a container).
#[inline(always)]
fn quote_value(value: Option<Val<'_>>) -> Option<QuoteValue> {
    Some(match value {
        None | Some(Val::Null) => QuoteValue::Null,
        Some(Val::Int(n)) => QuoteValue::Int(n),
        Some(Val::Float(x)) => QuoteValue::Float(x),
        Some(Val::Bool(b)) => QuoteValue::Int(i64::from(b)), // Python: True == 1
        Some(_) => return None,
    })
}

/// The file path's feed (`offline::scan_lines` with the tracker): the records of a scan
/// fed to the tracker as they are judged, in order, while each can be (no row kept, no
/// second pass); from the first record that cannot (left to Python, or a value only
/// Python reads), rows again, and Python feeds those (`rows::feed_rows`).
pub struct Direct<'s> {
    pub fields: &'s FeedFields,
    /// The state's field names (key, sequence, event time, then the quote's): the heads a
    /// violation is matched against, as `state.distrusted` matches them.
    pub names: &'s Names,
    pub core: &'s mut SymbolState,
    pub events: &'s mut Vec<Event>,
    pub part: u32,
    /// Records fed so far (or, the bad ones whose key failed, left out): the scan's first
    /// `fed` records; rows hold the rest.
    pub fed: usize,
    /// Still feeding (false from the first record it could not feed).
    pub on: bool,
    /// The highest of `fields`' indices: a record's values are read unchecked once `vals`
    /// is known to be longer.
    last: usize,
}

/// `vals[at]`, `at` below `vals.len()` (checked by the caller).
#[inline(always)]
fn read<'a>(vals: &[Option<Val<'a>>], at: usize) -> Option<Val<'a>> {
    debug_assert!(at < vals.len());
    // SAFETY: the caller checked `at < vals.len()` (`Direct::feed`: every index of `fields`
    // is at most `last`, and `vals` is longer).
    unsafe { *vals.get_unchecked(at) }
}

/// A record's quote where the scan read it: the quote fields' values (`at`: their
/// indices), each a number or null (checked before it is fed).
struct ReadQuote<'v, 'a> {
    vals: &'v [Option<Val<'a>>],
    at: &'v [usize],
}

impl Quote for ReadQuote<'_, '_> {
    #[inline(always)]
    fn count(&self) -> usize {
        self.at.len()
    }

    #[inline(always)]
    fn value(&self, k: usize) -> QuoteValue {
        // (`ReadQuote` is made only once `vals` is known to hold every index of `at`)
        quote_value(read(self.vals, self.at[k])).unwrap_or(QuoteValue::Null)
    }
}

/// What the plan says of the state's fields: their names, for `distrust`, and whether the
/// quote's are all numbers.
pub struct Names {
    pub key: Vec<u8>,
    pub seq: Option<Vec<u8>>,
    pub time: Option<Vec<u8>>,
    pub quotes: Vec<Vec<u8>>,
    /// Every quote field is declared a number or a bool (the contract loader allows only
    /// int and float ones): a quote value the judge let through (not distrusted) is one
    /// the tracker reads, so it is not checked again.
    pub quotes_numeric: bool,
}

/// `state.distrusted` of a bad record, from its violations: None when it feeds nothing (a
/// record-level violation, or its key failed), else the parts it may not feed (1 seq,
/// 2 time, 4 quote). The core builds no rule violation (Python words those).
pub fn distrust(names: &Names, violations: &[Violation]) -> Option<u8> {
    let mut mask = 0u8;
    for violation in violations {
        let name = violation.field.as_deref()?.as_bytes();
        // a nested path (`levels[3].price`) fails its top-level field
        let head = name.split(|&b| b == b'.').next().unwrap_or(name);
        let head = head.split(|&b| b == b'[').next().unwrap_or(head);
        if head == names.key.as_slice() {
            return None;
        }
        if names.seq.as_deref() == Some(head) {
            mask |= 1;
        }
        if names.time.as_deref() == Some(head) {
            mask |= 2;
        }
        if names.quotes.iter().any(|q| q.as_slice() == head) {
            mask |= 4;
        }
    }
    Some(mask)
}

impl<'s> Direct<'s> {
    pub fn new(
        fields: &'s FeedFields,
        names: &'s Names,
        core: &'s mut SymbolState,
        events: &'s mut Vec<Event>,
        part: u32,
    ) -> Self {
        let indices = [fields.key].into_iter().chain(fields.seq).chain(fields.time);
        let last = indices.chain(fields.quotes.iter().copied()).max().unwrap_or(0);
        Direct { fields, names, core, events, part, fed: 0, on: true, last }
    }

    /// Feed one record the scan settled (`violations`: a bad one's, None: valid): true when
    /// done (fed, or it feeds nothing), false when it cannot be fed here (the caller keeps
    /// its row, and this record and every later one are Python's to feed).
    /// `moment`: the judge's last datetime read (`Moment`), the event time's when it is
    /// the same text.
    // Not inlined: in the scan's loop it would crowd the judge's registers.
    #[inline(never)]
    pub fn feed(&mut self, vals: &[Option<Val<'_>>], violations: Option<&[Violation]>, moment: Moment) -> bool {
        let mask = match violations {
            None => 0,
            Some(violations) => match distrust(self.names, violations) {
                None => {
                    self.fed += 1;
                    return true;
                }
                Some(mask) => mask,
            },
        };
        let fields = self.fields;
        if vals.len() <= self.last {
            return self.stop(); // (never: `vals` holds a value for each of the plan's fields)
        }
        let value = |at: Option<usize>| at.and_then(|i| read(vals, i));
        let Some(Val::Str(key)) = value(Some(fields.key)) else {
            self.fed += 1; // a key that is not a str: the record feeds nothing
            return true;
        };
        let seq = match value(fields.seq) {
            Some(Val::Int(n)) if mask & 1 == 0 => Some(i128::from(n)),
            _ => None,
        };
        let time = match (value(fields.time).filter(|_| mask & 2 == 0), moment) {
            // the text the judge read last: its instant, as `parse_memo` gave it
            (Some(Val::Str(text)), Some((at, len, micros)))
                if at == text.as_ptr() as usize && len == text.len() =>
            {
                Ok(Some(EventTime::Micros(micros)))
            }
            (value, _) => event_time(value),
        };
        let time = match time {
            Ok(time) => time,
            Err(()) => return self.stop(),
        };
        let quote = if mask & 4 == 0 && !fields.quotes.is_empty() {
            let readable = |&q: &usize| quote_value(value(Some(q))).is_some();
            debug_assert!(!self.names.quotes_numeric || fields.quotes.iter().all(readable));
            if !self.names.quotes_numeric && !fields.quotes.iter().all(readable) {
                return self.stop();
            }
            Some(ReadQuote { vals, at: &fields.quotes })
        } else {
            None
        };
        match self.core.observe(self.part, key, seq, time, quote, self.events) {
            Ok(()) => {
                self.fed += 1;
                true
            }
            // Two kinds of event time: its row goes to Python, whose feed raises TypeError
            // there, as it always has (the command stops).
            Err(MixedTimes) => self.stop(),
        }
    }

    /// A record deferred while feeding (judge_and_feed left it rowless): `malformed` (not
    /// one JSON object, a record-level violation) feeds nothing, and feeding goes on; any
    /// other is Python's to judge, so feeding stops and it gets an absent row.
    pub fn defer(&mut self, malformed: bool, sink: &mut ScanRows) {
        if malformed {
            self.fed += 1;
        } else {
            self.stop();
            sink.absent();
        }
    }

    /// Feed no more: this record's row and the later ones go to Python.
    pub fn stop(&mut self) -> bool {
        self.on = false;
        false
    }
}

#[cfg(test)]
thread_local! {
    static PANIC_NEXT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Test builds only: the next `feed` on this thread panics.
#[cfg(test)]
pub fn panic_on_next_feed() {
    PANIC_NEXT.with(|p| p.set(true));
}

#[cfg(test)]
mod tests {
    use super::super::{Kind, Violation};
    use super::{distrust, Names};

    fn names() -> Names {
        Names {
            key: b"symbol".to_vec(),
            seq: Some(b"seq".to_vec()),
            time: Some(b"event_ts".to_vec()),
            quotes: vec![b"price".to_vec(), b"bid".to_vec(), b"ask".to_vec()],
            quotes_numeric: true,
        }
    }

    fn found(fields: &[Option<&str>]) -> Option<u8> {
        let violations: Vec<Violation> = fields
            .iter()
            .map(|f| Violation { field: f.map(str::to_owned), kind: Kind::Mismatch, message: "m".into() })
            .collect();
        distrust(&names(), &violations)
    }

    /// The cases of tests/unit/state/test_distrust.py that the core can meet (it builds
    /// no rule violation): the same parts (1 seq, 2 time, 4 quote; None: "key").
    #[test]
    fn distrust_names_the_parts_state_distrusted_names() {
        assert_eq!(found(&[]), Some(0));
        assert_eq!(found(&[Some("size"), Some("ask_sz")]), Some(0));
        assert_eq!(found(&[Some("seq")]), Some(1));
        assert_eq!(found(&[Some("event_ts")]), Some(2));
        assert_eq!(found(&[Some("bid"), Some("price")]), Some(4));
        assert_eq!(found(&[Some("seq"), Some("event_ts")]), Some(3));
        assert_eq!(found(&[Some("seq[0].x")]), Some(1));
        assert_eq!(found(&[Some("event_ts.a[2]")]), Some(2));
        assert_eq!(found(&[Some("size"), Some("symbol")]), None);
        assert_eq!(found(&[Some("seq"), Some("symbol.x")]), None);
        assert_eq!(found(&[None]), None); // record-level
        assert_eq!(found(&[Some("sequence"), Some("prices"), Some("")]), Some(0));
    }
}
