//! The producer's delivery bookkeeping for a batch of outputs, without a Python frame or
//! object per record, and the produce loop that feeds it.
//!
//! Two modes, chosen by the adapter to match the client's `delivery.report.only.error`:
//!
//! * **reported** (the client reports every output): the client calls the counter itself
//!   with `(error, message)` per output; an acknowledged one (`error` None) adds one to
//!   `acked`, a failed one goes to Python: `on_failure(convert(error, message))`.
//! * **silent** (`delivery.report.only.error`: the client reports failures only, and builds
//!   no message object, no argument tuple and no Python call for an acknowledged output).
//!   Each output is produced with the counter's private `FailureSink` as its callback.
//!   confluent-kafka holds one reference to an output's callback from `produce()` until the
//!   output's fate is known (its per-message state, freed once the delivery report was
//!   served, whether it was passed on or not), so the sink's reference count, less the
//!   counter's own, is the number of outputs still undecided; the failures are counted as the
//!   client hands them to the sink. So `acked = produced - undecided - failed`, exact at
//!   any point outside a produce call. The sink is never given to Python code, so nothing
//!   else holds a reference to it. Every produce call checks that the client took exactly
//!   one reference: a client that did not (another version, another setting) raises
//!   `RuntimeError` at once instead of counting outputs as delivered that were not.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple, PyType};

/// What the client calls for a failed output in silent mode (never for an acknowledged
/// one): counts it and hands it to `on_failure(convert(error, message))`.
#[pyclass(module = "stream_validator._native")]
pub struct FailureSink {
    failed: u64,
    on_failure: PyObject,
    convert: PyObject,
}

#[pymethods]
impl FailureSink {
    fn __call__(
        slf: &Bound<'_, Self>,
        error: &Bound<'_, PyAny>,
        message: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let py = slf.py();
        let (convert, on_failure) = {
            let mut this = slf.borrow_mut();
            if error.is_none() {
                // Only with reports for every output, which silent mode never asks for: an
                // acknowledgement counted here would be counted twice (also by the refcount).
                return Err(PyRuntimeError::new_err(
                    "an acknowledgement was reported to a failures-only delivery callback",
                ));
            }
            this.failed += 1;
            (this.convert.clone_ref(py), this.on_failure.clone_ref(py))
        };
        // Python is called with no borrow held: the handler may read the counter.
        let failure = convert.call1(py, (error, message))?;
        on_failure.call1(py, (failure,))?;
        Ok(())
    }
}

/// Counts a batch's acknowledgements; hands each failure to `on_failure`.
#[pyclass(module = "stream_validator._native")]
pub struct AckCounter {
    /// Reported mode: the acknowledgements reported. Both modes: those `settle`d.
    acked: u64,
    /// Silent mode: the outputs produced with `sink` as their callback.
    produced: u64,
    sink: Option<Py<FailureSink>>,
    on_failure: PyObject,
    convert: PyObject,
}

impl AckCounter {
    /// Silent mode: the outputs still undecided (references the client holds to the sink).
    fn undecided(&self, py: Python<'_>) -> u64 {
        match &self.sink {
            // The counter's own reference is the one not held by the client.
            Some(sink) => u64::try_from(sink.get_refcnt(py) - 1).unwrap_or(0),
            None => 0,
        }
    }

    /// The sink's reference count (silent mode), read before the arguments holding it
    /// are built.
    fn references(&self, py: Python<'_>) -> Option<isize> {
        self.sink.as_ref().map(|sink| sink.get_refcnt(py))
    }

    /// Call `produce(*args, **kwargs)` (the callback among them, `before` the sink's
    /// references before they were built); in silent mode check that the client kept
    /// exactly one more reference to the sink, and count the output.
    fn produce_with<'py>(
        &mut self,
        produce: &Bound<'py, PyAny>,
        args: Bound<'py, PyTuple>,
        kwargs: Option<Bound<'py, PyDict>>,
        before: Option<isize>,
    ) -> PyResult<()> {
        let py = produce.py();
        let result = produce.call(args, kwargs.as_ref());
        drop(kwargs); // the arguments' references go before the count is read
        result?;
        if let (Some(sink), Some(before)) = (&self.sink, before) {
            if sink.get_refcnt(py) != before + 1 {
                return Err(PyRuntimeError::new_err(
                    "the Kafka client did not keep the delivery callback of a produced record: \
                     its acknowledgement cannot be counted (delivery.report.only.error needs \
                     confluent-kafka's per-message callback state)",
                ));
            }
            self.produced += 1;
        }
        Ok(())
    }
}

#[pymethods]
impl AckCounter {
    /// `on_failure(failure)` learns each failed output; `convert(error, message)` turns the
    /// client's report of it into that failure (the adapter's own type). `silent`: the
    /// client reports failures only (`delivery.report.only.error`).
    #[new]
    #[pyo3(signature = (on_failure, convert, silent = false))]
    fn new(
        py: Python<'_>,
        on_failure: PyObject,
        convert: PyObject,
        silent: bool,
    ) -> PyResult<Self> {
        let sink = if silent {
            Some(Py::new(
                py,
                FailureSink {
                    failed: 0,
                    on_failure: on_failure.clone_ref(py),
                    convert: convert.clone_ref(py),
                },
            )?)
        } else {
            None
        };
        Ok(AckCounter {
            acked: 0,
            produced: 0,
            sink,
            on_failure,
            convert,
        })
    }

    /// How many outputs were acknowledged so far.
    #[getter]
    fn acked(&self, py: Python<'_>) -> u64 {
        match &self.sink {
            None => self.acked,
            Some(sink) => {
                let failed = sink.borrow(py).failed;
                let decided = self.produced.saturating_sub(self.undecided(py));
                self.acked + decided.saturating_sub(failed)
            }
        }
    }

    /// Silent mode: the outputs produced whose fate the client has not served yet
    /// (reported mode: 0, the counter cannot tell).
    #[getter(undecided)]
    fn undecided_outputs(&self, py: Python<'_>) -> u64 {
        self.undecided(py)
    }

    /// The client's delivery callback in reported mode: `(error, message)`, `error` None
    /// when acknowledged.
    fn __call__(
        slf: &Bound<'_, Self>,
        error: &Bound<'_, PyAny>,
        message: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        if error.is_none() {
            slf.borrow_mut().acked += 1;
            return Ok(());
        }
        let py = slf.py();
        // Python is called with no borrow held: the handler may read `acked`.
        let (convert, on_failure) = {
            let this = slf.borrow();
            (this.convert.clone_ref(py), this.on_failure.clone_ref(py))
        };
        let failure = convert.call1(py, (error, message))?;
        on_failure.call1(py, (failure,))?;
        Ok(())
    }

    /// One output's outcome learned another way (a record produced on its own): None when
    /// it was acknowledged, else its failure.
    fn settle(slf: &Bound<'_, Self>, failure: &Bound<'_, PyAny>) -> PyResult<()> {
        if failure.is_none() {
            slf.borrow_mut().acked += 1;
            return Ok(());
        }
        let on_failure = slf.borrow().on_failure.clone_ref(slf.py());
        on_failure.call1(slf.py(), (failure,))?;
        Ok(())
    }

    /// `produce(*args, on_delivery=<this counter's callback>, **kwargs)`: one record
    /// produced on its own, counted like those of `produce_batch`. Exceptions propagate.
    #[pyo3(signature = (produce, args, kwargs=None))]
    fn produce_one<'py>(
        slf: &Bound<'py, Self>,
        produce: &Bound<'py, PyAny>,
        args: Bound<'py, PyTuple>,
        kwargs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<()> {
        let py = slf.py();
        let mut this = slf.borrow_mut();
        let before = this.references(py);
        let kwargs = match kwargs {
            Some(kwargs) => kwargs.copy()?,
            None => PyDict::new(py),
        };
        match &this.sink {
            Some(sink) => kwargs.set_item("on_delivery", sink.bind(py))?,
            None => kwargs.set_item("on_delivery", slf)?,
        }
        this.produce_with(produce, args, Some(kwargs), before)
    }

    /// Produce `records[start:]` in order with confluent-kafka's
    /// `produce(topic, value, key, partition, on_delivery, callback, timestamp, headers)`
    /// (positional: keyword arguments are parsed per call), each with this counter's
    /// callback; stop at the first record the client does not take (an exception of a
    /// type in `stop_on`) and return its index (`len(records)`: all taken). A record of type
    /// `cls` is read by index (`at`: topic, key, value, headers, timestamp_ms), any other
    /// by attribute. Partition -1: the partitioner picks; timestamp 0: librdkafka stamps
    /// the record; headers None when there are none.
    #[allow(clippy::too_many_arguments)]
    fn produce_batch<'py>(
        slf: &Bound<'py, Self>,
        produce: &Bound<'py, PyAny>,
        records: &Bound<'py, PyList>,
        start: usize,
        cls: &Bound<'py, PyType>,
        at: (usize, usize, usize, usize, usize),
        stop_on: &Bound<'py, PyAny>,
    ) -> PyResult<usize> {
        let py = slf.py();
        let callback = callback_of(slf)?;
        let none = py.None().into_bound(py);
        let any_partition = (-1i64).into_pyobject(py)?.into_any();
        let zero = 0i64.into_pyobject(py)?.into_any();
        let mut this = slf.borrow_mut();
        let count = records.len();
        for index in start..count {
            let record = records.get_item(index)?;
            let (topic, key, value, headers, stamp) = if record.get_type().is(cls) {
                let tuple = record.downcast::<PyTuple>()?;
                (
                    tuple.get_item(at.0)?,
                    tuple.get_item(at.1)?,
                    tuple.get_item(at.2)?,
                    tuple.get_item(at.3)?,
                    tuple.get_item(at.4)?,
                )
            } else {
                (
                    record.getattr("topic")?,
                    record.getattr("key")?,
                    record.getattr("value")?,
                    record.getattr("headers")?,
                    record.getattr("timestamp_ms")?,
                )
            };
            let headers = if headers.is_truthy()? {
                headers
            } else {
                none.clone()
            };
            let stamp = if stamp.is_truthy()? {
                stamp
            } else {
                zero.clone()
            };
            let before = this.references(py);
            let args = PyTuple::new(
                py,
                [
                    topic,
                    value,
                    key,
                    any_partition.clone(),
                    callback.clone(),
                    none.clone(),
                    stamp,
                    headers,
                ],
            )?;
            match this.produce_with(produce, args, None, before) {
                Ok(()) => {}
                Err(err) if err.is_instance(py, stop_on) => return Ok(index),
                Err(err) => return Err(err),
            }
        }
        Ok(count)
    }
}

/// The callback the client is given: the sink in silent mode, else the counter itself.
fn callback_of<'py>(slf: &Bound<'py, AckCounter>) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    Ok(match &slf.borrow().sink {
        Some(sink) => sink.clone_ref(py).into_bound(py).into_any(),
        None => slf.clone().into_any(),
    })
}
