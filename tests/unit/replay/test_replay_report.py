"""The replay summary: counts by outcome, violations, examples, and the exit code."""

from __future__ import annotations

import json

from stream_validator.codec import encode_json
from stream_validator.errors import ReplayExit
from stream_validator.replay.planner import Decision, Outcome, ReplayOutput, build_output
from stream_validator.replay.report import ReplaySummary
from tests.support.dlq import context, dlq_record, planner, raw_dlq_record
from tests.support.ticks import seed_tick


def summary(dry_run: bool = False, **options: object) -> ReplaySummary:
    return ReplaySummary("dlq", "clean", "g", "tick", "2", dry_run, **options)  # type: ignore[arg-type]


def decided(*records: object) -> list[tuple[Decision, ReplayOutput | None]]:
    decisions = planner().decide(list(records))  # type: ignore[arg-type]
    return [(d, build_output(d, context())) for d in decisions]


def test_counts_by_outcome_and_requeues() -> None:
    """Each record counts once under its outcome; requeues and deliveries are tallied."""
    report = summary()
    for decision, output in decided(
        dlq_record(offset=0),
        dlq_record(seed_tick.json(volume="x"), offset=1),
        raw_dlq_record(b"junk", offset=2),
    ):
        report.add(decision, output)
    document = report.as_dict()
    assert document["outcomes"]["replayed"] == 1
    assert document["outcomes"]["still_failing"] == document["requeued"] == 1
    assert document["unreplayable_by_reason"] == {"not_json": 1}
    assert document["delivered_by_topic"] == {"ticks.clean": 1}
    assert document["violations_by_kind"] == {"type_mismatch": 1}
    assert document["violations_by_field"] == {"volume": 1}
    assert document["records"] == 3


def test_dry_run_names_would_pass_and_would_requeue() -> None:
    """A dry run reports would_pass and would_requeue instead of replayed/requeued."""
    report = summary(dry_run=True)
    for decision, output in decided(dlq_record(), dlq_record(seed_tick.json(volume="x"), offset=1)):
        report.add(decision, output)
    document = report.as_dict()
    assert document["outcomes"]["would_pass"] == 1
    assert document["would_requeue"] == 1
    assert "replayed" not in document["outcomes"]
    assert report.render().startswith("DRY RUN")


def test_exit_code_is_zero_only_when_everything_selected_passed() -> None:
    """0 when all selected records pass; 1 when any is not delivered; 3 on error; 130."""
    ok, failing = summary(), summary()
    for decision, output in decided(dlq_record()):
        ok.add(decision, output)
    for decision, output in decided(dlq_record(seed_tick.json(volume="x"))):
        failing.add(decision, output)
    assert (ok.exit_code(), failing.exit_code()) == (ReplayExit.OK, ReplayExit.NOT_ALL)
    ok.interrupted = True
    assert ok.exit_code() == ReplayExit.INTERRUPTED
    ok.error = "broker down"
    assert ok.exit_code() == ReplayExit.KAFKA


def test_filtered_and_handled_records_do_not_fail_the_run() -> None:
    """filtered_out, duplicate and already_handled records leave the exit code at 0."""
    report = summary()
    record = dlq_record()
    for outcome in (Outcome.FILTERED_OUT, Outcome.DUPLICATE, Outcome.ALREADY_HANDLED):
        report.add(Decision(record, outcome, reason="x"), None)
    assert report.exit_code() == ReplayExit.OK


def test_examples_are_capped_and_json_ready() -> None:
    """At most max_examples per outcome; the summary encodes as JSON."""
    report = summary(max_examples=2)
    records = [dlq_record(offset=i, source_offset=i) for i in range(5)]
    for decision, output in decided(*records):
        report.add(decision, output)
    document = json.loads(encode_json(report.as_dict()))
    assert [e["dlq"]["offset"] for e in document["examples"]["replayed"]] == [0, 1]
    assert document["examples"]["replayed"][0]["source"]["topic"] == "ticks"


def test_render_lists_every_outcome() -> None:
    """The human summary has one line per outcome and the examples."""
    report = summary()
    for decision, output in decided(dlq_record(seed_tick.json(volume="x"))):
        report.add(decision, output)
    text = report.render()
    for outcome in Outcome:
        assert report.name(outcome) in text
    assert "volume type_mismatch" in text
