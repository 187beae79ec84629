//! The interface from the verdict scan to the per-symbol state (`state::rows`): the state's
//! fields of a record the scan read, as `SymbolStateTracker.read` reads them from the
//! decoded record, pushed as one row. Whatever this cannot read exactly as Python does (a
//! datetime form `isotime` is unsure of, a quote value that is not a number or null, a
//! record the scan did not settle) is an absent row, which Python reads itself.

use super::isotime;
use super::json::Val;
use crate::state::rows::ScanRows;
use crate::state::values::{EventTime, QuoteValue};

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
    // `event_moment`: a number as float seconds (not a bool), ISO text as its instant (naive
    // read as UTC), anything else none.
    let time = match value(fields.time) {
        Some(Val::Int(n)) => Some(EventTime::Seconds(n as f64)),
        Some(Val::Float(x)) => Some(EventTime::Seconds(x)),
        Some(Val::Str(text)) => match isotime::parse_memo(text) {
            isotime::Parsed::Moment { micros, .. } => Some(EventTime::Micros(micros)),
            isotime::Parsed::NotIso => None,
            isotime::Parsed::Unsure => {
                rows.absent();
                return;
            }
        },
        _ => None,
    };
    let mut quote = None;
    if !rows.fields.quotes.is_empty() {
        let from = rows.quote_start();
        for q in 0..rows.fields.quotes.len() {
            let held = match value(Some(rows.fields.quotes[q])) {
                None | Some(Val::Null) => QuoteValue::Null,
                Some(Val::Int(n)) => QuoteValue::Int(n),
                Some(Val::Float(x)) => QuoteValue::Float(x),
                Some(Val::Bool(b)) => QuoteValue::Int(i64::from(b)), // Python: True == 1
                Some(_) => {
                    rows.quote_abandon(from);
                    rows.absent();
                    return;
                }
            };
            rows.quote_value(held);
        }
        quote = Some(from);
    }
    rows.read(key, seq, time, quote);
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
