"""The one YAML reader of config and contract files: strict about keys, silent about values.

Two things ``yaml.safe_load`` does that a config reader must not:

* A mapping with a key written twice keeps the last value, so a second ``min_value``
  silently weakens a contract. Here every duplicate is reported with its line.
* A syntax error's message quotes the offending source line (and an undefined alias
  quotes its name): on the ``sasl.password`` line that is the password, printed before
  any secret is known. Here errors give line and column only, never source text.
"""

from __future__ import annotations

import re

import yaml
from yaml.nodes import MappingNode

from stream_validator.errors import YamlFileError

# Quoted source text inside a PyYAML problem ("found undefined alias 'hunter2'").
# Token names such as '<block end>' are PyYAML's own words and stay.
_QUOTED = re.compile(r"'(?!<)[^']*'|\"[^\"]*\"")


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that records keys written twice in one mapping instead of keeping the last."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.duplicates: list[tuple[int, str]] = []

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[object, object]:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # '<<' merges are YAML's explicit way to override keys
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.get(key)
            except TypeError:
                continue  # an unhashable key: the base constructor reports it
            if first is None:
                seen[key] = line
            else:
                self.duplicates.append(
                    (line, f"duplicate key {_show_key(key)} at line {line} (first at line {first})")
                )
        return super().construct_mapping(node, deep=deep)


def _show_key(key: object) -> str:
    text = str(key)
    return repr(text if len(text) <= 80 else text[:80] + "...")


def _position(exc: yaml.YAMLError) -> str:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or type(exc).__name__
    problem = _QUOTED.sub("'...'", str(problem))
    if mark is None:
        return f"not valid YAML: {problem}"
    return f"not valid YAML at line {mark.line + 1}, column {mark.column + 1}: {problem}"


def read_yaml(text: str) -> tuple[object, list[str]]:
    """The document of a YAML text and every duplicate key in it; YamlFileError on bad syntax."""
    loader = _StrictLoader(text)
    try:
        document = loader.get_single_data()
    except yaml.YAMLError as exc:
        # "from None": the chained PyYAML error would print the source line again.
        raise YamlFileError([_position(exc)]) from None
    finally:
        loader.dispose()
    return document, [message for _, message in sorted(loader.duplicates)]


def parse_yaml(text: str) -> object:
    """The document of a YAML text; YamlFileError lists every duplicate key or the syntax error."""
    document, duplicates = read_yaml(text)
    if duplicates:
        raise YamlFileError(duplicates)
    return document
