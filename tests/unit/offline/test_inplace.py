"""The file path judged in place by the native core (``offline.inplace``) gives what the
line-by-line reference (``runner._judge_lines``) gives: summary, valid lines, DLQ entries."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, load_contract
from stream_validator.offline import lines as input_lines
from stream_validator.offline import runner
from stream_validator.offline.filestate import FileState
from tests.support.ticks import tick

REPO = Path(__file__).resolve().parents[3]
TICK = REPO / "config" / "contracts" / "tick.yaml"
LIMIT = 400

#: Lines of every kind the reader and the state treat apart (joined by the tests).
PIECES: tuple[bytes, ...] = (
    tick.json(1),
    tick.json(2),
    tick.json(3, symbol="SYM1"),  # a sequence regression for SYM1
    tick.json(9, symbol="SYM1"),  # a gap
    tick.json(4, size=-1),  # quarantined, still feeds the state
    json.dumps({**tick(5), "seq": -3}).encode(),  # quarantined, its seq distrusted
    tick.json(6, event_ts="yesterday"),  # its time distrusted
    tick.json(7, symbol=""),  # its key failed: feeds nothing
    tick.json(8, bid=None),  # a null (counted)
    tick.json(10, bid=100.02),  # a crossed book (rule)
    tick.json(11, venue="X"),  # an unknown field
    tick.json(12, exchange="xnas"),  # a pattern mismatch
    tick.json(13, event_ts="2026-11-30T14:30:00Z"),  # another datetime form
    b'{"symbol":"SYM\\u0031","exchange":"XNAS"}',  # an escape: judged by Python
    b"{",  # undecodable
    b"[1,2]",  # not an object
    b"\xff\xfe",  # not UTF-8
    b"null",
    b"",
    b"   ",
    b"\t\x0b\x0c",
    b"\r",
    b"\r\r",
    b" " * (LIMIT + 5),  # a long blank line
    b"[" + b"1," * LIMIT + b"1]",  # oversized
    b"{" + b" " * (LIMIT - 2) + b"}",  # exactly LIMIT bytes: judged
    tick.json(14) + b" " * (LIMIT + 1 - len(tick.json(14))),  # LIMIT + 1: oversized
)
ENDINGS = (b"\n", b"\r\n", b"\r\r\n", b"\n\r")


def run(data: bytes, *, reference: bool, block: int, batch_size: int) -> tuple[object, ...]:
    """validate_jsonl's outputs, in place or line by line."""
    verifier = DataSchemaContractVerifier(load_contract(TICK), max_payload_bytes=LIMIT)
    valid, dlq, progress = io.BytesIO(), io.BytesIO(), io.StringIO()
    patch = pytest.MonkeyPatch()
    with patch.context() as m:
        m.setattr(input_lines, "BLOCK_BYTES", block)
        if reference:
            m.setattr(runner, "in_place", lambda *_: False)
        summary = runner.validate_jsonl(
            verifier,
            io.BytesIO(data),
            batch_size=batch_size,
            valid_out=valid,
            dlq_out=dlq,
            progress=progress,
        )
    return summary.as_dict(), valid.getvalue(), dlq.getvalue().splitlines()


def same(data: bytes, *, block: int = 1 << 20, batch_size: int = 0) -> tuple[object, ...]:
    """Both paths' outputs, checked equal; the in-place ones."""
    got = run(data, reference=False, block=block, batch_size=batch_size)
    want = run(data, reference=True, block=block, batch_size=batch_size)
    assert got == want
    return got


def test_the_native_core_takes_the_tick_contract_in_place() -> None:
    """tick.yaml with its state goes in place (else the tests below compare a path with itself)."""
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    assert runner.in_place(verifier.start_batch(keep_records=False), FileState(verifier))


@pytest.mark.parametrize("ending", ENDINGS)
@pytest.mark.parametrize("block", [5, 64, 1 << 20])
def test_every_kind_of_line_reads_the_same(ending: bytes, block: int) -> None:
    """Each piece once, then all again, with this line ending and read block: same outputs."""
    data = ending.join(PIECES * 2) + ending
    summary, valid, dlq = same(data, block=block, batch_size=4)
    lines = data.count(b"\n") + (not data.endswith(b"\n"))
    assert isinstance(summary, dict) and summary["lines"] == lines
    assert valid and dlq


@pytest.mark.parametrize(
    "tail", [tick.json(20), b"{", b"   ", b"\r", tick.json(21) + b"\r", b"[" + b"1," * LIMIT]
)
@pytest.mark.parametrize("block", [3, 1 << 20])
def test_an_unended_last_line_reads_the_same(tail: bytes, block: int) -> None:
    """A last line without its newline (valid, bad, blank, a lone CR, oversized)."""
    data = tick.json(1) + b"\r\n" + tick.json(2) + b"\n" + tail
    summary, _, _ = same(data, block=block)
    assert isinstance(summary, dict) and summary["lines"] == 3


@pytest.mark.parametrize("block", [7, 100, 1 << 20])
def test_an_oversized_line_across_blocks_keeps_its_true_length(block: int) -> None:
    """A line cut across blocks: its DLQ entry has its true length, the lines around it
    are judged, its number is exact."""
    huge = b"[" + b"1," * (3 * LIMIT) + b"1]"
    data = tick.json(1) + b"\n" + huge + b"\n" + tick.json(2) + b"\r\n\n" + huge + b"\n"
    summary, valid, dlq = same(data, block=block, batch_size=1)
    entries = [json.loads(line) for line in dlq]
    assert [e["line"] for e in entries] == [2, 5]
    assert all(f"payload is {len(huge)} bytes" in e["violation_reason"] for e in entries)
    assert valid == tick.json(1) + b"\n" + tick.json(2) + b"\n"
    assert isinstance(summary, dict) and summary["blank_lines_skipped"] == 1


@pytest.mark.parametrize("data", [b"", b"\n", b"\n\n  \r\n", b"   ", b"\r"])
def test_inputs_with_no_record_read_the_same(data: bytes) -> None:
    """Empty or blank-only inputs: one empty batch, the blank lines counted."""
    summary, valid, dlq = same(data, batch_size=2)
    assert isinstance(summary, dict) and summary["batches"] == 1
    assert (valid, dlq) == (b"", [])


@pytest.mark.parametrize("batch_size", [0, 1, 2, 3, 1000])
def test_batches_end_on_the_same_lines(batch_size: int) -> None:
    """Batch edges fall between blank lines and bad lines the same way."""
    data = b"\n".join([b"", tick.json(1), b"", b"{", tick.json(2, bid=None), b" ", tick.json(3)])
    summary, _, _ = same(data + b"\n\n", batch_size=batch_size)
    assert isinstance(summary, dict) and summary["lines"] == 8


@settings(max_examples=150, deadline=None)
@given(
    picks=st.lists(
        st.tuples(st.sampled_from(PIECES), st.sampled_from(ENDINGS)), min_size=0, max_size=30
    ),
    unended=st.booleans(),
    block=st.sampled_from([1, 2, 9, 33, 257, 1 << 20]),
    batch_size=st.sampled_from([0, 1, 2, 5]),
)
def test_any_mix_of_lines_reads_the_same(
    picks: list[tuple[bytes, bytes]], unended: bool, block: int, batch_size: int
) -> None:
    """Any sequence of the pieces, line endings, read blocks and batch sizes."""
    data = b"".join(piece + ending for piece, ending in picks)
    if unended and picks:
        data = data[: -len(picks[-1][1])]
    same(data, block=block, batch_size=batch_size)


@pytest.mark.parametrize("failing", ["all", "every other"])
@pytest.mark.parametrize("block", [64, 1 << 20])
def test_a_chunk_whose_native_scan_raises_is_judged_by_the_python_rules(
    failing: str, block: int, caplog: pytest.LogCaptureFixture
) -> None:
    """``_native.scan_lines`` raising (a bug in the core): the chunk's lines are read and
    judged in Python, nothing lost, the outputs those of the reference; the error logged."""
    from stream_validator import _native

    calls = [0]
    scan = _native.scan_lines

    def broken(*args: object) -> object:
        calls[0] += 1
        if failing == "all" or calls[0] % 2:
            raise RuntimeError("a core bug")
        return scan(*args)

    data = b"\n".join(PIECES * 3) + b"\r\n" + tick.json(30)  # ends unended
    want = run(data, reference=True, block=block, batch_size=3)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_native, "scan_lines", broken)
        got = run(data, reference=False, block=block, batch_size=3)
    assert calls[0] > 1
    assert got == want
    assert "validator error in the native core" in caplog.text


@pytest.mark.parametrize("lines_chunk", [1, 2, 5])
def test_lines_judged_a_few_per_native_call_read_the_same(lines_chunk: int) -> None:
    """``add_lines`` takes at most ``LINES_CHUNK`` records a call: calls ending anywhere
    among blank, bad and cut lines give the reference's outputs."""
    from stream_validator.verify import rustcore

    data = b"\n".join(PIECES * 2) + b"\n"
    want = run(data, reference=True, block=64, batch_size=0)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(rustcore, "LINES_CHUNK", lines_chunk)
        got = run(data, reference=False, block=64, batch_size=0)
    assert got == want


def test_calls_stay_small_while_pattern_values_are_being_learnt() -> None:
    """A fresh command's first call takes LEARNING_CHUNK lines (its values are all first
    seen: the Python rules judge the records holding them), bigger calls follow once the
    values are learnt, and a value first seen mid-file makes the next call small again."""
    from stream_validator.offline import inplace
    from stream_validator.verify.rustcore import LEARNING_CHUNK, LINES_CHUNK, add_lines

    n = 3 * LINES_CHUNK
    data = b"".join(
        tick.json(i, exchange="XNAS" if i < 2 * LINES_CHUNK else "XNYS") + b"\n" for i in range(n)
    )
    calls: list[tuple[bool, int, bool]] = []

    def spy(*args: object, **kwargs: object) -> object:
        added = add_lines(*args, **kwargs)  # type: ignore[arg-type]
        calls.append((bool(kwargs["learning"]), len(added.records), added.learning))
        return added

    with pytest.MonkeyPatch.context() as m:
        m.setattr(inplace, "add_lines", spy)
        got = run(data, reference=False, block=1 << 20, batch_size=0)
    assert got == run(data, reference=True, block=1 << 20, batch_size=0)
    assert sum(records for _, records, _ in calls) == n
    assert calls[0] == (True, LEARNING_CHUNK, True)  # XNAS first seen
    assert calls[1] == (True, LEARNING_CHUNK, False)  # XNAS learnt
    assert calls[2][:2] == (False, LINES_CHUNK)
    met = [i for i, (_, _, learning) in enumerate(calls) if learning]
    assert len(met) == 2  # XNAS, then XNYS
    assert calls[met[1] + 1][:2] == (True, LEARNING_CHUNK)


def _spied(data: bytes) -> tuple[tuple[object, ...], list[tuple[int, int, int]]]:
    """The in-place outputs of ``data`` (checked equal to the reference's), and per
    ``add_lines`` call (its records, how many of them its scan fed the state, the events
    they raised)."""
    from stream_validator.offline import inplace
    from stream_validator.verify.rustcore import add_lines

    calls: list[tuple[int, int, int]] = []

    def spy(*args: object, **kwargs: object) -> object:
        assert kwargs["tracker"] is not None
        added = add_lines(*args, **kwargs)  # type: ignore[arg-type]
        calls.append((len(added.records), added.fed, len(added.events)))
        return added

    with pytest.MonkeyPatch.context() as m:
        m.setattr(inplace, "add_lines", spy)
        got = run(data, reference=False, block=1 << 20, batch_size=0)
    assert got == run(data, reference=True, block=1 << 20, batch_size=0)
    return got, calls


#: Enough lines for the pattern's value to be learnt (the first two calls are small).
WARM = [tick.json(i) for i in range(600)]
#: Lines the core settles itself, bad and malformed ones among them.
SETTLED = [
    tick.json(601, size=-1),  # its other fields feed the state
    json.dumps({**tick(602), "seq": -3}).encode(),  # its seq does not
    tick.json(603, event_ts="yesterday"),  # nor its time
    tick.json(604, price="1.5"),  # nor its quote
    tick.json(605, symbol=""),  # nothing
    b"{",  # undecodable: nothing
    b"[1,2]",  # not an object: nothing
    tick.json(606),
    tick.json(606),  # the same quote again, the same seq: a regression
]


def test_the_scan_feeds_the_state_as_it_judges_records_the_core_settles() -> None:
    """A call whose records the core settles (bad and malformed ones included) feeds them
    all to the tracker from its scan, events and all, no row kept: the outputs and the
    state's summary are the reference's."""
    data = b"\n".join(WARM + SETTLED * 20) + b"\n"
    (summary, _, _), calls = _spied(data)
    assert sum(n for n, _, _ in calls) == len(WARM) + 20 * len(SETTLED)
    last = calls[-1]
    assert last[0] > len(SETTLED) * 20 and last[1] == last[0] and last[2] > 0
    assert isinstance(summary, dict) and summary["symbol_state"]["events"]


def test_the_scan_stops_feeding_at_a_record_the_python_rules_judge() -> None:
    """A record the core leaves to the Python rules (an escape in its symbol) ends what the
    scan feeds: the records before it were fed from the scan, it and those after it from
    rows, in order (the summary is the reference's)."""
    escaped = b'{"symbol":"SYM\\u0031","exchange":"XNAS","seq":5000}'
    tail = [tick.json(i) for i in range(700, 760)]
    data = b"\n".join(WARM + SETTLED + [escaped] + tail) + b"\n"
    _, calls = _spied(data)
    records, fed, _ = calls[-1]
    assert records == len(WARM) - sum(n for n, _, _ in calls[:-1]) + len(SETTLED) + 1 + len(tail)
    assert fed == records - len(tail) - 1  # up to the escaped record


def test_what_the_scan_fed_before_it_raised_stays_fed_once() -> None:
    """``scan_lines`` raising after its scan fed the tracker (a bug past the scan): the
    lines are judged again in Python, and only those the scan did not feed are fed."""
    from stream_validator import _native

    scan = _native.scan_lines
    raised = [0]

    def broken(*args: object) -> object:
        out = scan(*args)
        if args[-2] is not None and raised[0] < 2:  # with the tracker: it fed some
            raised[0] += 1
            raise RuntimeError("a core bug after the scan")
        return out

    data = b"\n".join(WARM + SETTLED * 5) + b"\n"
    want = run(data, reference=True, block=1 << 20, batch_size=0)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_native, "scan_lines", broken)
        got = run(data, reference=False, block=1 << 20, batch_size=0)
    assert raised[0] == 2
    assert got == want
