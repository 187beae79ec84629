//! `SymbolState`: the per-(partition, symbol) state of one contract, a plain Rust struct
//! (no Python), so a native scanner can feed it record by record; `state::py` wraps it.
//!
//! Same semantics as the Python reference `SymbolStateTracker`: the same events, in the same
//! order, with the same texts and counts, and the same evictions. Memory is bounded: at most
//! `max_symbols` keys, the least recently seen evicted first. Keys live once, in a slab of
//! entries chained in LRU order (head: least recent); the table holds slab indices.

use hashbrown::HashTable;

use super::keyhash::{KeyHasher, Probe};
use super::sequence::Gaps;
use super::values::{
    char_count, compact_key, Event, EventKind, EventTime, QuoteValue, MAX_KEY_CHARS,
};

/// The settings (the Python `SymbolStateSpec`), with the parts of texts Python formats.
#[derive(Clone, Debug)]
pub struct Spec {
    /// Out-of-order tolerance; any window past 2^66 acts as 2^66 (sequence numbers are
    /// within ±2^64).
    pub sequence_window: i128,
    pub resync_after: Option<u64>,
    pub max_time_regression_s: f64,
    /// Frozen quotes are checked (a limit is set).
    pub frozen_on: bool,
    pub frozen_max_updates: Option<u64>,
    pub frozen_max_s: Option<f64>,
    pub max_symbols: usize,
    pub max_holes: usize,
    pub max_holes_total: usize,
    /// Python's `f"{max_time_regression_s:g}"`, `f"{frozen_max_s:g}"`, and the end of the
    /// holes-given-up detail (`" (over N holes for the symbol or M in all)"`).
    pub tolerance_text: String,
    pub max_s_text: String,
    pub given_up_text: String,
}

/// The widest sequence number held (beyond it a record's number is not checked).
pub const MAX_SEQ: i128 = 1 << 64;
const NIL: u32 = u32::MAX;

pub(super) struct Entry {
    pub key: Box<[u8]>,
    part: u32,
    prev: u32,
    next: u32,
    /// The highest sequence number seen (`has_high`), in two words so the entry keeps an
    /// 8-byte alignment.
    high_lo: u64,
    high_hi: i64,
    has_high: bool,
    pub alerted: bool,
    pub gaps: Option<Box<Gaps>>,
    pub latest: Option<EventTime>,
    pub since: Option<EventTime>,
    pub quote: Option<Box<[QuoteValue]>>,
    pub updates: u64,
}

impl Entry {
    pub fn high(&self) -> Option<i128> {
        self.has_high
            .then_some(((self.high_hi as i128) << 64) | self.high_lo as i128)
    }

    pub fn set_high(&mut self, seq: i128) {
        self.high_lo = seq as u64;
        self.high_hi = (seq >> 64) as i64;
        self.has_high = true;
    }
}

/// A record's quote as the tracker reads it: its values in the spec's order, compared with
/// and copied into the quote a symbol holds. A slice of values is one; the verdict scan
/// reads another straight from the fields it read (`statefeed`), with no list built.
pub trait Quote {
    /// How many values.
    fn count(&self) -> usize;
    /// Value `k` (below `count`).
    fn value(&self, k: usize) -> QuoteValue;
}

impl Quote for &[QuoteValue] {
    #[inline(always)]
    fn count(&self) -> usize {
        <[QuoteValue]>::len(self)
    }

    #[inline(always)]
    fn value(&self, k: usize) -> QuoteValue {
        self[k].clone()
    }
}

/// Two event times of different kinds met (the Python tracker raises TypeError).
#[derive(Debug, PartialEq)]
pub struct MixedTimes;

pub struct SymbolState {
    pub spec: Spec,
    pub evictions: u64,
    /// Hole ranges given up to the bounds.
    pub holes_given_up: u64,
    /// Pending hole ranges held, all symbols.
    pub(super) holes: usize,
    slab: Vec<Entry>,
    free: Vec<u32>,
    table: HashTable<u32>,
    hasher: KeyHasher,
    head: u32,
    tail: u32,
    count: usize,
}

impl SymbolState {
    pub fn new(spec: Spec) -> Self {
        SymbolState {
            spec,
            evictions: 0,
            holes_given_up: 0,
            holes: 0,
            slab: Vec::new(),
            free: Vec::new(),
            table: HashTable::new(),
            hasher: KeyHasher::default(),
            head: NIL,
            tail: NIL,
            count: 0,
        }
    }

    /// Keys held, all partitions.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Pending hole ranges held, all symbols.
    pub fn holes(&self) -> usize {
        self.holes
    }

    /// Fold one record into its symbol's state; its events (usually none) go to `events`.
    /// `symbol`: UTF-8 (surrogates as "surrogatepass"); `seq` beyond ±2^64 is not checked.
    pub fn observe<Q: Quote>(
        &mut self,
        part: u32,
        symbol: &[u8],
        seq: Option<i128>,
        event_time: Option<EventTime>,
        quote: Option<Q>,
        events: &mut Vec<Event>,
    ) -> Result<(), MixedTimes> {
        let at = self.entry(part, symbol);
        if let Some(seq) = seq.filter(|s| s.unsigned_abs() <= MAX_SEQ as u128) {
            let state = self.slot_mut(at);
            match state.high() {
                Some(high) if seq == high + 1 && state.gaps.is_none() => state.set_high(seq),
                _ => self.sequence(at, seq, events),
            }
        }
        if let Some(time) = event_time.filter(|t| !matches!(t, EventTime::Seconds(s) if s.is_nan()))
        {
            self.event_time(at, time, events)?;
        }
        if let Some(quote) = quote {
            self.frozen(at, &quote, events)?;
        }
        Ok(())
    }

    /// Forget a partition's state; how many keys were dropped.
    pub fn drop_partition(&mut self, part: u32) -> usize {
        let mut dropped = 0;
        let mut at = self.head;
        while at != NIL {
            let next = self.slab[at as usize].next;
            if self.slab[at as usize].part == part {
                self.remove(at);
                dropped += 1;
            }
            at = next;
        }
        dropped
    }

    /// The entry at slab index `at`, an index the key table, the LRU links or `entry` gave:
    /// each such index is below the slab's length (the slab never shrinks; a removed
    /// entry's place is reused), so the hot path reads it without a bounds check.
    #[inline(always)]
    fn slot(&self, at: u32) -> &Entry {
        debug_assert!((at as usize) < self.slab.len());
        // SAFETY: `at` is below the slab's length (above).
        unsafe { self.slab.get_unchecked(at as usize) }
    }

    /// `slot`, mutable.
    #[inline(always)]
    fn slot_mut(&mut self, at: u32) -> &mut Entry {
        debug_assert!((at as usize) < self.slab.len());
        // SAFETY: `at` is below the slab's length (`slot`).
        unsafe { self.slab.get_unchecked_mut(at as usize) }
    }

    pub(super) fn entry_mut(&mut self, at: u32) -> &mut Entry {
        &mut self.slab[at as usize]
    }

    pub(super) fn event(&self, at: u32, kind: EventKind, detail: String, count: i128) -> Event {
        Event {
            kind,
            symbol: self.slab[at as usize].key.clone(),
            detail,
            count,
        }
    }

    /// The slab index of the key's state, touched (most recently seen), made when new.
    #[inline(always)]
    fn entry(&mut self, part: u32, symbol: &[u8]) -> u32 {
        if let Some(at) = self.find(part, symbol) {
            self.touch(at);
            return at;
        }
        self.entry_slow(part, symbol)
    }

    /// `entry` of a key not found as it is: a new key, or a long one held as its digest.
    #[inline(never)]
    fn entry_slow(&mut self, part: u32, symbol: &[u8]) -> u32 {
        if char_count(symbol) > MAX_KEY_CHARS {
            let compact = compact_key(symbol);
            if let Some(at) = self.find(part, &compact) {
                self.touch(at);
                return at;
            }
            return self.add(part, compact);
        }
        self.add(part, symbol.into())
    }

    #[inline(always)]
    fn hash(hasher: &KeyHasher, part: u32, key: &[u8]) -> u64 {
        hasher.hash(part, key)
    }

    #[inline(always)]
    fn find(&self, part: u32, key: &[u8]) -> Option<u32> {
        let probe = Probe::new(&self.hasher, part, key);
        let slab = &self.slab;
        self.table
            .find(probe.hash, |&at| {
                debug_assert!((at as usize) < slab.len());
                // SAFETY: the table holds indices below the slab's length (`slot`).
                let entry = unsafe { slab.get_unchecked(at as usize) };
                entry.part == part && probe.matches(&entry.key)
            })
            .copied()
    }

    fn add(&mut self, part: u32, key: Box<[u8]>) -> u32 {
        let hash = Self::hash(&self.hasher, part, &key);
        let entry = Entry {
            key,
            part,
            prev: NIL,
            next: NIL,
            high_lo: 0,
            high_hi: 0,
            has_high: false,
            alerted: false,
            gaps: None,
            latest: None,
            since: None,
            quote: None,
            updates: 0,
        };
        let at = match self.free.pop() {
            Some(at) => {
                self.slab[at as usize] = entry;
                at
            }
            None => {
                self.slab.push(entry);
                (self.slab.len() - 1) as u32
            }
        };
        let (slab, hasher) = (&self.slab, &self.hasher);
        self.table.insert_unique(hash, at, |&i| {
            let e = &slab[i as usize];
            Self::hash(hasher, e.part, &e.key)
        });
        self.link_last(at);
        self.count += 1;
        if self.count > self.spec.max_symbols {
            // The least recently seen key (never the new one: it is the most recent).
            let oldest = self.head;
            self.remove(oldest);
            self.evictions += 1;
        }
        at
    }

    fn remove(&mut self, at: u32) {
        let entry = &self.slab[at as usize];
        let hash = Self::hash(&self.hasher, entry.part, &entry.key);
        if let Ok(found) = self.table.find_entry(hash, |&i| i == at) {
            found.remove();
        }
        self.unlink(at);
        let entry = &mut self.slab[at as usize];
        if let Some(gaps) = entry.gaps.take() {
            self.holes -= gaps.ranges();
        }
        entry.key = Box::default();
        entry.quote = None;
        self.free.push(at);
        self.count -= 1;
    }

    #[inline(always)]
    fn touch(&mut self, at: u32) {
        if self.tail != at {
            self.unlink(at);
            self.link_last(at);
        }
    }

    #[inline(always)]
    fn link_last(&mut self, at: u32) {
        let tail = self.tail;
        {
            let entry = self.slot_mut(at);
            entry.prev = tail;
            entry.next = NIL;
        }
        if tail == NIL {
            self.head = at;
        } else {
            self.slot_mut(tail).next = at;
        }
        self.tail = at;
    }

    #[inline(always)]
    fn unlink(&mut self, at: u32) {
        let (prev, next) = {
            let entry = self.slot(at);
            (entry.prev, entry.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            self.slot_mut(prev).next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.slot_mut(next).prev = prev;
        }
    }

    #[inline(always)]
    fn event_time(
        &mut self,
        at: u32,
        time: EventTime,
        events: &mut Vec<Event>,
    ) -> Result<(), MixedTimes> {
        let state = self.slot_mut(at);
        let latest = match state.latest {
            None => {
                state.latest = Some(time);
                return Ok(());
            }
            Some(latest) => latest,
        };
        if time.later_than(latest).ok_or(MixedTimes)? {
            state.latest = Some(time);
            return Ok(());
        }
        let back = latest.span_since(time).ok_or(MixedTimes)?;
        let tolerance = self.spec.max_time_regression_s;
        if back > tolerance {
            let detail = format!(
                "event time went back {back:.3} s (tolerance {} s)",
                self.spec.tolerance_text
            );
            events.push(self.event(at, EventKind::EventTimeRegression, detail, 1));
        }
        Ok(())
    }

    fn frozen<Q: Quote>(
        &mut self,
        at: u32,
        quote: &Q,
        events: &mut Vec<Event>,
    ) -> Result<(), MixedTimes> {
        let spec = &self.spec;
        debug_assert!((at as usize) < self.slab.len());
        // SAFETY: `at` is below the slab's length (`slot`).
        let state = unsafe { self.slab.get_unchecked_mut(at as usize) };
        let time = state.latest; // the symbol's latest event time, not this record's
        let n = quote.count();
        // Compared and stored in one pass: a value equal to the one held may replace it
        // (Python keeps the held one), as equal numbers compare alike with any other.
        let same = match &mut state.quote {
            Some(held) if held.len() == n => {
                let mut same = true;
                for (k, held) in held.iter_mut().enumerate() {
                    let value = quote.value(k);
                    same &= value == *held;
                    *held = value;
                }
                same
            }
            held => {
                *held = Some((0..n).map(|k| quote.value(k)).collect());
                false
            }
        };
        if !same {
            state.updates = 1;
            state.since = time;
            state.alerted = false;
            return Ok(());
        }
        // Equal quotes hold no NaN (NaN equals nothing here; Python's tuples may compare one
        // NaN object equal to itself, and then reset the state to the same effect).
        state.updates = state.updates.saturating_add(1);
        if state.since.is_none() {
            state.since = time;
        }
        if state.alerted {
            return Ok(());
        }
        let held = match (time, state.since) {
            (Some(time), Some(since)) => Some(time.span_since(since).ok_or(MixedTimes)?),
            _ => None,
        };
        let detail = match (spec.frozen_max_updates, spec.frozen_max_s, held) {
            (Some(max), _, _) if state.updates > max => {
                format!(
                    "same quote on {} updates in a row (limit {max})",
                    state.updates
                )
            }
            (_, Some(max_s), Some(held)) if held > max_s => {
                format!("same quote for {held:.3} s (limit {} s)", spec.max_s_text)
            }
            _ => return Ok(()),
        };
        state.alerted = true;
        events.push(self.event(at, EventKind::FrozenQuote, detail, 1));
        Ok(())
    }
}
