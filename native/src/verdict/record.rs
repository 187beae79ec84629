//! One record of a scan: its verdict and its state row, with a panic in either caught
//! (the record then becomes a `validator_error`, never a crash, and its row is absent).

use std::panic::{catch_unwind, AssertUnwindSafe};

use super::json::Val;
use super::statefeed::Direct;
use super::{judge_alive, Outcome, Patterns, Plan, Window};
use crate::state::rows::ScanRows;

/// The verdict of one payload (Err: a panic while judging it or feeding its state row);
/// `sink` gets exactly one row for it whatever happens, unless `direct` (feeding) fed it
/// straight to the tracker (`statefeed::Direct`), or it is deferred while feeding: the
/// caller then calls `Direct::defer`. One of a batch of payloads alive
/// and unchanged for the whole batch, `isotime::forget` called before its first
/// (`judge_alive`).
#[allow(clippy::too_many_arguments)]
pub fn judge_and_feed<'a, P: Patterns + ?Sized>(
    plan: &Plan,
    buf: &'a [u8],
    windows: &[Window],
    patterns: &P,
    unknown: &mut Vec<&'a [u8]>,
    vals: &mut Vec<Option<Val<'a>>>,
    sink: Option<&mut ScanRows>,
    direct: Option<&mut Direct<'_>>,
) -> Result<Outcome, ()> {
    let mut moment = None;
    let judged =
        catch_unwind(AssertUnwindSafe(|| judge_alive(plan, buf, windows, patterns, unknown, vals, &mut moment)));
    let Some(sink) = sink else {
        return judged.map_err(|_| unknown.clear());
    };
    if let Some(direct) = direct.filter(|d| d.on) {
        let violations = match &judged {
            Ok(Outcome::Valid { .. }) => Some(None),
            Ok(Outcome::Bad(violations)) => Some(Some(violations.as_slice())),
            // No row: the caller sees whether the record is malformed (it feeds nothing),
            // else stops feeding and gives it an absent row (`Direct::defer`).
            Ok(Outcome::Defer) => return Ok(Outcome::Defer),
            _ => None,
        };
        match violations.map(|v| catch_unwind(AssertUnwindSafe(|| direct.feed(vals, v, moment)))) {
            Some(Ok(true)) => return judged.map_err(|_| unknown.clear()),
            Some(Ok(false)) => {} // its row, below, and rows from here on
            None => {
                direct.stop(); // left to Python: rows from here on
            }
            Some(Err(_)) => {
                // A panic feeding the tracker: left to Python as a feed's panic is.
                direct.stop();
                sink.absent();
                unknown.clear();
                return Err(());
            }
        }
    }
    let settled = matches!(judged, Ok(Outcome::Valid { .. } | Outcome::Bad(_)));
    let mark = sink.len();
    let fed = catch_unwind(AssertUnwindSafe(|| super::statefeed::feed(sink, vals, settled)));
    if fed.is_err() {
        sink.truncate(mark); // a row pushed half-way is dropped, the record left to Python
        sink.absent();
        unknown.clear();
        return Err(());
    }
    judged.map_err(|_| unknown.clear())
}

#[cfg(test)]
mod tests {
    use super::super::{statefeed, Field, Ty};
    use super::*;
    use crate::state::rows::FeedFields;

    struct NoPatterns;

    impl Patterns for NoPatterns {
        fn verdict(&self, _field: usize, _value: &[u8]) -> Option<bool> {
            None
        }
    }

    fn plan() -> Plan {
        let mut symbol = Field::bare("symbol", Ty::Str);
        symbol.label = "str".into();
        Plan::new(vec![symbol], false, Vec::new())
    }

    fn run(rows: &mut ScanRows, payload: &[u8]) -> Result<Outcome, ()> {
        let (mut unknown, mut vals) = (Vec::new(), Vec::new());
        super::super::isotime::forget();
        judge_and_feed(&plan(), payload, &[], &NoPatterns, &mut unknown, &mut vals, Some(rows), None)
    }

    #[test]
    fn a_panic_feeding_the_state_makes_the_record_an_error_with_an_absent_row() {
        let mut rows = ScanRows::new(FeedFields { key: 0, seq: None, time: None, quotes: Vec::new() });
        assert_eq!(run(&mut rows, br#"{"symbol":"A"}"#), Ok(Outcome::Valid { nulls: 0, flags: 0 }));
        assert!(!rows.is_absent(0));
        statefeed::panic_on_next_feed();
        assert_eq!(run(&mut rows, br#"{"symbol":"B"}"#), Err(()));
        assert_eq!(rows.len(), 2);
        assert!(rows.is_absent(1));
        // The next record is judged and fed as usual.
        assert_eq!(run(&mut rows, br#"{"symbol":"C"}"#), Ok(Outcome::Valid { nulls: 0, flags: 0 }));
        assert_eq!(rows.len(), 3);
        assert!(!rows.is_absent(2));
    }
}
