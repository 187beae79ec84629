"""A route's shadow contract judging the live plan's batch (pure): its own verifier and null
window, nothing routed, the live plan's state and header quarantines shared."""

from __future__ import annotations

from stream_validator.contracts import contract_from_text, load_contract
from stream_validator.records import SourceRecord
from stream_validator.service.plan.planner import RouteProcessor
from stream_validator.service.plan.shadow import ShadowEvaluator
from tests.support.contractfiles import V1, V2, renamed
from tests.support.ticks import TICK_YAML, tick, tick_processor

AT = "2026-12-03T12:00:00+00:00"


def source(values: list[bytes]) -> list[SourceRecord]:
    return [SourceRecord("src", 0, i, f"k{i}".encode(), v, [], 1000 + i) for i, v in
            enumerate(values)]  # fmt: skip


def evaluator(text: str = V2, policy: str = "alert", window: int = 500) -> ShadowEvaluator:
    return ShadowEvaluator(
        contract_from_text(text, source="shadow.yaml"),
        on_null_ceiling_breach=policy,
        null_window=window,
        max_payload_bytes=1_000_000,
    )


def judged(processor: RouteProcessor, shadow: ShadowEvaluator, values: list[bytes]):  # type: ignore[no-untyped-def]
    records = source(values)
    plan = processor.plan(records, validated_at=AT)
    return plan, shadow.compare(records, plan, processor.route.contract, validated_at=AT)


def test_the_shadow_rescues_what_the_live_contract_quarantines_and_routes_nothing() -> None:
    """Renamed records: DLQ outputs under v1 stay DLQ outputs; the v2 shadow rescues them,
    and newly quarantines the ticks still sending ask_sz."""
    processor = tick_processor()
    plan, diff = judged(processor, evaluator(), [renamed(0), tick.json(1), renamed(2)])
    assert [o.kind for o in plan.outputs] == ["dlq", "clean", "dlq"]
    assert (diff.rescued, diff.newly_quarantined) == ((0, 2), (1,))
    assert plan.shadow is None  # the plan is the live one; the loop attaches the diff


def test_a_shadow_equal_to_the_live_contract_judges_nothing() -> None:
    """A promoted candidate still named as the shadow: no differences, no verifier run."""
    processor = tick_processor()
    shadow = evaluator(V1)
    _, diff = judged(processor, shadow, [renamed(0), tick.json(1)])
    assert diff.records == 2 and not diff.differs
    assert shadow.same_as(processor.route.contract)
    assert not shadow.same_as(load_contract(TICK_YAML).__class__(**{
        **{f: getattr(processor.route.contract, f) for f in ("name", "fields")},
        "version": "9",
    }))  # fmt: skip


def test_the_shadow_null_ceiling_under_quarantine_is_its_own() -> None:
    """Route policy quarantine: a null bid in 10 records breaches the live 1 % ceiling (all
    10 to the DLQ); a 50 % shadow ceiling keeps them: rescued, bid no longer breached."""
    loose = V1.replace("max_allowed_null_pct: 1.0", "max_allowed_null_pct: 50.0")
    processor = tick_processor(on_null_ceiling_breach="quarantine")
    values = [tick.json(i, bid=None) if i == 4 else tick.json(i) for i in range(10)]
    plan, diff = judged(processor, evaluator(loose, "quarantine"), values)
    assert sum(o.kind == "dlq" for o in plan.outputs) == 10
    assert diff.rescued == tuple(range(10))
    assert diff.ceiling == {"bid": "no_longer_breached"}
    assert diff.violations[("rescued", "bid", "null_ceiling_breach")] == 10


def test_records_quarantined_by_per_symbol_state_fail_under_the_shadow_too() -> None:
    """A sequence regression quarantined by the live state: the shadow keeps no state, and
    takes that verdict as its own, so it is no difference."""
    stateful = V1.replace("action: flag            # counted", "action: quarantine  # c", 1)
    assert stateful != V1
    contract = contract_from_text(stateful, source="live.yaml")
    processor = tick_processor(contract=contract)
    values = [tick.json(13, symbol="A"), tick.json(12, symbol="A")]  # a regression
    plan, diff = judged(processor, evaluator(V1.replace('"1"', '"1b"')), values)
    assert [o.kind for o in plan.outputs] == ["clean", "dlq"]
    assert not diff.differs and diff.unchanged == 2
