"""``stream-validator replay`` setup without a broker: arguments, route, target, group."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from stream_validator.cli.main import main as cli_main
from stream_validator.cli.replay import _ProgressBar, build_job, parse_args, parse_time_ms
from stream_validator.errors import ConfigError
from stream_validator.replay.planner import Outcome, ReplayPlanner, Target, build_output
from stream_validator.replay.report import ReplaySummary
from stream_validator.replay.runner import ReplayJob
from tests.support.dlq import context, dlq_record, fixed_verifier

REPO = Path(__file__).resolve().parents[3]
TICK = REPO / "config" / "contracts" / "tick.yaml"


def config(tmp_path: Path, *routes: tuple[str, str]) -> str:
    """A service config with one route per (name, dlq_topic)."""
    document = {
        "kafka": {"bootstrap_servers": "127.0.0.1:1"},
        "routes": [
            {
                "name": name,
                "source_topics": [f"{name}.in"],
                "contract": str(TICK),
                "clean_topic": f"{name}.clean",
                "dlq_topic": dlq,
            }
            for name, dlq in routes
        ],
    }
    path = tmp_path / "service.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


def job_for(
    tmp_path: Path, *args: str, routes: tuple[tuple[str, str], ...] = (("t", "t.dlq"),)
) -> ReplayJob:
    """The job `replay --dlq-topic t.dlq ARGS` resolves to."""
    path = config(tmp_path, *routes)
    return build_job(parse_args(["--config", path, "--dlq-topic", "t.dlq", *args]))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-30T14:30:00Z", 1_796_049_000_000),
        ("2026-11-30T14:30:00", 1_796_049_000_000),
        ("2026-11-30T15:30:00+01:00", 1_796_049_000_000),
        ("1796049000000", 1_796_049_000_000),
    ],
)
def test_times_parse_as_iso_or_epoch_milliseconds(text: str, expected: int) -> None:
    """ISO-8601 (naive means UTC) and epoch milliseconds are accepted."""
    assert parse_time_ms(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "99999999999999999999", "253402300800000", "²"])
def test_bad_time_is_a_value_error(text: str) -> None:
    """Anything else is refused with the text in the message: epoch milliseconds past the
    year 9999 too (over 64 bits they were a TypeError traceback), and digits that are not
    ASCII ('²' passed isdigit and failed int())."""
    with pytest.raises(ValueError, match=f"not an ISO-8601 time or epoch milliseconds: {text!r}"):
        parse_time_ms(text)


def test_default_route_and_target(tmp_path: Path) -> None:
    """The route whose dlq_topic is the DLQ gives the contract and the clean topic."""
    job = job_for(tmp_path)
    assert (job.target.kind, job.target.topic) == ("clean", "t.clean")
    assert job.selection.route == "t"
    assert job.verifier.contract.name == "tick"
    assert job.group == f"stream-validator-replay.t.dlq.t.clean.{job.selection.digest()}"


def test_filters_change_the_group_but_not_its_base(tmp_path: Path) -> None:
    """Each selection has its own group under one base per DLQ and target."""
    plain = job_for(tmp_path)
    filtered = job_for(tmp_path, "--kind", "below_min", "--from-offset", "0:5")
    assert plain.group_base == filtered.group_base
    assert plain.group != filtered.group
    assert filtered.selection.from_offset.get(0) == 5


def test_shared_dlq_needs_a_route(tmp_path: Path) -> None:
    """Several routes quarantining to one DLQ make --route mandatory."""
    with pytest.raises(ConfigError, match="--route"):
        job_for(tmp_path, routes=(("a", "t.dlq"), ("b", "t.dlq")))
    assert (
        job_for(tmp_path, "--route", "b", routes=(("a", "t.dlq"), ("b", "t.dlq"))).selection.route
        == "b"
    )


def test_clean_target_needs_a_route(tmp_path: Path) -> None:
    """Without a route there is no clean topic; --contract and --to TOPIC still work."""
    with pytest.raises(ConfigError):
        job_for(tmp_path, "--contract", str(TICK), routes=(("t", "other.dlq"),))
    job = job_for(tmp_path, "--contract", str(TICK), "--to", "fixed", routes=(("t", "x"),))
    assert (job.target.label, job.selection.route) == ("fixed", None)


def test_target_cannot_be_the_dlq(tmp_path: Path) -> None:
    """Sending replayed records into the DLQ they come from is refused."""
    with pytest.raises(ConfigError):
        job_for(tmp_path, "--to", "t.dlq")


def test_until_must_follow_from(tmp_path: Path) -> None:
    """An empty time range is a usage error."""
    with pytest.raises(ValueError):
        job_for(tmp_path, "--from", "2026-01-02", "--until", "2026-01-01")


def test_usage_errors_exit_2_before_touching_kafka(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad route or contract is reported with exit code 2 through the main CLI."""
    path = config(tmp_path, ("t", "t.dlq"))
    code = cli_main(["replay", "--config", path, "--dlq-topic", "t.dlq", "--route", "nope"])
    assert code == 2
    assert "no route named 'nope'" in capsys.readouterr().err


def test_progress_bar_shows_done_of_total_and_the_counts() -> None:
    """The bar shows done/total and the passing and failing counts, and ends its line."""
    stream = io.StringIO()
    bar = _ProgressBar(stream)
    bar.update(5, 10, ReplaySummary("d", "t", "g", "c", "1", dry_run=False))
    bar.close()
    text = stream.getvalue()
    assert "replay" in text and "5/10" in text
    assert "passed 0  still failing 0" in text and text.endswith("\n")


def test_source_target_comes_from_the_route_config(tmp_path: Path) -> None:
    """--to source carries the route's configured source topics, not the envelopes'."""
    job = job_for(tmp_path, "--to", "source")
    assert job.target.kind == "source"
    assert job.target.accepts("t.in") and not job.target.accepts("elsewhere")


def test_source_target_refuses_a_foreign_source_topic(tmp_path: Path) -> None:
    """An envelope claiming a source topic outside the route is unreplayable, never sent."""
    job = job_for(tmp_path, "--to", "source")
    planner = ReplayPlanner(job.selection, fixed_verifier(), target=job.target)
    (decision,) = planner.decide([dlq_record(source_topic="payments", route="t")])
    assert decision.outcome is Outcome.UNREPLAYABLE
    assert decision.reason == "not_a_route_source"
    assert build_output(decision, context(job.target)) is None


def test_another_routes_topics_need_force(tmp_path: Path) -> None:
    """--to another route's clean or DLQ topic is refused unless --force."""
    routes = (("t", "t.dlq"), ("u", "u.dlq"))
    for topic in ("u.clean", "u.dlq"):
        with pytest.raises(ConfigError, match="--force"):
            job_for(tmp_path, "--to", topic, routes=routes)
        forced = job_for(tmp_path, "--to", topic, "--force", routes=routes)
        assert forced.target.topic == topic


def test_source_and_the_same_topic_are_one_target(tmp_path: Path) -> None:
    """--to source and --to <the route's source topic> share group and transactional id."""
    by_name = job_for(tmp_path, "--to", "t.in")
    as_source = job_for(tmp_path, "--to", "source")
    assert (by_name.group, by_name.group_base) == (as_source.group, as_source.group_base)
    assert by_name.target == as_source.target


def test_another_routes_source_topics_need_force(tmp_path: Path) -> None:
    """--to a topic another route reads (listed or matched by its pattern) needs --force."""
    path = config(tmp_path, ("t", "t.dlq"), ("u", "u.dlq"))
    document = yaml.safe_load(Path(path).read_text())
    document["routes"].append(
        {
            "name": "v",
            "source_pattern": r"md\.bars\..*",
            "contract": str(TICK),
            "clean_topic": "v.clean",
            "dlq_topic": "v.dlq",
        }
    )
    Path(path).write_text(yaml.safe_dump(document))
    for topic in ("u.in", "md.bars.1m"):
        args = ["--config", path, "--dlq-topic", "t.dlq", "--to", topic]
        with pytest.raises(ConfigError, match="--force"):
            build_job(parse_args(args))
        assert build_job(parse_args([*args, "--force"])).target == Target("topic", topic)


def test_force_also_allows_unchecked_payloads(tmp_path: Path) -> None:
    """Only --force lets the planner replay envelopes without payload length and sha256."""
    assert not job_for(tmp_path).allow_unchecked
    assert job_for(tmp_path, "--force").allow_unchecked


def test_unknown_kind_is_a_usage_error_listing_the_kinds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--kind with a kind no violation has exits 2 and names the valid kinds."""
    path = config(tmp_path, ("t", "t.dlq"))
    code = cli_main(["replay", "--config", path, "--dlq-topic", "t.dlq", "--kind", "below-min"])
    err = capsys.readouterr().err
    assert code == 2
    assert "'below-min'" in err and "below_min" in err and "sequence_gap" in err


def test_dlq_topic_of_no_route_is_a_usage_error_listing_the_dlq_topics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --dlq-topic that is not the route's DLQ exits 2 and lists the routes' DLQ topics."""
    path = config(tmp_path, ("t", "t.dlq"), ("u", "u.dlq"))
    for extra in ([], ["--route", "t"]):
        code = cli_main(["replay", "--config", path, "--dlq-topic", "t.dql", *extra])
        err = capsys.readouterr().err
        assert code == 2
        assert "'t.dql'" in err and "t.dlq, u.dlq" in err


def test_route_with_another_dlq_topic_needs_force(tmp_path: Path) -> None:
    """--route R with a DLQ topic that is not R's (e.g. a copy) is replayed only with --force."""
    with pytest.raises(ConfigError, match="--force"):
        job_for(tmp_path, "--route", "u", routes=(("t", "t.dlq"), ("u", "u.dlq")))
    forced = job_for(tmp_path, "--route", "u", "--force", routes=(("t", "t.dlq"), ("u", "u.dlq")))
    assert forced.selection.route == "u"


def test_rule_filter_goes_into_the_selection(tmp_path: Path) -> None:
    """--rule NAME (repeatable) selects by the route's contract rules."""
    job = job_for(tmp_path, "--rule", "crossed_book", "--rule", "locked_book")
    assert job.selection.rules == frozenset({"crossed_book", "locked_book"})


def test_unknown_rule_is_a_usage_error_listing_the_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--rule with a name the route's contract does not declare exits 2 and lists its rules."""
    path = config(tmp_path, ("t", "t.dlq"))
    code = cli_main(["replay", "--config", path, "--dlq-topic", "t.dlq", "--rule", "crossed"])
    err = capsys.readouterr().err
    assert code == 2
    assert "unknown --rule 'crossed'" in err
    assert "crossed_book, locked_book, spread_band" in err
