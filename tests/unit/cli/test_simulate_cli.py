"""``stream-validator simulate`` without a broker: argument errors, help, unreachable broker."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from stream_validator.cli.simulate import main
from stream_validator.errors import SimulateExit
from stream_validator.sim import SCENARIOS

# Nothing listens on port 1; connect attempts fail at once.
DEAD_BROKER = "127.0.0.1:1"


def usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == SimulateExit.USAGE
    return capsys.readouterr().err


def test_count_or_duration_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --count and --duration the run would never end: refused."""
    assert "--count and/or --duration" in usage_error(["--topic", "t"], capsys)


def test_bad_scenario_spec_is_refused_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    """A spec off the grammar fails argument parsing with the parser's explanation."""
    err = usage_error(["--topic", "t", "--count", "1", "--scenario", "field_rename@10"], capsys)
    assert "bad scenario spec 'field_rename@10'" in err
    assert "a time needs a unit" in err


def test_partitions_need_create_topic(capsys: pytest.CaptureFixture[str]) -> None:
    """--partitions only means something when the topic is created."""
    err = usage_error(["--topic", "t", "--count", "1", "--partitions", "3"], capsys)
    assert "--partitions only applies with --create-topic" in err


@pytest.mark.parametrize("setting", ["linger.ms", "=5"])
def test_librdkafka_setting_needs_key_and_value(
    setting: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """-X takes KEY=VALUE."""
    assert "expected KEY=VALUE" in usage_error(
        ["--topic", "t", "--count", "1", "-X", setting], capsys
    )


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--rate", "-1"),
        ("--count", "0"),
        ("--duration", "x"),
        # 10**11 instruments filled the machine's memory; librdkafka refuses 10**6
        # partitions with a ValueError traceback.
        ("--symbols", "100001"),
        ("--partitions", "100001"),
    ],
)
def test_numbers_are_checked(option: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Negative rates, zero counts, non-numbers and sizes past their bounds are refused."""
    assert option in usage_error(["--topic", "t", "--count", "1", option, value], capsys)


def test_help_documents_scenarios_and_grammar(capsys: pytest.CaptureFixture[str]) -> None:
    """--help lists every scenario and the spec grammar with examples."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert 'SPEC     = NAME [ "@" WINDOW ] [ ":" FRACTION ]' in out
    assert "field_rename@n1000+100" in out
    assert "null_bid_spike" in out and "negative_price" in out


def test_help_lists_each_scenario_apart_from_its_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every scenario gets its own line with a gap before the summary, however long its name."""
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for scenario in SCENARIOS.values():
        assert f"  {scenario.name}  " in out and f"  {scenario.summary}\n" in out


def test_unreachable_broker_fails_fast_with_a_clear_message(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No broker: exit 2 within the connect timeout, saying which address failed."""
    start = time.monotonic()
    argv = ["--bootstrap-servers", DEAD_BROKER, "--topic", "t", "--count", "5"]
    code = main([*argv, "--connect-timeout", "1"])
    assert code == SimulateExit.USAGE
    assert time.monotonic() - start < 10
    assert f"cannot reach Kafka at {DEAD_BROKER} within 1 s" in capsys.readouterr().err


def test_unreachable_broker_fails_fast_when_creating_the_topic(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """--create-topic against no broker also ends promptly with exit 2."""
    argv = ["--bootstrap-servers", DEAD_BROKER, "--topic", "t", "--count", "5", "--create-topic"]
    assert main([*argv, "--connect-timeout", "1"]) == SimulateExit.USAGE
    assert "cannot reach Kafka" in capsys.readouterr().err


def test_invalid_librdkafka_setting_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """librdkafka refusing a -X setting is reported, not a traceback."""
    argv = ["--bootstrap-servers", DEAD_BROKER, "--topic", "t", "--count", "1", "-X", "nope=1"]
    assert main(argv) == SimulateExit.USAGE
    assert "nope" in capsys.readouterr().err


def test_runs_as_a_module() -> None:
    """python -m stream_validator.cli.simulate is the same command."""
    done = subprocess.run(
        [sys.executable, "-m", "stream_validator.cli.simulate", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0
    assert "stream-validator simulate" in done.stdout
