//! Sequence numbers: gaps with a window, holes kept as ranges and bounded, late numbers,
//! regressions and resync; the Python reference is `SymbolStateTracker._sequence` and its
//! helpers (`_pass`, `_bound`, `_settle`, `_gap`), followed step by step.

use super::tracker::SymbolState;
use super::values::{Event, EventKind};

/// A symbol's sequence state beyond its highest number: held only while it has pending
/// holes, a renumbering streak, or given-up holes still inside the window.
#[derive(Debug, Default)]
pub struct Gaps {
    /// Missing numbers inside the window, flat: ascending, disjoint, non-adjacent ranges
    /// [start, end) as start0, end0, start1, end1, ... (an odd bisect position: inside one).
    holes: Vec<i128>,
    /// Increasing regressions in a row (a renumbered feed?) and the last of them.
    streak: u64,
    candidate: i128,
    /// Holes given up lay below this number.
    mark: Option<i128>,
}

impl Gaps {
    /// Hole ranges held.
    pub fn ranges(&self) -> usize {
        self.holes.len() / 2
    }
}

/// Numbers in the ranges `holes[..whole]` (whole even).
fn numbers(holes: &[i128]) -> i128 {
    holes.chunks_exact(2).map(|pair| pair[1] - pair[0]).sum()
}

impl SymbolState {
    pub(super) fn sequence(&mut self, at: u32, seq: i128, events: &mut Vec<Event>) {
        let window = self.spec.sequence_window;
        let state = self.entry_mut(at);
        let Some(high) = state.high() else {
            state.set_high(seq);
            return;
        };
        if seq > high {
            let cutoff = seq - window; // numbers below this are beyond the window
            let missed = (seq.min(cutoff) - (high + 1)).max(0);
            let start = (high + 1).max(cutoff);
            state.set_high(seq);
            let mut gaps = match state.gaps.take() {
                None if start >= seq => return self.gap(at, seq, missed, 0, events),
                None => Box::default(),
                Some(mut gaps) => {
                    gaps.streak = 0;
                    gaps
                }
            };
            let mut missed = missed;
            let mut given = 0;
            if gaps.holes.first().is_some_and(|&first| first < cutoff) {
                missed += self.pass(&mut gaps.holes, cutoff);
            }
            if start < seq {
                gaps.holes.extend([start, seq]); // above every range held: their ends are <= high
                self.holes += 1;
                given = self.bound(&mut gaps);
            }
            self.settle(at, gaps, seq - window);
            return self.gap(at, seq, missed, given, events);
        }
        if let Some(mut gaps) = state.gaps.take() {
            let holes = &mut gaps.holes;
            let pos = holes.partition_point(|&n| n <= seq); // bisect_right
            if pos & 1 == 1 {
                // late, but inside the window: fill its hole
                if holes[pos - 1] == seq {
                    if holes[pos] == seq + 1 {
                        holes.drain(pos - 1..pos + 1);
                        self.holes -= 1;
                        self.settle(at, gaps, high - window);
                        return;
                    }
                    holes[pos - 1] = seq + 1;
                } else if holes[pos] == seq + 1 {
                    holes[pos] = seq;
                } else {
                    holes.splice(pos..pos, [seq, seq + 1]); // splits the range in two
                    self.holes += 1;
                    let given = self.bound(&mut gaps);
                    self.entry_mut(at).gaps = Some(gaps);
                    if given != 0 {
                        let detail = self.given_up_detail(given);
                        events.push(self.event(at, EventKind::HolesGivenUp, detail, given));
                    }
                    return;
                }
                self.entry_mut(at).gaps = Some(gaps);
                return;
            }
            if let Some(mark) = gaps.mark {
                if high - window <= seq && seq < mark {
                    self.entry_mut(at).gaps = Some(gaps);
                    let detail =
                        format!("seq {seq} after {high}: late for a hole given up, or a repeat");
                    events.push(self.event(at, EventKind::SequenceLate, detail, 1));
                    return;
                }
            }
            self.entry_mut(at).gaps = Some(gaps);
        }
        let detail = format!("seq {seq} after {high}");
        events.push(self.event(at, EventKind::SequenceRegression, detail, 1));
        let resync = self.spec.resync_after;
        let state = self.entry_mut(at);
        let gaps = state.gaps.get_or_insert_with(Box::default);
        gaps.streak = if gaps.streak != 0 && seq > gaps.candidate {
            gaps.streak + 1
        } else {
            1
        };
        gaps.candidate = seq;
        if resync.is_some_and(|after| gaps.streak >= after) {
            let ranges = gaps.ranges();
            state.set_high(seq);
            state.gaps = None;
            self.holes -= ranges;
        }
    }

    /// Take the numbers below `cutoff` (out of the window) out of `holes`; how many.
    fn pass(&mut self, holes: &mut Vec<i128>, cutoff: i128) -> i128 {
        let at = holes.partition_point(|&n| n < cutoff); // bisect_left: holes[..at] below cutoff
        let whole = at & !1; // the ranges wholly below
        let mut missed = numbers(&holes[..whole]);
        if at & 1 == 1 {
            // a range across the cutoff keeps its part from the cutoff on
            missed += cutoff - holes[whole];
            holes[whole] = cutoff;
        }
        holes.drain(..whole);
        self.holes -= whole / 2;
        missed
    }

    /// Give up the oldest holes of a symbol past `max_holes`, or past `max_holes_total`
    /// held in all; the numbers given up (0: none).
    fn bound(&mut self, gaps: &mut Gaps) -> i128 {
        let ranges = gaps.ranges();
        let over = ranges
            .saturating_sub(self.spec.max_holes)
            .max(self.holes.saturating_sub(self.spec.max_holes_total));
        if over == 0 {
            return 0;
        }
        let over = over.min(ranges); // the total is made room for by this symbol
        let whole = 2 * over;
        let given = numbers(&gaps.holes[..whole]);
        gaps.mark = Some(gaps.holes[whole - 1]);
        gaps.holes.drain(..whole);
        self.holes -= over;
        self.holes_given_up += over as u64;
        given
    }

    /// Put `gaps` back, or let it go when it holds nothing (`floor`: the lowest number in
    /// the window).
    fn settle(&mut self, at: u32, mut gaps: Box<Gaps>, floor: i128) {
        if gaps.mark.is_some_and(|mark| mark <= floor) {
            gaps.mark = None; // the holes given up are beyond the window now
        }
        let keep = !gaps.holes.is_empty() || gaps.streak != 0 || gaps.mark.is_some();
        self.entry_mut(at).gaps = keep.then_some(gaps);
    }

    fn gap(&self, at: u32, seq: i128, missed: i128, given: i128, events: &mut Vec<Event>) {
        if missed != 0 {
            let detail = format!("{missed} sequence number(s) missing before {seq}");
            events.push(self.event(at, EventKind::SequenceGap, detail, missed));
        }
        if given != 0 {
            events.push(self.event(
                at,
                EventKind::HolesGivenUp,
                self.given_up_detail(given),
                given,
            ));
        }
    }

    fn given_up_detail(&self, given: i128) -> String {
        format!(
            "{given} sequence number(s) in the oldest hole(s) given up{}",
            self.spec.given_up_text
        )
    }
}
