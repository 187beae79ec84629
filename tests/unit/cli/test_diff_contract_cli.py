"""``stream-validator diff-contract``: one test per exit code, --json and --sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_validator.cli.main import main
from stream_validator.codec import decode_json, encode_json
from stream_validator.errors import DiffExit

OLD = """\
name: tick
version: "1"
fields:
  - {name: price, type: float, max_value: 100.0}
  - {name: bid, type: float, nullable: true}
"""


def _file(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _new(tmp_path: Path, version: str, edit: tuple[str, str] = ("", "")) -> str:
    text = OLD.replace('version: "1"', f'version: "{version}"').replace(*edit)
    return _file(tmp_path, "new.yaml", text)


def test_exit_0_without_a_tightening_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A raised max_value and a bumped version: loosening only, exit 0."""
    new = _new(tmp_path, "2", ("max_value: 100.0", "max_value: 200.0"))
    assert main(["diff-contract", _file(tmp_path, "old.yaml", OLD), new]) == DiffExit.OK
    out = capsys.readouterr().out
    assert "loosening  price: max_value 100.0 -> 200.0 (loosened)" in out
    assert "verdict: no tightening change (exit 0)" in out


def test_exit_1_with_a_tightening_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """nullable -> required with a bumped version: exit 1, marked TIGHTENING."""
    new = _new(tmp_path, "2", ("nullable: true", "nullable: false"))
    assert main(["diff-contract", _file(tmp_path, "old.yaml", OLD), new]) == DiffExit.TIGHTENING
    assert "TIGHTENING bid: nullable: true -> false" in capsys.readouterr().out


def test_exit_3_when_the_content_changed_but_not_the_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Any change without a version bump: exit 3, even a tightening one."""
    new = _new(tmp_path, "1", ("nullable: true", "nullable: false"))
    old = _file(tmp_path, "old.yaml", OLD)
    assert main(["diff-contract", old, new]) == DiffExit.VERSION_NOT_BUMPED
    assert "its version (1) did not" in capsys.readouterr().out


def test_the_same_contract_reformatted_exits_0(tmp_path: Path) -> None:
    """Comments and layout are no change: exit 0 without a version bump."""
    same = _file(tmp_path, "same.yaml", "# a comment\n" + OLD.replace("{name: bid", "{ name: bid"))
    assert main(["diff-contract", _file(tmp_path, "old.yaml", OLD), same]) == DiffExit.OK


@pytest.mark.parametrize(
    "text", ["name: x\nfields: []\n", "fields: [", "name: t\nfields:\n  - {name: a, type: nope}\n"]
)
def test_exit_2_for_a_malformed_contract(
    tmp_path: Path, text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that does not load: exit 2 with the loader's problems, no traceback."""
    bad = _file(tmp_path, "bad.yaml", text)
    assert main(["diff-contract", _file(tmp_path, "old.yaml", OLD), bad]) == DiffExit.USAGE
    err = capsys.readouterr().err
    assert "stream-validator diff-contract: error:" in err and "Traceback" not in err


def test_exit_2_for_bad_usage(tmp_path: Path) -> None:
    """A missing argument, --config with a sample file, a sample count without a sample:
    usage, exit 2."""
    old = _file(tmp_path, "old.yaml", OLD)
    for argv in (
        ["diff-contract", old],
        ["diff-contract", old, old, "--sample", "s", "--config", "c"],
        ["diff-contract", old, old, "--sample-records", "5"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == DiffExit.USAGE


def test_json_with_a_sample_counts_flips_per_change(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json --sample: each change carries its sampled flips and example lines."""
    new = _new(tmp_path, "2", ("max_value: 100.0", "max_value: 50.0"))
    records = [{"price": p, "bid": None} for p in (10.0, 60.0, 70.0, 200.0)]
    sample = _file(tmp_path, "s.jsonl", "\n".join(encode_json(r).decode() for r in records))
    old = _file(tmp_path, "old.yaml", OLD)
    assert main(["diff-contract", old, new, "--json", "--sample", sample]) == DiffExit.TIGHTENING
    report = decode_json(capsys.readouterr().out)
    price = next(c for c in report["changes"] if c["subject"] == "price")
    assert (price["effect"], price["sample_flips"], price["sample_examples"]) == (
        "tightening",
        2,
        [2, 3],
    )
    assert report["sample"]["newly_quarantined"] == 2
    assert report["counts"] == {"tightening": 1, "loosening": 0, "neutral": 1}
    assert report["exit_code"] == 1


def test_a_topic_sample_through_the_adapter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--topic with --bootstrap: the flips are counted on the topic's newest records,
    examples named by sample position."""
    import stream_validator.kafka.clients as clients
    from stream_validator.kafka.fake import FakeBroker

    broker = FakeBroker()
    broker.create_topic("ticks", 1)
    for price in (10.0, 60.0, 20.0, 70.0):
        broker.append("ticks", encode_json({"price": price, "bid": 1.0}), partition=0)
    monkeypatch.setattr(clients, "create_admin", lambda *a, **k: broker.admin())
    monkeypatch.setattr(
        clients, "create_consumer", lambda *a, **k: broker.consumer(partition_eof=True)
    )
    new = _new(tmp_path, "2", ("max_value: 100.0", "max_value: 50.0"))
    old = _file(tmp_path, "old.yaml", OLD)
    argv = ["diff-contract", old, new, "--bootstrap", "h:1", "--topic", "ticks"]
    assert main([*argv, "--sample-records", "3"]) == DiffExit.TIGHTENING
    out = capsys.readouterr().out
    assert "[2 sampled record(s) newly quarantined, e.g. line(s) 1, 3]" in out  # 60, 20, 70
    assert "sample: 3 records, 2 newly quarantined" in out
