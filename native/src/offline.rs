//! The file path (`stream-validator validate`): a block of a JSON-lines input judged in
//! place. `scan_lines` finds the line boundaries itself and hands each line to the verdict
//! scan as a span of the block (no bytes object per line); `ScannedLines` keeps the spans,
//! so the valid lines are written with one `join` per block and a bad line is copied out
//! only for its DLQ entry.
//!
//! Lines are read as `offline.lines.blocks` reads them (the Python reference): split at
//! `\n`, trailing `\r`s stripped (not from an unended last line), a line of ASCII
//! whitespace only (or empty) skipped as blank but counted, the block's first line cut to
//! `max_bytes + 1` bytes when the caller says it was cut (its true length is the caller's).

use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use crate::dlqline;
use crate::newlines::Newlines;
use crate::state::py::SymbolState;
use crate::state::rows::{FeedFields, StateRows};
use crate::verdict::statefeed::{Direct, Names};
use crate::verdict::built::ReportTypes;
use crate::verdict::py::{Borrowed, Raws, VerdictPlan};
use crate::verdict::Window;

/// `bytes.isspace()` or empty: what the reference skips as a blank line (a record's first
/// byte ends the search).
fn blank(line: &[u8]) -> bool {
    line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
}

/// The records (non-blank lines) of one `scan_lines` call: spans of its block.
#[pyclass(frozen, module = "stream_validator._native")]
pub struct ScannedLines {
    data: Py<PyBytes>,
    spans: Vec<(usize, usize)>,
    /// Per record, its line's index among the lines the call read (0-based); empty when
    /// the call read no blank line (record `i` is then line `i`).
    lines: Vec<usize>,
    /// The call's report types (`dlq_line` writes only with them).
    types: Option<Py<ReportTypes>>,
    /// The call's first line was cut short (its DLQ entry is the Python writer's).
    cut_first: bool,
}

impl ScannedLines {
    fn span(&self, at: usize) -> PyResult<(usize, usize)> {
        self.spans.get(at).copied().ok_or_else(|| PyIndexError::new_err("no such record"))
    }

    /// Record `at`'s line index (`at` a record).
    fn line_of(&self, at: usize) -> usize {
        if self.lines.is_empty() {
            at
        } else {
            self.lines[at]
        }
    }
}

#[pymethods]
impl ScannedLines {
    fn __len__(&self) -> usize {
        self.spans.len()
    }

    /// Record `at`'s bytes (a copy).
    fn __getitem__<'py>(&self, py: Python<'py>, at: usize) -> PyResult<Bound<'py, PyBytes>> {
        let (from, to) = self.span(at)?;
        Ok(PyBytes::new(py, &self.data.as_bytes(py)[from..to]))
    }

    /// The DLQ entries of the records `quarantined` (record position -> its
    /// `QuarantinedRecord`), in its order: each `dlq.jsonlines.dlq_line(first_line +
    /// line(at), q, self[at])` (`first_line`: the number of the call's first line), or None
    /// where that writer must write it: a cut line, bytes that are not UTF-8, a violation of
    /// a rule or flagged, a call without report types (`dlqline`).
    fn dlq_lines<'py>(
        &self,
        py: Python<'py>,
        first_line: u64,
        quarantined: &Bound<'py, PyDict>,
    ) -> PyResult<Bound<'py, PyList>> {
        let out = PyList::empty(py);
        let data = self.data.as_bytes(py);
        for (at, q) in quarantined.iter() {
            let at: usize = at.extract()?;
            let (from, to) = self.span(at)?;
            let line = self.line_of(at);
            let entry = match &self.types {
                Some(types) if !(self.cut_first && line == 0) => {
                    let number = first_line.saturating_add(line as u64);
                    dlqline::entry(types.get(), number, &q, &data[from..to])?
                }
                _ => None,
            };
            match entry {
                Some(entry) => out.append(PyBytes::new(py, &entry))?,
                None => out.append(py.None())?,
            }
        }
        Ok(out)
    }

    /// Record `at`'s line, as an index among the lines the call read.
    fn line(&self, at: usize) -> PyResult<usize> {
        self.span(at).map(|_| self.line_of(at))
    }

    /// The records but those at `left_out` (ascending) as slices of the block, each
    /// `(start, end)` a run of whole lines with their `\n`: adjacent lines merged, so the
    /// valid lines are written without a copy. None when a kept line is not followed by
    /// exactly one `\n` there (a CRLF line, the unended last line): `join` then.
    fn runs(&self, py: Python<'_>, left_out: Vec<usize>) -> Option<Vec<(usize, usize)>> {
        let data = self.data.as_bytes(py);
        let n = self.spans.len();
        let mut out: Vec<(usize, usize)> = Vec::with_capacity(left_out.len() + 1);
        // The kept records lie between the left-out ones: each stretch of them is walked
        // as a slice (a left-out record ends a run: the next kept line starts past it).
        let mut from_record = 0;
        for upto in left_out.into_iter().map(|skip| skip.min(n)).chain([n]) {
            for &(from, to) in self.spans.get(from_record..upto).unwrap_or_default() {
                if data.get(to) != Some(&b'\n') {
                    return None;
                }
                match out.last_mut() {
                    Some(run) if run.1 == from => run.1 = to + 1,
                    _ => out.push((from, to + 1)),
                }
            }
            from_record = from_record.max(upto + 1);
        }
        Some(out)
    }

    /// The records but those at `left_out` (ascending), each followed by `\n`.
    fn join<'py>(&self, py: Python<'py>, left_out: Vec<usize>) -> PyResult<Bound<'py, PyBytes>> {
        let data = self.data.as_bytes(py);
        let kept = || {
            let mut skip = left_out.iter().copied().peekable();
            self.spans.iter().enumerate().filter_map(move |(i, span)| {
                while skip.next_if(|&s| s < i).is_some() {}
                if skip.next_if_eq(&i).is_some() {
                    None
                } else {
                    Some(*span)
                }
            })
        };
        let size: usize = kept().map(|(from, to)| to - from + 1).sum();
        PyBytes::new_with(py, size, |out| {
            let mut at = 0;
            for (from, to) in kept() {
                let n = to - from;
                out[at..at + n].copy_from_slice(&data[from..to]);
                out[at + n] = b'\n';
                at += n + 1;
            }
            Ok(())
        })
    }
}

/// Judge the lines of `data[start:end]` (`end`: just past a `\n`, or the input's end with
/// `tail`, the unended last line), at most `take` records of them: (position after the
/// last line read, lines read, blank lines among them, the records as `ScannedLines`,
/// `VerdictPlan.scan`'s tuple for the records). `cut_first`: the first line was cut short
/// (kept to `max_bytes + 1` bytes). `rows`: one row per record, as `scan` fills it.
/// `types` and `base`: as `VerdictPlan.scan`'s (each bad record's `QuarantinedRecord`
/// built, its raw payload a copy of its line, and the tally), `base` the batch position of
/// the call's first record. A line over `max_bytes` gets its `oversized` violation here.
/// `tracker` (with `rows`; records on `partition`): the records are fed to it as they are
/// judged while they can be, and rows kept for the rest only (`statefeed::Direct`): its
/// `take_scanned` says how many were fed (the first ones) and the events they raised.
#[pyfunction]
#[pyo3(signature = (plan, data, start, end, tail, cut_first, take, windows, max_bytes, rows = None, types = None, base = 0, tracker = None, partition = None))]
#[allow(clippy::too_many_arguments)]
pub fn scan_lines<'py>(
    py: Python<'py>,
    plan: &Bound<'py, VerdictPlan>,
    data: &Bound<'py, PyBytes>,
    start: usize,
    end: usize,
    tail: bool,
    cut_first: bool,
    take: usize,
    windows: Vec<Window>,
    max_bytes: usize,
    rows: Option<&Bound<'py, StateRows>>,
    types: Option<&Bound<'py, ReportTypes>>,
    base: usize,
    tracker: Option<&Bound<'py, SymbolState>>,
    partition: Option<&Bound<'py, PyAny>>,
) -> PyResult<(usize, usize, usize, ScannedLines, Bound<'py, PyTuple>)> {
    let buf = data.as_bytes();
    if start > end || end > buf.len() {
        return Err(PyValueError::new_err("a span outside the block"));
    }
    let (mut at, mut lines, mut blanks) = (start, 0, 0);
    // Room for the lines a call usually reads (a record is rarely under 64 bytes), so the
    // lists are not grown (and copied) line by line.
    let room = take.min(end.saturating_sub(start) / 64 + 16);
    let mut spans = Vec::with_capacity(room);
    // The records' line indices, kept only from the first blank line on (before it,
    // record `i` is line `i`).
    let (mut numbers, mut numbered) = (Vec::new(), false);
    // Every line ends at the next `\n` (with `tail`, the one line ends at `end`).
    let mut newlines = Newlines::new(if tail { &[] } else { &buf[start..end] });
    while at < end && spans.len() < take {
        let (line_end, next) = match newlines.next() {
            Some(i) => (start + i, start + i + 1),
            None => (end, end),
        };
        let mut to = line_end;
        if cut_first && lines == 0 {
            to = to.min(at + max_bytes.saturating_add(1));
        }
        if !tail {
            while to > at && buf[to - 1] == b'\r' {
                to -= 1;
            }
        }
        let line = &buf[at..to];
        // (a record's first byte, `{`, settles it at once)
        if line.first() != Some(&b'{') && blank(line) {
            if !numbered {
                numbers.extend(0..spans.len());
                numbered = true;
            }
            blanks += 1;
        } else {
            if numbered {
                numbers.push(lines);
            }
            spans.push((at, to));
        }
        lines += 1;
        at = next;
    }
    let borrowed = Borrowed(
        spans
            .iter()
            .map(|&(from, to)| (to - from <= max_bytes).then(|| (buf[from..].as_ptr(), to - from)))
            .collect(),
    );
    let plan = plan.get();
    let mut held = rows.map(|r| r.borrow_mut());
    let fields: Option<FeedFields> = held.as_deref().map(|r| r.rows.fields.clone());
    let sink = held.as_deref_mut().map(|r| &mut r.rows);
    // `data` (held by the caller and by `ScannedLines`) keeps the borrowed bytes alive.
    let raws = Raws::Lines(data, &spans, max_bytes);
    let built = types.map(|t| (t.get(), base));
    let judged = match (tracker, fields) {
        (Some(tracker), Some(fields)) => {
            let name = |i: usize| -> PyResult<Vec<u8>> {
                plan.field_name(i).map(<[u8]>::to_vec).ok_or_else(|| PyValueError::new_err("no such field"))
            };
            let names = Names {
                key: name(fields.key)?,
                seq: fields.seq.map(name).transpose()?,
                time: fields.time.map(name).transpose()?,
                quotes: fields.quotes.iter().map(|&q| name(q)).collect::<PyResult<_>>()?,
                quotes_numeric: fields.quotes.iter().all(|&q| plan.field_is_number(q)),
            };
            let mut state = tracker.borrow_mut();
            let part = match partition {
                Some(partition) => state.part_id(partition)?,
                None => state.part_id(&0i32.into_pyobject(py)?.into_any())?,
            };
            let state = &mut *state;
            state.scanned_fed = 0;
            state.scanned_events.clear();
            let mut direct = Direct::new(&fields, &names, &mut state.core, &mut state.scanned_events, part);
            let judged = plan.judge_borrowed(py, borrowed, &windows, sink, Some(&mut direct), Some(raws), built);
            state.scanned_fed = direct.fed;
            judged?
        }
        _ => plan.judge_borrowed(py, borrowed, &windows, sink, None, Some(raws), built)?,
    };
    let types = types.map(|t| t.clone().unbind());
    let scanned = ScannedLines { data: data.clone().unbind(), spans, lines: numbers, types, cut_first };
    Ok((at, lines, blanks, scanned, judged))
}

#[cfg(test)]
mod tests {
    use super::blank;

    #[test]
    fn blank_is_python_isspace_or_empty() {
        for line in [&b""[..], b" ", b"\t\x0b\x0c\r", b"  \n"] {
            assert!(blank(line), "{line:?}");
        }
        for line in [&b"{}"[..], b" {}", b"\x00", b"\xa0", b"\x1c"] {
            assert!(!blank(line), "{line:?}");
        }
    }
}
