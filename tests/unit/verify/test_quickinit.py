"""quick_init: the same frozen object as the dataclass's own __init__ builds, or a TypeError."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field

import pytest

from stream_validator.verify.quickinit import quick_init
from stream_validator.verify.report import (
    FlaggedViolation,
    QuarantinedRecord,
    Violation,
    ViolationKind,
)


@dataclass(frozen=True, slots=True)
class Plain:
    a: int
    b: str
    c: object = None
    d: tuple[int, ...] = (1,)


@quick_init
@dataclass(frozen=True, slots=True)
class Quick:
    a: int
    b: str
    c: object = None
    d: tuple[int, ...] = (1,)


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [((1, "x"), {}), ((1, "x", 3), {}), ((1,), {"b": "y", "d": (2,)}), ((), {"a": 1, "b": "z"})],
)
def test_builds_what_the_dataclass_init_builds(args: tuple[object, ...], kwargs: dict) -> None:
    """Positional, keyword and default arguments land in the same fields."""
    quick, plain = Quick(*args, **kwargs), Plain(*args, **kwargs)
    assert dataclasses.astuple(quick) == dataclasses.astuple(plain)
    assert quick == Quick(*args, **kwargs) and hash(quick) == hash(Quick(*args, **kwargs))
    assert pickle.loads(pickle.dumps(quick)) == quick
    assert dataclasses.replace(quick, b="r").b == "r"


def test_the_object_stays_frozen_and_arguments_are_checked() -> None:
    quick = Quick(1, "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        quick.a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Quick(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Quick(1, "x", 3, (1,), 5)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Quick(1, "x", e=1)  # type: ignore[call-arg]


@pytest.mark.parametrize("cls", [Violation, FlaggedViolation, QuarantinedRecord])
def test_the_record_classes_keep_their_signature(cls: type) -> None:
    """Violation and QuarantinedRecord take their fields, in order, with their defaults."""
    params = inspect.signature(cls).parameters
    expected = [
        (f.name, inspect.Parameter.empty if f.default is dataclasses.MISSING else f.default)
        for f in dataclasses.fields(cls)
    ]
    assert [(p.name, p.default) for p in params.values()] == expected
    assert Violation("price", ViolationKind.MISSING_FIELD, "m").rule is None


def _frozen_slots(**options: object) -> type:
    @dataclass(frozen=True, slots=True)
    class Made:
        a: int = field(**options)  # type: ignore[misc]

    return Made


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: dataclass(frozen=False, slots=True)(type("A", (), {})), id="mutable"),
        pytest.param(lambda: dataclass(frozen=True)(type("A", (), {})), id="no slots"),
        pytest.param(lambda: _frozen_slots(default_factory=int), id="default_factory"),
        pytest.param(lambda: _frozen_slots(kw_only=True), id="kw_only"),
        pytest.param(lambda: _frozen_slots(init=False, default=0), id="init=False"),
        pytest.param(
            lambda: dataclass(frozen=True, slots=True)(
                type("A", (), {"__post_init__": lambda self: None})
            ),
            id="__post_init__",
        ),
        pytest.param(lambda: type("A", (), {}), id="not a dataclass"),
    ],
)
def test_what_it_cannot_build_the_same_is_refused(make: object) -> None:
    with pytest.raises(TypeError, match="quick_init"):
        quick_init(make())  # type: ignore[operator]


def test_a_flagged_violation_is_a_marked_violation_of_the_same_fields() -> None:
    """FlaggedViolation: Violation's fields through its slots, flagged, frozen, never equal
    to the plain one; the plain one is not flagged and has no slot for it."""
    plain = Violation("price", ViolationKind.BELOW_MIN, "m", "r")
    flagged = plain.as_flagged()
    assert type(flagged) is FlaggedViolation and flagged.as_flagged() is flagged
    assert dataclasses.astuple(flagged) == dataclasses.astuple(plain)
    assert (plain.flagged, flagged.flagged) == (False, True)
    assert flagged != plain and flagged == FlaggedViolation("price", "below_min", "m", "r")
    assert pickle.loads(pickle.dumps(flagged)) == flagged
    assert "flagged" not in Violation.__slots__ and FlaggedViolation.__slots__ == ()
    assert flagged.as_dict()["action"] == "flag" and "action" not in plain.as_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        flagged.message = "x"  # type: ignore[misc]
