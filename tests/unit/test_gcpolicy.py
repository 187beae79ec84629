"""The collector while the service or ``validate`` runs: a high first threshold, start-up
frozen, both undone when they return."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import yaml

from stream_validator import offline
from stream_validator.cli import validate as validate_command
from stream_validator.cli.main import main
from stream_validator.gcpolicy import YOUNG_THRESHOLD, collector_tuned
from stream_validator.service import app

TICK = str(Path(__file__).resolve().parents[2] / "config" / "contracts" / "tick.yaml")


def test_tuned_inside_and_restored_after() -> None:
    """Inside: the high first threshold and start-up frozen; after: both as before."""
    before = gc.get_threshold()
    assert before[0] < YOUNG_THRESHOLD
    with collector_tuned():
        assert gc.get_threshold() == (YOUNG_THRESHOLD, *before[1:])
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_restored_when_the_body_raises() -> None:
    """An exception out of the loop still restores the collector."""
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), collector_tuned():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_service_loop_runs_with_the_collector_tuned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_service runs the loop inside ``collector_tuned`` (no broker needed: the loop is
    replaced by one that reports what it saw)."""
    seen: list[tuple[int, ...]] = []

    def run(self: object) -> int:
        seen.append(gc.get_threshold())
        return 0

    monkeypatch.setattr(app.StreamService, "run", run)
    monkeypatch.setattr(app, "_install_signal_handlers", lambda *_: None)
    monkeypatch.setattr(app, "configure_logging", lambda *_, **__: None)
    path = tmp_path / "c.yaml"
    route = {"name": "ticks", "contract": TICK, "clean_topic": "c", "dlq_topic": "d"}
    document = {
        "kafka": {"bootstrap_servers": "127.0.0.1:1"},
        "service": {"health_host": "127.0.0.1", "health_port": 0},
        "metrics": {"enabled": False},
        "routes": [dict(route, source_topics=["s"])],
    }
    path.write_text(yaml.safe_dump(document))
    before = gc.get_threshold()
    assert app.run_service(str(path), {}) == 0
    assert seen == [(YOUNG_THRESHOLD, *before[1:])]
    assert gc.get_threshold() == before


def test_validate_runs_with_the_collector_tuned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``stream-validator validate`` runs the file through the verifier inside
    ``collector_tuned`` and restores the collector when it returns."""
    seen: list[tuple[int, ...]] = []
    real = offline.validate_jsonl

    def spy(*args: object, **kwargs: object) -> offline.FileSummary:
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(validate_command, "validate_jsonl", spy)
    source = tmp_path / "in.jsonl"
    source.write_bytes(b'{"symbol": "AAPL"}\n')
    before = gc.get_threshold()
    assert main(["validate", "--contract", TICK, str(source), "--json"]) == 1
    assert seen == [(YOUNG_THRESHOLD, *before[1:])]
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
