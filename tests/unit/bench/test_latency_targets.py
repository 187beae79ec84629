"""bench_latency's target checks: each service row against the same round's bare loop."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import bench_latency


def result(latencies: list[float], cpu_s: float) -> bench_latency.Result:
    return bench_latency.Result(
        sorted(latencies), [], len(latencies), len(latencies), 2e4, 0.0, cpu_s
    )


BARE = result([10.0] * 98 + [100.0, 100.0], cpu_s=1.0)  # p50 10, p99 100


def test_each_service_target_is_checked_against_the_bare_loop() -> None:
    slow = result([16.0] * 98 + [151.0, 151.0], cpu_s=2.1)
    found = bench_latency.targets([("bare", BARE), ("service", slow), ("none", "skipped")])
    assert [bench_latency.check(target) for target in found] == [
        "- service p50 16.0 <= 15.0 (bare p50 + 5 ms): NOT met",
        "- service p99 151.0 <= 150.0 (1.5x bare p99): NOT met",
        "- service CPU s 2.1 <= 2.0 (2x bare CPU): NOT met",
    ]


@pytest.mark.parametrize(
    ("peer", "p99", "verdict"),
    [
        ("service-eos", 250.0, "met"),  # 100 + 100 ms (the default interval) + 50
        ("service-eos", 250.5, "NOT met"),
        ("service-eos:commit_interval_s=0.05", 200.5, "NOT met"),
    ],
)
def test_exactly_once_allows_one_commit_interval(peer: str, p99: float, verdict: str) -> None:
    row = result([20.0] * 98 + [p99, p99], cpu_s=1.0)
    (target,) = bench_latency.targets([("bare", BARE), (peer, row)])
    assert bench_latency.check(target).endswith(f": {verdict}")


def test_without_a_bare_row_nothing_is_checked() -> None:
    assert bench_latency.targets([("service", BARE)]) == []


def test_over_rounds_each_target_has_its_met_count_and_median_margin() -> None:
    """A p99 over 1.5x the bare loop's in one round of three (a stall in that window) is
    met in 2 of 3 rounds, and by the median margin; one missed in two of three is not."""
    rounds = []
    for p99, cpu_s in [(140.0, 1.5), (160.0, 2.5), (120.0, 2.2)]:
        row = result([12.0] * 98 + [p99, p99], cpu_s=cpu_s)
        rounds.append(bench_latency.targets([("bare", BARE), ("service", row)]))
    lines = bench_latency.over_rounds(rounds)
    assert lines == [
        "- service p50 (bare p50 + 5 ms): met in 3 of 3 rounds; median of value - limit -3.0: met",
        "- service p99 (1.5x bare p99): met in 2 of 3 rounds; median of value - limit -10.0: met",
        "- service CPU s (2x bare CPU): met in 1 of 3 rounds; median of value - limit +0.2: "
        "NOT met",
    ]


def test_stalls_are_runs_of_late_records_close_in_time() -> None:
    """Late records stamped under 50 ms apart make one stall (on-time records between them
    do not end it), a longer gap starts another; on-time records make none."""
    ms = 1_000_000
    in_order = [
        (0, 10.0),
        (10 * ms, 80.0),  # a stall begins
        (20 * ms, 120.0),
        (60 * ms, 90.0),  # 40 ms after the last late one: the same stall
        (70 * ms, 20.0),
        (200 * ms, 70.0),  # 140 ms later: another
        (300 * ms, 60.0),  # not over 60 ms
    ]
    assert bench_latency.stalls(in_order) == [
        bench_latency.Stall(0.01, 50.0, 3, 120.0),
        bench_latency.Stall(0.2, 0.0, 1, 70.0),
    ]
    assert bench_latency.stalls([(0, 10.0), (ms, 59.0)]) == []
    assert bench_latency.stalls([]) == []


def test_an_exactly_once_record_is_stalled_past_the_commit_interval() -> None:
    """Every exactly-once record may wait one commit interval: a stall is 60 ms past it."""
    assert bench_latency.stall_ms("bare") == bench_latency.stall_ms("service") == 60.0
    assert bench_latency.stall_ms("service-eos") == 160.0  # the default interval, 0.1 s
    assert bench_latency.stall_ms("service-eos:commit_interval_s=0.05@/tmp/x") == 110.0
