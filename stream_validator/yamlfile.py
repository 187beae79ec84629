"""The one YAML reader of config and contract files: strict about keys, silent about values.

``read_yaml``/``parse_yaml`` read the text; ``decode`` turns the document into typed msgspec
Structs and words msgspec's first error as ``path: problem``, e.g.
``routes[1].contract (route 'books'): expected str, got int``; ``decode_all`` words every
problem of every key (unknown keys, missing keys, each key's type or bound, in each list item).

Two things ``yaml.safe_load`` does that a config reader must not:

* A mapping with a key written twice keeps the last value, so a second ``min_value``
  silently weakens a contract. Here every duplicate is reported with its line.
* A syntax error's message quotes the offending source line (and an undefined alias
  quotes its name): on the ``sasl.password`` line that is the password, printed before
  any secret is known. Here errors give line and column only, never source text.

Two things YAML 1.1 does that a config reader must not either:

* An exponent needs a sign (``1.0e10`` is text) or a dot (``1e-9`` is text). Here both are
  floats, as in YAML 1.2 and JSON.
* A plain scalar is resolved by its look: ``0123`` is octal 83, ``0x1F`` is 31, ``12:30`` is
  750, ``no`` is false. ``read_yaml(text, verbatim=...)`` keeps the scalars of the named
  mappings (the librdkafka settings) as the text written, so a password stays the password.

A character YAML does not allow (a control character) is a YamlFileError with its line and
column, like any syntax error.

``read_text_file`` reads such a file. A wrong path must not hang or exhaust memory (a
device such as ``/dev/zero``, a FIFO, a multi-GB log): only a regular file of at most
``MAX_FILE_BYTES`` is read.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeVar

import msgspec
import yaml
from msgspec import inspect
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from stream_validator.errors import YamlFileError

# Quoted source text inside a PyYAML problem ("found undefined alias 'hunter2'").
# Token names such as '<block end>' are PyYAML's own words and stay.
_QUOTED = re.compile(r"'(?!<)[^']*'|\"[^\"]*\"")
# One step of a msgspec error path: ".key", "[3]" or "[...]" (a dict value).
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
# A number written in quotes: the hint says to drop them.
_LOOKS_NUMERIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_FLOAT_TAG = "tag:yaml.org,2002:float"
_STR_TAG = "tag:yaml.org,2002:str"
_NULL_TAG = "tag:yaml.org,2002:null"
_MERGE_TAG = "tag:yaml.org,2002:merge"
# PyYAML's YAML 1.1 float, plus exponents without a sign or without a dot (YAML 1.2, JSON).
_FLOAT = re.compile(
    r"""^(?:[-+]?[0-9][0-9_]*\.[0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?
    |[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+
    |[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
    |[-+]?\.(?:inf|Inf|INF)
    |\.(?:nan|NaN|NAN))$""",
    re.X,
)
# msgspec's type names in the words of a YAML file.
_YAML_WORDS = {"object": "mapping", "array": "list"}
T = TypeVar("T")
KeyPath = tuple[str | int, ...]
#: Config and contract files hold a few KB; a larger file is a wrong path.
MAX_FILE_BYTES: Final = 1 << 20


def read_text_file(path: str | os.PathLike[str]) -> str:
    """The UTF-8 text of a config or contract file.

    OSError when the path cannot be opened, holds a NUL byte, is not a regular file or is
    larger than MAX_FILE_BYTES; UnicodeDecodeError when the text is not UTF-8.
    """
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except ValueError as exc:  # a NUL byte in the path
        raise OSError(errno.EINVAL, f"invalid path: {exc}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        file = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with file:
        data = file.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise OSError(errno.EFBIG, f"larger than {MAX_FILE_BYTES:,} bytes")
    return data.decode("utf-8")


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that records keys written twice in one mapping instead of keeping the last.

    Its float resolver also reads ``1.0e10`` and ``1e-9`` as floats (see the module docstring).
    """

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


# A copy for this class only: yaml.safe_load elsewhere keeps YAML 1.1's floats.
_StrictLoader.yaml_implicit_resolvers = {
    first: [(tag, _FLOAT if tag == _FLOAT_TAG else regexp) for tag, regexp in resolvers]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


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


def read_yaml(text: str, verbatim: Sequence[KeyPath] = ()) -> tuple[object, list[str]]:
    """The document of a YAML text and every duplicate key in it; YamlFileError on bad syntax.

    The plain scalar values of the mappings at the ``verbatim`` paths (e.g.
    ``("kafka", "settings")``) are read as the text written (``0123`` stays ``'0123'``); an
    empty value stays null.
    """
    try:
        # The reader refuses a control character here, before any token is read.
        loader = _StrictLoader(text)
    except yaml.reader.ReaderError as exc:
        raise YamlFileError([_unreadable(text, exc)]) from None
    try:
        node = loader.get_single_node()
        if node is not None:
            for path in verbatim:
                _as_written(_node_at(node, path))
        document = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        # "from None": the chained PyYAML error would print the source line again.
        raise YamlFileError([_position(exc)]) from None
    finally:
        loader.dispose()
    return document, [message for _, message in sorted(loader.duplicates)]


def _unreadable(text: str, exc: yaml.reader.ReaderError) -> str:
    """Line and column of a character YAML does not allow, and its code point, not the text."""
    line = text.count("\n", 0, exc.position) + 1
    column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
    return (
        f"not valid YAML at line {line}, column {column}: character U+{exc.character:04X}"
        " is not allowed (control characters must be written as escapes in a quoted string)"
    )


def _node_at(node: Node, path: KeyPath) -> Node | None:
    for step in path:
        if not isinstance(node, MappingNode):
            return None
        found = [v for k, v in node.value if isinstance(k, ScalarNode) and k.value == step]
        if not found:
            return None
        node = found[-1]
    return node


def _as_written(mapping: Node | None, seen: set[int] | None = None) -> None:
    """Retag the plain scalar values of a mapping (and of what it merges) as strings."""
    seen = set() if seen is None else seen
    if not isinstance(mapping, MappingNode) or id(mapping) in seen:
        return  # an alias may merge a mapping into itself
    seen.add(id(mapping))
    for key, value in mapping.value:
        if key.tag == _MERGE_TAG:
            merged = value.value if isinstance(value, SequenceNode) else [value]
            for source in merged:
                _as_written(source, seen)
        elif isinstance(value, ScalarNode) and value.style is None and value.tag != _NULL_TAG:
            value.tag = _STR_TAG


def parse_yaml(text: str, verbatim: Sequence[KeyPath] = ()) -> object:
    """The document of a YAML text; YamlFileError lists every duplicate key or the syntax error."""
    document, duplicates = read_yaml(text, verbatim)
    if duplicates:
        raise YamlFileError(duplicates)
    return document


def decode(document: object, into: type[T], at: KeyPath = ()) -> T:
    """``document`` (or its part at ``at``) as an ``into``; YamlFileError names path and problem.

    A problem reads ``routes[1].contract (route 'books'): expected str, got int``: the path,
    the ``name`` of the list item it runs through, what was expected and what was found.
    The value found is shown only for numbers, empty strings, numeric-looking text and the
    values of enum keys (cut to 60 characters); other text may be a secret and never is.
    """
    value = _follow(document, at)
    try:
        return msgspec.convert(value, into)
    except msgspec.ValidationError as exc:
        raise YamlFileError([_explain(str(exc), document, inspect.type_info(into), at)]) from None


def decode_all(document: object, into: type[T], at: KeyPath = ()) -> T:
    """``decode``, but YamlFileError lists the problem of every key, not only the first."""
    problems = _problems(document, into, at)
    if problems:
        raise YamlFileError(problems)
    return decode(document, into, at)  # what the walk cannot see is msgspec's first error


def _problems(document: object, tp: Any, at: KeyPath) -> list[str]:
    """Every problem of the part at ``at`` as a ``tp``: key by key through Structs and lists
    of Structs, msgspec's first error for anything else."""
    try:
        decode(document, tp, at)
    except YamlFileError as exc:
        first = exc.problems
    else:
        return []
    node, info = _follow(document, at), inspect.type_info(tp)
    found: list[str] = []
    options = info.types if isinstance(info, inspect.UnionType) else (info,)
    struct = next((o for o in options if isinstance(o, inspect.StructType)), None)
    items = next((o for o in options if isinstance(o, inspect.ListType)), None)
    if struct is not None and isinstance(node, Mapping):
        where = f"{_show(at, document)}: " if at else ""
        allowed = [f.encode_name for f in struct.fields]
        unknown = sorted(str(k) for k in node if k not in allowed)
        if unknown and struct.forbid_unknown_fields:
            found.append(
                f"{where}unknown key(s) {', '.join(unknown)}"
                f" (allowed: {', '.join(sorted(allowed))})"
            )
        for spec in msgspec.structs.fields(struct.cls):
            if spec.encode_name not in node:
                if spec.required:
                    found.append(f"{where}missing required key {spec.encode_name!r}")
            else:
                found.extend(_problems(document, spec.type, (*at, spec.encode_name)))
    elif items is not None and isinstance(items.item_type, inspect.StructType) and node:
        item_cls = items.item_type.cls
        for index in range(len(node) if isinstance(node, list) else 0):
            found.extend(_problems(document, item_cls, (*at, index)))
    return found or first


def _follow(document: object, path: KeyPath) -> object:
    node = document
    for step in path:
        if isinstance(step, int) and isinstance(node, Sequence) and not isinstance(node, str):
            node = node[step] if step < len(node) else None
        elif isinstance(node, Mapping):
            node = node.get(step)
        else:
            return None
    return node


def _explain(error: str, document: object, root: inspect.Type, at: KeyPath) -> str:
    problem, _, where = error.partition(" - at `")
    in_key = where.startswith("key` in `")
    path: KeyPath = at
    for key, index in _SEGMENT.findall(where.removeprefix("key` in `").rstrip("`")):
        node = _follow(document, path)
        if index == "..." and isinstance(node, Mapping):
            # msgspec does not name the dict key; the values here are scalars, so find it.
            index = next((str(k) for k, v in node.items() if not _is_scalar(v)), "...")
        # ASCII digits only: a key such as '¹' is a digit to str.isdigit, not to int()
        path += (int(index) if index.isascii() and index.isdigit() else key or index,)
    node, tp = _follow(document, path), _type_at(root, path[len(at) :])
    if problem.startswith("Object contains unknown field"):
        allowed = [f.encode_name for f in tp.fields] if isinstance(tp, inspect.StructType) else []
        keys = node if isinstance(node, Mapping) else {}
        unknown = sorted(str(k) for k in keys if k not in allowed)
        problem = f"unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})"
    elif problem.startswith("Object missing required field"):
        problem = f"missing required key {problem.split('`')[1]!r}"
    elif problem.startswith("Invalid enum value") and isinstance(tp, inspect.LiteralType):
        problem = f"expected one of {', '.join(map(str, tp.values))}, got {_preview(node)}"
    else:
        expected, _, got = problem.removeprefix("Expected ").partition(", got ")
        expected = _words(expected)
        if got:
            problem = f"expected {expected}, got {_words(got)}"
        elif isinstance(node, int | float) or (isinstance(node, str | list | dict) and not node):
            problem = f"expected {expected}, got {node!r}"  # a bound or a length constraint
        else:
            problem = f"expected {expected}"
        if isinstance(node, str) and _LOOKS_NUMERIC.match(node) and "float" in expected:
            problem += f" {node!r} (a number in quotes is text: write it without the quotes)"
    if in_key:
        problem = f"a key: {problem}"
    return f"{_show(path, document)}: {problem}" if path else problem


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_scalar(value: object) -> bool:
    return isinstance(value, str | int | float | bool)


def _words(msgspec_text: str) -> str:
    text = msgspec_text.replace("`", "")
    for word, yaml_word in _YAML_WORDS.items():
        text = re.sub(rf"\b{word}\b", yaml_word, text)
    return text


def _type_at(tp: inspect.Type, path: KeyPath) -> inspect.Type:
    """The msgspec type a path leads to (through unions, lists and dict values)."""
    for step in path:
        options = tp.types if isinstance(tp, inspect.UnionType) else (tp,)
        for option in options:
            if isinstance(step, str) and isinstance(option, inspect.StructType):
                tp = next((f.type for f in option.fields if f.encode_name == step), option)
                break
            if isinstance(step, int) and isinstance(option, inspect.ListType):
                tp = option.item_type
                break
            if isinstance(option, inspect.DictType):
                tp = option.value_type
                break
    return tp


def _show(path: KeyPath, document: object) -> str:
    """``routes[1].contract``, plus ``(route 'books')`` when a list item on it has a name."""
    text, named = "", ""
    for depth, step in enumerate(path):
        if isinstance(step, int):
            text += f"[{step}]"
        else:  # a librdkafka property such as sasl.password stays one step
            text += f".{step}" if step.isidentifier() else f"[{step[:100]!r}]"
        item = _follow(document, path[: depth + 1])
        if (
            isinstance(step, int)
            and isinstance(item, Mapping)
            and isinstance(item.get("name"), str)
        ):
            owner = str(path[depth - 1]) if depth else "item"
            named = f" ({owner.removesuffix('s')} {item['name'][:100]!r})"
    return text.lstrip(".") + named
