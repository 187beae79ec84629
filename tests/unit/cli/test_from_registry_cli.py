"""`contract from-registry` without a registry: the fetch is scripted, the exit codes and
messages are checked (the real registry: tests/integration/test_from_registry.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from confluent_kafka.schema_registry import RegisteredSchema, Schema, SchemaRegistryError

from stream_validator.cli import fromregistry
from stream_validator.cli.main import main
from stream_validator.contracts.loader import load_contract
from stream_validator.errors import FromRegistryExit

_AVRO = '{"type": "record", "name": "T", "fields": [{"name": "px", "type": "double"}]}'


def _serve(monkeypatch: pytest.MonkeyPatch, result: object) -> list[tuple[str, str, str]]:
    calls: list[tuple[str, str, str]] = []

    def fetch(url: str, subject: str, version: str) -> object:
        calls.append((url, subject, version))
        if isinstance(result, BaseException):
            raise result
        return result

    monkeypatch.setattr(fromregistry, "_fetch", fetch)
    return calls


def _run(out: Path, *extra: str) -> int:
    argv = ["contract", "from-registry", "--registry-url", "http://r", "--subject", "t-value"]
    return main([*argv, "-o", str(out), *extra])


def _registered(schema_str: str, kind: str, version: int = 4) -> RegisteredSchema:
    return RegisteredSchema("t-value", version, 17, None, Schema(schema_str, kind))


def test_avro_subject_writes_a_loadable_contract_named_and_versioned(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The contract is named after the subject (less -value), versioned as the subject's
    version, and its header names the schema id."""
    calls = _serve(monkeypatch, _registered(_AVRO, "AVRO"))
    out = tmp_path / "t.yaml"
    assert _run(out, "--version", "4") == FromRegistryExit.OK
    assert calls == [("http://r", "t-value", "4")]
    contract = load_contract(out)
    assert (contract.name, contract.version) == ("t", "4")
    assert "schema id 17, AVRO" in out.read_text().splitlines()[0]


def test_registry_server_error_is_exit_3_without_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 5xx from the registry: exit 3, its message on stderr, no file."""
    _serve(monkeypatch, SchemaRegistryError(500, 50001, "store down"))
    out = tmp_path / "t.yaml"
    assert _run(out) == FromRegistryExit.UNREACHABLE
    err = capsys.readouterr().err
    assert "answered with an error: store down" in err and "Traceback" not in err
    assert not out.exists()


def test_not_found_is_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Subject not found (40401): exit 2, the registry's words on stderr."""
    _serve(monkeypatch, SchemaRegistryError(404, 40401, "Subject 't-value' not found."))
    assert _run(tmp_path / "t.yaml") == FromRegistryExit.USAGE
    assert "not found" in capsys.readouterr().err


def test_transport_error_is_exit_3(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Any transport failure of the client (here a refused connection): exit 3, one line."""
    _serve(monkeypatch, ConnectionRefusedError(111, "Connection refused"))
    assert _run(tmp_path / "t.yaml") == FromRegistryExit.UNREACHABLE
    assert "cannot reach the registry at http://r" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("schema_str", "kind", "message"),
    [
        ("syntax = 'proto3';", "PROTOBUF", "Protobuf schemas are not supported"),
        ("{not json", "AVRO", "is not JSON"),
        ('"string"', "AVRO", "not a record"),
        (
            '{"type": "record", "name": "T", "fields": [{"name": "b", "type": "bytes"}]}',
            "AVRO",
            "no field of the schema",
        ),
        ('{"type": "array"}', "JSON", "not an object with properties"),
    ],
)
def test_schemas_that_cannot_be_contracts_are_exit_1(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    schema_str: str,
    kind: str,
    message: str,
) -> None:
    """Protobuf, a schema that is not JSON, not a record/object, or with nothing a contract
    can express: exit 1 with the reason, no file."""
    _serve(monkeypatch, _registered(schema_str, kind))
    out = tmp_path / "t.yaml"
    assert _run(out) == FromRegistryExit.NOT_CONVERTIBLE
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_unwritable_output_is_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output path that cannot be written: exit 2 naming it."""
    _serve(monkeypatch, _registered(_AVRO, "AVRO"))
    out = tmp_path / "missing-dir" / "t.yaml"
    assert _run(out) == FromRegistryExit.USAGE
    assert f"cannot write {out}" in capsys.readouterr().err


def test_a_bad_version_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """--version takes a positive number or 'latest'."""
    with pytest.raises(SystemExit) as exit_info:
        main(
            ["contract", "from-registry", "--registry-url", "u", "--subject", "s", "--version", "0"]
        )
    assert exit_info.value.code == 2
    assert "a version number or 'latest'" in capsys.readouterr().err


def test_stdout_when_no_output_file(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without -o the contract goes to stdout, the summary to stderr."""
    _serve(monkeypatch, _registered(_AVRO, "AVRO"))
    argv = ["contract", "from-registry", "--registry-url", "u", "--subject", "t-value"]
    assert main(argv) == FromRegistryExit.OK
    captured = capsys.readouterr()
    assert "- name: px" in captured.out and "type: float" in captured.out
    assert "1 top-level fields" in captured.err
