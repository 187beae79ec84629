//! The plan's parts beyond flat fields and conjunctions, read from the tuples
//! `verify.rustplan` builds: rule conditions (`expr::Cond`) and container specs
//! (`nested::Node`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

use super::expr::{Cond, Side};
use super::nested::{Node, Shape};
use super::py::{expr, field, num};
use super::rules::{Cmp, Link};
use super::MAX_FIELDS;

fn bad(what: &str) -> PyErr {
    PyValueError::new_err(format!("native plan: {what}"))
}

fn slot(value: i64) -> Option<usize> {
    usize::try_from(value).ok()
}

fn side(node: &Bound<'_, PyTuple>) -> PyResult<Side> {
    let tag: String = node.get_item(0)?.extract()?;
    Ok(match tag.as_str() {
        "f" => Side::Field(node.get_item(1)?.extract()?),
        "s" => Side::Const(node.get_item(1)?.extract::<String>()?.into_bytes()),
        _ => return Err(bad("unknown string operand")),
    })
}

fn terms(list: &Bound<'_, PyAny>) -> PyResult<Vec<Cond>> {
    list.downcast::<PyList>()?
        .iter()
        .map(|t| cond(t.downcast()?))
        .collect()
}

/// ("all"|"any", [cond]) | ("link", expr, op, expr, fields) | ("text", side, equal, side)
/// | ("innum", expr, fields, [number], negated) | ("intext", side, [str], negated)
fn cond(node: &Bound<'_, PyTuple>) -> PyResult<Cond> {
    let item = |i: usize| node.get_item(i);
    let tag: String = item(0)?.extract()?;
    Ok(match tag.as_str() {
        "all" => Cond::All(terms(&item(1)?)?),
        "any" => Cond::Any(terms(&item(1)?)?),
        "link" => {
            let op: String = item(2)?.extract()?;
            Cond::Link(Link {
                left: expr(item(1)?.downcast()?)?,
                op: Cmp::parse(&op).ok_or_else(|| bad("unknown comparison"))?,
                right: expr(item(3)?.downcast()?)?,
                fields: item(4)?.extract()?,
            })
        }
        "text" => Cond::Text {
            left: side(item(1)?.downcast()?)?,
            equal: item(2)?.extract()?,
            right: side(item(3)?.downcast()?)?,
        },
        "innum" => Cond::InNum {
            operand: expr(item(1)?.downcast()?)?,
            fields: item(2)?.extract()?,
            items: item(3)?
                .downcast::<PyList>()?
                .iter()
                .map(|n| num(&n))
                .collect::<PyResult<_>>()?,
            negated: item(4)?.extract()?,
        },
        "intext" => Cond::InText {
            operand: side(item(1)?.downcast()?)?,
            items: item(2)?
                .extract::<Vec<String>>()?
                .into_iter()
                .map(String::into_bytes)
                .collect(),
            negated: item(3)?.extract()?,
        },
        _ => return Err(bad("unknown condition")),
    })
}

/// A rule's condition, or None for a conjunction planned as links.
pub fn cond_of(value: &Bound<'_, PyAny>) -> PyResult<Option<Cond>> {
    if value.is_none() {
        return Ok(None);
    }
    cond(value.downcast()?).map(Some)
}

/// (null_slot, path_slot, "leaf", field) | (null_slot, path_slot, "obj", [(name, node)])
/// | (null_slot, path_slot, "arr", min, max, node); None for a scalar field.
pub fn node(value: &Bound<'_, PyAny>) -> PyResult<Option<Box<Node>>> {
    if value.is_none() {
        return Ok(None);
    }
    let spec = value.downcast::<PyTuple>()?;
    let item = |i: usize| spec.get_item(i);
    let tag: String = item(2)?.extract()?;
    let shape = match tag.as_str() {
        "leaf" => Shape::Leaf(Box::new(field(item(3)?.downcast()?)?)),
        "obj" => {
            let mut children = Vec::new();
            for child in item(3)?.downcast::<PyList>()?.iter() {
                let child = child.downcast::<PyTuple>()?;
                let name: String = child.get_item(0)?.extract()?;
                let inner = node(&child.get_item(1)?)?.ok_or_else(|| bad("an empty node"))?;
                children.push((name.into_bytes(), *inner));
            }
            if children.is_empty() || children.len() > MAX_FIELDS {
                return Err(bad("an object with no fields or too many"));
            }
            Shape::Object(children)
        }
        "arr" => Shape::Array {
            min: item(3)?.extract()?,
            max: item(4)?.extract()?,
            item: node(&item(5)?)?.ok_or_else(|| bad("an array without items"))?,
        },
        _ => return Err(bad("unknown container")),
    };
    Ok(Some(Box::new(Node {
        null_slot: slot(item(0)?.extract()?),
        path_slot: slot(item(1)?.extract()?),
        shape,
    })))
}
