"""A contract from a registered schema (Avro or JSON Schema; Protobuf: ``fromproto``). PURE:
a parsed schema in, a contract document and the list of what it cannot express out; no
registry, no files.

What the schema states becomes the contract's structure: fields, types, nullability, enum
symbols as ``allowed``, nested records/objects and arrays, and (JSON Schema) the declared
``minimum``/``maximum``/``minLength``/``maxLength``. Nothing is guessed: bounds the schema does
not state are left for the user, and the null ceiling is 100 % (the schema allows every
null). Every part left out is named with its path and reason in ``Conversion.left_out``.

Avro, as confluent-kafka's ``AvroDeserializer`` hands records over: ``int``/``long`` → int,
``float``/``double`` → float, ``string`` (also ``uuid``) → str, ``boolean`` → bool,
``timestamp-millis``/``-micros`` → datetime (aware, so ``require_timezone``),
``local-timestamp-*`` → datetime, a union of ``null`` and one type → that type, nullable,
``enum`` → str with its symbols allowed, ``record`` → object, ``array`` → array. Left out:
``bytes``, ``fixed``, ``decimal``, ``date``, ``time-*``, ``map`` and unions of several types.
JSON Schema: ``string`` → str (``format: date-time`` → datetime with a timezone), ``integer``
→ int, ``number`` → float, ``boolean`` → bool, ``object`` with ``properties`` → object,
``array`` with ``items`` → array, ``["T", "null"]`` → nullable, ``enum`` of strings →
allowed, local ``$ref``s followed. Left out: properties not ``required`` (a contract field
must be present), ``oneOf``/``anyOf``/``allOf``, ``pattern``, exclusive bounds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from stream_validator.contracts.model import MAX_NESTING_DEPTH
from stream_validator.errors import SchemaConversionError

Doc = dict[str, Any]

_AVRO_SCALARS = {"int": "int", "long": "int", "float": "float", "double": "float"}
_AVRO_SCALARS |= {"string": "str", "boolean": "bool"}
_AVRO_DATETIMES = {
    "timestamp-millis": True,
    "timestamp-micros": True,
    "local-timestamp-millis": False,
    "local-timestamp-micros": False,
}
_JSON_SCALARS = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
#: The bounds a JSON Schema states that a contract states the same way (inclusive).
_JSON_BOUNDS = {
    "string": {"minLength": "min_length", "maxLength": "max_length"},
    "integer": {"minimum": "min_value", "maximum": "max_value"},
    "number": {"minimum": "min_value", "maximum": "max_value"},
}


@dataclass(frozen=True, slots=True)
class Conversion:
    """A contract document (the mapping a contract file holds) and what it left out."""

    document: Doc
    left_out: tuple[str, ...]


class _Skip(Exception):
    """This part of the schema cannot be expressed; the message says why."""


def contract_from_avro(schema: object, *, name: str, version: str, description: str) -> Conversion:
    """The contract of an Avro record schema (parsed JSON)."""
    if not isinstance(schema, Mapping) or schema.get("type") != "record":
        raise SchemaConversionError("the Avro schema is not a record: a contract needs fields")
    walker = _Avro()
    fields = walker.record_fields(schema, "", 1)
    return finish_conversion(fields, walker.left_out, name, version, description)


def contract_from_json_schema(
    schema: object, *, name: str, version: str, description: str
) -> Conversion:
    """The contract of a JSON Schema whose top level is an object with properties."""
    if not isinstance(schema, Mapping):
        raise SchemaConversionError("the JSON Schema is not an object")
    walker = _Json(schema)
    top = walker.resolve(schema)
    if top.get("type") != "object" or not isinstance(top.get("properties"), Mapping):
        raise SchemaConversionError(
            "the JSON Schema's top level is not an object with properties: a contract needs fields"
        )
    fields = walker.object_fields(top, "", 1)
    return finish_conversion(fields, walker.left_out, name, version, description)


def render_contract(conversion: Conversion, header: str) -> str:
    """The contract file: ``header`` as comments, the document, then what was left out."""
    lines = [f"# {line}" for line in header.splitlines()]
    body = yaml.safe_dump(conversion.document, sort_keys=False, allow_unicode=False, width=100)
    lines.append(body.rstrip("\n"))
    if conversion.left_out:
        lines.append("# Not expressible in a contract, left out:")
        lines += [f"#   {ascii(reason)[1:-1]}" for reason in conversion.left_out]
    return "\n".join(lines) + "\n"


def finish_conversion(
    fields: list[Doc], left_out: list[str], name: str, version: str, description: str
) -> Conversion:
    """The contract document around converted ``fields`` (every format's converter ends
    here); SchemaConversionError when no field could be converted."""
    if not fields:
        raise SchemaConversionError(
            "no field of the schema can be expressed in a contract: " + "; ".join(left_out)
        )
    document: Doc = {"name": name, "version": version}
    if description:
        document["description"] = description
    # The schema allows every null it declares; a tighter ceiling is the user's choice.
    document["max_allowed_null_pct"] = 100.0
    document["forbid_unknown_fields"] = False
    document["fields"] = fields
    return Conversion(document, tuple(left_out))


def _path(parent: str, name: str) -> str:
    return f"{parent}.{name}" if parent else name


class _Avro:
    def __init__(self) -> None:
        self.left_out: list[str] = []
        #: Named types (records, enums) by full name and by short name.
        self.named: dict[str, Mapping[str, Any]] = {}

    def record_fields(
        self, record: Mapping[str, Any], path: str, depth: int, namespace: str = ""
    ) -> list[Doc]:
        namespace = self._remember(record, namespace)
        out: list[Doc] = []
        for field in record.get("fields") or []:
            name = str(field.get("name"))
            where = _path(path, name)
            try:
                spec = self.spec(field.get("type"), namespace, where, depth)
            except _Skip as skip:
                self.left_out.append(f"{where}: {skip}")
                continue
            if field.get("doc"):
                spec["description"] = str(field["doc"])
            out.append({"name": name, **spec})
        return out

    def spec(self, schema: Any, namespace: str, path: str, depth: int) -> Doc:
        if depth > MAX_NESTING_DEPTH:
            raise _Skip(f"nested deeper than a contract allows ({MAX_NESTING_DEPTH})")
        if isinstance(schema, list):
            kinds = [s for s in schema if s != "null"]
            if len(kinds) != 1:
                raise _Skip(f"a union of several types ({_avro_name(schema)})")
            spec = self.spec(kinds[0], namespace, path, depth)
            return {**spec, "nullable": True} if len(kinds) < len(schema) else spec
        if isinstance(schema, str):
            if schema in _AVRO_SCALARS:
                return {"type": _AVRO_SCALARS[schema]}
            found = self.named.get(f"{namespace}.{schema}") or self.named.get(schema)
            if found is not None:
                return self.spec(found, namespace, path, depth)
            raise _Skip(f"Avro type {schema!r} has no contract type")
        if not isinstance(schema, Mapping):
            raise _Skip(f"not an Avro type: {schema!r}")
        logical, kind = schema.get("logicalType"), schema.get("type")
        if logical in _AVRO_DATETIMES and kind == "long":
            return {"type": "datetime", "require_timezone": _AVRO_DATETIMES[logical]}
        if logical == "uuid" and kind == "string":
            return {"type": "str"}
        if logical is not None:
            raise _Skip(f"Avro logical type {logical!r} has no contract type")
        if kind == "record":
            fields = self.record_fields(schema, path, depth + 1, namespace)
            if not fields:
                raise _Skip("a record none of whose fields can be expressed")
            return {"type": "object", "fields": fields}
        if kind == "enum":
            self._remember(schema, namespace)
            return {"type": "str", "allowed": [str(s) for s in schema.get("symbols") or []]}
        if kind == "array":
            item = self.spec(schema.get("items"), namespace, f"{path}[]", depth + 1)
            return {"type": "array", "items": item}
        if isinstance(kind, (str, list)) and kind not in ("map", "fixed", "bytes"):
            return self.spec(kind, namespace, path, depth)
        raise _Skip(f"Avro type {kind!r} has no contract type")

    def _remember(self, named: Mapping[str, Any], enclosing: str) -> str:
        """Record a named type; return its namespace (what names inside it resolve against)."""
        name = str(named.get("name", ""))
        if "." in name:
            namespace, _, short = name.rpartition(".")
        else:
            namespace, short = str(named.get("namespace") or enclosing), name
        self.named[f"{namespace}.{short}" if namespace else short] = named
        self.named.setdefault(short, named)
        return namespace


def _avro_name(schema: list[Any]) -> str:
    return ", ".join(s if isinstance(s, str) else str(s.get("type")) for s in schema)


class _Json:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.left_out: list[str] = []

    def resolve(self, schema: Mapping[str, Any], hops: int = 0) -> Mapping[str, Any]:
        ref = schema.get("$ref")
        if ref is None:
            return schema
        if not isinstance(ref, str) or not ref.startswith("#/") or hops > 20:
            raise _Skip(f"$ref {ref!r} is not a local reference")
        target: Any = self.root
        for part in ref[2:].split("/"):
            if not isinstance(target, Mapping) or part not in target:
                raise _Skip(f"$ref {ref!r} points nowhere")
            target = target[part]
        if not isinstance(target, Mapping):
            raise _Skip(f"$ref {ref!r} is not a schema")
        return self.resolve(target, hops + 1)

    def object_fields(self, schema: Mapping[str, Any], path: str, depth: int) -> list[Doc]:
        required = set(schema.get("required") or [])
        out: list[Doc] = []
        for name, sub in (schema.get("properties") or {}).items():
            where = _path(path, str(name))
            if name not in required:
                self.left_out.append(
                    f"{where}: not required by the schema (a contract field must be present)"
                )
                continue
            try:
                spec = self.spec(sub, where, depth)
            except _Skip as skip:
                self.left_out.append(f"{where}: {skip}")
                continue
            out.append({"name": str(name), **spec})
        return out

    def spec(self, schema: Any, path: str, depth: int) -> Doc:
        if depth > MAX_NESTING_DEPTH:
            raise _Skip(f"nested deeper than a contract allows ({MAX_NESTING_DEPTH})")
        if not isinstance(schema, Mapping):
            raise _Skip("no type (true/false schema)")
        schema = self.resolve(schema)
        for combinator in ("oneOf", "anyOf", "allOf", "not", "if"):
            if combinator in schema:
                raise _Skip(f"{combinator} has no contract form")
        kinds = schema.get("type")
        kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
        nullable = "null" in kinds
        kinds = [k for k in kinds if k != "null"]
        if len(kinds) != 1:
            raise _Skip(f"type {schema.get('type')!r}: not exactly one type besides null")
        spec = self._typed(kinds[0], schema, path, depth)
        return {**spec, "nullable": True} if nullable else spec

    def _typed(self, kind: str, schema: Mapping[str, Any], path: str, depth: int) -> Doc:
        if kind == "object":
            fields = self.object_fields(schema, path, depth + 1)
            if not fields:
                raise _Skip("an object none of whose properties can be expressed")
            return {"type": "object", "fields": fields}
        if kind == "array":
            item = self.spec(schema.get("items"), f"{path}[]", depth + 1)
            return {"type": "array", "items": item}
        if kind not in _JSON_SCALARS:
            raise _Skip(f"JSON type {kind!r} has no contract type")
        if kind == "string" and schema.get("format") == "date-time":
            return {"type": "datetime", "require_timezone": True}
        spec: Doc = {"type": _JSON_SCALARS[kind]}
        for key, contract_key in _JSON_BOUNDS.get(kind, {}).items():
            value = schema.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                spec[contract_key] = value
        for key in ("exclusiveMinimum", "exclusiveMaximum", "pattern", "format"):
            if key in schema:
                self.left_out.append(f"{path}: {key} {schema[key]!r} not carried over")
        enum = schema.get("enum")
        if isinstance(enum, list):
            if kind in ("string", "integer") and all(
                isinstance(v, str if kind == "string" else int) and not isinstance(v, bool)
                for v in enum
            ):
                spec["allowed"] = list(dict.fromkeys(enum))
            else:
                self.left_out.append(f"{path}: enum of mixed values not carried over")
        return spec
