"""BatchHistogram: the same exposition as prometheus_client's Histogram, fed per batch."""

from __future__ import annotations

import math
import random

import pytest
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from stream_validator.service.telemetry.histogram import BatchHistogram

BUCKETS = (0.005, 0.01, 0.1, 1.0, 10.0)


def samples(
    registry: CollectorRegistry, name: str
) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for metric in registry.collect()
        for s in metric.samples
        if s.name.startswith(name) and not s.name.endswith("_created")
    }


def test_same_samples_as_prometheus_histogram() -> None:
    """Batches observed at once expose exactly what one observe() per value would."""
    rng = random.Random(3)
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    batch = BatchHistogram("lat_seconds", "doc", ("route",), BUCKETS, ours)
    reference = Histogram("lat_seconds", "doc", ["route"], buckets=BUCKETS, registry=theirs)
    for route in ("a", "b", "a"):
        values = [
            rng.choice([0.005, 1.0, 10.0, 11.0]) if rng.random() < 0.2 else rng.expovariate(5)
            for _ in range(300)
        ]
        batch.observe_many((route,), values)
        for v in values:
            reference.labels(route).observe(v)
    got, want = samples(ours, "lat_seconds"), samples(theirs, "lat_seconds")
    assert got.keys() == want.keys()
    for key, expected in want.items():
        assert got[key] == pytest.approx(expected), key
    created = {
        (s.name, tuple(sorted(s.labels.items())))
        for registry in (ours, theirs)
        for metric in registry.collect()
        for s in metric.samples
        if s.name.endswith("_created")
    }
    assert created == {("lat_seconds_created", (("route", r),)) for r in "ab"}
    text = generate_latest(ours).decode()
    assert 'lat_seconds_bucket{le="0.005",route="a"}' in text
    assert 'lat_seconds_bucket{le="+Inf",route="b"} 300.0' in text


def test_negatives_count_as_zero_and_non_finite_are_skipped() -> None:
    registry = CollectorRegistry()
    hist = BatchHistogram("lat_seconds", "doc", ("route",), BUCKETS, registry)
    hist.observe_many(("r",), [-2.0, math.nan, math.inf, -math.inf, 0.5])
    got = samples(registry, "lat_seconds")
    assert got[("lat_seconds_count", (("route", "r"),))] == 2
    assert got[("lat_seconds_sum", (("route", "r"),))] == 0.5
    assert got[("lat_seconds_bucket", (("le", "0.005"), ("route", "r")))] == 1
    assert got[("lat_seconds_bucket", (("le", "1.0"), ("route", "r")))] == 2


def test_an_empty_batch_creates_no_series() -> None:
    registry = CollectorRegistry()
    hist = BatchHistogram("lat_seconds", "doc", ("route",), BUCKETS, registry)
    hist.observe_many(("r",), [math.nan])
    assert samples(registry, "lat_seconds") == {}


@pytest.mark.parametrize("buckets", [(), (1.0, 0.5), (-1.0, 1.0), (1.0, math.inf), (1.0, 1.0)])
def test_bad_buckets_raise(buckets: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match="buckets"):
        BatchHistogram("lat_seconds", "doc", ("route",), buckets, CollectorRegistry())


def test_wrong_label_count_raises() -> None:
    hist = BatchHistogram("lat_seconds", "doc", ("route",), BUCKETS, CollectorRegistry())
    with pytest.raises(ValueError, match="labels"):
        hist.observe_many(("a", "b"), [1.0])
