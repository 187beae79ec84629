"""A cheaper ``__init__`` for frozen, slotted dataclasses built once per record. PURE.

A frozen dataclass's generated ``__init__`` sets each field with ``object.__setattr__``
(the class's own ``__setattr__`` refuses): a generic attribute lookup per field. For the
few classes built once per bad record (``Violation``, ``QuarantinedRecord``) that was
about a microsecond an object. ``quick_init`` replaces it with an ``__init__`` that sets
each slot through the slot's own descriptor: the same fields, order, defaults and
keyword names, the same frozen object afterwards, in less than half the time.

Only plain fields are supported (no ``default_factory``, ``init=False``, ``kw_only`` or
``__post_init__``); anything else raises ``TypeError`` when the class is defined. A
subclass that adds no fields (``FlaggedViolation``) sets them through its base's slots.
"""

from __future__ import annotations

import dataclasses
from types import MemberDescriptorType
from typing import Any, TypeVar

__all__ = ["quick_init"]

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """Give the frozen, slotted dataclass ``cls`` a descriptor-setting ``__init__``."""
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: quick_init needs a frozen, slotted dataclass")
    if hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}: quick_init does not call __post_init__")
    ns: dict[str, Any] = {}
    signature: list[str] = []
    body: list[str] = []
    for i, spec in enumerate(dataclasses.fields(cls)):  # type: ignore[arg-type]
        if (
            not spec.init
            or spec.kw_only
            or spec.default_factory is not dataclasses.MISSING
            or not spec.name.isidentifier()
        ):
            raise TypeError(f"{cls.__name__}.{spec.name}: quick_init takes plain fields only")
        # The slot's descriptor: in the class itself, or in a base whose fields it inherits.
        slot = next((k.__dict__[spec.name] for k in cls.__mro__ if spec.name in k.__dict__), None)
        if not isinstance(slot, MemberDescriptorType):
            raise TypeError(f"{cls.__name__}.{spec.name}: quick_init needs a slot per field")
        ns[f"_set{i}"] = slot.__set__
        if spec.default is dataclasses.MISSING:
            signature.append(spec.name)
        else:
            ns[f"_default{i}"] = spec.default
            signature.append(f"{spec.name}=_default{i}")
        body.append(f"    _set{i}(self, {spec.name})")
    source = f"def __init__(self, {', '.join(signature)}):\n" + "\n".join(body or ["    pass"])
    exec(compile(source, f"<quick_init of {cls.__qualname__}>", "exec"), ns)
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    cls.__init__ = init  # type: ignore[method-assign]
    return cls
