//! The service's per-record named tuples built natively: an `OutputRecord` per clean output.
//!
//! Built in Python column by column (`map` over the source records' field getters, `zip`,
//! `tuple.__new__`), an OutputRecord cost about 2,500 instructions: an argument tuple per
//! record, the named tuple's copy of it, a dozen C calls and an iterator step for each. Here
//! each is allocated once, at its final size, and filled in place: about 1,200 with its
//! deallocation. Same objects, same type: a named tuple's own `__new__` only does
//! `tuple.__new__` too. (The SourceRecords were tried the same way: 4,823 → 4,605 a record,
//! since their cost is the client's method calls, not the tuple; left in Python.)

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple, PyType};

/// The allocator of `cls`, a tuple subclass.
fn tuple_alloc(cls: &Bound<'_, PyType>) -> PyResult<ffi::allocfunc> {
    if !cls.is_subclass_of::<PyTuple>()? {
        return Err(PyTypeError::new_err("the record type is not a tuple"));
    }
    // SAFETY: every type has a tp_alloc (PyType_GetSlot reads any type's since 3.10).
    unsafe {
        let slot = ffi::PyType_GetSlot(cls.as_type_ptr(), ffi::Py_tp_alloc);
        if slot.is_null() {
            return Err(PyTypeError::new_err("the record type cannot allocate"));
        }
        Ok(std::mem::transmute::<*mut std::ffi::c_void, ffi::allocfunc>(slot))
    }
}

/// A new `cls` tuple of the items of `parts` in order, each taken with a new reference.
fn filled<'py>(
    py: Python<'py>,
    cls: &Bound<'py, PyType>,
    alloc: ffi::allocfunc,
    parts: &[&[*mut ffi::PyObject]],
) -> PyResult<Bound<'py, PyAny>> {
    let count: usize = parts.iter().map(|part| part.len()).sum();
    let size = ffi::Py_ssize_t::try_from(count).expect("a handful of fields");
    // SAFETY: `alloc` is the tp_alloc of the tuple subclass `cls`: a new tuple of `size`
    // NULL slots with one reference (ours), which PyTuple_SetItem requires; it steals a
    // reference to each item, taken first.
    unsafe {
        let obj = Bound::from_owned_ptr_or_err(py, alloc(cls.as_type_ptr(), size))?;
        for (index, &item) in parts.iter().copied().flatten().enumerate() {
            ffi::Py_INCREF(item);
            let index = ffi::Py_ssize_t::try_from(index).expect("a handful of fields");
            if ffi::PyTuple_SetItem(obj.as_ptr(), index, item) != 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(obj)
    }
}

/// `[cls(kind, topic, r[at[0]], r[at[1]], r[at[2]], r[at[3]], r, *tail) for r in records]`:
/// `cls` a tuple subclass of `7 + len(tail)` fields, `at` the source records' indices of
/// key, value, headers and timestamp. A record that is not a tuple long enough raises
/// TypeError or IndexError, before anything is returned.
#[pyfunction]
pub fn clean_outputs<'py>(
    py: Python<'py>,
    cls: &Bound<'py, PyType>,
    kind: &Bound<'py, PyAny>,
    topic: &Bound<'py, PyAny>,
    records: &Bound<'py, PyList>,
    at: (usize, usize, usize, usize),
    tail: &Bound<'py, PyTuple>,
) -> PyResult<Bound<'py, PyList>> {
    let alloc = tuple_alloc(cls)?;
    let rest: Vec<_> = tail.iter_borrowed().map(|item| item.as_ptr()).collect();
    let mut out: Vec<Bound<'py, PyAny>> = Vec::with_capacity(records.len());
    for record in records.iter() {
        let record = record.downcast_into::<PyTuple>()?;
        let items = [
            kind.as_ptr(),
            topic.as_ptr(),
            record.get_borrowed_item(at.0)?.as_ptr(),
            record.get_borrowed_item(at.1)?.as_ptr(),
            record.get_borrowed_item(at.2)?.as_ptr(),
            record.get_borrowed_item(at.3)?.as_ptr(),
            record.as_ptr(),
        ];
        out.push(filled(py, cls, alloc, &[&items, &rest])?);
    }
    PyList::new(py, out)
}

/// `item == other` as Python's `==` (identity first, as `PyObject_RichCompareBool`).
fn same(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<bool> {
    // SAFETY: both are live objects; a result of -1 is an exception, fetched.
    let result = unsafe { ffi::PyObject_RichCompareBool(a.as_ptr(), b.as_ptr(), ffi::Py_EQ) };
    if result < 0 {
        return Err(PyErr::fetch(a.py()));
    }
    Ok(result == 1)
}

/// `[start, end)` of each run of consecutive records of one partition, in order: a record
/// starts a run when its topic (`at.0`) or partition (`at.1`) differs (`!=`) from the
/// previous record's. Records are tuples at least that long (else TypeError or IndexError).
#[pyfunction]
pub fn partition_runs(
    records: &Bound<'_, PyList>,
    at: (usize, usize),
) -> PyResult<Vec<(usize, usize)>> {
    let mut runs = Vec::new();
    let mut previous: Option<(Bound<'_, PyAny>, Bound<'_, PyAny>)> = None;
    let mut start = 0;
    for (index, record) in records.iter().enumerate() {
        let record = record.downcast_into::<PyTuple>()?;
        let topic = record.get_item(at.0)?;
        let partition = record.get_item(at.1)?;
        if let Some((last_topic, last_partition)) = &previous {
            if !same(&partition, last_partition)? || !same(&topic, last_topic)? {
                runs.push((start, index));
                start = index;
            }
        }
        previous = Some((topic, partition));
    }
    if previous.is_some() {
        runs.push((start, records.len()));
    }
    Ok(runs)
}

/// What a delivered route batch's outputs say, in one pass: the indices of those whose kind
/// (`at.0`) is not `clean`, and for each clean one with a timestamp (`at.1`, milliseconds
/// or None) its latency `acked_at - ms / 1000.0` (Python's float arithmetic: an int
/// timestamp is converted to the nearest float first), in order.
#[pyfunction]
pub fn delivered_columns<'py>(
    outputs: &Bound<'py, PyList>,
    clean: &Bound<'py, PyAny>,
    at: (usize, usize),
    acked_at: f64,
) -> PyResult<(Vec<usize>, Vec<Bound<'py, PyAny>>)> {
    let py = outputs.py();
    let mut dlq = Vec::new();
    let mut latencies = Vec::with_capacity(outputs.len());
    let thousand = 1000.0f64.into_pyobject(py)?.into_any();
    let acked = acked_at.into_pyobject(py)?.into_any();
    for (index, output) in outputs.iter().enumerate() {
        let output = output.downcast_into::<PyTuple>()?;
        if !same(&output.get_item(at.0)?, clean)? {
            dlq.push(index);
            continue;
        }
        let stamp = output.get_item(at.1)?;
        if stamp.is_none() {
            continue;
        }
        let latency = match stamp.extract::<i64>() {
            // An i64 converts to the nearest f64 (ties to even), as int.__float__ does.
            Ok(ms) if stamp.is_exact_instance_of::<pyo3::types::PyInt>() => (acked_at
                - (ms as f64) / 1000.0)
                .into_pyobject(py)?
                .into_any(),
            _ => acked.sub(stamp.div(&thousand)?)?, // anything else: Python's own arithmetic
        };
        latencies.push(latency);
    }
    Ok((dlq, latencies))
}
