"""``stream-validator shadow-report``: the shadows section of a service's /status, as
tables or JSON; a clear error and exit code when the service cannot be asked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from stream_validator.cli.main import main
from stream_validator.errors import ShadowReportExit
from stream_validator.service.http.health import HealthServer
from stream_validator.service.report.state import ServiceState
from tests.support.ticks import TICK_YAML

SHADOW = {
    "route": "ticks", "contract": "tick", "version": "2", "file": "/c/tick-v2.yaml",
    "live_contract": "tick", "live_version": "1", "same_as_live": False, "records": 30,
    "rescued": 10, "newly_quarantined": 20, "unchanged": 0,
    "violations": {"rescued": {"missing_field": {"ask_sz": 10}},
                   "newly_quarantined": {"missing_field": {"ask_volume": 20}}},
    "violations_left_out": 0,
    "null_ceiling_changes": {"newly_breached": {"bid": 2}, "no_longer_breached": {}},
    "examples": {"rescued": [{"topic": "md.ticks", "partition": 3, "offset": 1234}],
                 "newly_quarantined": []},
    "last_reload": None, "last_reload_error": None,
}  # fmt: skip


@pytest.fixture
def state() -> ServiceState:
    return ServiceState()


@pytest.fixture
def url(state: ServiceState) -> Iterator[str]:
    server = HealthServer(state, host="127.0.0.1", port=0, liveness_timeout_s=60).start()
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.close()


def test_the_report_prints_counts_kinds_fields_and_example_offsets(
    state: ServiceState, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table per section: the route's counts, then each kind and field and the examples."""
    state.shadows["ticks"] = dict(SHADOW)
    assert main(["shadow-report", "--url", url]) == ShadowReportExit.OK
    out = capsys.readouterr().out
    for text in ("ticks", "tick v2", "tick v1", "30", "missing_field", "ask_sz", "ask_volume",
                 "newly_breached", "md.ticks/3/1234"):  # fmt: skip
        assert text in out, text


def test_json_prints_the_section_as_the_service_gives_it(
    state: ServiceState, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json: the shadows section of /status, route by route."""
    state.shadows["ticks"] = dict(SHADOW)
    assert main(["shadow-report", "--url", url, "--json"]) == ShadowReportExit.OK
    assert json.loads(capsys.readouterr().out) == {"ticks": SHADOW}


def test_a_service_without_a_shadow_says_so(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """No route has a shadow_contract: exit 1 and a line saying so."""
    assert main(["shadow-report", "--url", url]) == ShadowReportExit.NO_SHADOW
    assert "no route of this service has a shadow_contract" in capsys.readouterr().err


def test_an_unreachable_service_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Nobody listens: exit 3 naming the URL."""
    code = main(["shadow-report", "--url", "http://127.0.0.1:1", "--timeout", "2"])
    assert code == ShadowReportExit.UNREACHABLE
    assert "service unreachable at http://127.0.0.1:1/status" in capsys.readouterr().err


@pytest.mark.parametrize("bad", ["ftp://x:1", "http://:80", "http://h:99999"])
def test_a_malformed_url_is_a_usage_error(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Not an http(s) URL with a host and a port: exit 2."""
    assert main(["shadow-report", "--url", bad]) == ShadowReportExit.USAGE
    assert "--url" in capsys.readouterr().err


def test_config_names_the_health_port(
    state: ServiceState, url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--config: the health host and port of the service config (0.0.0.0 via loopback)."""
    state.shadows["ticks"] = dict(SHADOW)
    port = int(url.rsplit(":", 1)[1])
    config = tmp_path / "service.yaml"
    config.write_text(yaml.safe_dump({
        "service": {"health_host": "0.0.0.0", "health_port": port},
        "routes": [{"name": "ticks", "source_topics": ["src"], "contract": str(TICK_YAML),
                    "clean_topic": "clean", "dlq_topic": "dlq"}],
    }))  # fmt: skip
    assert main(["shadow-report", "--config", str(config), "--json"]) == ShadowReportExit.OK
    assert json.loads(capsys.readouterr().out)["ticks"]["rescued"] == 10


def test_a_bad_config_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unreadable config file: exit 2."""
    assert main(["shadow-report", "--config", str(tmp_path / "none.yaml")]) == 2
    assert "cannot read config file" in capsys.readouterr().err
