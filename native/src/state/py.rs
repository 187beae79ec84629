//! `stream_validator._native.SymbolState`: a thin PyO3 wrapper of `tracker::SymbolState`
//! with the Python tracker's batch and per-record methods (`observe_columns`, `observe`,
//! `drop`, `evictions`, ...). It returns the same `SymbolEvent` objects (their class and
//! kinds are handed in), and builds Python objects for events only.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PySequence, PyString, PyTuple};

use super::tracker::{MixedTimes, Spec, SymbolState as Core};
use super::values::{Event, EventKind, EventTime, QuoteValue};

/// Any window past this acts the same (sequence numbers are held within ±2^64).
const WINDOW_CAP: i128 = 1 << 66;

#[pyclass(module = "stream_validator._native", subclass)]
pub struct SymbolState {
    pub(crate) core: Core,
    /// Partition (any hashable) -> its id in the core.
    parts: Py<PyDict>,
    next_part: u32,
    event_type: PyObject,
    kinds: Vec<PyObject>,
    /// datetime(1970, 1, 1, tzinfo=UTC), the naive one, and timedelta(microseconds=1).
    epoch: PyObject,
    epoch_naive: PyObject,
    micro: PyObject,
    /// `datetime.datetime` and `datetime.timezone`: read exactly these fast.
    datetime_type: PyObject,
    timezone_type: PyObject,
    /// Fixed offsets seen (a `timezone` object -> its offset in microseconds), by identity.
    offsets: Vec<(PyObject, i64)>,
    pub(super) events: Vec<Event>,
    quote: Vec<QuoteValue>,
    /// What the last `offline::scan_lines` given this tracker fed straight from its scan:
    /// its first `scanned_fed` records, raising `scanned_events` (`take_scanned`).
    pub(crate) scanned_fed: usize,
    pub(crate) scanned_events: Vec<Event>,
}

fn clamp_u64(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    match value.extract::<u64>() {
        Err(e) if e.is_instance_of::<PyOverflowError>(value.py()) && value.gt(0)? => Ok(u64::MAX),
        other => other,
    }
}

fn optional<'py, T>(
    value: Bound<'py, PyAny>,
    read: impl Fn(&Bound<'py, PyAny>) -> PyResult<T>,
) -> PyResult<Option<T>> {
    if value.is_none() {
        Ok(None)
    } else {
        read(&value).map(Some)
    }
}

fn spec_from(spec: &Bound<'_, PyAny>) -> PyResult<Spec> {
    let get = |name: &str| spec.getattr(name);
    let window = get("sequence_window")?;
    let sequence_window = match window.extract::<i128>() {
        Ok(w) => w.min(WINDOW_CAP),
        Err(_) => WINDOW_CAP, // past i128 (it is >= 0): as wide as any
    };
    let frozen_max_updates = optional(get("frozen_max_updates")?, clamp_u64)?;
    let frozen_max_s = optional(get("frozen_max_s")?, |v| v.extract::<f64>())?;
    let max_s_text = match frozen_max_s {
        Some(_) => get("frozen_max_s")?
            .call_method1("__format__", ("g",))?
            .extract()?,
        None => String::new(),
    };
    let given_up_text = format!(
        " (over {} holes for the symbol or {} in all)",
        get("max_holes")?.str()?,
        get("max_holes_total")?.str()?
    );
    Ok(Spec {
        sequence_window,
        resync_after: optional(get("resync_after")?, clamp_u64)?,
        max_time_regression_s: get("max_time_regression_s")?.extract()?,
        frozen_on: frozen_max_updates.is_some() || frozen_max_s.is_some(),
        frozen_max_updates,
        frozen_max_s,
        max_symbols: clamp_u64(&get("max_symbols")?)?
            .try_into()
            .unwrap_or(usize::MAX),
        max_holes: clamp_u64(&get("max_holes")?)?
            .try_into()
            .unwrap_or(usize::MAX),
        max_holes_total: clamp_u64(&get("max_holes_total")?)?
            .try_into()
            .unwrap_or(usize::MAX),
        tolerance_text: get("max_time_regression_s")?
            .call_method1("__format__", ("g",))?
            .extract()?,
        max_s_text,
        given_up_text,
    })
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

pub(super) fn mixed(_: MixedTimes) -> PyErr {
    PyTypeError::new_err("event times of two kinds (epoch seconds and datetimes) in one tracker")
}

impl SymbolState {
    pub(crate) fn part_id(&mut self, partition: &Bound<'_, PyAny>) -> PyResult<u32> {
        let parts = self.parts.bind(partition.py());
        if let Some(id) = parts.get_item(partition)? {
            return id.extract();
        }
        let id = self.next_part;
        self.next_part = self
            .next_part
            .checked_add(1)
            .ok_or_else(|| PyOverflowError::new_err("too many partitions"))?;
        parts.set_item(partition, id)?;
        Ok(id)
    }

    /// A sequence number as the core takes it (None: none, or too wide to check).
    fn seq(value: &Bound<'_, PyAny>) -> PyResult<Option<i128>> {
        if value.is_none() {
            return Ok(None);
        }
        match value.extract::<i64>() {
            Ok(n) => Ok(Some(n as i128)),
            Err(_) if value.is_instance_of::<PyInt>() => Ok(value.extract::<i128>().ok()),
            Err(e) => Err(e),
        }
    }

    fn time(&mut self, value: &Bound<'_, PyAny>) -> PyResult<Option<EventTime>> {
        if value.is_none() {
            return Ok(None);
        }
        if let Ok(seconds) = value.downcast::<PyFloat>() {
            return Ok(Some(EventTime::Seconds(seconds.value())));
        }
        if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
            return Ok(Some(EventTime::Seconds(value.extract::<f64>()?)));
        }
        // A datetime: microseconds since the epoch (aware: UTC; naive: as it reads).
        let py = value.py();
        if value.get_type().is(self.datetime_type.bind(py)) {
            if let Some(micros) = self.datetime_micros(value)? {
                return Ok(Some(EventTime::Micros(micros)));
            }
        }
        let delta = match value.sub(self.epoch.bind(py)) {
            Ok(delta) => delta,
            Err(_) => value.sub(self.epoch_naive.bind(py)).map_err(|_| {
                PyTypeError::new_err(format!(
                    "an event time must be a number, a datetime or None, got {}",
                    value
                        .get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?,
        };
        Ok(Some(EventTime::Micros(
            delta.floor_div(self.micro.bind(py))?.extract()?,
        )))
    }

    /// A `datetime.datetime`'s microseconds since the epoch from its pickled state (10 bytes:
    /// year, month, day, hour, minute, second, microsecond) and its offset when it is a
    /// fixed `timezone`: one call instead of a subtraction and a division. None: another
    /// tzinfo (its offset may depend on the moment), left to the general path.
    fn datetime_micros(&mut self, value: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
        let py = value.py();
        let reduced = value.call_method0(pyo3::intern!(py, "__reduce__"))?;
        let args = reduced.downcast::<PyTuple>()?.get_item(1)?;
        let args = args.downcast::<PyTuple>()?;
        let state = args.get_item(0)?;
        let Ok(raw) = state.downcast::<pyo3::types::PyBytes>() else {
            return Ok(None);
        };
        let b = raw.as_bytes();
        if b.len() != 10 {
            return Ok(None);
        }
        let offset = if args.len() < 2 {
            0 // naive: as it reads
        } else {
            let tz = args.get_item(1)?;
            match self.offsets.iter().find(|(held, _)| held.bind(py).is(&tz)) {
                Some((_, offset)) => *offset,
                None if tz.get_type().is(self.timezone_type.bind(py)) => {
                    let delta = tz.call_method1("utcoffset", (py.None(),))?;
                    let offset: i64 = delta.floor_div(self.micro.bind(py))?.extract()?;
                    if self.offsets.len() >= 64 {
                        self.offsets.clear(); // a feed of many offsets: a bounded cache
                    }
                    self.offsets.push((tz.unbind(), offset));
                    offset
                }
                None => return Ok(None),
            }
        };
        let year = i64::from(b[0]) << 8 | i64::from(b[1]);
        let (month, day) = (i64::from(b[2] & 0x7f), i64::from(b[3]));
        let seconds = i64::from(b[4]) * 3600 + i64::from(b[5]) * 60 + i64::from(b[6]);
        let micros = i64::from(b[7]) << 16 | i64::from(b[8]) << 8 | i64::from(b[9]);
        let days = days_from_civil(year, month, day);
        Ok(Some(
            (days * 86_400 + seconds) * 1_000_000 + micros - offset,
        ))
    }

    fn quote_value(value: &Bound<'_, PyAny>) -> PyResult<QuoteValue> {
        if value.is_none() {
            return Ok(QuoteValue::Null);
        }
        if let Ok(number) = value.downcast::<PyFloat>() {
            return Ok(QuoteValue::Float(number.value()));
        }
        if !value.is_instance_of::<PyInt>() {
            let kind = value
                .get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default();
            return Err(PyTypeError::new_err(format!(
                "a quote value must be an int, a float or None, got {kind}"
            )));
        }
        if let Ok(n) = value.extract::<i64>() {
            return Ok(QuoteValue::Int(n));
        }
        // Past i64: the float it equals exactly, if any, else its digits.
        if let Ok(f) = value.extract::<f64>() {
            if value.eq(f)? {
                return Ok(QuoteValue::Float(f));
            }
        }
        Ok(QuoteValue::Big(Box::new(value.str()?.to_string())))
    }

    fn read_quote(&mut self, held: &Bound<'_, PyAny>) -> PyResult<bool> {
        self.quote.clear();
        if held.is_none() {
            return Ok(false);
        }
        if let Ok(tuple) = held.downcast::<PyTuple>() {
            for value in tuple.iter() {
                self.quote.push(Self::quote_value(&value)?);
            }
        } else {
            for value in held.downcast::<PySequence>()?.try_iter()? {
                self.quote.push(Self::quote_value(&value?)?);
            }
        }
        Ok(true)
    }

    pub(super) fn observe_one(
        &mut self,
        part: u32,
        symbol: &Bound<'_, PyAny>,
        seq: &Bound<'_, PyAny>,
        time: &Bound<'_, PyAny>,
        held: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let seq = Self::seq(seq)?;
        let time = self.time(time)?;
        let has_quote = match held {
            Some(held) => self.read_quote(held)?,
            None => false,
        };
        let quote = has_quote.then_some(self.quote.as_slice());
        let text = symbol
            .downcast::<PyString>()
            .map_err(|_| PyTypeError::new_err("a symbol must be a str"))?;
        match text.to_str() {
            Ok(text) => {
                self.core
                    .observe(part, text.as_bytes(), seq, time, quote, &mut self.events)
            }
            Err(_) => {
                // Lone surrogates: held as Python's "surrogatepass" UTF-8, as the digest reads them.
                let raw = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
                let bytes: &[u8] = raw.extract()?;
                self.core
                    .observe(part, bytes, seq, time, quote, &mut self.events)
            }
        }
        .map_err(mixed)
    }

    /// The events gathered, as a tuple of `SymbolEvent` (cleared).
    pub(super) fn take_events<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let events = std::mem::take(&mut self.events);
        let out = self.event_objects(py, &events);
        self.events = events; // its buffer kept
        self.events.clear();
        out
    }

    /// `SymbolEvent` objects of `events`, in order.
    fn event_objects<'py>(&self, py: Python<'py>, events: &[Event]) -> PyResult<Bound<'py, PyTuple>> {
        let mut out = Vec::with_capacity(events.len());
        for event in events {
            let symbol = match std::str::from_utf8(&event.symbol) {
                Ok(text) => PyString::new(py, text).into_any(),
                Err(_) => pyo3::types::PyBytes::new(py, &event.symbol)
                    .call_method1("decode", ("utf-8", "surrogatepass"))?,
            };
            let kind = self.kinds[event.kind as usize].bind(py);
            out.push(
                self.event_type
                    .bind(py)
                    .call1((kind, symbol, event.detail.as_str(), event.count))?,
            );
        }
        PyTuple::new(py, out)
    }
}

#[pymethods]
impl SymbolState {
    /// `spec`: a `SymbolStateSpec`; `event_type`: `SymbolEvent`; `kinds`: its
    /// `SymbolEventKind` members by code; `epoch`/`epoch_naive`: 1970-01-01 aware (UTC) and
    /// naive; `micro`: timedelta(microseconds=1).
    #[new]
    #[pyo3(signature = (spec, event_type, kinds, epoch, epoch_naive, micro))]
    fn new(
        py: Python<'_>,
        spec: &Bound<'_, PyAny>,
        event_type: PyObject,
        kinds: &Bound<'_, PyAny>,
        epoch: PyObject,
        epoch_naive: PyObject,
        micro: PyObject,
    ) -> PyResult<Self> {
        let kinds = EventKind::ALL
            .iter()
            .map(|kind| kinds.call1((kind.code(),)).map(Bound::unbind))
            .collect::<PyResult<Vec<_>>>()?;
        let datetime_type = epoch_naive.bind(py).get_type().into_any().unbind();
        let timezone_type = epoch
            .bind(py)
            .getattr("tzinfo")?
            .get_type()
            .into_any()
            .unbind();
        Ok(SymbolState {
            core: Core::new(spec_from(spec)?),
            parts: PyDict::new(py).unbind(),
            next_part: 0,
            event_type,
            kinds,
            epoch,
            epoch_naive,
            datetime_type,
            timezone_type,
            micro,
            offsets: Vec::new(),
            events: Vec::new(),
            quote: Vec::new(),
            scanned_fed: 0,
            scanned_events: Vec::new(),
        })
    }

    #[getter]
    fn evictions(&self) -> u64 {
        self.core.evictions
    }

    #[getter]
    fn holes(&self) -> usize {
        self.core.holes()
    }

    #[getter]
    fn holes_given_up(&self) -> u64 {
        self.core.holes_given_up
    }

    fn __len__(&self) -> usize {
        self.core.len()
    }

    /// Fold one record into its symbol's state; the events it raises (usually none).
    #[pyo3(signature = (partition, symbol, *, seq = None, event_time = None, quote = None))]
    fn observe<'py>(
        &mut self,
        py: Python<'py>,
        partition: &Bound<'py, PyAny>,
        symbol: &Bound<'py, PyAny>,
        seq: Option<Bound<'py, PyAny>>,
        event_time: Option<Bound<'py, PyAny>>,
        quote: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let part = self.part_id(partition)?;
        let none = py.None().into_bound(py);
        let seq = seq.unwrap_or_else(|| none.clone());
        let time = event_time.unwrap_or_else(|| none.clone());
        self.events.clear();
        self.observe_one(part, symbol, &seq, &time, quote.as_ref())?;
        self.take_events(py)
    }

    /// `observe` of each record, in order; the (position, events) of those that raised any.
    #[pyo3(signature = (partitions, keys, seqs, times, quotes = None))]
    fn observe_columns<'py>(
        &mut self,
        py: Python<'py>,
        partitions: &Bound<'py, PyAny>,
        keys: &Bound<'py, PyAny>,
        seqs: &Bound<'py, PyAny>,
        times: &Bound<'py, PyAny>,
        quotes: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let keys = keys.downcast::<PySequence>()?;
        let n = keys.len()?;
        let columns = [partitions, seqs, times]
            .into_iter()
            .chain(quotes.filter(|q| !q.is_none()));
        for column in columns {
            if column.len()? != n {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "columns of different lengths",
                ));
            }
        }
        let (partitions, seqs, times) = (
            partitions.downcast::<PySequence>()?,
            seqs.downcast::<PySequence>()?,
            times.downcast::<PySequence>()?,
        );
        let quotes = quotes
            .filter(|q| !q.is_none())
            .map(|q| q.downcast::<PySequence>())
            .transpose()?;
        let out = PyList::empty(py);
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
            let held = quotes.map(|q| q.get_item(i)).transpose()?;
            self.observe_one(
                part,
                &keys.get_item(i)?,
                &seqs.get_item(i)?,
                &times.get_item(i)?,
                held.as_ref(),
            )?;
            if !self.events.is_empty() {
                out.append((i, self.take_events(py)?))?;
            }
        }
        Ok(out)
    }

    /// `observe` of the records the verdict scan read into `rows` (see `state::rows`).
    fn observe_scanned<'py>(
        &mut self,
        py: Python<'py>,
        partitions: &Bound<'py, PyAny>,
        rows: &Bound<'py, super::rows::StateRows>,
        indices: &Bound<'py, PyAny>,
        distrust: &Bound<'py, PyDict>,
        read: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyList>> {
        self.scanned(py, partitions, rows, indices, distrust, read)
    }

    /// `observe` of every record the verdict scan read into `rows` but the `unfed` ones, on
    /// one partition: the file path's feed (see `rows::feed_rows`). `first`: the position
    /// of the record of row 0 (the scan fed those before it: `take_scanned`).
    #[pyo3(signature = (partition, rows, unfed, distrust, read, first = 0))]
    #[allow(clippy::too_many_arguments)]
    fn observe_rows<'py>(
        &mut self,
        py: Python<'py>,
        partition: &Bound<'py, PyAny>,
        rows: &Bound<'py, super::rows::StateRows>,
        unfed: Vec<usize>,
        distrust: Vec<(usize, u8)>,
        read: &Bound<'py, PyAny>,
        first: usize,
    ) -> PyResult<Bound<'py, PyList>> {
        self.feed_rows(py, partition, rows, unfed, distrust, read, first)
    }

    /// What the last `scan_lines` given this tracker fed from its scan: (how many of its
    /// first records, the events they raised as one tuple); forgotten once taken.
    fn take_scanned<'py>(&mut self, py: Python<'py>) -> PyResult<(usize, Bound<'py, PyTuple>)> {
        let fed = std::mem::take(&mut self.scanned_fed);
        let events = std::mem::take(&mut self.scanned_events);
        Ok((fed, self.event_objects(py, &events)?))
    }

    /// Forget a revoked partition's state; how many symbols were dropped.
    fn drop(&mut self, partition: &Bound<'_, PyAny>) -> PyResult<usize> {
        let parts = self.parts.bind(partition.py());
        let Some(id) = parts.get_item(partition)? else {
            return Ok(0);
        };
        let id: u32 = id.extract()?;
        parts.del_item(partition)?;
        Ok(self.core.drop_partition(id))
    }
}
