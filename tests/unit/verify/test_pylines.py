"""``verify.pylines.read_lines`` (the Python twin ``rustcore.add_lines`` falls back on)
finds the lines ``_native.scan_lines`` finds: same spans, line numbers, blank lines and end
position, call after call through a block; its records give the same ``runs`` and ``join``."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, _native, load_contract
from stream_validator.verify.pylines import read_lines

TICK = Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml"
RUST = DataSchemaContractVerifier(load_contract(TICK), native=True)._rust
assert RUST is not None

#: Line pieces: records, blank lines of every ASCII space, CR runs, long lines, bytes
#: that are no space to Python (NUL, 0x1c, 0xa0).
PIECE = st.one_of(
    st.sampled_from(
        [b'{"a":1}', b"", b" ", b"\t\x0b\x0c", b"\r", b"\r\r", b"x", b"\x00", b"\x1c", b"\xa0"]
    ),
    st.binary(max_size=12),
    st.integers(20, 80).map(lambda n: b"y" * n),  # over the limit below
)


def spans(records: object, data: bytes) -> list[tuple[bytes, int]]:
    """Each record of a call's ``records`` as (bytes, line index)."""
    return [(records[i], records.line(i)) for i in range(len(records))]  # type: ignore[index, attr-defined]


@settings(max_examples=500, deadline=None)
@given(
    st.lists(PIECE, max_size=20),
    st.sampled_from([b"\n", b"\r\n", b"\r\r\n"]),
    st.booleans(),
    st.booleans(),
    st.integers(1, 7),
    st.integers(0, 30),
)
def test_python_reads_the_lines_the_core_reads(
    pieces: list[bytes], ending: bytes, ended: bool, cut_first: bool, take: int, limit: int
) -> None:
    """Over hypothesis blocks (blank lines, CRLF, over-long lines, an unended tail), calls
    of at most ``take`` records each: every call reads the same lines both ways."""
    body = ending.join(pieces) + (ending if ended and pieces else b"")
    for tail in (False, True):
        data = b"\n" + body  # a start past 0, as a block after a cut line has
        end = len(data)
        if not tail:
            end = data.rfind(b"\n") + 1  # whole lines only, as ``lines.spans`` hands them
        at = 1 if not tail else 0
        first = True
        assert RUST is not None
        while at < end:
            after, lines, blanks, records, _ = _native.scan_lines(
                RUST.plan, data, at, end, tail, cut_first and first, take, [], limit
            )
            want = read_lines(
                data, at, end, tail=tail, cut_first=cut_first and first, take=take, max_bytes=limit
            )
            assert (after, lines, blanks) == (want.after, want.lines, want.blanks)
            assert spans(records, data) == spans(want.records, data)
            n = len(records)
            for left_out in (
                [],
                list(range(0, n, 2)),
                list(range(1, n, 3)),
                [n - 1] if n else [],
                list(range(n)),
                [0, n + 5],  # past the end: ignored
            ):
                assert records.runs(left_out) == want.records.runs(left_out)
                assert records.join(left_out) == want.records.join(left_out)
            assert after > at
            at, first = after, False
