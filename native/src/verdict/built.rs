//! A bad record's report objects built natively: its `Violation`s and its
//! `QuarantinedRecord` (verify/report.py), the public types themselves.
//!
//! Both are frozen, slotted dataclasses whose `__init__` (`verify.quickinit`) does nothing
//! but set each field's slot through the slot's own descriptor. `ReportTypes` does the same
//! from here: a new instance from the class's own `tp_new` (as `cls.__new__(cls)`, the way
//! pickle and `copy` make one), then every field set through its member descriptor's
//! `tp_descr_set` (what `Violation.field.__set__(v, ...)` calls, minus the argument tuple
//! and the bound method). Same type, same fields, same frozen object: only the Python-level
//! call per object is gone. Every slot is set, so no field is ever left unbound.

use std::collections::HashMap;

use pyo3::exceptions::PyTypeError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple, PyType};

use super::Violation;

/// A class and the descriptors of its fields, in the order `make` takes their values.
struct Maker<const N: usize> {
    cls: Py<PyType>,
    new: ffi::newfunc,
    slots: [(Py<PyAny>, ffi::descrsetfunc); N],
    /// Each slot's getter (`tp_descr_get`), for `get`.
    gets: [ffi::descrgetfunc; N],
}

impl<const N: usize> Maker<N> {
    fn new(cls: &Bound<'_, PyType>, names: [&str; N]) -> PyResult<Self> {
        let py = cls.py();
        let member = py.import("types")?.getattr("MemberDescriptorType")?;
        // SAFETY: PyType_GetSlot takes any type object (static ones too, since 3.10).
        let new = unsafe { ffi::PyType_GetSlot(cls.as_type_ptr(), ffi::Py_tp_new) };
        if new.is_null() {
            return Err(PyTypeError::new_err("a report type that cannot be instantiated"));
        }
        // SAFETY: the Py_tp_new slot holds a `newfunc`.
        let new: ffi::newfunc = unsafe { std::mem::transmute(new) };
        let mut slots = Vec::with_capacity(N);
        let mut gets = Vec::with_capacity(N);
        for name in names {
            let descr = cls.getattr(name)?;
            if !descr.get_type().is(&member) {
                return Err(PyTypeError::new_err(format!("{name}: not a slot of the report type")));
            }
            // SAFETY: as above; a member descriptor's type always has a descr_set slot.
            let set = unsafe { ffi::PyType_GetSlot(ffi::Py_TYPE(descr.as_ptr()), ffi::Py_tp_descr_set) };
            if set.is_null() {
                return Err(PyTypeError::new_err(format!("{name}: a read-only slot")));
            }
            // SAFETY: as above, for its descr_get slot.
            let get = unsafe { ffi::PyType_GetSlot(ffi::Py_TYPE(descr.as_ptr()), ffi::Py_tp_descr_get) };
            if get.is_null() {
                return Err(PyTypeError::new_err(format!("{name}: an unreadable slot")));
            }
            // SAFETY: the Py_tp_descr_get slot holds a `descrgetfunc`.
            gets.push(unsafe { std::mem::transmute::<_, ffi::descrgetfunc>(get) });
            // SAFETY: the Py_tp_descr_set slot holds a `descrsetfunc`.
            slots.push((descr.unbind(), unsafe { std::mem::transmute::<_, ffi::descrsetfunc>(set) }));
        }
        let slots = slots.try_into().unwrap_or_else(|_| unreachable!("one slot per name"));
        let gets = gets.try_into().unwrap_or_else(|_| unreachable!("one getter per name"));
        Ok(Maker { cls: cls.clone().unbind(), new, slots, gets })
    }

    /// The field values of `obj`, an instance of exactly this class (else None), as
    /// `obj.<field>` reads them; an unset slot raises AttributeError.
    fn get<'py>(&self, obj: &Bound<'py, PyAny>) -> PyResult<Option<[Bound<'py, PyAny>; N]>> {
        let py = obj.py();
        let cls = self.cls.bind(py);
        if !obj.get_type().is(cls) {
            return Ok(None);
        }
        let mut out = Vec::with_capacity(N);
        for ((descr, _), get) in self.slots.iter().zip(self.gets) {
            // SAFETY: the member descriptor's own getter, on an instance of its class; a
            // new reference or NULL with an exception set.
            out.push(unsafe { Bound::from_owned_ptr_or_err(py, get(descr.as_ptr(), obj.as_ptr(), cls.as_ptr()))? });
        }
        Ok(Some(out.try_into().unwrap_or_else(|_| unreachable!("one value per slot"))))
    }

    /// A new instance with these field values.
    fn make<'py>(&self, py: Python<'py>, values: [&Bound<'py, PyAny>; N]) -> PyResult<Bound<'py, PyAny>> {
        let args = PyTuple::empty(py);
        // SAFETY: `new` is the class's own tp_new, called as type_call would call it; the
        // result is a new reference or NULL with an exception set.
        let obj = unsafe {
            Bound::from_owned_ptr_or_err(py, (self.new)(self.cls.bind(py).as_type_ptr(), args.as_ptr(), std::ptr::null_mut()))?
        };
        for ((descr, set), value) in self.slots.iter().zip(values) {
            // SAFETY: the member descriptor's own setter, on an instance of its class (it
            // checks that itself); it takes its own reference to `value`.
            if unsafe { set(descr.as_ptr(), obj.as_ptr(), value.as_ptr()) } < 0 {
                return Err(PyErr::fetch(py));
            }
        }
        Ok(obj)
    }
}

/// `VerdictPlan.scan`'s makers of report objects: `ReportTypes(Violation, QuarantinedRecord,
/// kinds)`, `kinds` the `ViolationKind`s by the core's codes (`verify.rustcore.KINDS`).
#[pyclass(frozen, module = "stream_validator._native")]
pub struct ReportTypes {
    violation: Maker<4>,
    quarantined: Maker<3>,
    kinds: Vec<Py<PyAny>>,
}

#[pymethods]
impl ReportTypes {
    #[new]
    fn new(violation: &Bound<'_, PyType>, quarantined: &Bound<'_, PyType>, kinds: Vec<Py<PyAny>>) -> PyResult<Self> {
        Ok(ReportTypes {
            violation: Maker::new(violation, ["field", "kind", "message", "rule"])?,
            quarantined: Maker::new(quarantined, ["index", "raw_payload", "violations"])?,
            kinds,
        })
    }
}

impl ReportTypes {
    /// (field, kind, message, rule) of `v`, exactly a `Violation` (else None).
    pub(crate) fn violation_fields<'py>(&self, v: &Bound<'py, PyAny>) -> PyResult<Option<[Bound<'py, PyAny>; 4]>> {
        self.violation.get(v)
    }

    /// (index, raw_payload, violations) of `q`, exactly a `QuarantinedRecord` (else None).
    pub(crate) fn quarantined_fields<'py>(&self, q: &Bound<'py, PyAny>) -> PyResult<Option<[Bound<'py, PyAny>; 3]>> {
        self.quarantined.get(q)
    }

    /// The type of the kinds (`ViolationKind`), None without kinds.
    pub(crate) fn kind_type<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.kinds.first().map_or_else(|| py.None().into_bound(py), |k| k.bind(py).get_type().into_any()))
    }

    fn kind<'py>(&self, py: Python<'py>, code: u8) -> PyResult<&Bound<'py, PyAny>> {
        self.kinds
            .get(usize::from(code))
            .map(|k| k.bind(py))
            .ok_or_else(|| PyTypeError::new_err("a violation kind the report types lack"))
    }

    /// `QuarantinedRecord(index, raw, [Violation(field, kind, message), ...])`.
    pub(crate) fn quarantined<'py>(
        &self,
        py: Python<'py>,
        index: usize,
        raw: &Bound<'py, PyAny>,
        violations: impl IntoIterator<Item = (Option<String>, u8, String)>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let none = py.None().into_bound(py);
        let list = PyList::empty(py);
        for (field, code, message) in violations {
            let field = field.map_or_else(|| none.clone(), |f| PyString::new(py, &f).into_any());
            let message = PyString::new(py, &message).into_any();
            let violation = self.violation.make(py, [&field, self.kind(py, code)?, &message, &none])?;
            // SAFETY: a complete object; untracking one that is not tracked is a no-op.
            unsafe { ffi::PyObject_GC_UnTrack(violation.as_ptr().cast()) };
            list.append(violation)?;
        }
        let index = index.into_pyobject(py)?.into_any();
        self.quarantined.make(py, [&index, raw, list.as_any()])
    }
}

/// The violations of a chunk's bad records counted per (field, kind code), in the order
/// first seen, each with the position of the record that first had it.
#[derive(Default)]
pub(crate) struct Tally<'a> {
    at: HashMap<(Option<&'a str>, u8), usize>,
    rows: Vec<(usize, Option<&'a str>, u8, u64)>,
}

impl<'a> Tally<'a> {
    pub(crate) fn add(&mut self, pos: usize, field: Option<&'a str>, code: u8) {
        let rows = &mut self.rows;
        let at = *self.at.entry((field, code)).or_insert_with(|| {
            rows.push((pos, field, code, 0));
            rows.len() - 1
        });
        rows[at].3 += 1;
    }

    pub(crate) fn violations(&mut self, pos: usize, violations: &'a [Violation]) {
        for v in violations {
            self.add(pos, v.field.as_deref(), v.kind as u8);
        }
    }

    /// `[(first position, (field, kind), count), ...]`.
    pub(crate) fn into_py<'py>(self, py: Python<'py>, types: &ReportTypes) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        for (pos, field, code, n) in self.rows {
            let key = (field, types.kind(py, code)?).into_pyobject(py)?;
            out.append((pos, key, n))?;
        }
        Ok(out)
    }
}
