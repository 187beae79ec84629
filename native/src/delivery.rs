//! The producer's delivery callback for a batch of outputs, without a Python frame per record.
//!
//! librdkafka (through confluent-kafka) calls the callback once per output with
//! `(error, message)`. For an acknowledged output (`error` is None) `AckCounter` only adds
//! one to `acked`; a failed output goes to Python: `on_failure(convert(error, message))`,
//! exactly as a Python callback would have handed it on. The committer reads `acked` once per
//! poll: a batch is complete when every output it sent was acknowledged.

use pyo3::prelude::*;

/// Counts a batch's acknowledgements; hands each failure to `on_failure`.
#[pyclass(module = "stream_validator._native")]
pub struct AckCounter {
    acked: u64,
    on_failure: PyObject,
    convert: PyObject,
}

#[pymethods]
impl AckCounter {
    /// `on_failure(failure)` learns each failed output; `convert(error, message)` turns the
    /// client's report of it into that failure (the adapter's own type).
    #[new]
    fn new(on_failure: PyObject, convert: PyObject) -> Self {
        AckCounter {
            acked: 0,
            on_failure,
            convert,
        }
    }

    /// How many outputs were acknowledged so far.
    #[getter]
    fn acked(&self) -> u64 {
        self.acked
    }

    /// The client's delivery callback: `(error, message)`, `error` None when acknowledged.
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
}
