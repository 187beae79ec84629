"""Numeric flags within their bounds: every timeout in (0, a day], real ports, partition
counts librdkafka accepts; resume names a bad URL."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_validator.cli.main import main
from stream_validator.errors import ResumeExit

COMMANDS = {
    "resume": ["resume", "--route", "ticks", "--url", "http://127.0.0.1:1", "--timeout"],
    "replay": ["replay", "--route", "ticks", "--dlq-topic", "d", "--dry-run", "--timeout"],
    "dev-kafka-start": ["dev-kafka", "start", "--state-dir", "{tmp}", "--timeout"],
    "dev-kafka-stop": ["dev-kafka", "stop", "--state-dir", "{tmp}", "--timeout"],
    "simulate": ["simulate", "--topic", "t", "--count", "1", "--connect-timeout"],
}


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "1e300", "soon"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_timeout_outside_a_day_is_a_usage_error(
    command: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Refused before anything runs (inf overflowed the clock in resume, -1 made replay wait
    forever for an unreachable broker, NaN made dev-kafka start wait 'nans')."""
    with pytest.raises(SystemExit) as info:
        main([arg.format(tmp=tmp_path) for arg in COMMANDS[command]] + [value])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "timeout" in err
    assert f"got {value}" in err or f"not a number: {value!r}" in err


@pytest.mark.parametrize("url", ["http://[::1", "not a url", "http://127.0.0.1:port"])
def test_resume_names_a_url_that_is_not_one(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A malformed --url is a usage error naming it, not a ValueError traceback."""
    assert main(["resume", "--route", "ticks", "--url", url]) == ResumeExit.USAGE
    assert f"--url {url!r}" in capsys.readouterr().err


@pytest.mark.parametrize(
    "url",
    ["localhost:8080", "127.0.0.1:8080", "ftp://127.0.0.1/", "file:///etc/hostname", "http://"],
)
def test_resume_url_without_an_http_scheme_or_host_is_a_usage_error(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """--url needs http:// or https:// and a host: exit 2 naming it, not "unreachable"."""
    assert main(["resume", "--route", "ticks", "--url", url]) == ResumeExit.USAGE
    err = capsys.readouterr().err
    assert f"--url {url!r}" in err
    assert "unreachable" not in err


@pytest.mark.parametrize("flag", ["--port", "--controller-port"])
@pytest.mark.parametrize("value", ["0", "-5", "70000", "http"])
def test_dev_kafka_takes_only_real_ports(
    flag: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A port outside 1-65535 is a usage error, before a broker is formatted and started
    (it used to fail 20 s later with the broker's log)."""
    with pytest.raises(SystemExit) as info:
        main(["dev-kafka", "start", "--state-dir", str(tmp_path / "k"), flag, value])
    assert info.value.code == 2
    assert flag in capsys.readouterr().err
    assert not (tmp_path / "k").exists()


def test_create_topics_takes_only_partition_counts_librdkafka_accepts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--partitions 1000000 is a usage error (librdkafka's NewTopic raised a ValueError
    traceback past 100,000)."""
    with pytest.raises(SystemExit) as info:
        main(["create-topics", "--config", "unused.yaml", "--partitions", "1000000"])
    assert info.value.code == 2
    assert "--partitions: must be at most 100,000" in capsys.readouterr().err
