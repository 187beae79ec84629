"""The simulator's pure core: clean records per contract, drift scenarios, schedules, seeds."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, SchemaContract, load_contract
from stream_validator.codec import decode_json
from stream_validator.errors import ScenarioSpecError
from stream_validator.sim import (
    CLEAN,
    DEFAULT_START,
    SCENARIO_HEADER,
    SCENARIOS,
    Entity,
    ScenarioWindow,
    Schedule,
    SimMessage,
    Simulator,
    parse_spec,
)

CONTRACTS = Path(__file__).resolve().parents[3] / "config" / "contracts"
ENTITIES = list(Entity)
ISO_UTC_MICROS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z")


def contract(entity: Entity) -> SchemaContract:
    return load_contract(CONTRACTS / f"{entity.value}.yaml")


def verifier(entity: Entity) -> DataSchemaContractVerifier:
    return DataSchemaContractVerifier(contract(entity))


def messages(
    entity: Entity, count: int, *specs: str, seed: int = 11, interval: float = 0.001
) -> list[SimMessage]:
    sim = Simulator(entity, symbols=8, seed=seed, schedule=Schedule.parse(specs))
    return list(sim.take(count, interval=interval))


def records(entity: Entity, count: int, seed: int = 11) -> list[dict[str, Any]]:
    out = []
    for message in messages(entity, count, seed=seed):
        assert message.value is not None
        out.append(decode_json(message.value))
    return out


def indices_of(batch: list[SimMessage], scenario: str) -> list[int]:
    return [i for i, message in enumerate(batch) if message.scenario == scenario]


# --- clean records ------------------------------------------------------------------------


@pytest.mark.parametrize("entity", ENTITIES)
def test_clean_records_pass_their_contract(entity: Entity) -> None:
    """Thousands of clean records of each entity: nothing quarantined, no null ceiling
    breached, no record rule flagged (the shipped rules hold on the simulated market)."""
    report = verifier(entity).validate_payloads([m.value for m in messages(entity, 5000)])
    assert report.quarantined_count == 0
    assert not report.flagged_counts
    assert report.null_breach_fields == {}
    assert report.observed_unknown_fields == set()


@pytest.mark.parametrize("entity", ENTITIES)
def test_clean_records_carry_exactly_the_contract_fields(entity: Entity) -> None:
    """Every clean record has the contract's fields, in its order, and nothing else."""
    names = list(contract(entity).field_names)
    assert all(list(record) == names for record in records(entity, 500))


@pytest.mark.parametrize("entity", ENTITIES)
def test_clean_records_have_some_legitimate_nulls_below_the_ceiling(entity: Entity) -> None:
    """Nullable fields are null now and then, but always under max_allowed_null_pct."""
    report = verifier(entity).validate_payloads([m.value for m in messages(entity, 20000)])
    ceiling = contract(entity).max_allowed_null_pct
    assert 0 < max(report.null_rates.values()) <= ceiling


@pytest.mark.parametrize("entity", ENTITIES)
def test_no_run_of_a_reasonable_batch_size_breaches_the_null_ceiling(entity: Entity) -> None:
    """Every run of at least 100/ceiling consecutive clean records stays under the ceiling."""
    spec = contract(entity)
    rows = records(entity, 20000, seed=3)
    smallest = round(100 / spec.max_allowed_null_pct)
    for field in (f.name for f in spec.fields if f.is_nullable):
        prefix = [0]
        for row in rows:
            prefix.append(prefix[-1] + (row[field] is None))
        for size in (smallest, smallest + 1, 2 * smallest - 1, 2 * smallest, 5 * smallest):
            worst = max(prefix[i + size] - prefix[i] for i in range(len(rows) - size + 1))
            assert worst * 100 <= spec.max_allowed_null_pct * size, (field, size)


@pytest.mark.parametrize("entity", ENTITIES)
def test_messages_are_keyed_by_symbol_and_marked_clean(entity: Entity) -> None:
    """The key is the record's symbol and the scenario header says clean."""
    for message in messages(entity, 200):
        assert message.value is not None
        assert message.key == decode_json(message.value)["symbol"].encode()
        assert message.headers == [(SCENARIO_HEADER, CLEAN.encode())]


@pytest.mark.parametrize("entity", ENTITIES)
def test_timestamps_are_iso_utc_with_microseconds(entity: Entity) -> None:
    """Event times and bar starts look like 2026-01-05T14:30:00.000123Z."""
    field = next(f.name for f in contract(entity).fields if f.name.endswith(("_ts", "_start")))
    assert all(ISO_UTC_MICROS.fullmatch(record[field]) for record in records(entity, 300))


@pytest.mark.parametrize("entity", [Entity.TICK, Entity.ORDERBOOK_SNAPSHOT])
def test_seq_and_event_time_rise_strictly_per_symbol(entity: Entity) -> None:
    """Per symbol, each record has a higher time than the last (and ticks a higher seq)."""
    time_field = "event_ts" if entity is Entity.TICK else "snapshot_ts"
    last: dict[str, dict[str, Any]] = {}
    for record in records(entity, 3000):
        previous = last.get(record["symbol"])
        if previous is not None:
            assert record[time_field] > previous[time_field]
            if entity is Entity.TICK:
                assert record["seq"] > previous["seq"]
        last[record["symbol"]] = record


def test_tick_quotes_are_consistent() -> None:
    """bid < ask, and the last trade happened inside the quote."""
    for tick in records(Entity.TICK, 3000):
        if tick["bid"] is not None and tick["ask"] is not None:
            assert tick["bid"] < tick["ask"]
            assert tick["bid"] <= tick["price"] <= tick["ask"]


def test_tick_book_sides_go_empty_together_with_their_size() -> None:
    """A null bid comes with a null bid_sz (and the same for the ask side)."""
    for tick in records(Entity.TICK, 20000):
        assert (tick["bid"] is None) == (tick["bid_sz"] is None)
        assert (tick["ask"] is None) == (tick["ask_sz"] is None)


def test_orderbook_levels_are_monotone_and_match_depth() -> None:
    """Bids fall and asks rise away from the touch; levels beyond depth are null."""
    for book in records(Entity.ORDERBOOK_SNAPSHOT, 5000):
        bids = [book[f"bid_px_{n}"] for n in range(1, book["depth"] + 1)]
        asks = [book[f"ask_px_{n}"] for n in range(1, book["depth"] + 1)]
        assert bids == sorted(set(bids), reverse=True)
        assert asks == sorted(set(asks))
        assert bids[0] < asks[0]
        for level in range(book["depth"] + 1, 4):
            assert book[f"bid_px_{level}"] is None and book[f"ask_sz_{level}"] is None


def test_bars_are_ohlc_consistent() -> None:
    """low <= open, close <= high; VWAP inside [low, high], null only for a bar without trades."""
    for bar in records(Entity.OHLCV_BAR, 5000):
        assert bar["low"] <= min(bar["open"], bar["close"])
        assert bar["high"] >= max(bar["open"], bar["close"])
        if bar["vwap"] is None:
            assert bar["volume"] == 0 and bar["trade_count"] == 0
        else:
            assert bar["low"] <= bar["vwap"] <= bar["high"]


def test_bars_are_consecutive_minutes_per_symbol() -> None:
    """Each symbol's bars start at the run's start minute, then one interval apart."""
    starts: dict[str, list[datetime]] = defaultdict(list)
    for bar in records(Entity.OHLCV_BAR, 500):
        starts[bar["symbol"]].append(datetime.fromisoformat(bar["bar_start"]))
    for series in starts.values():
        assert series[0] == DEFAULT_START
        assert {b - a for a, b in itertools.pairwise(series)} == {timedelta(seconds=60)}


# --- drift scenarios ----------------------------------------------------------------------

EXPECTED_KINDS = {
    "field_rename": {"missing_field"},
    "string_prices": {"type_mismatch"},
    "bool_volumes": {"type_mismatch"},
    "nan_prices": {"undecodable"},
    "garbage": {"undecodable"},
    "tombstone": {"not_a_mapping"},
    "negative_price": {"below_min"},
}


@pytest.mark.parametrize("entity", ENTITIES)
@pytest.mark.parametrize("scenario", sorted(EXPECTED_KINDS))
def test_each_drift_is_quarantined_with_its_violation_kind(entity: Entity, scenario: str) -> None:
    """Every drifted record is quarantined with exactly the expected kinds; clean ones pass."""
    batch = messages(entity, 600, f"{scenario}@n100+300")
    report = verifier(entity).validate_payloads([m.value for m in batch])
    assert [q.index for q in report.quarantined_records] == indices_of(batch, scenario)
    assert len(report.quarantined_records) == 300
    for quarantined in report.quarantined_records:
        assert set(quarantined.kinds) == EXPECTED_KINDS[scenario]


@pytest.mark.parametrize(
    ("entity", "new_name"),
    [
        (Entity.TICK, "ask_volume"),
        (Entity.ORDERBOOK_SNAPSHOT, "ask_volume_1"),
        (Entity.OHLCV_BAR, "total_volume"),
        (Entity.ORDER, "quantity"),
    ],
)
def test_field_rename_surfaces_the_new_name_as_drift(entity: Entity, new_name: str) -> None:
    """A rename shows up as the new, undeclared field name in observed_unknown_fields."""
    batch = messages(entity, 200, "field_rename@n50+10")
    report = verifier(entity).validate_payloads([m.value for m in batch])
    assert report.observed_unknown_fields == {new_name}


@pytest.mark.parametrize("entity", ENTITIES)
def test_null_bid_spike_breaches_the_ceiling_without_quarantine(entity: Entity) -> None:
    """null_bid_spike leaves every record valid but breaches the batch's null ceiling."""
    batch = messages(entity, 1000, "null_bid_spike")
    report = verifier(entity).validate_payloads([m.value for m in batch])
    assert report.quarantined_count == 0
    assert report.null_breach_fields


def test_null_bid_spike_hits_30_percent_by_default() -> None:
    """Without a fraction, null_bid_spike drifts about 30% of the window's records."""
    hits = len(indices_of(messages(Entity.TICK, 4000, "null_bid_spike"), "null_bid_spike"))
    assert 1000 < hits < 1400


def test_nan_prices_carry_a_nan_literal() -> None:
    """The raw bytes hold a bare NaN where the price goes."""
    for message in messages(Entity.TICK, 20, "nan_prices"):
        assert message.value is not None and b'"price":NaN' in message.value


def test_garbage_includes_invalid_utf8() -> None:
    """Some garbage payloads are not even UTF-8."""

    def is_utf8(value: bytes | None) -> bool:
        try:
            (value or b"").decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True

    assert not all(is_utf8(m.value) for m in messages(Entity.TICK, 200, "garbage"))


def test_tombstones_keep_their_key() -> None:
    """A tombstone has no value but is still keyed by its symbol."""
    for message in messages(Entity.TICK, 20, "tombstone"):
        assert message.value is None and message.key


def test_every_scenario_has_an_expected_outcome_here() -> None:
    """The tests above cover every schema-drift scenario (test_integrity_scenarios and
    test_order_scenarios the rest)."""
    elsewhere = {
        n for n, s in SCENARIOS.items() if s.apply.__module__.endswith((".integrity", ".orders"))
    }
    assert set(SCENARIOS) - elsewhere == set(EXPECTED_KINDS) | {"null_bid_spike"}


# --- schedules ----------------------------------------------------------------------------


def test_count_window_drifts_exactly_its_messages() -> None:
    """n100+50 drifts messages 100 to 149 and nothing else."""
    batch = messages(Entity.TICK, 400, "field_rename@n100+50")
    assert indices_of(batch, "field_rename") == list(range(100, 150))


def test_time_window_follows_the_elapsed_time() -> None:
    """1s+500ms drifts the messages produced from 1.0 s up to 1.5 s into the run."""
    batch = messages(Entity.TICK, 300, "string_prices@1s+500ms", interval=0.01)
    assert indices_of(batch, "string_prices") == list(range(100, 150))


def test_open_ended_window_lasts_to_the_end() -> None:
    """A window without a length drifts everything from its start."""
    batch = messages(Entity.TICK, 300, "tombstone@n250")
    assert indices_of(batch, "tombstone") == list(range(250, 300))


def test_every_window_repeats_at_each_period() -> None:
    """everyn100+10 drifts messages 100-109, 200-209, ... and none before the first period."""
    batch = messages(Entity.TICK, 350, "garbage@everyn100+10")
    expected = [i for i in range(350) if i >= 100 and i % 100 < 10]
    assert indices_of(batch, "garbage") == expected


def test_fraction_drifts_about_that_share() -> None:
    """:0.5 drifts about half of the window's messages."""
    hits = len(
        indices_of(messages(Entity.TICK, 4000, "string_prices@n0+4000:0.5"), "string_prices")
    )
    assert 1800 < hits < 2200


def test_first_spec_wins_where_windows_overlap() -> None:
    """A message gets one scenario: the first spec whose window is open."""
    batch = messages(Entity.TICK, 200, "tombstone@n50+50", "garbage@n0+200")
    assert indices_of(batch, "tombstone") == list(range(50, 100))
    assert len(indices_of(batch, "garbage")) == 150


@pytest.mark.parametrize(
    ("spec", "window"),
    [
        ("garbage", ScenarioWindow("garbage", 1.0)),
        ("garbage:0.01", ScenarioWindow("garbage", 0.01)),
        ("field_rename@10s+5s", ScenarioWindow("field_rename", 1.0, False, 10.0, 5.0)),
        ("field_rename@10s", ScenarioWindow("field_rename", 1.0, False, 10.0, None)),
        ("nan_prices@500ms+1.5s", ScenarioWindow("nan_prices", 1.0, False, 0.5, 1.5)),
        ("nan_prices@2m+1h", ScenarioWindow("nan_prices", 1.0, False, 120.0, 3600.0)),
        ("nan_prices@every30s+3s", ScenarioWindow("nan_prices", 1.0, False, 30.0, 3.0, 30.0)),
        ("string_prices@10s+5s:0.5", ScenarioWindow("string_prices", 0.5, False, 10.0, 5.0)),
        ("field_rename@n1000+100", ScenarioWindow("field_rename", 1.0, True, 1000.0, 100.0)),
        ("field_rename@n1000+n100", ScenarioWindow("field_rename", 1.0, True, 1000.0, 100.0)),
        ("tombstone@everyn500+5", ScenarioWindow("tombstone", 1.0, True, 500.0, 5.0, 500.0)),
        ("null_bid_spike@n0+10", ScenarioWindow("null_bid_spike", 0.3, True, 0.0, 10.0)),
        ("null_bid_spike@n0+10:1", ScenarioWindow("null_bid_spike", 1.0, True, 0.0, 10.0)),
    ],
)
def test_spec_parses(spec: str, window: ScenarioWindow) -> None:
    """Each documented spec form parses to the window it describes."""
    assert parse_spec(spec) == window


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("", "expected NAME"),
        ("Field_Rename", "expected NAME"),
        ("bogus@10s", "unknown scenario 'bogus'"),
        ("clean", "unknown scenario 'clean'"),
        ("field_rename@", "bad start ''"),
        ("field_rename@10", "a time needs a unit"),
        ("field_rename@10x", "bad start '10x'"),
        ("field_rename@10s+5", "bad length '5'"),
        ("field_rename@n10+5s", "both be times or both message counts"),
        ("field_rename@10s+0s", "length must be positive"),
        ("nan_prices@every30s", "'every' needs a length"),
        ("nan_prices@every0s+0s", "length must be positive"),
        ("nan_prices@everyn0+1", "period of 'every' must be positive"),
        ("nan_prices@every3s+5s", "must not exceed its period"),
        ("garbage:0", "fraction must be in (0, 1]"),
        ("garbage:1.5", "fraction must be in (0, 1]"),
        ("garbage:nan", "fraction must be in (0, 1]"),
        ("garbage:half", "fraction 'half' is not a number"),
    ],
)
def test_bad_spec_is_refused_with_the_reason(spec: str, reason: str) -> None:
    """A spec off the grammar raises ScenarioSpecError quoting the spec and saying why."""
    with pytest.raises(ScenarioSpecError, match=re.escape(reason)) as caught:
        parse_spec(spec)
    assert repr(spec) in str(caught.value)


def test_spec_error_is_a_value_error() -> None:
    """Callers catching ValueError (argparse, config loaders) catch spec errors too."""
    with pytest.raises(ValueError):
        Schedule.parse(["garbage", "nope"])


# --- determinism --------------------------------------------------------------------------


@pytest.mark.parametrize("entity", ENTITIES)
def test_same_seed_same_messages(entity: Entity) -> None:
    """A seed fixes every key, value and header."""
    specs = ("garbage@n10+20:0.5", "null_bid_spike@n40+40")
    assert messages(entity, 300, *specs, seed=5) == messages(entity, 300, *specs, seed=5)


def test_different_seeds_differ() -> None:
    """Another seed gives another market."""
    assert messages(Entity.TICK, 50, seed=1) != messages(Entity.TICK, 50, seed=2)


def test_drift_does_not_change_the_market_path() -> None:
    """Messages outside the drift windows are identical to a run without drift."""
    clean = messages(Entity.TICK, 300, seed=9)
    drifted = messages(Entity.TICK, 300, "garbage@n100+100:0.5", seed=9)
    assert clean[:100] == drifted[:100]
    assert clean[200:] == drifted[200:]


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**64), entity=st.sampled_from(ENTITIES))
def test_any_seed_gives_valid_records(seed: int, entity: Entity) -> None:
    """Whatever the seed, clean records pass their contract."""
    batch = [m.value for m in messages(entity, 200, seed=seed)]
    assert verifier(entity).validate_payloads(batch).quarantined_count == 0
