//! Per-symbol state natively: sequence gaps and regressions with window and resync,
//! event-time regressions, frozen quotes, the LRU bound with exact eviction counts and the
//! long-symbol digest, equal to the Python reference `stream_validator/verify/symbolstate.py`
//! (tests/unit/native/test_state_differential.py proves it).
//!
//! `tracker::SymbolState` is plain Rust, for a native scanner to feed record by record;
//! `py::SymbolState` is the Python class over it; `rows` holds the state's fields as the
//! verdict scan read them, and feeds the tracker from them.

mod keyhash;
pub mod py;
pub mod rows;
mod sequence;
pub mod tracker;
pub mod values;
