//! The Python face of the native verdict: `VerdictPlan(spec)` and its `scan`.
//!
//! The boundary is narrow: a chunk of payloads in; out, the events of the records that
//! are not simply valid (in order), the null counts and flag-rule counts of the valid
//! ones, and the pattern values to learn. The GIL is released while the chunk is read; a
//! panic while judging one record makes that record a `validator_error` event.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::RwLock;

use pyo3::exceptions::PyValueError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use super::built::{ReportTypes, Tally};
use super::rules::{Cmp, Expr, Link, Num, Rule};
use super::record::judge_and_feed;
use super::{Field, Outcome, Patterns, Plan, Ty, Window, MAX_FIELDS};

/// Pattern verdicts remembered per plan (as `ValueCheck`'s memo bounds its own).
const PATTERN_MEMO: usize = 4096;

pub const VALID_UNKNOWN: u8 = 0;
pub const BAD: u8 = 1;
pub const DEFER: u8 = 2;
pub const PANIC: u8 = 4;
/// A bad record whose `QuarantinedRecord` the core built (`scan` with `types`).
pub const BUILT: u8 = 3;

/// FNV-1a: the memo's keys are short values from the payloads, hashed once per record;
/// SipHash's flood resistance buys nothing for a table bounded at `PATTERN_MEMO` entries.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Per field (by index), the pattern verdicts learnt from Python's `re`.
type Memo = Vec<HashMap<Vec<u8>, bool, BuildHasherDefault<Fnv>>>;

/// The memo, and per field the last value looked up with its verdict: a feed mostly repeats
/// one value (an exchange code), so most lookups compare a few bytes instead of hashing.
struct Memory<'m> {
    memo: &'m Memo,
    last: RefCell<Vec<Option<(Vec<u8>, bool)>>>,
}

impl<'m> Memory<'m> {
    fn new(memo: &'m Memo) -> Self {
        Memory { memo, last: RefCell::new(Vec::new()) }
    }
}

impl Patterns for Memory<'_> {
    /// Inlined into the scan: the common case (the field's last value again) is a few
    /// compares; the rest (`remember`) is a call.
    #[inline(always)]
    fn verdict(&self, field: usize, value: &[u8]) -> Option<bool> {
        if let Some(Some((seen, verdict))) = self.last.borrow().get(field) {
            // A short value compared byte by byte: no call to memcmp.
            let same = seen.len() == value.len()
                && if value.len() <= 8 { seen.iter().zip(value).all(|(a, b)| a == b) } else { seen.as_slice() == value };
            if same {
                return Some(*verdict);
            }
        }
        self.remember(field, value)
    }
}

impl Memory<'_> {
    /// The memo's verdict on a value not the field's last one, remembered as its last.
    #[inline(never)]
    fn remember(&self, field: usize, value: &[u8]) -> Option<bool> {
        let mut last = self.last.borrow_mut();
        let verdict = self.memo.get(field)?.get(value).copied()?;
        if last.len() <= field {
            last.resize(field + 1, None);
        }
        match &mut last[field] {
            Some((seen, known)) => {
                seen.clear();
                seen.extend_from_slice(value);
                *known = verdict;
            }
            slot => *slot = Some((value.to_vec(), verdict)),
        }
        Some(verdict)
    }
}

#[pyclass(frozen, module = "stream_validator._native")]
pub struct VerdictPlan {
    plan: Plan,
    memo: RwLock<Memo>,
}

pub(super) fn num(value: &Bound<'_, PyAny>) -> PyResult<Num> {
    if let Ok(i) = value.extract::<i64>() {
        return Ok(Num::I(i));
    }
    if value.is_instance_of::<pyo3::types::PyFloat>() {
        return Ok(Num::F(value.extract::<f64>()?));
    }
    if value.is_instance_of::<pyo3::types::PyInt>() {
        // Beyond i64: its nearest double (float() rounds half-even; past ~1e308 refused).
        let f: f64 = value.call_method0("__float__")?.extract()?;
        return Ok(Num::Big(f));
    }
    Err(PyValueError::new_err("a number the native plan cannot hold exactly"))
}

fn bound(value: &Bound<'_, PyAny>, repr: String) -> PyResult<Option<(Num, String)>> {
    if value.is_none() {
        return Ok(None);
    }
    Ok(Some((num(value)?, repr)))
}

fn index(value: i64) -> Option<usize> {
    usize::try_from(value).ok()
}

pub(super) fn expr(node: &Bound<'_, PyTuple>) -> PyResult<Expr> {
    let tag: String = node.get_item(0)?.extract()?;
    Ok(match tag.as_str() {
        "f" => Expr::Field(node.get_item(1)?.extract()?),
        "c" => Expr::Const(num(&node.get_item(1)?)?),
        "neg" => Expr::Neg(Box::new(expr(node.get_item(1)?.downcast()?)?)),
        "bin" => {
            let op: String = node.get_item(1)?.extract()?;
            let op = match op.as_str() {
                "+" | "-" | "*" | "/" => op.as_bytes()[0],
                _ => return Err(PyValueError::new_err("unknown operator")),
            };
            let l = expr(node.get_item(2)?.downcast()?)?;
            let r = expr(node.get_item(3)?.downcast()?)?;
            Expr::Bin(op, Box::new(l), Box::new(r))
        }
        _ => return Err(PyValueError::new_err("unknown expression node")),
    })
}

pub(super) fn field(spec: &Bound<'_, PyTuple>) -> PyResult<Field> {
    let item = |i: usize| spec.get_item(i);
    let ty = match item(2)?.extract::<u8>()? {
        0 => Ty::Float,
        1 => Ty::Int,
        2 => Ty::Str,
        3 => Ty::Bool,
        4 => Ty::Datetime,
        5 => Ty::Object,
        6 => Ty::Array,
        _ => return Err(PyValueError::new_err("unknown field type")),
    };
    let strings = |i: usize| -> PyResult<Option<Vec<Vec<u8>>>> {
        let v: Option<Vec<String>> = item(i)?.extract()?;
        Ok(v.map(|v| v.into_iter().map(String::into_bytes).collect()))
    };
    let size = |i: usize| -> PyResult<Option<usize>> { Ok(index(item(i)?.extract()?)) };
    Ok(Field {
        name: item(0)?.extract::<String>()?.into_bytes(),
        name_repr: item(1)?.extract()?,
        ty,
        null_slot: index(item(3)?.extract()?),
        lo: bound(&item(4)?, item(5)?.extract()?)?,
        hi: bound(&item(6)?, item(7)?.extract()?)?,
        label: item(8)?.extract()?,
        require_tz: item(9)?.extract()?,
        window: size(10)?,
        min_len: size(11)?,
        max_len: size(12)?,
        allowed_str: strings(13)?,
        allowed_int: item(14)?.extract()?,
        allowed_shown: item(15)?.extract()?,
        pattern: item(16)?.extract()?,
        flag: item(17)?.extract()?,
        nest: super::pyspec::node(&item(18)?)?,
    })
}

fn rule(spec: &Bound<'_, PyTuple>) -> PyResult<Rule> {
    let mut links = Vec::new();
    for link in spec.get_item(0)?.downcast::<PyList>()?.iter() {
        let link = link.downcast::<PyTuple>()?;
        let op: String = link.get_item(1)?.extract()?;
        links.push(Link {
            left: expr(link.get_item(0)?.downcast()?)?,
            op: Cmp::parse(&op).ok_or_else(|| PyValueError::new_err("unknown comparison"))?,
            right: expr(link.get_item(2)?.downcast()?)?,
            fields: link.get_item(3)?.extract()?,
        });
    }
    let deps: Vec<usize> = spec.get_item(1)?.extract()?;
    if deps.iter().any(|&d| d >= MAX_FIELDS) {
        return Err(PyValueError::new_err("too many fields"));
    }
    let cond = super::pyspec::cond_of(&spec.get_item(3)?)?;
    Ok(Rule::new(links, deps.iter().fold(0, |m, &d| m | 1 << d), spec.get_item(2)?.extract()?, cond))
}

/// Add one to `counts[i]` for each bit `i` set in `bits` (most records set none).
#[inline]
fn count_bits(counts: &mut [u64], mut bits: u64) {
    while bits != 0 {
        if let Some(count) = counts.get_mut(bits.trailing_zeros() as usize) {
            *count += 1;
        }
        bits &= bits - 1;
    }
}

/// Payload bytes borrowed from the caller's list, which keeps them alive during `scan`
/// (None: not bytes, or over the size limit; `outside` judges those).
pub(crate) struct Borrowed(pub(crate) Vec<Option<(*const u8, usize)>>);
// SAFETY: bytes objects are immutable and the list holding them outlives the scan.
unsafe impl Send for Borrowed {}

enum Event<'a> {
    Unknown(usize, Vec<&'a [u8]>),
    Bad(usize, Vec<super::Violation>, Vec<&'a [u8]>),
    Defer(usize),
    Panic(usize),
    /// Not one JSON object, or a tombstone or oversized payload: (kind code, message).
    Malformed(usize, u8, String),
}

/// A deferred payload that is not one JSON object (`malformed`): its event, else Defer.
fn deferred(pos: usize, buf: &[u8]) -> Event<'static> {
    // A panic here leaves the record to the Python rules.
    match std::panic::catch_unwind(|| super::malformed::judge(buf)) {
        Ok(Some((kind, message))) => Event::Malformed(pos, kind, message),
        _ => Event::Defer(pos),
    }
}

/// The event of a payload the scan does not read: a tombstone (None) or bytes over
/// `max_bytes` get their violation here (`verify.malformed`); anything else is deferred.
fn outside(pos: usize, payload: &Bound<'_, PyAny>, max_bytes: usize) -> Event<'static> {
    if payload.is_none() {
        return Event::Malformed(pos, super::malformed::NOT_A_MAPPING, "payload is null (a Kafka tombstone)".into());
    }
    match payload.downcast_exact::<PyBytes>() {
        Ok(b) if b.as_bytes().len() > max_bytes => oversized(pos, b.as_bytes().len(), max_bytes),
        _ => Event::Defer(pos),
    }
}

fn oversized(pos: usize, len: usize, max_bytes: usize) -> Event<'static> {
    Event::Malformed(
        pos,
        super::malformed::OVERSIZED,
        format!("payload is {len} bytes, above max_payload_bytes {max_bytes}"),
    )
}

/// Where a scan's payloads come from, for what the scan itself does not read (see
/// `outside`) and for the raw payload of a record whose `QuarantinedRecord` it builds.
pub(crate) enum Raws<'a, 'py> {
    /// The payloads list `scan` was given, its size limit, and where the chunk starts in it
    /// (`pos` counts from there).
    List(&'a Bound<'py, PyList>, usize, usize),
    /// The lines of a block (`offline::scan_lines`): the block, each record's span, the
    /// size limit (a line over it is the only record the scan does not read).
    Lines(&'a Bound<'py, PyBytes>, &'a [(usize, usize)], usize),
}

impl<'py> Raws<'_, 'py> {
    /// The event of the record at `pos`, which the scan did not read.
    fn outside(&self, pos: usize) -> PyResult<Event<'static>> {
        Ok(match *self {
            Raws::List(list, max_bytes, start) => outside(pos, &list.get_item(start + pos)?, max_bytes),
            Raws::Lines(_, spans, max_bytes) => match spans.get(pos) {
                Some(&(from, to)) if to - from > max_bytes => oversized(pos, to - from, max_bytes),
                _ => Event::Defer(pos),
            },
        })
    }

    /// The raw payload of the record at `pos` (a line: a copy of its bytes).
    fn raw(&self, py: Python<'py>, pos: usize) -> PyResult<Bound<'py, PyAny>> {
        match *self {
            Raws::List(list, _, start) => list.get_item(start + pos),
            Raws::Lines(data, spans, _) => {
                let &(from, to) = spans.get(pos).ok_or_else(|| PyValueError::new_err("no such line"))?;
                Ok(PyBytes::new(py, &data.as_bytes()[from..to]).into_any())
            }
        }
    }
}

/// The Python form of a malformed payload's event: `(pos, BAD, [(None, kind, message)], [])`.
fn malformed_event<'py>(py: Python<'py>, pos: usize, kind: u8, message: String) -> PyResult<Bound<'py, PyAny>> {
    let violations = [(None::<String>, kind, message)];
    Ok((pos, BAD, violations, PyList::empty(py)).into_pyobject(py)?.into_any())
}

/// The Python form of an event the core did not judge bad: unknown names, defer, panic.
fn plain_event<'py>(py: Python<'py>, event: Event<'_>) -> PyResult<Bound<'py, PyAny>> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Ok(match event {
        Event::Unknown(pos, names) => {
            let names: Vec<String> = names.into_iter().map(text).collect();
            (pos, VALID_UNKNOWN, names).into_pyobject(py)?.into_any()
        }
        Event::Panic(pos) => (pos, PANIC).into_pyobject(py)?.into_any(),
        // (never given a bad one; were it, the Python rules would judge the record again)
        Event::Defer(pos) | Event::Bad(pos, ..) | Event::Malformed(pos, ..) => {
            (pos, DEFER).into_pyobject(py)?.into_any()
        }
    })
}

/// The tally of the violations of the chunk's bad records (`scan` with `types`).
fn tally<'a>(events: &'a [Event<'_>]) -> Tally<'a> {
    let mut tally = Tally::default();
    for event in events {
        match event {
            Event::Bad(pos, violations, _) => tally.violations(*pos, violations),
            Event::Malformed(pos, kind, _) => tally.add(*pos, None, *kind),
            _ => {}
        }
    }
    tally
}

#[pymethods]
impl VerdictPlan {
    /// `spec`: (fields, forbid_unknown, rules), built by `verify.rustcore`.
    #[new]
    fn new(spec: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let fields: Vec<Field> = spec
            .get_item(0)?
            .downcast::<PyList>()?
            .iter()
            .map(|f| field(f.downcast()?))
            .collect::<PyResult<_>>()?;
        let rules: Vec<Rule> = spec
            .get_item(2)?
            .downcast::<PyList>()?
            .iter()
            .map(|r| rule(r.downcast()?))
            .collect::<PyResult<_>>()?;
        if fields.len() > MAX_FIELDS || rules.len() > MAX_FIELDS {
            return Err(PyValueError::new_err("too many fields or rules for a native plan"));
        }
        let forbid_unknown = spec.get_item(1)?.extract()?;
        let plan = Plan::new(fields, forbid_unknown, rules);
        if plan.slots > MAX_FIELDS {
            return Err(PyValueError::new_err("too many nullable fields for a native plan"));
        }
        Ok(VerdictPlan { plan, memo: RwLock::new(vec![HashMap::default(); MAX_FIELDS]) })
    }

    /// Remember pattern verdicts (field index, value, matches) for later scans.
    fn learn(&self, verdicts: Vec<(usize, String, bool)>) {
        let mut memo = self.memo.write().unwrap_or_else(|e| e.into_inner());
        for (field, value, matches) in verdicts {
            if let Some(known) = memo.get_mut(field) {
                if known.len() < PATTERN_MEMO {
                    known.insert(value.into_bytes(), matches);
                }
            }
        }
    }

    /// Judge a chunk: (events, null counts, flag-rule counts, flagged records, pending).
    /// `rows`: gets one row per payload, the state's fields of it (`statefeed`).
    /// `types` (a `ReportTypes`, with `base`, the batch position of the first payload):
    /// each bad record's event is `(pos, BUILT, its QuarantinedRecord)`, preceded by
    /// `(pos, VALID_UNKNOWN, names)` when it has undeclared keys, and the tuple gets a sixth
    /// item, the tally of those records' violations (`built::Tally`).
    /// `start`, `stop`: the chunk is `payloads[start:stop]` (the whole list by default;
    /// positions in the events count from `start`), so a caller need not slice its list.
    #[pyo3(signature = (payloads, windows, max_bytes, rows = None, types = None, base = 0, start = 0, stop = None))]
    #[allow(clippy::too_many_arguments)]
    fn scan<'py>(
        &self,
        py: Python<'py>,
        payloads: &Bound<'py, PyList>,
        windows: Vec<Window>,
        max_bytes: usize,
        rows: Option<&Bound<'py, crate::state::rows::StateRows>>,
        types: Option<&Bound<'py, ReportTypes>>,
        base: usize,
        start: usize,
        stop: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let mut held = rows.map(|r| r.borrow_mut());
        let sink = held.as_deref_mut().map(|r| &mut r.rows);
        let stop = stop.map_or(payloads.len(), |s| s.min(payloads.len()));
        let start = start.min(stop);
        let mut items = Vec::with_capacity(stop - start);
        for at in start..stop {
            // SAFETY: `at` < the list's length (read just above, with the GIL held and no
            // Python code run since); PyList_GetItem returns a borrowed reference the list
            // keeps alive, and every pointer kept is into an immutable bytes object it holds.
            let item = unsafe { ffi::PyList_GetItem(payloads.as_ptr(), at as ffi::Py_ssize_t) };
            if item.is_null() {
                return Err(PyErr::fetch(py));
            }
            // SAFETY: `item` is a live object (see above); an exact bytes object's buffer
            // and size are read as `PyBytes::as_bytes` reads them.
            items.push(unsafe {
                if ffi::Py_TYPE(item) == std::ptr::addr_of_mut!(ffi::PyBytes_Type) {
                    let len = ffi::PyBytes_Size(item) as usize;
                    (len <= max_bytes).then(|| (ffi::PyBytes_AsString(item) as *const u8, len))
                } else {
                    None
                }
            });
        }
        let built = types.map(|t| (t.get(), base));
        self.judge(py, Borrowed(items), &windows, sink, None, Some(Raws::List(payloads, max_bytes, start)), built)
    }
}

impl VerdictPlan {
    /// The name of declared field `i`.
    pub(crate) fn field_name(&self, i: usize) -> Option<&[u8]> {
        self.plan.fields.get(i).map(|f| f.name.as_slice())
    }

    /// Field `i` is declared a number or a bool: a value that passed its check is a number,
    /// a bool or null (or the field is missing).
    pub(crate) fn field_is_number(&self, i: usize) -> bool {
        self.plan.fields.get(i).is_some_and(|f| matches!(f.ty, super::Ty::Float | super::Ty::Int | super::Ty::Bool))
    }

    /// `scan`'s work on payloads already borrowed: the same tuple (events, nulls, flags,
    /// flagged, pending[, tally]). A None payload (not a bytes object, or over the size
    /// limit) is judged by `outside` when `raws` says where it comes from, else left to
    /// Python; `built` (types, base) as `scan`'s (it needs `raws`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn judge_borrowed<'py>(
        &self,
        py: Python<'py>,
        borrowed: Borrowed,
        windows: &[Window],
        sink: Option<&mut crate::state::rows::ScanRows>,
        direct: Option<&mut super::statefeed::Direct<'_>>,
        raws: Option<Raws<'_, 'py>>,
        built: Option<(&ReportTypes, usize)>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        self.judge(py, borrowed, windows, sink, direct, raws, built)
    }

    #[allow(clippy::too_many_arguments)]
    fn judge<'py>(
        &self,
        py: Python<'py>,
        borrowed: Borrowed,
        windows: &[Window],
        mut sink: Option<&mut crate::state::rows::ScanRows>,
        mut direct: Option<&mut super::statefeed::Direct<'_>>,
        raws: Option<Raws<'_, 'py>>,
        built: Option<(&ReportTypes, usize)>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let slots = self.plan.slots;
        let (events, nulls, flags, flagged, pending) = py.allow_threads(move || {
            let borrowed = borrowed;
            let memo = self.memo.read().unwrap_or_else(|e| e.into_inner());
            let memory = Memory::new(&memo);
            let mut nulls = vec![0u64; slots];
            let mut flags = vec![0u64; self.plan.rules.len()];
            let mut flagged = 0u64;
            let mut events = Vec::new();
            let mut pending: Vec<(usize, Vec<u8>)> = Vec::new();
            let mut unknown = Vec::new();
            let mut vals = Vec::with_capacity(self.plan.fields.len());
            // The chunk's payloads stay alive and unchanged until it is judged (`Borrowed`):
            // the datetime memo is forgotten once per chunk (`judge_alive`).
            super::isotime::forget();
            for (pos, item) in borrowed.0.iter().enumerate() {
                let Some((ptr, len)) = *item else {
                    if let Some(sink) = sink.as_deref_mut() {
                        if let Some(direct) = direct.as_deref_mut() {
                            direct.stop();
                        }
                        sink.absent();
                    }
                    events.push(Event::Defer(pos)); // `outside` judges it with the GIL
                    continue;
                };
                // SAFETY: see `Borrowed`.
                let buf: &[u8] = unsafe { std::slice::from_raw_parts(ptr, len) };
                let feeding = sink.is_some() && direct.as_deref().is_some_and(|d| d.on);
                let judged = judge_and_feed(
                    &self.plan,
                    buf,
                    windows,
                    &memory,
                    &mut unknown,
                    &mut vals,
                    sink.as_deref_mut(),
                    direct.as_deref_mut(),
                );
                match judged {
                    Err(()) => events.push(Event::Panic(pos)),
                    Ok(Outcome::Valid { nulls: n, flags: f }) => {
                        count_bits(&mut nulls, n);
                        if f != 0 {
                            flagged += 1;
                            count_bits(&mut flags, f);
                        }
                        if !unknown.is_empty() {
                            events.push(Event::Unknown(pos, std::mem::take(&mut unknown)));
                        }
                    }
                    Ok(Outcome::Bad(violations)) => {
                        events.push(Event::Bad(pos, violations, std::mem::take(&mut unknown)));
                    }
                    Ok(Outcome::Pending(field, value)) => {
                        if !pending.iter().any(|(f, v)| *f == field && *v == value) {
                            pending.push((field, value));
                        }
                        events.push(Event::Defer(pos));
                    }
                    Ok(Outcome::Defer) => {
                        let event = deferred(pos, buf);
                        if let (true, Some(direct), Some(sink)) = (feeding, direct.as_deref_mut(), sink.as_deref_mut()) {
                            direct.defer(matches!(event, Event::Malformed(..)), sink);
                        }
                        events.push(event);
                    }
                }
            }
            (events, nulls, flags, flagged, pending)
        });
        let (mut events, nulls, flags, flagged, pending) = (events, nulls, flags, flagged, pending);
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        if let Some(raws) = &raws {
            for event in &mut events {
                if let Event::Defer(pos) = *event {
                    if let m @ Event::Malformed(..) = raws.outside(pos)? {
                        *event = m;
                    }
                }
            }
        }
        let out = PyList::empty(py);
        let pending: Vec<(usize, String)> = pending.into_iter().map(|(f, v)| (f, text(&v))).collect();
        if let Some((types, base)) = built {
            let tally = tally(&events).into_py(py, types)?;
            let Some(raws) = raws else {
                return Err(PyValueError::new_err("report types without the payloads"));
            };
            for event in events {
                let (pos, violations) = match event {
                    Event::Bad(pos, violations, names) => {
                        if !names.is_empty() {
                            let names: Vec<String> = names.into_iter().map(text).collect();
                            out.append((pos, VALID_UNKNOWN, names))?;
                        }
                        (pos, violations.into_iter().map(|v| (v.field, v.kind as u8, v.message)).collect())
                    }
                    Event::Malformed(pos, kind, message) => (pos, vec![(None, kind, message)]),
                    other => {
                        out.append(plain_event(py, other)?)?;
                        continue;
                    }
                };
                let quarantined = types.quarantined(py, base + pos, &raws.raw(py, pos)?, violations)?;
                out.append((pos, BUILT, quarantined))?;
            }
            return (out, nulls, flags, flagged, pending, tally).into_pyobject(py);
        }
        for event in events {
            let item = match event {
                Event::Bad(pos, violations, names) => {
                    let violations: Vec<(Option<String>, u8, String)> = violations
                        .into_iter()
                        .map(|v| (v.field, v.kind as u8, v.message))
                        .collect();
                    let names: Vec<String> = names.into_iter().map(text).collect();
                    (pos, BAD, violations, names).into_pyobject(py)?.into_any()
                }
                Event::Malformed(pos, kind, message) => malformed_event(py, pos, kind, message)?,
                other => plain_event(py, other)?,
            };
            out.append(item)?;
        }
        (out, nulls, flags, flagged, pending).into_pyobject(py)
    }
}

/// False when the environment sets `SV_NATIVE=0`: the verifier then takes the Python path
/// (the switch lives here, outside the pure Python verifier, which reads no environment).
#[pyfunction]
pub fn native_enabled() -> bool {
    std::env::var("SV_NATIVE").map_or(true, |v| v.trim() != "0")
}
