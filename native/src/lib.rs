//! Native verifier core of stream-validator, imported as `stream_validator._native`.
//!
//! The Python rules (`stream_validator.verify`) stay the executable reference; this crate
//! must return the same verdicts, violations and state events (checked by the differential
//! tests in tests/unit/native/).

use pyo3::prelude::*;

mod avro;
mod delivery;
mod dlqline;
mod newlines;
mod offline;
mod records;
pub mod state;
mod verdict;

/// The version of the crate, so Python can tell which build it imported.
#[pyfunction]
fn build_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(build_version, m)?)?;
    m.add_class::<state::py::SymbolState>()?;
    m.add_class::<state::rows::StateRows>()?;
    m.add_class::<verdict::py::VerdictPlan>()?;
    m.add_class::<verdict::built::ReportTypes>()?;
    m.add_class::<avro::py::AvroPlan>()?;
    m.add_class::<delivery::AckCounter>()?;
    m.add_class::<delivery::FailureSink>()?;
    m.add_function(wrap_pyfunction!(records::clean_outputs, m)?)?;
    m.add_function(wrap_pyfunction!(records::partition_runs, m)?)?;
    m.add_function(wrap_pyfunction!(records::delivered_columns, m)?)?;
    m.add_function(wrap_pyfunction!(verdict::py::native_enabled, m)?)?;
    m.add_class::<offline::ScannedLines>()?;
    m.add_function(wrap_pyfunction!(offline::scan_lines, m)?)?;
    Ok(())
}
