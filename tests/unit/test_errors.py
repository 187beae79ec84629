"""Every exception the package defines belongs to the documented tree of errors.py."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import stream_validator
from stream_validator import errors
from stream_validator.errors import StreamValidatorError

#: What errors.py names as outside the tree: two internal ValueErrors (their callers turn them
#: into ConfigError / ContractFileError), the verifier's internal signals, caught where raised,
#: the registry decoder's WireFormatError and ProtoCompileError (turned into an undecodable
#: verdict) and the Avro planner's UnsupportedSchema (caught where raised: fastavro reads it).
_INTERNAL = {
    "YamlFileError",
    "PatternError",
    "UnsupportedContract",
    "UnplannableContract",
    "RulesTooDeep",
    "RuleDeclined",
    "_Skip",
    "WireFormatError",
    "ProtoCompileError",
    "UnsupportedSchema",
}


def _defined_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(stream_validator.__path__, "stream_validator."):
        if info.name.endswith("__main__"):  # runs the command line when imported
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
            ):
                found[f"{info.name}.{name}"] = value
    return found


def test_every_exception_class_is_in_the_tree_or_named_as_outside_it() -> None:
    outside = {
        where
        for where, cls in _defined_exceptions().items()
        if not issubclass(cls, StreamValidatorError) and cls.__name__ not in _INTERNAL
    }
    assert outside == set()


def test_every_tree_member_is_drawn_in_the_docstring() -> None:
    members = {
        name
        for name, cls in vars(errors).items()
        if inspect.isclass(cls) and issubclass(cls, StreamValidatorError)
    }
    drawn = {name for name in members if f"── {name}" in (errors.__doc__ or "")}
    assert drawn == members - {"StreamValidatorError"}
