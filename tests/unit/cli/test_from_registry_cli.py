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
settings_seen: list[dict[str, object]] = []


def _serve(monkeypatch: pytest.MonkeyPatch, result: object) -> list[tuple[str, str, str]]:
    calls: list[tuple[str, str, str]] = []
    settings_seen.clear()

    def fetch(settings: dict[str, object], subject: str, version: str) -> object:
        settings_seen.append(settings)
        calls.append((str(settings["url"]), subject, version))
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
        ("syntax = 'proto3';", "PROTOBUF", "the Protobuf schema defines no message"),
        ('syntax = "proto3"; message X { strin a = 1; }', "PROTOBUF", '"strin" is not defined'),
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
    """A .proto without a message or that does not compile, a schema that is not JSON, not a
    record/object, or with nothing a contract can express: exit 1 with the reason, no file."""
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


_REGISTRY = """\
schema_registry:
  url: https://registry.example:8081
  basic_auth_user: reader
  basic_auth_password: s3cret-pw
  ssl_ca_location: /etc/ssl/ca.pem
"""
_ROUTES = """\
kafka:
  bootstrap_servers: 127.0.0.1:9092
routes:
  - name: ticks
    source_topics: [md.ticks]
    contract: tick.yaml
    clean_topic: md.ticks.clean
    dlq_topic: md.ticks.dlq
"""
_CONFIG = _REGISTRY + _ROUTES


def _config(tmp_path: Path, text: str = _CONFIG) -> Path:
    """A service config (with its route's contract file) in tmp_path."""
    (tmp_path / "tick.yaml").write_text(
        (Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml").read_text(
            encoding="utf-8"
        ),
        encoding="utf-8",
    )
    config = tmp_path / "service.yaml"
    config.write_text(text, encoding="utf-8")
    return config


def test_config_reaches_the_registry_as_the_service_does(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """--config: the schema_registry section's URL, basic auth and TLS reach the client."""
    calls = _serve(monkeypatch, _registered(_AVRO, "AVRO"))
    config = _config(tmp_path)
    out = tmp_path / "t.yaml"
    argv = ["contract", "from-registry", "--config", str(config), "--subject", "t-value"]
    assert main([*argv, "-o", str(out)]) == FromRegistryExit.OK
    assert calls == [("https://registry.example:8081", "t-value", "latest")]
    assert settings_seen[0]["basic.auth.user.info"] == "reader:s3cret-pw"
    assert settings_seen[0]["ssl.ca.location"] == "/etc/ssl/ca.pem"
    assert load_contract(out).name == "t"


def test_config_secrets_never_reach_a_message(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A transport error quoting the credentials is scrubbed."""
    _serve(monkeypatch, OSError("refused for reader:s3cret-pw@registry.example"))
    config = _config(tmp_path)
    argv = ["contract", "from-registry", "--config", str(config), "--subject", "t-value"]
    assert main(argv) == FromRegistryExit.UNREACHABLE
    err = capsys.readouterr().err
    assert "s3cret-pw" not in err and "***" in err


def test_a_config_without_a_registry_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = _serve(monkeypatch, _registered(_AVRO, "AVRO"))
    config = _config(tmp_path, _ROUTES)
    argv = ["contract", "from-registry", "--config", str(config), "--subject", "t-value"]
    assert main(argv) == FromRegistryExit.USAGE
    assert "schema_registry.url is not set" in capsys.readouterr().err
    assert calls == []


def test_url_and_config_together_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["contract", "from-registry", "--registry-url", "http://r", "--config", "x.yaml"]
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--subject", "t-value"])
    assert exit_info.value.code == 2
    assert "not allowed with" in capsys.readouterr().err
