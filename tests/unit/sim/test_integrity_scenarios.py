"""The integrity scenarios of issue 14: well-formed records that cannot be true."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract, load_contract
from stream_validator.codec import decode_json
from stream_validator.sim import (
    CLEAN,
    SCENARIOS,
    Entity,
    ScenarioWindow,
    Schedule,
    SimMessage,
    Simulator,
    parse_spec,
)
from stream_validator.sim.integrity import (
    EPOCH_TS,
    FUTURE_BY,
    SEQUENCE_GAP,
    SEQUENCE_STEP_BACK,
    STALE_BY,
)

CONTRACTS = Path(__file__).resolve().parents[3] / "config" / "contracts"
ENTITIES = list(Entity)
TIME_FIELD = {
    Entity.TICK: "event_ts",
    Entity.ORDERBOOK_SNAPSHOT: "snapshot_ts",
    Entity.OHLCV_BAR: "bar_start",
    Entity.ORDER: "event_ts",
}
TOUCH = {Entity.TICK: ("bid", "ask"), Entity.ORDERBOOK_SNAPSHOT: ("bid_px_1", "ask_px_1")}
INTEGRITY = {
    "crossed_book": {Entity.TICK, Entity.ORDERBOOK_SNAPSHOT},
    "locked_book": {Entity.TICK, Entity.ORDERBOOK_SNAPSHOT},
    "impossible_bar": {Entity.OHLCV_BAR},
    "sequence_gap": {Entity.TICK},
    "sequence_regression": {Entity.TICK},
    "stale_timestamp": set(Entity),
    "future_timestamp": set(Entity),
    "naive_timestamp": set(Entity),
    "frozen_quote": set(Entity) - {Entity.ORDER},
    "bad_deploy": set(Entity),
}
APPLICABLE = sorted(
    (scenario, entity) for scenario, entities in INTEGRITY.items() for entity in entities
)


def messages(entity: Entity, count: int, *specs: str, seed: int = 11) -> list[SimMessage]:
    sim = Simulator(entity, symbols=8, seed=seed, schedule=Schedule.parse(specs))
    return list(sim.take(count))


def decoded(batch: list[SimMessage]) -> list[dict[str, Any]]:
    out = []
    for message in batch:
        assert message.value is not None
        out.append(decode_json(message.value))
    return out


def hit(batch: list[SimMessage], scenario: str) -> list[int]:
    return [i for i, message in enumerate(batch) if message.scenario == scenario]


def schema_only(entity: Entity) -> SchemaContract:
    """The entity's contract with its fields' type, nullability and bounds, nothing else:
    what today's verifier checks, whatever rules the contract file gains later."""
    contract = load_contract(CONTRACTS / f"{entity.value}.yaml")
    fields = tuple(
        FieldSpec(f.name, f.expected_type, f.is_nullable, f.min_value, f.max_value)
        for f in contract.fields
    )
    return SchemaContract(
        contract.name,
        fields,
        max_allowed_null_pct=contract.max_allowed_null_pct,
        forbid_unknown_fields=contract.forbid_unknown_fields,
    )


# --- what each scenario sends -------------------------------------------------------------


@pytest.mark.parametrize("entity", sorted(INTEGRITY["crossed_book"]))
def test_crossed_book_puts_the_bid_above_the_ask(entity: Entity) -> None:
    """Every crossed_book record has its best bid strictly above its best ask."""
    batch = messages(entity, 3000, "crossed_book@n500+2000")
    bid, ask = TOUCH[entity]
    rows = decoded(batch)
    assert len(hit(batch, "crossed_book")) == 2000
    assert all(rows[i][bid] > rows[i][ask] for i in hit(batch, "crossed_book"))


def test_crossed_book_quotes_an_empty_tick_side() -> None:
    """A tick whose book side was empty is crossed too: both sides and sizes are present."""
    clean = decoded(messages(Entity.TICK, 5000))
    empty = [i for i, row in enumerate(clean) if row["bid"] is None or row["ask"] is None]
    assert empty, "the clean run has empty sides to cross"
    rows = decoded(messages(Entity.TICK, 5000, "crossed_book"))
    for i in empty:
        assert None not in (rows[i]["bid"], rows[i]["ask"], rows[i]["bid_sz"], rows[i]["ask_sz"])
        assert rows[i]["bid"] > rows[i]["ask"]


def test_crossed_book_keeps_deeper_levels_monotone() -> None:
    """Only the touch crosses: bids still fall and asks still rise away from level 1."""
    for book in decoded(messages(Entity.ORDERBOOK_SNAPSHOT, 2000, "crossed_book")):
        bids = [book[f"bid_px_{n}"] for n in range(1, book["depth"] + 1)]
        asks = [book[f"ask_px_{n}"] for n in range(1, book["depth"] + 1)]
        assert bids == sorted(set(bids), reverse=True)
        assert asks == sorted(set(asks))


@pytest.mark.parametrize("entity", sorted(INTEGRITY["locked_book"]))
def test_locked_book_makes_bid_equal_ask(entity: Entity) -> None:
    """Every locked_book record has best bid == best ask (a tick also trades at it)."""
    bid, ask = TOUCH[entity]
    for row in decoded(messages(entity, 2000, "locked_book")):
        assert row[bid] == row[ask]
        if entity is Entity.TICK:
            assert row["price"] == row["bid"]


def test_impossible_bar_breaks_ohlc_in_every_affected_bar() -> None:
    """Each impossible bar fails low <= open <= high or low <= close <= high."""
    for bar in decoded(messages(Entity.OHLCV_BAR, 2000, "impossible_bar")):
        assert not (
            bar["low"] <= bar["open"] <= bar["high"] and bar["low"] <= bar["close"] <= bar["high"]
        )


def test_impossible_bar_draws_each_way_of_breaking() -> None:
    """High below low, open above high and close below low all occur."""
    ways: set[str] = set()
    for bar in decoded(messages(Entity.OHLCV_BAR, 300, "impossible_bar")):
        if bar["high"] < bar["low"]:
            ways.add("high<low")
        elif bar["open"] > bar["high"]:
            ways.add("open>high")
        elif bar["close"] < bar["low"]:
            ways.add("close<low")
    assert ways == {"high<low", "open>high", "close<low"}


def seq_steps(batch: list[SimMessage]) -> list[tuple[str, int, int]]:
    """(scenario, seq - highest seq the symbol sent before, highest) per record after its first."""
    highest: dict[str, int] = {}
    steps = []
    for message, row in zip(batch, decoded(batch), strict=True):
        top = highest.get(row["symbol"])
        if top is not None:
            steps.append((message.scenario, row["seq"] - top, top))
        highest[row["symbol"]] = max(row["seq"], top or 0)
    return steps


def test_sequence_gap_skips_the_configured_numbers_per_symbol() -> None:
    """A gapped tick is SEQUENCE_GAP + 1 past its symbol's last; other ticks step by one."""
    steps = seq_steps(messages(Entity.TICK, 1000, "sequence_gap@everyn100+3"))
    gaps = [step for scenario, step, _ in steps if scenario == "sequence_gap"]
    assert len(gaps) > 20
    assert set(gaps) == {SEQUENCE_GAP + 1}
    assert {step for scenario, step, _ in steps if scenario == CLEAN} == {1}


def test_sequence_regression_steps_back_without_a_gap() -> None:
    """A regressed tick is SEQUENCE_STEP_BACK below its symbol's highest; the rest step by one."""
    steps = seq_steps(messages(Entity.TICK, 1000, "sequence_regression@everyn100+3"))
    backs = [step for scenario, step, _ in steps if scenario == "sequence_regression"]
    assert len(backs) > 20
    assert set(backs) == {-SEQUENCE_STEP_BACK}
    assert {step for scenario, step, _ in steps if scenario == CLEAN} == {1}


def test_sequence_regression_in_a_row_repeats_one_old_number() -> None:
    """Back-to-back regressions of a symbol repeat one number, never counting up (no resync)."""
    steps = seq_steps(messages(Entity.TICK, 600, "sequence_regression@n100+400"))
    assert {step for scenario, step, _ in steps if scenario == "sequence_regression"} == {
        -SEQUENCE_STEP_BACK
    }


def test_a_sequence_gap_shifts_the_symbols_later_clean_records() -> None:
    """After a gap the symbol's clean ticks keep the new numbering; nothing else changes."""
    clean = decoded(messages(Entity.TICK, 400, seed=4))
    gapped = decoded(messages(Entity.TICK, 400, "sequence_gap@n100+1", seed=4))
    symbol = clean[100]["symbol"]
    for i, (before, after) in enumerate(zip(clean, gapped, strict=True)):
        shift = SEQUENCE_GAP if i >= 100 and before["symbol"] == symbol else 0
        assert after == before | {"seq": before["seq"] + shift}


def test_stale_timestamp_is_the_epoch_or_hours_old() -> None:
    """Each stale time is 1970-01-01 or STALE_BY before the clean time; both kinds occur."""
    for entity in ENTITIES:
        field = TIME_FIELD[entity]
        clean = decoded(messages(entity, 200))
        stale = decoded(messages(entity, 200, "stale_timestamp"))
        kinds = set()
        for before, after in zip(clean, stale, strict=True):
            if after[field] == EPOCH_TS:
                kinds.add("epoch")
            else:
                moved = datetime.fromisoformat(before[field]) - datetime.fromisoformat(after[field])
                assert moved == STALE_BY
                kinds.add("old")
        assert kinds == {"epoch", "old"}, entity


@pytest.mark.parametrize("entity", ENTITIES)
def test_future_timestamp_is_ahead(entity: Entity) -> None:
    """Each future time is FUTURE_BY after the clean time, still ISO-8601 UTC."""
    field = TIME_FIELD[entity]
    clean = decoded(messages(entity, 200))
    future = decoded(messages(entity, 200, "future_timestamp"))
    for before, after in zip(clean, future, strict=True):
        assert after[field].endswith("Z")
        ahead = datetime.fromisoformat(after[field]) - datetime.fromisoformat(before[field])
        assert ahead == FUTURE_BY


@pytest.mark.parametrize("entity", ENTITIES)
def test_naive_timestamp_has_no_offset(entity: Entity) -> None:
    """Each naive time is the clean time without its 'Z': it parses to a naive datetime."""
    field = TIME_FIELD[entity]
    clean = decoded(messages(entity, 200))
    naive = decoded(messages(entity, 200, "naive_timestamp"))
    for before, after in zip(clean, naive, strict=True):
        assert after[field] + "Z" == before[field]
        assert datetime.fromisoformat(after[field]).tzinfo is None


def quote_runs(entity: Entity, batch: list[SimMessage]) -> dict[str, list[int]]:
    """Per symbol, the lengths of its runs of consecutive records with the same quote."""
    quote = {
        Entity.TICK: ("price", "size", "bid", "ask", "bid_sz", "ask_sz"),
        Entity.ORDERBOOK_SNAPSHOT: ("depth", "bid_px_1", "ask_px_1", "bid_sz_3", "ask_px_3"),
        Entity.OHLCV_BAR: ("open", "high", "low", "close", "volume", "vwap"),
    }[entity]
    runs: dict[str, list[int]] = defaultdict(list)
    last: dict[str, tuple[Any, ...]] = {}
    for row in decoded(batch):
        key = tuple(row[name] for name in quote)
        if last.get(row["symbol"]) == key:
            runs[row["symbol"]][-1] += 1
        else:
            runs[row["symbol"]].append(1)
        last[row["symbol"]] = key
    return runs


@pytest.mark.parametrize("entity", sorted(INTEGRITY["frozen_quote"]))
def test_frozen_quote_repeats_one_quote_per_symbol(entity: Entity) -> None:
    """Inside the window each symbol repeats one quote: the busiest one for 100+ updates."""
    batch = messages(entity, 1500, "frozen_quote@n0+1000")
    frozen = quote_runs(entity, batch[:1000])
    busiest = max(frozen.values(), key=sum)
    assert max(busiest) >= 100
    assert all(max(lengths) >= sum(lengths) - 1 for lengths in frozen.values())


@pytest.mark.parametrize("entity", sorted(INTEGRITY["frozen_quote"]))
def test_clean_quotes_do_not_freeze(entity: Entity) -> None:
    """Without the scenario a symbol's quote changes from update to update (the check can fail)."""
    runs = quote_runs(entity, messages(entity, 1000))
    assert max(max(lengths) for lengths in runs.values()) < 5


def test_frozen_quote_thaws_and_refreezes_at_a_new_quote() -> None:
    """A clean record ends the episode: the next window freezes each symbol at a new quote."""
    batch = messages(Entity.TICK, 600, "frozen_quote@n0+200", "frozen_quote@n400+200")
    rows = decoded(batch)
    first = {r["symbol"]: (r["bid"], r["ask"]) for r in rows[:200] if r["bid"] is not None}
    second = {r["symbol"]: (r["bid"], r["ask"]) for r in rows[400:] if r["bid"] is not None}
    busiest = rows[0]["symbol"]
    assert first[busiest] != second[busiest]


@pytest.mark.parametrize("entity", ENTITIES)
def test_bad_deploy_renames_every_field(entity: Entity) -> None:
    """No bad_deploy record carries any field name the contract declares."""
    declared = set(load_contract(CONTRACTS / f"{entity.value}.yaml").field_names)
    for row in decoded(messages(entity, 100, "bad_deploy")):
        assert not declared & set(row)
        assert len(row) == len(declared)


# --- what the verifier reports today ------------------------------------------------------


@pytest.mark.parametrize("entity", ENTITIES)
def test_bad_deploy_quarantines_every_record_for_missing_fields(entity: Entity) -> None:
    """Today's verifier quarantines every bad_deploy record, each field reported missing."""
    contract = load_contract(CONTRACTS / f"{entity.value}.yaml")
    batch = messages(entity, 400, "bad_deploy@n100+200")
    report = DataSchemaContractVerifier(contract).validate_payloads([m.value for m in batch])
    assert [q.index for q in report.quarantined_records] == list(range(100, 300))
    for quarantined in report.quarantined_records:
        assert set(quarantined.kinds) == {"missing_field"}
        assert {v.field for v in quarantined.violations} == set(contract.field_names)


@pytest.mark.parametrize(
    ("scenario", "entity"), [(s, e) for s, e in APPLICABLE if s != "bad_deploy"]
)
def test_integrity_records_are_schema_valid(scenario: str, entity: Entity) -> None:
    """Field checks alone (types, nulls, bounds) pass every record: only the integrity rules
    and per-symbol state of issue 14 can catch these."""
    batch = messages(entity, 2000, scenario)
    assert set(hit(batch, scenario)) == set(range(2000))
    report = DataSchemaContractVerifier(schema_only(entity)).validate_payloads(
        [m.value for m in batch]
    )
    assert report.quarantined_count == 0
    assert report.null_breach_fields == {}
    assert report.observed_unknown_fields == set()


# --- scope, grammar, determinism ----------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "entity"),
    [(s, e) for s in sorted(INTEGRITY) for e in ENTITIES if e not in INTEGRITY[s]],
)
def test_a_scenario_that_does_not_apply_leaves_the_records_clean(
    scenario: str, entity: Entity
) -> None:
    """crossed_book on bars, sequence_gap on books, ...: clean bytes and a clean header."""
    assert messages(entity, 200, f"{scenario}@n50+100") == messages(entity, 200)


def test_scenarios_declare_where_they_apply() -> None:
    """The registry says which entities each integrity scenario applies to."""
    assert {name: set(SCENARIOS[name].entities) for name in INTEGRITY} == INTEGRITY


@pytest.mark.parametrize("scenario", sorted(INTEGRITY))
def test_the_spec_grammar_accepts_each_scenario(scenario: str) -> None:
    """NAME, NAME@WINDOW and NAME@WINDOW:FRACTION parse for each integrity scenario."""
    assert parse_spec(scenario) == ScenarioWindow(scenario, 1.0)
    assert parse_spec(f"{scenario}@n10+5:0.5") == ScenarioWindow(scenario, 0.5, True, 10.0, 5.0)
    assert parse_spec(f"{scenario}@every30s+3s") == ScenarioWindow(
        scenario, 1.0, False, 30.0, 3.0, 30.0
    )


@pytest.mark.parametrize("entity", ENTITIES)
def test_integrity_scenarios_are_deterministic_per_seed(entity: Entity) -> None:
    """A seed fixes every message of a run mixing all integrity scenarios."""
    specs = [f"{name}@everyn{100 * (k + 1)}+20:0.7" for k, name in enumerate(sorted(INTEGRITY))]
    assert messages(entity, 2500, *specs, seed=3) == messages(entity, 2500, *specs, seed=3)
    assert messages(entity, 2500, *specs, seed=3) != messages(entity, 2500, *specs, seed=4)
