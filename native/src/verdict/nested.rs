//! Object and array fields (`verify.nested`), natively, for the records they leave clean.
//!
//! A container field's value is walked as deep as its spec while it is read, with the
//! checks of a top-level field on every scalar inside. The walk settles only what is
//! plainly clean: every declared key of an object once (in any order), no other key, items
//! within `min_items`..`max_items`, every scalar without a violation, nulls only where
//! nullable (each nullable path counted once per record, as a bit). Anything else, a
//! violation or drift (an undeclared nested key, reported even when not forbidden), makes
//! the walk decline, and the Python rules judge the record and word what they find.
//!
//! The walk also fills the value slots of the object paths the rules read (`book.bid`,
//! never through an array): `vals[path_slot]`, as `recordchecks.PathView` reads them.

use super::json::{Decline, Read, Reader, Val, MAX_DEPTH};
use super::Field;

#[derive(Debug, Clone)]
pub enum Shape {
    /// A scalar, with the checks of a top-level field.
    Leaf(Box<Field>),
    /// The declared fields (name, node); at most 64 of them.
    Object(Vec<(Vec<u8>, Node)>),
    /// `min_items`..=`max_items` items, each matching `item`.
    Array {
        min: usize,
        max: usize,
        item: Box<Node>,
    },
}

#[derive(Debug, Clone)]
pub struct Node {
    /// The slot of its null count (its metric path's); None when not nullable.
    pub null_slot: Option<usize>,
    /// The value slot a rule reads it from; None when no rule does.
    pub path_slot: Option<usize>,
    pub shape: Shape,
}

impl Node {
    /// The highest null slot and value slot at or below this node (for the plan's sizes).
    pub fn visit_slots(&self, null_top: &mut usize, path_top: &mut usize) {
        if let Some(s) = self.null_slot {
            *null_top = (*null_top).max(s + 1);
        }
        if let Some(s) = self.path_slot {
            *path_top = (*path_top).max(s + 1);
        }
        match &self.shape {
            Shape::Leaf(_) => {}
            Shape::Object(children) => children
                .iter()
                .for_each(|(_, n)| n.visit_slots(null_top, path_top)),
            Shape::Array { item, .. } => item.visit_slots(null_top, path_top),
        }
    }
}

/// Read one value at `r` against `node`: Ok when it is clean, with `nulls` and the path
/// slots of `vals` filled; Decline for anything the Python rules must word.
pub fn walk<'a>(
    node: &Node,
    r: &mut Reader<'a>,
    depth: usize,
    vals: &mut [Option<Val<'a>>],
    nulls: &mut u64,
) -> Read<Val<'a>> {
    if r.peek() == Some(b'n') {
        let value = r.value(depth)?;
        match node.null_slot {
            Some(slot) => *nulls |= 1 << slot,
            None => return Err(Decline), // null in a field that is not nullable
        }
        return Ok(value);
    }
    let value = match &node.shape {
        Shape::Leaf(field) => {
            let value = r.value(depth)?;
            if !super::clean(field, value) {
                return Err(Decline);
            }
            value
        }
        Shape::Object(children) => object(children, r, depth + 1, vals, nulls)?,
        Shape::Array { min, max, item } => array(*min, *max, item, r, depth + 1, vals, nulls)?,
    };
    if let Some(slot) = node.path_slot {
        vals[slot] = Some(value);
    }
    Ok(value)
}

fn object<'a>(
    children: &[(Vec<u8>, Node)],
    r: &mut Reader<'a>,
    depth: usize,
    vals: &mut [Option<Val<'a>>],
    nulls: &mut u64,
) -> Read<Val<'a>> {
    if depth > MAX_DEPTH {
        return Err(Decline);
    }
    r.expect(b'{')?;
    r.ws();
    let mut seen = 0u64;
    if r.peek() == Some(b'}') {
        r.at += 1;
    } else {
        let mut hint = 0;
        loop {
            r.ws();
            // Keys usually come in the declared order: try the next one in place first.
            let i = if hint < children.len() && r.key_is(&children[hint].0) {
                hint
            } else {
                let key = r.string()?;
                // An undeclared key is drift (or a forbidden field): Python words it.
                children
                    .iter()
                    .position(|(name, _)| name.as_slice() == key)
                    .ok_or(Decline)?
            };
            if seen & (1 << i) != 0 {
                return Err(Decline); // a repeated key
            }
            seen |= 1 << i;
            hint = i + 1;
            r.ws();
            r.expect(b':')?;
            r.ws();
            walk(&children[i].1, r, depth, vals, nulls)?;
            r.ws();
            match r.peek() {
                Some(b',') => r.at += 1,
                Some(b'}') => {
                    r.at += 1;
                    break;
                }
                _ => return Err(Decline),
            }
        }
    }
    if seen.count_ones() as usize != children.len() {
        return Err(Decline); // a missing field
    }
    Ok(Val::Obj)
}

fn array<'a>(
    min: usize,
    max: usize,
    item: &Node,
    r: &mut Reader<'a>,
    depth: usize,
    vals: &mut [Option<Val<'a>>],
    nulls: &mut u64,
) -> Read<Val<'a>> {
    if depth > MAX_DEPTH {
        return Err(Decline);
    }
    r.expect(b'[')?;
    r.ws();
    let mut count = 0;
    if r.peek() == Some(b']') {
        r.at += 1;
    } else {
        loop {
            r.ws();
            if count >= max {
                return Err(Decline); // too many items
            }
            walk(item, r, depth, vals, nulls)?;
            count += 1;
            r.ws();
            match r.peek() {
                Some(b',') => r.at += 1,
                Some(b']') => {
                    r.at += 1;
                    break;
                }
                _ => return Err(Decline),
            }
        }
    }
    if count < min {
        return Err(Decline); // too few items
    }
    Ok(Val::Arr(count))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::{Field, Ty};

    fn leaf(name: &str, ty: Ty, null_slot: Option<usize>) -> (Vec<u8>, Node) {
        let mut f = Field::bare(name, ty);
        f.null_slot = null_slot;
        f.lo = Some((crate::verdict::rules::Num::I(0), "0".into()));
        f.label = String::new();
        (name.as_bytes().to_vec(), Node { null_slot, path_slot: None, shape: Shape::Leaf(Box::new(f)) })
    }

    fn levels() -> Node {
        let level = Node {
            null_slot: None,
            path_slot: None,
            shape: Shape::Object(vec![leaf("px", Ty::Float, None), leaf("sz", Ty::Int, Some(1))]),
        };
        Node { null_slot: None, path_slot: None, shape: Shape::Array { min: 1, max: 2, item: Box::new(level) } }
    }

    fn walked(text: &str) -> Result<u64, Decline> {
        let mut r = Reader { buf: text.as_bytes(), at: 0 };
        let mut nulls = 0;
        walk(&levels(), &mut r, 0, &mut [], &mut nulls)?;
        if r.at != text.len() {
            return Err(Decline);
        }
        Ok(nulls)
    }

    #[test]
    fn clean_levels_are_settled_with_their_null_slots() {
        assert_eq!(walked(r#"[{"px":1.5,"sz":null}]"#), Ok(0b10));
        assert_eq!(walked(r#"[ {"sz" : 2, "px" : 1} , {"px":0.0,"sz":0} ]"#), Ok(0));
    }

    #[test]
    fn anything_python_must_word_declines() {
        for text in [
            r#"[]"#,                                          // too few items
            r#"[{"px":1,"sz":1},{"px":1,"sz":1},{"px":1,"sz":1}]"#, // too many
            r#"[{"px":1}]"#,                                  // missing sz
            r#"[{"px":1,"sz":1,"x":1}]"#,                     // drift
            r#"[{"px":1,"sz":1,"px":2}]"#,                    // repeated key
            r#"[{"px":-1,"sz":1}]"#,                          // below min_value
            r#"[{"px":null,"sz":1}]"#,                        // null, not nullable
            r#"[{"px":1,"sz":1.5}]"#,                         // type mismatch
            r#"[{"p\u0078":1,"sz":1}]"#,                      // an escaped key
            r#"{"px":1,"sz":1}"#,                             // an object for an array
        ] {
            assert_eq!(walked(text), Err(Decline), "{text}");
        }
    }
}
