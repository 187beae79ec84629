"""``stream-validator contract from-registry``: a contract file from a registered schema.

    stream-validator contract from-registry --registry-url http://127.0.0.1:8081 \\
        --subject trades-value [--version 3|latest] [-o trades.yaml] [--name trades]
    stream-validator contract from-registry --config service.yaml --subject trades-value

``--config`` reaches the registry as the service does: the config's ``schema_registry``
section (URL, basic auth or bearer token, TLS; secrets scrubbed from every message).

The schema (Avro record, JSON Schema object or Protobuf message: ``--message``, else the
file's first) is fetched with confluent-kafka's ``SchemaRegistryClient`` (a Protobuf one
compiled by protoc with its references, ``registry.protobuf``); ``lifecycle.fromschema`` or
``lifecycle.fromproto`` turns it into a contract, which is checked
as ``check-contract`` would before it is written (stdout, or ``-o FILE``). What the contract
cannot express is listed on stderr and at the end of the file. Exit codes:
``errors.FromRegistryExit``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient, SchemaRegistryError
from google.protobuf import descriptor_pb2
from google.protobuf.descriptor import Descriptor, FileDescriptor

from stream_validator.cli.argtypes import Subparsers
from stream_validator.codec import decode_json
from stream_validator.config.settings import load_config, scrub
from stream_validator.contracts.loader import contract_from_text
from stream_validator.errors import (
    ConfigError,
    ContractError,
    DecodeError,
    FromRegistryExit,
    SchemaConversionError,
)
from stream_validator.lifecycle.fromproto import contract_from_protobuf
from stream_validator.lifecycle.fromschema import (
    Conversion,
    contract_from_avro,
    contract_from_json_schema,
    render_contract,
)
from stream_validator.registry.client import client_settings
from stream_validator.registry.protobuf import DynamicProtobufDeserializer
from stream_validator.registry.protoc import ProtoCompileError

_PROG = "stream-validator contract from-registry"
#: Schema Registry error codes meaning "no such subject / version".
_NOT_FOUND = {40401, 40402, 40403}
_TIMEOUT_S = 10.0


def add_parser(commands: Subparsers) -> None:
    """Register ``contract`` (and its ``from-registry`` action) with the command line."""
    parser = commands.add_parser("contract", description="Contract tools.")
    actions = parser.add_subparsers(dest="action", required=True)
    fetch = actions.add_parser(
        "from-registry",
        description=(
            "Write a contract file from an Avro, JSON Schema or Protobuf schema registered in a"
            " Schema Registry (fields, types, nullability, enums; bounds left for you)."
        ),
    )
    fetch.set_defaults(run=run)
    where = fetch.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--registry-url",
        help="the Schema Registry API, e.g. the URL `dev-registry start` prints",
    )
    where.add_argument(
        "--config",
        type=Path,
        help="a service config: its schema_registry section (URL, auth, TLS) is used",
    )
    fetch.add_argument("--subject", required=True, help="the subject, e.g. trades-value")
    fetch.add_argument(
        "--version", default="latest", type=_version, help="a version number or 'latest'"
    )
    fetch.add_argument("-o", "--output", type=Path, help="write here instead of stdout")
    fetch.add_argument("--name", help="the contract's name (default: the subject without '-value')")
    fetch.add_argument(
        "--message",
        help="Protobuf: the message type's full name, e.g. md.Tick (default: the file's first)",
    )


def _version(text: str) -> str:
    if text == "latest" or (text.isdigit() and int(text) > 0):
        return text
    raise argparse.ArgumentTypeError(f"a version number or 'latest', got {text!r}")


def _client_settings(args: argparse.Namespace) -> tuple[dict[str, Any], list[str]]:
    """The registry client's settings and the secrets to scrub from messages; ConfigError
    when ``--config`` does not load or names no registry."""
    if args.config is None:
        return {"url": args.registry_url, "timeout": _TIMEOUT_S}, []
    config = load_config(args.config)
    if config.schema_registry.url is None:
        raise ConfigError(f"{args.config}: schema_registry.url is not set")
    return client_settings(config.schema_registry), config.secrets()


def run(args: argparse.Namespace) -> int:
    """Fetch, convert, check and write; return a ``FromRegistryExit``."""
    try:
        settings, secrets = _client_settings(args)
    except ConfigError as exc:
        _say(str(exc))
        return FromRegistryExit.USAGE
    url = settings["url"]
    try:
        registered = _fetch(settings, args.subject, args.version)
        proto = _compiled(settings, registered)
    except ProtoCompileError as exc:
        _say(f"subject {args.subject!r}: {scrub(str(exc), secrets)}")
        return FromRegistryExit.NOT_CONVERTIBLE
    except SchemaRegistryError as exc:
        text = scrub(str(exc.error_message), secrets)
        if exc.error_code in _NOT_FOUND or exc.http_status_code == 404:
            _say(f"no version {args.version} of subject {args.subject!r}: {text}")
            return FromRegistryExit.USAGE
        _say(f"the registry at {url} answered with an error: {text}")
        return FromRegistryExit.UNREACHABLE
    except Exception as exc:  # the client's transport errors (connect, timeout, TLS) vary
        text = scrub(f"{type(exc).__name__}: {exc}", secrets)
        _say(f"cannot reach the registry at {url}: {text}")
        return FromRegistryExit.UNREACHABLE
    name = args.name or _default_name(args.subject)
    try:
        conversion = _convert(registered, name, proto, args.message)
    except SchemaConversionError as exc:
        _say(f"subject {args.subject!r} version {registered.version}: {exc}")
        return FromRegistryExit.NOT_CONVERTIBLE
    header = (
        f"From Schema Registry subject {args.subject!a}, version {registered.version}"
        f" (schema id {registered.schema_id}, {registered.schema.schema_type})"
        " by `stream-validator contract from-registry`.\n"
        "Review before use: bounds, the null ceiling and flagged fields are left for you."
    )
    text = render_contract(conversion, header)
    try:
        contract_from_text(text, source=str(args.output or "<from-registry>"))
    except ContractError as exc:  # a converter bug, never the user's: say so plainly
        _say(f"the contract made from the schema does not load: {exc}")
        return FromRegistryExit.NOT_CONVERTIBLE
    for reason in conversion.left_out:
        _say(f"left out: {reason}")
    fields = len(conversion.document["fields"])
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            args.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            _say(f"cannot write {args.output}: {exc}")
            return FromRegistryExit.USAGE
    _say(f"contract {name!r}: {fields} top-level fields, {len(conversion.left_out)} left out")
    return FromRegistryExit.OK


def _fetch(settings: dict[str, Any], subject: str, version: str) -> Any:
    with SchemaRegistryClient.new_client(settings) as client:
        if version == "latest":
            return client.get_latest_version(subject)
        return client.get_version(subject, int(version))


def _compiled(settings: dict[str, Any], registered: Any) -> FileDescriptor | None:
    """A Protobuf schema's compiled file (its references fetched), else None."""
    if registered.schema.schema_type != "PROTOBUF":
        return None
    with SchemaRegistryClient.new_client(settings) as client:
        return DynamicProtobufDeserializer(client).schema_file(registered.schema)


def _convert(
    registered: Any, name: str, proto: FileDescriptor | None, message: str | None
) -> Conversion:
    schema = registered.schema
    kind = schema.schema_type or "AVRO"
    description = f"Schema Registry subject version {registered.version}"
    if proto is not None:
        return contract_from_protobuf(
            _message_type(proto, message),
            name=name,
            version=str(registered.version),
            description=description,
        )
    if kind not in ("AVRO", "JSON"):
        raise SchemaConversionError(f"schema type {kind!r} is not supported")
    try:
        parsed = decode_json(schema.schema_str.encode("utf-8"))
    except DecodeError as exc:
        raise SchemaConversionError(f"the registered {kind} schema is not JSON: {exc}") from exc
    if kind == "AVRO":
        return contract_from_avro(
            parsed, name=name, version=str(registered.version), description=description
        )
    return contract_from_json_schema(
        parsed, name=name, version=str(registered.version), description=description
    )


def _message_type(file: FileDescriptor, message: str | None) -> Descriptor:
    """The message ``--message`` names (full name), else the file's first."""
    if message is None:
        declared = descriptor_pb2.FileDescriptorProto()
        file.CopyToProto(declared)
        if not declared.message_type:
            raise SchemaConversionError("the Protobuf schema defines no message")
        first: Descriptor = file.message_types_by_name[declared.message_type[0].name]
        return first
    try:
        found: Descriptor = file.pool.FindMessageTypeByName(message)
    except KeyError:
        known = ", ".join(m.full_name for m in file.message_types_by_name.values())
        raise SchemaConversionError(
            f"no message {message!r} in the Protobuf schema (it defines: {known})"
        ) from None
    return found


def _default_name(subject: str) -> str:
    return subject.removesuffix("-value")


def _say(message: str) -> None:
    print(f"{_PROG}: {message}", file=sys.stderr, flush=True)
