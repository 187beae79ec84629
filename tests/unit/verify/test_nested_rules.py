"""Rules of the new grammar (when, or, not, in, strings) reading nested paths."""

from __future__ import annotations

from stream_validator import DataSchemaContractVerifier, FieldSpec, RuleSpec, SchemaContract

BOOK = FieldSpec(
    "book",
    dict,
    fields=[
        FieldSpec("side", str, allowed=("buy", "sell")),
        FieldSpec("bid", float, is_nullable=True),
    ],
)
LEVELS = FieldSpec(
    "levels",
    list,
    max_items=3,
    action="flag",
    items=FieldSpec("level", dict, fields=[FieldSpec("px", float, min_value=0.0)]),
)
BUY_BID = RuleSpec.of("buy_bid", "book.bid > 0 or book.bid == -1", when="book.side == 'buy'")


def verifiers(*rules: RuleSpec) -> list[DataSchemaContractVerifier]:
    contract = SchemaContract("n", [FieldSpec("sym", str), BOOK, LEVELS], rules=rules)
    return [
        DataSchemaContractVerifier(contract),
        DataSchemaContractVerifier(contract, fast_path=False),
    ]


def book(side: str, bid: float | None) -> dict[str, object]:
    return {"sym": "A", "book": {"side": side, "bid": bid}, "levels": []}


def test_a_when_rule_on_nested_paths_applies_where_its_condition_holds() -> None:
    """when: book.side == 'buy' with check: book.bid > 0 or book.bid == -1 quarantines only a
    buy with a bid of neither kind, with the fast path on and off alike."""
    records = [book("buy", 0.0), book("sell", 0.0), book("buy", -1.0), book("buy", 2.0)]
    for verifier in verifiers(BUY_BID):
        report = verifier.validate_batch(records)
        assert report.valid_indices == [1, 2, 3]
        (bad,) = report.quarantined_records
        assert [v.rule for v in bad.violations] == ["buy_bid"]
        message = bad.violations[0].message
        assert "when book.side == 'buy'" in message and "book.bid=0.0" in message, message


def test_a_null_nested_field_makes_the_rule_hold() -> None:
    """A null book.bid leaves 'book.bid > 0 or book.bid == -1' unknown: the record is valid."""
    for verifier in verifiers(BUY_BID):
        assert verifier.validate_batch([book("buy", None)]).valid_indices == [0]


def test_a_broken_flag_rule_on_a_nested_path_shows_its_values_in_the_dlq_entry() -> None:
    """A record quarantined for another reason lists the broken flag rule with the nested
    values it read (book.bid=0.5), not nulls."""
    flag = RuleSpec.of("big_bid", "not (book.bid < 1)", "flag")
    record = {"book": {"side": "buy", "bid": 0.5}, "levels": []}  # sym missing
    for verifier in verifiers(flag):
        (bad,) = verifier.validate_batch([record]).quarantined_records
        flagged = [v for v in bad.violations if v.flagged]
        assert [v.rule for v in flagged] == ["big_bid"]
        assert "book.bid=0.5" in flagged[0].message, flagged[0].message


def test_a_flagged_array_flags_the_violations_inside_it() -> None:
    """levels has action flag: a bad item's price and too many items leave the record valid,
    counted per path without indexes."""
    levels = [{"px": -1.0}, {"px": 1.0}, {"px": -2.0}]
    too_many = [{"px": 1.0}] * 4
    for verifier in verifiers():
        report = verifier.validate_batch(
            [
                {"sym": "A", "book": {"side": "buy", "bid": 1.0}, "levels": lv}
                for lv in (levels, too_many)
            ]
        )
        assert report.valid_indices == [0, 1]
        assert report.flagged_field_counts == {
            ("levels[].px", "below_min"): 2,
            ("levels", "too_many_items"): 1,
        }
        assert report.flagged_records == 2
