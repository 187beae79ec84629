"""``stream-validator infer``: the draft, the report on stderr and every exit code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stream_validator.cli.main import main
from stream_validator.codec import decode_json, encode_json
from stream_validator.errors import InferExit, ReadStalledError
from stream_validator.kafka.fake import FakeBroker

RECORDS = [
    {"symbol": "AAPL", "price": 100.0 + i, "size": i, "bid": None if i == 3 else 99.0}
    for i in range(10)
]


def _write(path: Path, lines: list[bytes]) -> str:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path)


@pytest.fixture
def sample(tmp_path: Path) -> str:
    """A JSON-lines file of 10 records and 3 lines that are no record."""
    lines = [encode_json(r) for r in RECORDS] + [b"not json", b"[1]", b'{"a":1,"a":2}']
    return _write(tmp_path / "ticks.jsonl", lines)


def test_a_draft_goes_to_stdout_and_the_report_to_stderr(
    sample: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 0; stdout is the YAML, stderr counts records and the lines that are no record."""
    assert main(["infer", sample]) == InferExit.OK
    out, err = capsys.readouterr()
    assert "name: ticks" in out and "{name: bid, type: float, nullable: true" in out
    assert "infer: 10 records from" in err
    assert "1 not one JSON value (undecodable) (first: 11)" in err
    assert "1 JSON but not an object (first: 12)" in err
    assert "Traceback" not in err


def test_the_draft_written_passes_check_contract_and_validates_its_sample(
    sample: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-o FILE: check-contract accepts it; validate quarantines only the 3 non-records."""
    draft = str(tmp_path / "draft.yaml")
    assert main(["infer", sample, "-o", draft, "--margin", "0"]) == InferExit.OK
    assert main(["check-contract", draft]) == 0
    capsys.readouterr()
    main(["validate", "--contract", draft, sample, "--json"])
    summary = decode_json(capsys.readouterr().out)
    assert (summary["valid"], summary["quarantined"]) == (10, 3)
    assert summary["invalid_batch_details"][0]["null_breach_fields"] == {}


def test_an_empty_sample_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No record to draft from: exit 1 with a clear error, nothing on stdout."""
    empty = _write(tmp_path / "e.jsonl", [b"", b"oops"])
    assert main(["infer", empty]) == InferExit.NO_DRAFT
    out, err = capsys.readouterr()
    assert out == ""
    assert "no draft: the sample holds no record" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["infer"],
        ["infer", "x.jsonl", "--topic", "t", "--bootstrap", "h:1"],
        ["infer", "--topic", "t"],
        ["infer", "x.jsonl", "--bootstrap", "h:1"],
        ["infer", "x.jsonl", "--margin", "-1"],
        ["infer", "x.jsonl", "--margin", "abc"],
        ["infer", "--topic", "t", "--config", "c.yaml", "--bootstrap", "h:1"],
    ],
)
def test_bad_usage_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """No source, two sources, a topic without a broker, a bad margin: usage, exit 2."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == InferExit.USAGE
    assert "Traceback" not in capsys.readouterr().err


def test_a_missing_file_or_config_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unreadable file or config: exit 2, one error line."""
    assert main(["infer", str(tmp_path / "nope.jsonl")]) == InferExit.USAGE
    missing = str(tmp_path / "nope.yaml")
    assert main(["infer", "--topic", "t", "--config", missing]) == InferExit.USAGE
    assert capsys.readouterr().err.count("stream-validator infer: error:") == 2


def _fake_kafka(monkeypatch: pytest.MonkeyPatch, broker: FakeBroker) -> None:
    import stream_validator.kafka.clients as clients

    monkeypatch.setattr(clients, "create_admin", lambda *a, **k: broker.admin())
    monkeypatch.setattr(
        clients, "create_consumer", lambda *a, **k: broker.consumer(partition_eof=True)
    )


def test_a_topic_sample_is_read_through_the_adapter(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--topic reads the newest --sample records; tombstones are reported, not typed."""
    broker = FakeBroker()
    broker.create_topic("ticks", 2)
    for i, record in enumerate(RECORDS):
        broker.append("ticks", encode_json(record), partition=i % 2)
    broker.append("ticks", None, partition=0)
    _fake_kafka(monkeypatch, broker)
    code = main(["infer", "--bootstrap", "h:1", "--topic", "ticks", "--sample", "5"])
    out, err = capsys.readouterr()
    assert code == InferExit.OK
    assert "name: ticks" in out
    assert "infer: 4 records from 'topic ticks'; 1 lines are no record: 1 null value" in err
    assert "\x1b[" not in err  # no progress bar: stderr is not a terminal


def test_a_progress_bar_on_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With stderr a terminal the topic read shows rich's bar (records of the plan)."""
    broker = FakeBroker()
    broker.create_topic("ticks", 1)
    for record in RECORDS:
        broker.append("ticks", encode_json(record), partition=0)
    _fake_kafka(monkeypatch, broker)
    import sys

    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert main(["infer", "--bootstrap", "h:1", "--topic", "ticks"]) == InferExit.OK
    assert "10/10" in capsys.readouterr().err


def test_a_missing_topic_exits_2_and_a_stalled_broker_3(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No such topic: exit 2; the broker going quiet mid-read: exit 3."""
    broker = FakeBroker()
    _fake_kafka(monkeypatch, broker)
    assert main(["infer", "--bootstrap", "h:1", "--topic", "nope"]) == InferExit.USAGE
    assert "topic 'nope' does not exist" in capsys.readouterr().err

    def stalled(*_: Any) -> Any:
        raise ReadStalledError("no progress reading t for 1s")
        yield

    import stream_validator.cli.sampling as sampling

    monkeypatch.setattr(sampling, "topic_chunks", stalled)
    assert main(["infer", "--bootstrap", "h:1", "--topic", "t"]) == InferExit.KAFKA
    assert "no progress reading t" in capsys.readouterr().err
