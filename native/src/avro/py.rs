//! The Python face of the Avro transcoder: `AvroPlan(program)` and its `transcode`.
//!
//! `program` is the writer schema as `avroplan.py` compiles it: nested tuples
//! `(tag, arg)`. `transcode(values, prefix, limit)` gives, per value, the JSON text of the
//! datum after its framing `prefix`, or None where fastavro must decide (and where).
//! The GIL is released while the batch is read; a panic on one value makes it None.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use super::{literal, transcode, Days, Node};

/// Schema nesting accepted at most (a writer schema is not recursive: `avroplan` refuses).
const MAX_DEPTH: usize = 64;

fn node(spec: &Bound<'_, PyAny>, depth: usize) -> PyResult<Node> {
    if depth > MAX_DEPTH {
        return Err(PyValueError::new_err("Avro schema nested too deep"));
    }
    let (tag, arg): (String, Bound<'_, PyAny>) = spec.extract()?;
    Ok(match tag.as_str() {
        "null" => Node::Null,
        "boolean" => Node::Bool,
        "long" => Node::Long,
        "float" => Node::Float,
        "double" => Node::Double,
        "string" => Node::Str,
        "ts-millis" => Node::TsMillis,
        "ts-micros" => Node::TsMicros,
        "enum" => Node::Enum(
            arg.extract::<Vec<String>>()?
                .iter()
                .map(|s| literal(s))
                .collect(),
        ),
        "record" => {
            let mut fields = Vec::new();
            for item in arg.try_iter()? {
                let (name, child): (String, Bound<'_, PyAny>) = item?.extract()?;
                let mut key = literal(&name);
                key.push(b':');
                fields.push((key, node(&child, depth + 1)?));
            }
            Node::Record(fields)
        }
        "array" => Node::Array(Box::new(node(&arg, depth + 1)?)),
        "union" => {
            let mut branches = Vec::new();
            for item in arg.try_iter()? {
                branches.push(node(&item?, depth + 1)?);
            }
            Node::Union(branches)
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "not an Avro plan node: {other}"
            )))
        }
    })
}

/// Value bytes borrowed from the caller's list, which keeps them alive during `transcode`.
struct Borrowed(Vec<Option<(*const u8, usize)>>);
// SAFETY: bytes objects are immutable and the list holding them outlives the call.
unsafe impl Send for Borrowed {}

#[pyclass(frozen, module = "stream_validator._native")]
pub struct AvroPlan {
    root: Node,
}

#[pymethods]
impl AvroPlan {
    #[new]
    fn new(program: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self {
            root: node(program, 0)?,
        })
    }

    /// Per value: its datum (after `prefix`) as JSON text of at most `limit` bytes, or None
    /// (not bytes, not longer than and starting with `prefix`, or not provably as fastavro
    /// reads it); and the positions of the Nones.
    fn transcode<'py>(
        &self,
        py: Python<'py>,
        values: &Bound<'py, PyList>,
        prefix: &[u8],
        limit: usize,
    ) -> PyResult<(Bound<'py, PyList>, Vec<usize>)> {
        let offset = prefix.len();
        let borrowed = Borrowed(
            values
                .iter()
                .map(|v| match v.downcast_exact::<PyBytes>() {
                    Ok(b) if b.as_bytes().len() > offset && b.as_bytes().starts_with(prefix) => {
                        Some((b.as_bytes().as_ptr(), b.as_bytes().len()))
                    }
                    _ => None,
                })
                .collect(),
        );
        let texts: Vec<Option<Vec<u8>>> = py.allow_threads(move || {
            let borrowed = borrowed;
            let mut days = Days::default();
            borrowed
                .0
                .iter()
                .map(|item| {
                    let (ptr, len) = (*item)?;
                    // SAFETY: see `Borrowed`.
                    let buf: &[u8] = unsafe { std::slice::from_raw_parts(ptr, len) };
                    catch_unwind(AssertUnwindSafe(|| {
                        transcode(&self.root, &buf[offset..], limit, &mut days)
                    }))
                    .ok()
                    .flatten()
                })
                .collect()
        });
        let out = PyList::empty(py);
        let mut declined = Vec::new();
        for (pos, text) in texts.into_iter().enumerate() {
            match text {
                Some(t) => out.append(PyBytes::new(py, &t))?,
                None => {
                    declined.push(pos);
                    out.append(py.None())?;
                }
            }
        }
        Ok((out, declined))
    }
}
