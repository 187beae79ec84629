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
