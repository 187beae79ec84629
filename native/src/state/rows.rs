//! The state's fields of each record of a batch, as the verdict scan read them, and the
//! tracker fed from them: no Python object per record, no second decode.
//!
//! `ScanRows` holds one row per payload, in batch order: the key's UTF-8 bytes, the
//! sequence number, the event time (epoch microseconds or seconds) and the quote, or
//! *absent* when the scan did not settle the record (deferred to the Python rules, a
//! datetime form or a quote value it does not read): Python reads those rows itself
//! (`SymbolStateTracker.read` on the decoded record), so both give the same values.
//! `verdict::statefeed` fills it; `SymbolState::observe_scanned` (here) consumes it.

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PySequence, PyTuple};

use super::py::SymbolState;
use super::values::{EventTime, QuoteValue};

/// What `SymbolStateTracker.read` gives for a record, from the scan (ranges into the arenas).
#[derive(Clone, Copy, Debug)]
enum Row {
    /// Not read by the scan: Python reads the record.
    Absent,
    /// `key`: None when the key field is not a str (the record feeds nothing).
    Read {
        key: Option<(u32, u32)>,
        seq: Option<i64>,
        time: Option<EventTime>,
        quote: Option<(u32, u32)>,
    },
}

/// Field indices (in the contract's declared order) of the state's fields.
#[derive(Clone, Debug)]
pub struct FeedFields {
    pub key: usize,
    pub seq: Option<usize>,
    pub time: Option<usize>,
    /// Empty when frozen quotes are not checked.
    pub quotes: Vec<usize>,
}

pub struct ScanRows {
    pub fields: FeedFields,
    rows: Vec<Row>,
    text: Vec<u8>,
    quote_values: Vec<QuoteValue>,
    /// A `QuoteValue::Big` (which owns its text) was pushed since the last `clear` (the
    /// scan pushes none: the test folds away where the variant is known).
    big: bool,
}

impl ScanRows {
    pub fn new(fields: FeedFields) -> Self {
        ScanRows {
            fields,
            rows: Vec::new(),
            text: Vec::new(),
            quote_values: Vec::new(),
            big: false,
        }
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    pub fn clear(&mut self) {
        self.rows.clear();
        self.text.clear();
        if self.big {
            self.quote_values.clear();
            self.big = false;
        } else {
            // SAFETY: no value held is a `Big`, the one variant with drop glue: forgetting
            // them frees nothing (a plain `clear` would visit each value to drop it).
            unsafe { self.quote_values.set_len(0) };
        }
    }

    pub fn truncate(&mut self, len: usize) {
        self.rows.truncate(len); // the arenas keep a little garbage until `clear`
    }

    /// Row `at` is absent (left to Python).
    pub fn is_absent(&self, at: usize) -> bool {
        matches!(self.rows.get(at), Some(Row::Absent))
    }

    /// A record the scan leaves to Python.
    pub fn absent(&mut self) {
        self.rows.push(Row::Absent);
    }

    /// A record read by the scan; `quote`: its values, pushed by `quote_value` just before.
    pub fn read(
        &mut self,
        key: Option<&[u8]>,
        seq: Option<i64>,
        time: Option<EventTime>,
        quote_from: Option<usize>,
    ) {
        let key = key.map(|k| {
            let at = self.text.len();
            self.text.extend_from_slice(k);
            (at as u32, k.len() as u32)
        });
        let quote = quote_from.map(|from| (from as u32, (self.quote_values.len() - from) as u32));
        self.rows.push(Row::Read {
            key,
            seq,
            time,
            quote,
        });
    }

    /// Where the next quote starts (`read`'s `quote_from`).
    pub fn quote_start(&self) -> usize {
        self.quote_values.len()
    }

    #[inline]
    pub fn quote_value(&mut self, value: QuoteValue) {
        self.big |= matches!(value, QuoteValue::Big(_));
        self.quote_values.push(value);
    }

    /// Drop the quote values pushed since `from` (the row turned out absent).
    pub fn quote_abandon(&mut self, from: usize) {
        self.quote_values.truncate(from);
    }
}

/// `stream_validator._native.StateRows`: a `ScanRows` Python holds between the verdict scan
/// (`VerdictPlan.scan(..., rows)`) and the tracker (`SymbolState.observe_scanned`).
#[pyclass(module = "stream_validator._native")]
pub struct StateRows {
    pub rows: ScanRows,
}

fn index(value: i64) -> Option<usize> {
    usize::try_from(value).ok()
}

#[pymethods]
impl StateRows {
    /// Field indices of the key, sequence and event-time fields (-1: none) and the quote's.
    #[new]
    fn new(key: usize, seq: i64, time: i64, quotes: Vec<usize>) -> Self {
        StateRows {
            rows: ScanRows::new(FeedFields {
                key,
                seq: index(seq),
                time: index(time),
                quotes,
            }),
        }
    }

    fn __len__(&self) -> usize {
        self.rows.len()
    }

    /// Forget every row (before a batch).
    fn clear(&mut self) {
        self.rows.clear();
    }

    /// Keep the first `len` rows (a chunk the scan did not finish).
    fn truncate(&mut self, len: usize) {
        self.rows.truncate(len);
    }

    /// `count` rows Python reads itself.
    fn extend_absent(&mut self, count: usize) {
        for _ in 0..count {
            self.rows.absent();
        }
    }
}

impl SymbolState {
    /// `SymbolState.observe_scanned` (py.rs): `observe` of the records at batch positions `indices` (ascending), their values read
    /// from `rows` (one row per record of the batch); `partitions[i]`: the partition of
    /// `indices[i]`. `distrust`: by position i, the parts not fed (1 seq, 2 time, 4 quote).
    /// `read(i)`: for a row the scan left absent, the (symbol, seq, event_time, quote)
    /// `SymbolStateTracker.read` gives (None: skipped). The (position, events) of the
    /// records that raised any, as `observe_columns`.
    pub(super) fn scanned<'py>(
        &mut self,
        py: Python<'py>,
        partitions: &Bound<'py, PyAny>,
        rows: &Bound<'py, StateRows>,
        indices: &Bound<'py, PyAny>,
        distrust: &Bound<'py, PyDict>,
        read: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        let partitions = partitions.downcast::<PySequence>()?;
        let indices = indices.downcast::<PySequence>()?;
        let n = indices.len()?;
        if partitions.len()? != n {
            return Err(PyValueError::new_err("columns of different lengths"));
        }
        let held = rows.borrow();
        let scan = &held.rows;
        let out = PyList::empty(py);
        let masks = !distrust.is_empty();
        let mut current: Option<(Bound<'py, PyAny>, u32)> = None;
        self.events.clear();
        for i in 0..n {
            let partition = partitions.get_item(i)?;
            let part = match &current {
                Some((held, id)) if held.is(&partition) || held.eq(&partition)? => *id,
                _ => {
                    let id = self.part_id(&partition)?;
                    current = Some((partition, id));
                    id
                }
            };
            let at: usize = indices.get_item(i)?.extract()?;
            let mask = if masks {
                match distrust.get_item(i)? {
                    Some(mask) => mask.extract::<u8>()?,
                    None => 0,
                }
            } else {
                0
            };
            self.observe_row(part, scan, at, mask, || read.call1((i,)))?;
            if !self.events.is_empty() {
                out.append((i, self.take_events(py)?))?;
            }
        }
        Ok(out)
    }

    /// Feed row `at` of `scan` to the tracker (partition id `part`); `mask`: the parts not
    /// fed (1 seq, 2 time, 4 quote); `read`: for an absent row, Python's reading of the
    /// record, a (symbol, seq, event_time, quote) tuple or None (skipped).
    pub(super) fn observe_row<'py>(
        &mut self,
        part: u32,
        scan: &ScanRows,
        at: usize,
        mask: u8,
        read: impl FnOnce() -> PyResult<Bound<'py, PyAny>>,
    ) -> PyResult<()> {
        let row = *scan.rows.get(at).ok_or_else(|| PyIndexError::new_err("no such row"))?;
        match row {
            Row::Absent => {
                let values = read()?;
                if !values.is_none() {
                    let values = values.downcast::<PyTuple>()?;
                    let quote = values.get_item(3)?;
                    self.observe_one(
                        part,
                        &values.get_item(0)?,
                        &values.get_item(1)?,
                        &values.get_item(2)?,
                        Some(&quote),
                    )?;
                }
            }
            Row::Read { key: None, .. } => {}
            Row::Read {
                key: Some((k, klen)),
                seq,
                time,
                quote,
            } => {
                let key = &scan.text[k as usize..(k + klen) as usize];
                let seq = seq.filter(|_| mask & 1 == 0).map(i128::from);
                let time = time.filter(|_| mask & 2 == 0);
                let quote = quote
                    .filter(|_| mask & 4 == 0)
                    .map(|(q, qlen)| &scan.quote_values[q as usize..(q + qlen) as usize]);
                self.core
                    .observe(part, key, seq, time, quote, &mut self.events)
                    .map_err(super::py::mixed)?;
            }
        }
        Ok(())
    }

    /// `SymbolState.observe_rows` (py.rs): every row of `rows` in order, on one partition,
    /// but those at `unfed` (ascending); `distrust`: (row, the parts not fed, as `scanned`)
    /// by ascending row; `read(at)`: Python's reading of an absent row's record. The events of
    /// the records that raised any, as one list of `SymbolEvent` tuples. Row `i` is the
    /// record at position `first + i`, and `unfed`, `distrust` and `read` speak of positions.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn feed_rows<'py>(
        &mut self,
        py: Python<'py>,
        partition: &Bound<'py, PyAny>,
        rows: &Bound<'py, StateRows>,
        unfed: Vec<usize>,
        distrust: Vec<(usize, u8)>,
        read: &Bound<'py, PyAny>,
        first: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        let unfed: Vec<usize> = unfed.into_iter().filter_map(|p| p.checked_sub(first)).collect();
        let distrust: Vec<(usize, u8)> =
            distrust.into_iter().filter_map(|(p, m)| Some((p.checked_sub(first)?, m))).collect();
        let part = self.part_id(partition)?;
        let held = rows.borrow();
        let scan = &held.rows;
        let out = PyList::empty(py);
        let n = scan.len();
        let (mut u, mut d, mut at) = (0, 0, 0);
        self.events.clear();
        while at < n {
            // Rows up to the next unfed or distrusted one are fed in full, without a look
            // at the lists (most batches have neither).
            while unfed.get(u).is_some_and(|&s| s < at) {
                u += 1;
            }
            while distrust.get(d).is_some_and(|&(s, _)| s < at) {
                d += 1;
            }
            let stop = unfed.get(u).map_or(n, |&s| s.min(n));
            let stop = distrust.get(d).map_or(stop, |&(s, _)| s.min(stop));
            for i in at..stop {
                self.observe_row(part, scan, i, 0, || read.call1((first + i,)))?;
                if !self.events.is_empty() {
                    out.append(self.take_events(py)?)?;
                }
            }
            if stop >= n {
                break;
            }
            at = stop + 1;
            if unfed.get(u) == Some(&stop) {
                continue;
            }
            let mask = distrust[d].1;
            self.observe_row(part, scan, stop, mask, || read.call1((first + stop,)))?;
            if !self.events.is_empty() {
                out.append(self.take_events(py)?)?;
            }
        }
        Ok(out)
    }
}
